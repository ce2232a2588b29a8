// RUN: attn-opt %s --allow-unregistered-dialect --pass-pipeline="builtin.module(gpu.module(attn-lower-kernel-vectors))" | FileCheck %s

// One row per thread: the unit row dimension goes, exp2 and log2 become
// the PTX approximations (unrolled), a row sum becomes 1-D reductions, and
// f32 -> e4m3 is cvt.rn.satfinite.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @row
  gpu.func @row(%x: vector<1x2xf32>, %y: vector<1xf32>) kernel {
    //       CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
    //       CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
    //       CHECK: vector.from_elements
    %e = math.exp2 %x : vector<1x2xf32>
    //       CHECK: vector.reduction <add>
    %r = vector.multi_reduction <add>, %e, %y [1] : vector<1x2xf32> to vector<1xf32>
    %s = vector.extract %r[0] : f32 from vector<1xf32>
    //       CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
    %l = math.log2 %s : f32
    //       CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}}satfinite
    //       CHECK: arith.trunci %{{.*}} : i16 to i8
    //       CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
    %f = arith.truncf %l : f32 to f8E4M3FN
    "use"(%f) : (f8E4M3FN) -> ()
    gpu.return
  }
}

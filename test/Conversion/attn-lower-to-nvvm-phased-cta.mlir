// RUN: attn-opt %s --attn-lower-to-nvvm | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu | FileCheck %s --check-prefix=CPU

// A CTA of several thread loops with a workgroup buffer (the form of
// attn-quantize-fp8's per-block kernel): upstream's
// convert-parallel-loops-to-gpu takes one thread loop per CTA, so
// attn-lower-to-nvvm launches it itself: as many threads as the widest
// loop (64), the narrower loop guarded by tid < 32, a barrier between the
// two, the buffer in shared memory (a workgroup attribution, then an
// addrspace(3) global).
// CHECK-LABEL: func.func @phased
//       CHECK:   gpu.launch_func @phased_kernel::@phased_kernel blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
//       CHECK:   llvm.mlir.global internal @__wg_phased_kernel_0() {addr_space = 3 : i32} : !llvm.array<64 x f32>
//       CHECK:   llvm.func @phased_kernel
//       CHECK:     %[[PART:.*]] = llvm.mlir.addressof @__wg_phased_kernel_0 : !llvm.ptr<3>
//       CHECK:     %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// part[t] = x[i, t]
//       CHECK:     llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
//  CHECK-NEXT:     nvvm.barrier0
// out[i] = max(part[t], part[t + 32]) on threads t < 32
//  CHECK-NEXT:     %[[IN:.*]] = llvm.icmp "ult" %{{.*}}, %{{.*}} : i64
//  CHECK-NEXT:     llvm.cond_br %[[IN]]
//       CHECK:     llvm.load %{{.*}} : !llvm.ptr<3> -> f32
//       CHECK:     llvm.intr.maximum
//   CHECK-NOT:     nvvm.barrier0
//       CHECK:     llvm.return
// On the host the CTAs run one after another: the buffer becomes one stack
// buffer of the function, allocated before the loops.
// CPU-LABEL: llvm.func @phased
//       CPU:   llvm.alloca
//       CPU:   llvm.br
//   CPU-NOT:   llvm.alloca
func.func @phased(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %part = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      %v = memref.load %x[%i, %t] : memref<4x64xf32>
      memref.store %v, %part[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (32) {
      %c32 = arith.constant 32 : index
      %u = arith.addi %t, %c32 : index
      %a = memref.load %part[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      %b = memref.load %part[%u] : memref<64xf32, #gpu.address_space<workgroup>>
      %s = arith.maximumf %a, %b : f32
      memref.store %s, %out[%i] : memref<4xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

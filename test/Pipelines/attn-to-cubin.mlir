// RUN: attn-opt %s --split-input-file --attn-to-cubin="format=none path=fma block-m=4 block-n=2" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-to-cubin="format=none path=fma" | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --split-input-file --attn-to-cubin="format=isa path=fma block-m=4 block-n=2" | FileCheck %s --check-prefix=ISA

// attn-to-cubin = attn-tile, attn-causal-split, attn-distribute-rows,
// attn-online-softmax (+ LICM, canonicalize, CSE), attn-lower-to-nvvm and,
// unless format=none, gpu-module-to-binary. The host function keeps a
// gpu.launch_func over the grid (ceil(Nq / BM), Hq, B) with BM * L threads
// (L lanes per row) and passes only the memrefs; the kernel is in a
// gpu.module with an #nvvm.target, exp2/log2 use the PTX approximations and
// the L lanes of a row combine partial scores with shfl.sync bfly.

// D = 64 (L = 2 lanes per row), GQA 4/2, B = 2, Nq = 10, Nk = 5, causal,
// LSE. BM = 4, BN = 2: grid ceil(10/4) * 4 * 2 = 24 (Q block, head and batch
// folded into x), 4 * 2 = 8 threads.
// CHECK-LABEL: func.func @d64_gqa
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x10x64xf16>, %[[K:[a-z0-9]+]]: memref<2x2x5x64xf16>, %[[V:[a-z0-9]+]]: memref<2x2x5x64xf16>, %[[O:[a-z0-9]+]]: memref<2x4x10x64xf16>, %[[LSE:[a-z0-9]+]]: memref<2x4x10xf32>)
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//       CHECK:   gpu.launch_func @d64_gqa_kernel::@d64_gqa_kernel
//  CHECK-SAME:     blocks in (%[[C24]], %[[C1]], %[[C1]]) threads in (%[[C8]], %[[C1]], %[[C1]])
//  CHECK-SAME:     args(%[[Q]] : memref<2x4x10x64xf16>, %[[K]] : memref<2x2x5x64xf16>, %[[V]] : memref<2x2x5x64xf16>, %[[O]] : memref<2x4x10x64xf16>, %[[LSE]] : memref<2x4x10xf32>){{$}}
//  CHECK-NEXT:   return
//       CHECK: gpu.module @d64_gqa_kernel [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
//       CHECK:   llvm.func @d64_gqa_kernel(
//  CHECK-SAME:     nvvm.kernel, nvvm.maxntid = array<i32: 8, 1, 1>
//   CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// the row's two lanes exchange partial scores: butterfly offset 1
//       CHECK:     nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}} : f32 -> f32
// alpha and P_j = exp2(.) with ex2.approx.ftz
//       CHECK:     llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
//   CHECK-NOT:     math.exp2
// LSE: log2(l) with lg2.approx.ftz
//       CHECK:     llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
//   CHECK-NOT:     {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|gpu)\.}}
//       CHECK:     llvm.return
// Defaults BM = 64, BN = 16: grid (1, 4, 2), 64 * 2 = 128 threads.
// DEFAULT-LABEL: func.func @d64_gqa
//   DEFAULT-DAG:   %[[C128:.*]] = arith.constant 128 : index
//       DEFAULT:   gpu.launch_func @d64_gqa_kernel::@d64_gqa_kernel blocks in (%{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}})
//       DEFAULT:   llvm.func @d64_gqa_kernel(
//  DEFAULT-SAME:     nvvm.maxntid = array<i32: 128, 1, 1>
//       DEFAULT:     nvvm.shfl.sync  bfly
// format=isa: the gpu.module becomes a gpu.binary holding PTX for sm_90a.
// ISA-LABEL: func.func @d64_gqa
//       ISA:   gpu.launch_func @d64_gqa_kernel::@d64_gqa_kernel
//   ISA-NOT:   gpu.module
//       ISA:   gpu.binary @d64_gqa_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
//  ISA-SAME:     assembly = "
//  ISA-SAME:     .target sm_90a
//  ISA-SAME:     .visible .entry d64_gqa_kernel(
//  ISA-SAME:     .maxntid 8, 1, 1
//  ISA-SAME:     shfl.sync.bfly.b32
//  ISA-SAME:     ex2.approx.ftz.f32
//  ISA-SAME:     lg2.approx.ftz.f32
func.func @d64_gqa(%q: memref<2x4x10x64xf16>, %k: memref<2x2x5x64xf16>,
                   %v: memref<2x2x5x64xf16>, %o: memref<2x4x10x64xf16>,
                   %lse: memref<2x4x10xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x4x10x64xf16>, memref<2x2x5x64xf16>,
                     memref<2x2x5x64xf16>) outs(%o : memref<2x4x10x64xf16>)
                 lse(%lse : memref<2x4x10xf32>) {causal}
  return
}

// -----

// D = 16 (one lane per row), bf16, Hq = Hkv = 3, B = 1, Nq = 6, no LSE:
// grid 2 * 3 * 1 = 6, 4 threads; no shuffle and no log2.
// CHECK-LABEL: func.func @d16_one_lane
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
//       CHECK:   gpu.launch_func @d16_one_lane_kernel::@d16_one_lane_kernel
//  CHECK-SAME:     blocks in (%[[C6]], %[[C1]], %[[C1]]) threads in (%[[C4]], %[[C1]], %[[C1]])
//  CHECK-SAME:     args(%{{.*}} : memref<1x3x6x16xbf16>, %{{.*}} : memref<1x3x4x16xbf16>, %{{.*}} : memref<1x3x4x16xbf16>, %{{.*}} : memref<1x3x6x16xbf16>){{$}}
//       CHECK: gpu.module @d16_one_lane_kernel [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
//       CHECK:   llvm.func @d16_one_lane_kernel(
//  CHECK-SAME:     nvvm.kernel, nvvm.maxntid = array<i32: 4, 1, 1>
//   CHECK-NOT:     nvvm.shfl.sync
//       CHECK:     llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
//   CHECK-NOT:     nvvm.shfl.sync
//   CHECK-NOT:     llvm.nvvm.lg2.approx
//       CHECK:     llvm.return
// DEFAULT-LABEL: func.func @d16_one_lane
//       DEFAULT:   llvm.func @d16_one_lane_kernel(
//  DEFAULT-SAME:     nvvm.maxntid = array<i32: 64, 1, 1>
//   DEFAULT-NOT:     nvvm.shfl.sync
// ISA-LABEL: func.func @d16_one_lane
//       ISA:   gpu.binary @d16_one_lane_kernel
//  ISA-SAME:     .maxntid 4, 1, 1
//  ISA-SAME:     ex2.approx.ftz.f32
//   ISA-NOT:     shfl.sync
func.func @d16_one_lane(%q: memref<1x3x6x16xbf16>, %k: memref<1x3x4x16xbf16>,
                        %v: memref<1x3x4x16xbf16>, %o: memref<1x3x6x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x3x6x16xbf16>, memref<1x3x4x16xbf16>,
                     memref<1x3x4x16xbf16>) outs(%o : memref<1x3x6x16xbf16>)
  return
}

// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4" --cse | FileCheck %s --check-prefix=BLOCK
// RUN: attn-opt %s --attn-quantize-fp8 --cse | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=tensor --cse | FileCheck %s --check-prefix=TENSOR
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head v-granularity=channel" --cse | FileCheck %s --check-prefix=CHANNEL
// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4 hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8's scale groups. B = 1, Hq = 4, Hkv = 2, Nq = 10, Nk = 6,
// D = 16. Every group: amax = max |x| over it, descale = amax / 448 (1 if
// amax = 0), x_fp8 = truncf(x / descale); per operand the grids zero amax,
// take it (atomic max of the threads' f32 bits), write the descales, then
// quantize one row per CTA (attn-quantize-fp8.mlir shows them whole).

// qk-granularity=block (the default), block-m = block-n = 4: Q per 4 rows of
// one query head, [B, Hq, ceil(10 / 4)] = [1, 4, 3] (the last block has 2
// rows); K per 4 keys of one KV head, [1, 2, ceil(6 / 4)] = [1, 2, 2]; V per
// KV head, [1, 2]. The FP8 attention records the block sizes. The amax
// grid has four dimensions (group b, h, i and the chunk): linear block ids.
// BLOCK-LABEL: func.func @gqa
//  BLOCK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x4x10x16xbf16>
//       BLOCK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       BLOCK:   %[[QD:.*]] = memref.alloc() : memref<1x4x3xf32>
//       BLOCK:   %[[AMAX:.*]] = memref.alloc() : memref<1x4x3xi32>
//       BLOCK:   scf.forall (%{{.*}}) in (1, 4, 3) {
// for b, h, block i: rows [4 i, min(4 i + 4, 10)), all 16 columns
//       BLOCK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]], %{{.*}}) in (1, 4, 3, 1) {
//       BLOCK:     scf.forall (%{{.*}}) in (256) {
//       BLOCK:       %[[N0:.*]] = arith.muli %[[I]], %c4
//       BLOCK:       %[[N4:.*]] = arith.addi %[[N0]], %c4
//       BLOCK:       %[[N1:.*]] = arith.minui %[[N4]], %c10
//       BLOCK:       %[[ROWS:.*]] = arith.subi %[[N1]], %[[N0]]
//       BLOCK:       scf.for
//       BLOCK:         %[[R:.*]] = arith.remui %{{.*}}, %[[ROWS]]
//       BLOCK:         %[[N:.*]] = arith.addi %[[N0]], %[[R]]
//       BLOCK:         memref.load %[[Q]][%{{.*}}, %{{.*}}, %[[N]], %{{.*}}]
//       BLOCK:       memref.atomic_rmw maxs %{{.*}}, %[[AMAX]][%[[B]], %[[H]], %[[I]]]
//       BLOCK:     } {mapping = [#gpu.thread<x>]}
//       BLOCK:   } {mapping = [#gpu.block<linear_dim_0>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_3>]}
//       BLOCK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (1, 4, 3) {
//       BLOCK:     memref.store %{{.*}}, %[[QD]][%[[B]], %[[H]], %[[I]]] : memref<1x4x3xf32>
// row n of head h takes descale [b, h, n / 4] (one CTA for the 10 rows)
//       BLOCK:   scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in (1, 4, 1) {
//       BLOCK:     scf.forall (%{{.*}}) in (16) {
//       BLOCK:       scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
//       BLOCK:       %[[I:.*]] = arith.divui %[[N]], %c4
//       BLOCK:       %[[S:.*]] = memref.load %[[QD]][%[[B]], %[[H]], %[[I]]] : memref<1x4x3xf32>
//       BLOCK:       arith.divf %{{.*}}, %[[S]] : f32
//       BLOCK:       arith.truncf %{{.*}} : f32 to f8E4M3FN
//       BLOCK:   %[[K8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       BLOCK:   %[[KD:.*]] = memref.alloc() : memref<1x2x2xf32>
//       BLOCK:         arith.minui %{{.*}}, %c6
//       BLOCK:   %[[VT:.*]] = memref.alloc() : memref<1x2x16x16xf8E4M3FN>
//       BLOCK:   %[[V8:.*]] = memref.transpose
//       BLOCK:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//       BLOCK:   attn.attention ins(%[[Q8]], %[[K8]], %[[V8]] : {{.*}}) descale(%[[QD]], %[[KD]], %[[VD]] : memref<1x4x3xf32>, memref<1x2x2xf32>, memref<1x2xf32>) {k_descale_block = 4 : i64, q_descale_block = 4 : i64}
//   BLOCK-NOT:   arith.xori

// Block sizes 0 (the default) are the FP8 tensor-core tile's: BLOCK_N = 128
// and, for D = 16 and Nq = 10, BLOCK_M = 128: one block per head here.
// DEFAULT-LABEL: func.func @gqa
//       DEFAULT:   attn.attention {{.*}} descale({{.*}} : memref<1x4x1xf32>, memref<1x2x1xf32>, memref<1x2xf32>) {k_descale_block = 128 : i64, q_descale_block = 128 : i64}

// qk-granularity=tensor: one amax over all of Q (and of K), [1, 1], read by
// every entry of the [B, Hkv] descale operand; no block attributes.
// TENSOR-LABEL: func.func @gqa
//       TENSOR:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       TENSOR:   %[[QD:.*]] = memref.alloc() : memref<1x2xf32>
//       TENSOR:   %[[AMAX:.*]] = memref.alloc() : memref<1x1xi32>
//       TENSOR:   scf.forall (%[[G0:.*]], %[[G1:.*]], %{{.*}}) in (1, 1, 1) {
//       TENSOR:     scf.forall (%{{.*}}) in (256) {
//       TENSOR:       memref.atomic_rmw maxs %{{.*}}, %[[AMAX]][%[[G0]], %[[G1]]]
//       TENSOR:   scf.forall (%[[B:.*]], %[[G:.*]]) in (1, 2) {
//       TENSOR:     %[[BITS:.*]] = memref.load %[[AMAX]][%c0, %c0] : memref<1x1xi32>
//       TENSOR:     memref.store %{{.*}}, %[[QD]][%[[B]], %[[G]]] : memref<1x2xf32>
//       TENSOR:   memref.dealloc %[[AMAX]]
//       TENSOR:   attn.attention {{.*}} descale(%[[QD]], %{{.*}}, %{{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>){{$}}

// v-granularity=channel: V per (b, KV head, column c), amax over the Nk
// rows of column c: [1, 2, 16]; element (b, h, n, j) takes descale [b, h, j].
// CHANNEL-LABEL: func.func @gqa
//  CHANNEL-SAME:   %{{[a-z0-9]+}}: memref<1x2x6x16xbf16>, %[[V:[a-z0-9]+]]: memref<1x2x6x16xbf16>
//       CHANNEL:   %[[VT:.*]] = memref.alloc() : memref<1x2x16x16xf8E4M3FN>
//       CHANNEL:   %[[V8:.*]] = memref.transpose
//       CHANNEL:   %[[VD:.*]] = memref.alloc() : memref<1x2x16xf32>
//       CHANNEL:   %[[AMAX:.*]] = memref.alloc() : memref<1x2x16xi32>
//       CHANNEL:   scf.forall (%[[B:.*]], %[[G:.*]], %[[C:.*]], %{{.*}}) in (1, 2, 16, 1) {
//       CHANNEL:       %[[C1:.*]] = arith.addi %[[C]], %c1
//       CHANNEL:       scf.for
//       CHANNEL:         %[[J:.*]] = arith.addi %[[C]], %{{.*}}
//       CHANNEL:         memref.load %[[V]][%{{.*}}, %{{.*}}, %{{.*}}, %[[J]]]
//       CHANNEL:       memref.atomic_rmw maxs %{{.*}}, %[[AMAX]][%[[B]], %[[G]], %[[C]]]
//       CHANNEL:   scf.forall (%[[B:.*]], %[[G:.*]], %[[C:.*]]) in (1, 2, 16) {
//       CHANNEL:     memref.store %{{.*}}, %[[VD]][%[[B]], %[[G]], %[[C]]] : memref<1x2x16xf32>
// V^T: one thread per key n, looping over the channels j.
//       CHANNEL:   scf.forall (%[[B:.*]], %[[G:.*]], %{{.*}}) in (1, 2, 1) {
//       CHANNEL:     scf.forall (%{{.*}}) in (128) {
//       CHANNEL:       %[[N:.*]] = arith.addi
//       CHANNEL:       scf.for %[[J:.*]] = %c0 to %c16
//       CHANNEL:       memref.load %[[VD]][%[[B]], %[[G]], %[[J]]] : memref<1x2x16xf32>
//       CHANNEL:       memref.store %{{.*}}, %[[V8]][%[[B]], %[[G]], %[[N]], %[[J]]] : memref<1x2x6x16xf8E4M3FN, strided<[512, 256, 1, 16]>>
//       CHANNEL:   attn.attention {{.*}} descale({{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x16xf32>){{$}}

// hadamard=true with blocks: amax and quantization of the rotated rows
// (sum over the 16 columns with signs) in each block of Q and K; V plain.
// HAD-LABEL: func.func @gqa
//       HAD:   memref.alloc() : memref<1x4x3xf32>
//       HAD:   arith.minui
//       HAD:   arith.xori
//       HAD:   memref.alloc() : memref<1x2x2xf32>
//       HAD:   arith.xori
//       HAD:   memref.alloc() : memref<1x2xf32>
//   HAD-NOT:   arith.xori
//       HAD:   attn.attention
func.func @gqa(%q: memref<1x4x10x16xbf16>, %k: memref<1x2x6x16xbf16>,
               %v: memref<1x2x6x16xbf16>, %o: memref<1x4x10x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x10x16xbf16>, memref<1x2x6x16xbf16>,
                     memref<1x2x6x16xbf16>) outs(%o : memref<1x4x10x16xbf16>)
  return
}

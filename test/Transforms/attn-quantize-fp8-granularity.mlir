// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4" --cse | FileCheck %s --check-prefix=BLOCK
// RUN: attn-opt %s --attn-quantize-fp8 --cse | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=tensor --cse | FileCheck %s --check-prefix=TENSOR
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head v-granularity=channel" --cse | FileCheck %s --check-prefix=CHANNEL
// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4 hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8's scale groups. B = 1, Hq = 4, Hkv = 2, Nq = 10, Nk = 6,
// D = 16. Every group: amax = max |x| over it, descale = amax / 448 (1 if
// amax = 0), x_fp8 = truncf(x / descale); per operand, except per-block Q
// and K (one grid each, below), the grids zero amax, take it (atomic max of
// the threads' f32 bits), write the descales, then quantize
// (attn-quantize-fp8.mlir shows them whole).

// qk-granularity=block (the default), block-m = block-n = 4: Q per 4 rows of
// one query head, [B, Hq, ceil(10 / 4)] = [1, 4, 3] (the last block has 2
// rows); K per 4 keys of one KV head, [1, 2, ceil(6 / 4)] = [1, 2, 2]; V per
// KV head, [1, 2]. The FP8 attention records the block sizes. A block's
// amax is CTA-local, so Q and K take one grid each: a CTA of 256 threads
// per (row block, head, batch) runs, one after another, with a workgroup
// buffer `part` (shared memory on the GPU, a barrier between the loops):
//   part[t] = max |x| over thread t's 8-column chunks (vector loads)
//   part[16 t] = max of part[16 t .. 16 t + 15] for t < 16, then
//   part[0] = max of part[16 i]             (two levels, two barriers)
//   descale = part[0] > 0 ? part[0] / 448 : 1, stored by thread 0
//   x_fp8   = truncf(x / descale)           (8-byte vector stores; a
//             multiply and two fmas with r = 1 / descale where the descale
//             is normal, division otherwise: the same rounding)
// BLOCK-LABEL: func.func @gqa
//  BLOCK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x4x10x16xbf16>
//       BLOCK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       BLOCK:   %[[QD:.*]] = memref.alloc() : memref<1x4x3xf32>
//   BLOCK-NOT:   memref.atomic_rmw
//       BLOCK:   scf.forall (%[[I:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[B:[a-z0-9]+]]) in (3, 4, 1) {
//       BLOCK:     %[[PART:.*]] = memref.alloca() : memref<256xf32, #gpu.address_space<workgroup>>
// rows [4 i, min(4 i + 4, 10)), 2 chunks of 8 columns a row
//       BLOCK:     %[[N0:.*]] = arith.muli %[[I]], %c4
//       BLOCK:     %[[N4:.*]] = arith.addi %[[N0]], %c4
//       BLOCK:     %[[N1:.*]] = arith.minui %[[N4]], %c10
//       BLOCK:     scf.forall (%[[T:.*]]) in (256) {
//       BLOCK:       %[[ROWS:.*]] = arith.subi %[[N1]], %[[N0]]
//       BLOCK:       %[[CHUNKS:.*]] = arith.muli %[[ROWS]], %c2
//       BLOCK:       %[[M:.*]] = scf.for %[[C:.*]] = %[[T]] to %[[CHUNKS]] step %c256 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
//       BLOCK:         %[[R:.*]] = arith.divui %[[C]], %c2
//       BLOCK:         %[[N:.*]] = arith.addi %[[N0]], %[[R]]
//       BLOCK:         %[[CC:.*]] = arith.remui %[[C]], %c2
//       BLOCK:         %[[J:.*]] = arith.muli %[[CC]], %c8
//       BLOCK:         %[[X:.*]] = vector.load %[[Q]][%[[B]], %[[H]], %[[N]], %[[J]]] : memref<1x4x10x16xbf16>, vector<8xbf16>
//       BLOCK:         %[[XF:.*]] = arith.extf %[[X]] : vector<8xbf16> to vector<8xf32>
//       BLOCK:         %[[X0:.*]] = vector.extract %[[XF]][0]
//       BLOCK:         %[[A0:.*]] = math.absf %[[X0]]
//       BLOCK:         arith.maximumf %[[ACC]], %[[A0]]
//       BLOCK:         scf.yield
//       BLOCK:       memref.store %[[M]], %[[PART]][%[[T]]]
//       BLOCK:     } {mapping = [#gpu.thread<x>]}
//       BLOCK:     scf.forall (%[[T:.*]]) in (16) {
//       BLOCK:       %[[BASE:.*]] = arith.muli %[[T]], %c16
//       BLOCK:       %[[P0:.*]] = memref.load %[[PART]][%[[BASE]]]
//       BLOCK:       %[[I1:.*]] = arith.addi %[[BASE]], %c1
//       BLOCK:       %[[P1:.*]] = memref.load %[[PART]][%[[I1]]]
//       BLOCK:       arith.maximumf %[[P0]], %[[P1]]
// BLOCK-COUNT-14:      arith.maximumf
//       BLOCK:       memref.store %{{.*}}, %[[PART]][%[[BASE]]]
//       BLOCK:     } {mapping = [#gpu.thread<x>]}
//       BLOCK:     scf.forall (%[[T:.*]]) in (1) {
//       BLOCK:       %[[BASE:.*]] = arith.muli %[[T]], %c256
//       BLOCK:       memref.load %[[PART]][%[[BASE]]]
//       BLOCK:       %[[I16:.*]] = arith.addi %[[BASE]], %c16
//       BLOCK:       memref.load %[[PART]][%[[I16]]]
// BLOCK-COUNT-15:      arith.maximumf
//       BLOCK:     } {mapping = [#gpu.thread<x>]}
//       BLOCK:     scf.forall (%[[T:.*]]) in (256) {
//       BLOCK:       %[[AMAX:.*]] = memref.load %[[PART]][%c0]
//       BLOCK:       %[[POS:.*]] = arith.cmpf ogt, %[[AMAX]]
//       BLOCK:       %[[DIV:.*]] = arith.divf %[[AMAX]], %{{.*}} : f32
//       BLOCK:       %[[S:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : f32
//       BLOCK:       %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
//       BLOCK:       scf.if %[[FIRST]] {
//       BLOCK:         memref.store %[[S]], %[[QD]][%[[B]], %[[H]], %[[I]]] : memref<1x4x3xf32>
//       BLOCK:       scf.if %{{.*}} {
//       BLOCK:         %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
//       BLOCK:         scf.for
//       BLOCK:           %[[X:.*]] = vector.load %[[Q]]
//       BLOCK:           %[[X0:.*]] = vector.extract
//       BLOCK:           %[[Y0:.*]] = arith.mulf %[[X0]], %[[R]] : f32
//       BLOCK:           math.fma
//       BLOCK:           math.fma
//       BLOCK:           %[[C0:.*]] = arith.select
//       BLOCK:           %[[E0:.*]] = arith.truncf %[[C0]] : f32 to f8E4M3FN
//       BLOCK:           %[[E:.*]] = vector.from_elements %[[E0]], {{.*}} : vector<8xf8E4M3FN>
//       BLOCK:           vector.store %[[E]], %[[Q8]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x4x10x16xf8E4M3FN>, vector<8xf8E4M3FN>
//       BLOCK:       } else {
//       BLOCK:         scf.for
//       BLOCK:           %[[X:.*]] = vector.load %[[Q]]
//       BLOCK:           %[[X0:.*]] = vector.extract
//       BLOCK:           %[[Y0:.*]] = arith.divf %[[X0]], %[[S]] : f32
//       BLOCK:           arith.truncf %[[Y0]] : f32 to f8E4M3FN
//       BLOCK:     } {mapping = [#gpu.thread<x>]}
//       BLOCK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
//       BLOCK:   %[[K8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       BLOCK:   %[[KD:.*]] = memref.alloc() : memref<1x2x2xf32>
//       BLOCK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 1) {
//       BLOCK:         arith.minui %{{.*}}, %c6
// V keeps its four grids (per KV head, written as V^T).
//       BLOCK:   %[[VT:.*]] = memref.alloc() : memref<1x2x16x16xf8E4M3FN>
//       BLOCK:   %[[V8:.*]] = memref.transpose
//       BLOCK:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//       BLOCK:   memref.atomic_rmw maxs
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
// V^T through the shared tile: each element of a chunk (channels j .. j + 7)
// divided by its own channel's descale.
//       CHANNEL:   scf.forall (%{{.*}}, %[[G:.*]], %[[B:.*]]) in (1, 2, 1) {
//       CHANNEL:     memref.alloca() {alignment = 16 : i64} : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHANNEL:     scf.forall (%{{.*}}) in (256) {
//       CHANNEL:         %[[J0:.*]] = arith.addi %[[J:.*]], %c0
//       CHANNEL:         memref.load %[[VD]][%[[B]], %[[G]], %[[J0]]] : memref<1x2x16xf32>
//       CHANNEL:         %[[J1:.*]] = arith.addi %[[J]], %c1
//       CHANNEL:         memref.load %[[VD]][%[[B]], %[[G]], %[[J1]]] : memref<1x2x16xf32>
//       CHANNEL:     vector.store %{{.*}}, %[[VT:.*]][%[[B]], %[[G]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1x2x16x16xf8E4M3FN>, vector<16xf8E4M3FN>
//       CHANNEL:   attn.attention {{.*}} descale({{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x16xf32>){{$}}

// hadamard=true with blocks: amax and quantization of the rotated rows
// (sum over the 16 columns with signs, element by element: no vector load)
// in each block of Q and K; V plain.
// HAD-LABEL: func.func @gqa
//       HAD:   memref.alloc() : memref<1x4x3xf32>
//       HAD:   arith.minui
//   HAD-NOT:   vector.load
//       HAD:   arith.xori
//       HAD:   vector.store
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

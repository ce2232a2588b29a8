// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4" --cse | FileCheck %s --check-prefix=BLOCK
// RUN: attn-opt %s --attn-quantize-fp8 --cse | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=tensor --cse | FileCheck %s --check-prefix=TENSOR
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head v-granularity=channel" --cse | FileCheck %s --check-prefix=CHANNEL
// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4 hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8's scale groups. B = 1, Hq = 4, Hkv = 2, Nq = 10, Nk = 6,
// D = 16. Every group: amax = max |x| over it, descale = amax / 448 (1 if
// amax = 0), x_fp8 = truncf(x / descale). The first launch takes every
// amax (one grid, CTAs of 256 threads, a program per operand); per-block Q
// and K finish there, other operands store their CTAs' maxima (partials)
// and take a second grid each: descale from the partials, then the copy
// (attn-quantize-fp8.mlir shows them whole).

// qk-granularity=block (the default), block-m = block-n = 4: Q per 4 rows of
// one query head, [B, Hq, ceil(10 / 4)] = [1, 4, 3] (the last block has 2
// rows); K per 4 keys of one KV head, [1, 2, ceil(6 / 4)] = [1, 2, 2]; V per
// KV head, [1, 2]. The FP8 attention records the block sizes. A block's
// amax is CTA-local: its CTA (row block fastest, then head, batch) runs,
// one after another, with a workgroup buffer `part` (shared memory on the
// GPU, a barrier between the loops):
//   part[t] = max |x| over thread t's 8-column chunks (vector loads)
//   part[16 t] = max of part[16 t .. 16 t + 15] for t < 16, then
//   part[0] = max of part[16 i]             (two levels, two barriers)
//   descale = part[0] > 0 ? part[0] / 448 : 1, stored by thread 0
//   x_fp8   = truncf(x / descale)           (8-byte vector stores; a
//             multiply and two fmas with r = 1 / descale where the descale
//             is at least 2^-88, division otherwise: the same rounding)
// Q's 12 CTAs, K's 4, V's 2 (one per KV head) share the grid.
// BLOCK-LABEL: func.func @gqa
//  BLOCK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x4x10x16xbf16>
//       BLOCK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       BLOCK:   %[[QD:.*]] = memref.alloc() : memref<1x4x3xf32>
//       BLOCK:   %[[K8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       BLOCK:   %[[KD:.*]] = memref.alloc() : memref<1x2x2xf32>
//       BLOCK:   %[[VT:.*]] = memref.alloc() : memref<1x2x16x16xf8E4M3FN>
//       BLOCK:   %[[V8:.*]] = memref.transpose
//       BLOCK:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//       BLOCK:   %[[VP:.*]] = memref.alloc() : memref<1x2x1xf32>
//   BLOCK-NOT:   memref.atomic_rmw
//       BLOCK:   scf.forall (%[[ID:.*]]) in (18) {
//       BLOCK:     %[[PART:.*]] = memref.alloca() : memref<256xf32, #gpu.address_space<workgroup>>
//       BLOCK:     scf.forall (%[[T:.*]]) in (256) {
//       BLOCK:       %[[ISQ:.*]] = arith.cmpi ult, %[[ID]], %c12
//       BLOCK:       scf.if %[[ISQ]] {
// rows [4 i, min(4 i + 4, 10)), 2 chunks of 8 columns a row
//       BLOCK:         %[[I:.*]] = arith.remui %[[ID]], %c3
//       BLOCK:         %[[IH:.*]] = arith.divui %[[ID]], %c3
//       BLOCK:         %[[H:.*]] = arith.remui %[[IH]], %c4
//       BLOCK:         %[[N0:.*]] = arith.muli %[[I]], %c4
//       BLOCK:         %[[N4:.*]] = arith.addi %[[N0]], %c4
//       BLOCK:         %[[N1:.*]] = arith.minui %[[N4]], %c10
//       BLOCK:         %[[ROWS:.*]] = arith.subi %[[N1]], %[[N0]]
//       BLOCK:         %[[CHUNKS:.*]] = arith.muli %[[ROWS]], %c2
//       BLOCK:         %[[M:.*]] = scf.for %[[C:.*]] = %[[T]] to %[[CHUNKS]] step %c256 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
//       BLOCK:           %[[R:.*]] = arith.divui %[[C]], %c2
//       BLOCK:           %[[N:.*]] = arith.addi %[[N0]], %[[R]]
//       BLOCK:           %[[CC:.*]] = arith.remui %[[C]], %c2
//       BLOCK:           %[[J:.*]] = arith.muli %[[CC]], %c8
//       BLOCK:           %[[X:.*]] = vector.load %[[Q]][%{{.*}}, %[[H]], %[[N]], %[[J]]] : memref<1x4x10x16xbf16>, vector<8xbf16>
//       BLOCK:           %[[XF:.*]] = arith.extf %[[X]] : vector<8xbf16> to vector<8xf32>
//       BLOCK:           %[[X0:.*]] = vector.extract %[[XF]][0]
//       BLOCK:           %[[A0:.*]] = math.absf %[[X0]]
//       BLOCK:           arith.maximumf %[[ACC]], %[[A0]]
//       BLOCK:           scf.yield
//       BLOCK:         memref.store %[[M]], %[[PART]][%[[T]]]
//       BLOCK:       } else {
// K's CTAs: rows [4 i, min(4 i + 4, 6))
//       BLOCK:         arith.cmpi ult, %[[ID]], %c16
//       BLOCK:           arith.minui %{{.*}}, %c6
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
//       BLOCK:       scf.if
//       BLOCK:         %[[I:.*]] = arith.remui %[[ID]], %c3
//       BLOCK:         %[[IH:.*]] = arith.divui %[[ID]], %c3
//       BLOCK:         %[[H:.*]] = arith.remui %[[IH]], %c4
//       BLOCK:         %[[POS:.*]] = arith.cmpf ogt, %[[AMAX]]
//       BLOCK:         %[[DIV:.*]] = arith.divf %[[AMAX]], %{{.*}} : f32
//       BLOCK:         %[[S:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : f32
//       BLOCK:         %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
//       BLOCK:         scf.if %[[FIRST]] {
//       BLOCK:           memref.store %[[S]], %[[QD]][%{{.*}}, %[[H]], %[[I]]] : memref<1x4x3xf32>
//       BLOCK:         scf.if %{{.*}} {
//       BLOCK:           %[[RCP:.*]] = arith.divf %{{.*}}, %[[S]] : f32
//       BLOCK:           scf.for
//       BLOCK:             %[[X:.*]] = vector.load %[[Q]]
//       BLOCK:             %[[X0:.*]] = vector.extract
//       BLOCK:             %[[Y0:.*]] = arith.mulf %[[X0]], %[[RCP]] : f32
//       BLOCK:             math.fma
//       BLOCK:             math.fma
//       BLOCK:             %[[C0:.*]] = arith.select
//       BLOCK:             %[[E0:.*]] = arith.truncf %[[C0]] : f32 to f8E4M3FN
//       BLOCK:             %[[E:.*]] = vector.from_elements %[[E0]], {{.*}} : vector<8xf8E4M3FN>
//       BLOCK:             vector.store %[[E]], %[[Q8]][%{{.*}}, %[[H]], %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x4x10x16xf8E4M3FN>, vector<8xf8E4M3FN>
//       BLOCK:         } else {
//       BLOCK:           scf.for
//       BLOCK:             %[[X:.*]] = vector.load %[[Q]]
//       BLOCK:             %[[X0:.*]] = vector.extract
//       BLOCK:             %[[Y0:.*]] = arith.divf %[[X0]], %[[S]] : f32
//       BLOCK:             arith.truncf %[[Y0]] : f32 to f8E4M3FN
// K's CTAs the same on [1, 2, 2]; V's store their CTA's max.
//       BLOCK:           memref.store %{{.*}}, %[[KD]]
//       BLOCK:           memref.store %{{.*}}, %[[VP]]
//       BLOCK:   } {mapping = [#gpu.block<x>]}
// V: descale from the partials, then V^T (attn-quantize-fp8.mlir).
//       BLOCK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 1) {
//       BLOCK:       memref.load %[[VP]]
//       BLOCK:   memref.dealloc %[[VP]]
//       BLOCK:   attn.attention ins(%[[Q8]], %[[K8]], %[[V8]] : {{.*}}) descale(%[[QD]], %[[KD]], %[[VD]] : memref<1x4x3xf32>, memref<1x2x2xf32>, memref<1x2xf32>) {k_descale_block = 4 : i64, q_descale_block = 4 : i64}
//   BLOCK-NOT:   arith.xori

// Block sizes 0 (the default) are the FP8 tensor-core tile's: BLOCK_N = 128
// and, for D = 16 and Nq = 10, BLOCK_M = 128: one block per head here.
// A block longer than N is one block of N rows: 10 rows of 2 chunks give
// no thread a static count (whole blocks of 128 rows would: 256 chunks,
// straight-line, attn-quantize-fp8-vt.mlir), so only the loop is emitted.
// DEFAULT-LABEL: func.func @gqa
//       DEFAULT:   scf.forall (%[[T:.*]]) in (256) {
//       DEFAULT:       %[[N0:.*]] = arith.muli %{{.*}}, %c128
//       DEFAULT:       %[[N1:.*]] = arith.minui %{{.*}}, %c10
//       DEFAULT:       %[[ROWS:.*]] = arith.subi %[[N1]], %[[N0]]
//   DEFAULT-NOT:       scf.if
//       DEFAULT:       scf.for %{{.*}} = %[[T]] to %{{.*}} step %c256 iter_args
//       DEFAULT:         vector.load
//       DEFAULT:   attn.attention {{.*}} descale({{.*}} : memref<1x4x1xf32>, memref<1x2x1xf32>, memref<1x2xf32>) {k_descale_block = 128 : i64, q_descale_block = 128 : i64}

// qk-granularity=tensor: one amax over all of Q (and of K): partials
// [1, 1, 1] (640 elements: one CTA), read by every CTA of Q's copy; each
// entry of the [B, Hkv] descale operand is stored by the first row block
// of the first query head of its KV head; no block attributes.
// TENSOR-LABEL: func.func @gqa
//       TENSOR:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       TENSOR:   %[[QD:.*]] = memref.alloc() : memref<1x2xf32>
//       TENSOR:   %[[QP:.*]] = memref.alloc() : memref<1x1x1xf32>
//       TENSOR:   scf.forall (%{{.*}}) in (4) {
//       TENSOR:     scf.forall (%{{.*}}) in (256) {
//       TENSOR:       memref.store %{{.*}}, %[[QP]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1x1xf32>
//       TENSOR:   scf.forall (%[[B:.*]], %[[H:.*]], %[[NB:.*]]) in (1, 4, 1) {
//       TENSOR:     scf.forall (%{{.*}}) in (1) {
//       TENSOR:       %[[HK:.*]] = arith.divui %[[H]], %c2
//       TENSOR:       memref.load %[[QP]][%c0, %c0, %{{.*}}] : memref<1x1x1xf32>
//       TENSOR:       %[[S:.*]] = arith.select
//       TENSOR:       %[[HR:.*]] = arith.remui %[[H]], %c2
//       TENSOR:       scf.if
//       TENSOR:         memref.store %[[S]], %[[QD]][%[[B]], %[[HK]]] : memref<1x2xf32>
//       TENSOR:   memref.dealloc %[[QP]]
//       TENSOR:   attn.attention {{.*}} descale(%[[QD]], %{{.*}}, %{{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>){{$}}

// v-granularity=channel: V per (b, KV head, column c), amax over the Nk
// rows of column c: [1, 2, 16]; element (b, h, n, j) takes descale [b, h, j].
// The first launch's V program: one CTA per channel (not whole rows: one
// element at a time), its max to partials [1, 2, 16, 1].
// CHANNEL-LABEL: func.func @gqa
//  CHANNEL-SAME:   %{{[a-z0-9]+}}: memref<1x2x6x16xbf16>, %[[V:[a-z0-9]+]]: memref<1x2x6x16xbf16>
//       CHANNEL:   %[[VT:.*]] = memref.alloc() : memref<1x2x16x16xf8E4M3FN>
//       CHANNEL:   %[[V8:.*]] = memref.transpose
//       CHANNEL:   %[[VD:.*]] = memref.alloc() : memref<1x2x16xf32>
//       CHANNEL:   %[[VP:.*]] = memref.alloc() : memref<1x2x16x1xf32>
//       CHANNEL:   scf.forall (%{{.*}}) in (36) {
//       CHANNEL:       } else {
//       CHANNEL:         } else {
//       CHANNEL:           scf.for
//       CHANNEL:             memref.load %[[V]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x2x6x16xbf16>
//       CHANNEL:   } {mapping = [#gpu.block<x>]}
// V^T through the shared tile: phase 0 takes the 16 channels' descales
// into a workgroup buffer (the head's first CTA stores them); then each
// element of a chunk (channels j .. j + 7) is divided by its channel's.
//       CHANNEL:   scf.forall (%{{.*}}, %[[G:.*]], %[[B:.*]]) in (1, 2, 1) {
//       CHANNEL:     memref.alloca() {alignment = 16 : i64} : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHANNEL:     %[[SC:.*]] = memref.alloca() : memref<16xf32, #gpu.address_space<workgroup>>
//       CHANNEL:     scf.forall (%[[C:.*]]) in (16) {
//       CHANNEL:         memref.load %[[VP]][%[[B]], %[[G]], %[[C]], %{{.*}}] : memref<1x2x16x1xf32>
//       CHANNEL:       %[[S:.*]] = arith.select
//       CHANNEL:       memref.store %[[S]], %[[SC]][%[[C]]]
//       CHANNEL:         memref.store %[[S]], %[[VD]][%[[B]], %[[G]], %[[C]]] : memref<1x2x16xf32>
//       CHANNEL:     scf.forall (%{{.*}}) in (256) {
//       CHANNEL:         %[[J0:.*]] = arith.addi %[[J:.*]], %c0
//       CHANNEL:         %[[S0:.*]] = memref.load %[[SC]][%[[J0]]]
//       CHANNEL:         arith.divf %{{.*}}, %[[S0]] : f32
//       CHANNEL:         %[[J1:.*]] = arith.addi %[[J]], %c1
//       CHANNEL:         %[[S1:.*]] = memref.load %[[SC]][%[[J1]]]
//       CHANNEL:         arith.divf %{{.*}}, %[[S1]] : f32
//       CHANNEL:     vector.store %{{.*}}, %[[VT:.*]][%[[B]], %[[G]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1x2x16x16xf8E4M3FN>, vector<16xf8E4M3FN>
//       CHANNEL:   attn.attention {{.*}} descale({{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x16xf32>){{$}}

// hadamard=true with blocks: each block of Q and K takes a launch of its
// own, the rotation as a fast Walsh-Hadamard transform in a workgroup tile
// (4 rows x 16 columns here): rows loaded with the signs S (bits of 36005
// set where s_i = -1; rows past Nq zero), then log2(16) = 4 butterfly
// passes (a, b) -> (a + b, a - b) over columns 1, 2, 4 apart (in registers,
// inside a loaded chunk of 8) and 8 apart (in the tile), the amax of
// tile / sqrt(16); then the same again for the copy. V plain, in the amax
// launch.
// HAD-LABEL: func.func @gqa
//       HAD:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       HAD:   memref.alloc() : memref<1x4x3xf32>
//       HAD:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 4, 1) {
//       HAD:     %[[TILE:.*]] = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
//       HAD:     %[[PART:.*]] = memref.alloca() : memref<256xf32, #gpu.address_space<workgroup>>
//       HAD:     scf.forall (%{{.*}}) in (256) {
//       HAD:         vector.load %{{.*}} : memref<1x4x10x16xbf16>, vector<8xbf16>
//       HAD:         %[[SIGNS:.*]] = arith.constant 36005 : i64
//       HAD:         arith.shrui %[[SIGNS]]
//       HAD:         arith.select
// HAD-COUNT-12:        arith.subf
//       HAD:       memref.store %{{.*}}, %[[TILE]]
//       HAD:     scf.forall (%{{.*}}) in (256) {
//       HAD:       arith.remui %{{.*}}, %c8
//       HAD:       %[[X:.*]] = memref.load %[[TILE]]
//       HAD:       %[[Y:.*]] = memref.load %[[TILE]]
//       HAD:       %[[SUM:.*]] = arith.addf %[[X]], %[[Y]]
//       HAD:       memref.store %[[SUM]], %[[TILE]]
//       HAD:       %[[DIFF:.*]] = arith.subf %[[X]], %[[Y]]
//       HAD:       memref.store %[[DIFF]], %[[TILE]]
//       HAD:     scf.forall (%[[T:.*]]) in (256) {
//       HAD:         %[[E:.*]] = memref.load %[[TILE]]
//       HAD:         %[[R:.*]] = arith.mulf %[[E]], %cst{{.*}} : f32
//       HAD:         math.absf %[[R]]
//       HAD:       memref.store %{{.*}}, %[[PART]][%[[T]]]
//       HAD:     scf.forall (%{{.*}}) in (16) {
//       HAD:     scf.forall (%{{.*}}) in (1) {
// The copy: the batch rotated again, then truncf(tile / 4 / descale).
//       HAD:     scf.forall (%{{.*}}) in (256) {
//       HAD:       arith.shrui %[[SIGNS]]
// HAD-COUNT-13:    arith.subf
//       HAD:         memref.load %[[TILE]]
//       HAD:         arith.truncf
//       HAD:         vector.store %{{.*}}, %[[Q8]]
//       HAD:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
//       HAD:   memref.alloc() : memref<1x2x2xf32>
//       HAD:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 1) {
//       HAD:   memref.alloc() : memref<1x2xf32>
// The amax launch holds only V's program.
//       HAD:   scf.forall (%{{.*}}) in (2) {
//   HAD-NOT:   arith.shrui
//       HAD:   attn.attention
func.func @gqa(%q: memref<1x4x10x16xbf16>, %k: memref<1x2x6x16xbf16>,
               %v: memref<1x2x6x16xbf16>, %o: memref<1x4x10x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x10x16xbf16>, memref<1x2x6x16xbf16>,
                     memref<1x2x6x16xbf16>) outs(%o : memref<1x4x10x16xbf16>)
  return
}

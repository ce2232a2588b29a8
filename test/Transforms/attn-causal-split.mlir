// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" --attn-causal-split --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" --attn-causal-split --cse | FileCheck %s --check-prefix=NOFOLD
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=8 block-n=16" --attn-causal-split --canonicalize | FileCheck %s --check-prefix=BN16

// attn-causal-split: the K/V loop of a masked attn.online_attention becomes
//   scf.for kb = 0 to num_full          {attn.stage = "full"}    mask none
//   scf.for kb = num_full to num_end    {attn.stage = "masked"}  original mask
// and blocks from num_end on are skipped (entirely above the diagonal).
//   non-causal: num_full = Nk floordiv BN, num_end = ceildiv(Nk, BN)
//   causal (offset = Nk - Nq, q_pos = qb * BM):
//     num_full = clamp(q_pos + offset + 1, 0, Nk) floordiv BN
//     num_end  = ceildiv(clamp(q_pos + BM + offset, 0, Nk), BN)
// Default prefix: BM = 16, BN = 8 (BN < BM). Prefix BN16 is BM = 8, BN = 16
// (BN > BM); prefix NOFOLD is the IR before canonicalization.

// Non-causal, Nk = 77: num_full = 77 floordiv 8 = 9, num_end = ceil(77/8) =
// 10. The masked stage runs a single block, so canonicalize inlines it: one
// bounds-masked step at k_pos = 9 * 8 = 72 after the full loop.
// CHECK-LABEL: func.func @bounds_tail
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C9:.*]] = arith.constant 9 : index
//   CHECK-DAG:   %[[C72:.*]] = arith.constant 72 : index
//       CHECK:   scf.forall
//       CHECK:     %[[QPOS:.*]] = arith.muli
//       CHECK:     %[[FULL:.*]]:3 = scf.for %{{.*}} = %[[C0]] to %[[C9]] step %[[C1]]
//       CHECK:       attn.online_attention
//  CHECK-SAME:         rows(%[[QPOS]]) state
//  CHECK-SAME:         mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//   CHECK-NOT:     scf.for
//       CHECK:     %[[M:.*]], %[[L:.*]], %[[ACC:.*]] = attn.online_attention
//  CHECK-SAME:       at[%{{.*}}, %{{.*}}, %[[C72]], %[[C0]]] rows(%[[QPOS]]) state(%[[FULL]]#0, %[[FULL]]#1, %[[FULL]]#2
//  CHECK-SAME:       mask = #attn.mask<bounds>
//       CHECK:     attn.epilogue state(%[[M]], %[[L]], %[[ACC]]
// Before canonicalization: both loops, bounds 0..9 and 9..10, chained state.
// NOFOLD-LABEL: func.func @bounds_tail
//   NOFOLD-DAG:   %[[C9:.*]] = arith.constant 9 : index
//   NOFOLD-DAG:   %[[C10:.*]] = arith.constant 10 : index
//       NOFOLD:   %[[FULL:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[C9]] step
//       NOFOLD:     mask = #attn.mask<none>
//       NOFOLD:   } {attn.stage = "full"}
//       NOFOLD:   %[[MASKED:.*]]:3 = scf.for %{{.*}} = %[[C9]] to %[[C10]] step %{{.*}} iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
//       NOFOLD:     mask = #attn.mask<bounds>
//       NOFOLD:   } {attn.stage = "masked"}
//       NOFOLD:   attn.epilogue state(%[[MASKED]]#0, %[[MASKED]]#1, %[[MASKED]]#2
// BN = 16: num_full = 77 floordiv 16 = 4, num_end = ceil(77/16) = 5; the
// one masked block starts at key 64.
// BN16-LABEL: func.func @bounds_tail
//   BN16-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   BN16-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       BN16:   scf.for %{{.*}} = %{{.*}} to %[[C4]] step
//       BN16:   } {attn.stage = "full"}
//       BN16:   attn.online_attention {{.*}} at[%{{.*}}, %{{.*}}, %[[C64]], %{{.*}}] {{.*}} mask = #attn.mask<bounds>
func.func @bounds_tail(%q: memref<2x2x40x16xf16>, %k: memref<2x2x77x16xf16>,
                       %v: memref<2x2x77x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x77x16xf16>,
                     memref<2x2x77x16xf16>) outs(%o : memref<2x2x40x16xf16>)
  return
}

// -----

// Causal, Nq = 40 < Nk = 64: offset = 24 (Nk = 8 * BN, so no tail).
//   num_full = clamp(q_pos + 25, 0, 64) floordiv 8
//   num_end  = ceildiv(clamp(q_pos + 16 + 24, 0, 64), 8)
// CHECK-LABEL: func.func @causal_nq_lt_nk
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : index
//   CHECK-DAG:   %[[C25:.*]] = arith.constant 25 : index
//   CHECK-DAG:   %[[C40:.*]] = arith.constant 40 : index
//   CHECK-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (3, 2, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
// first row's key end: q_pos + offset + 1; last row's: q_pos + BM + offset
//   CHECK-DAG:     %[[FIRST:.*]] = arith.addi %[[QPOS]], %[[C25]] : index
//   CHECK-DAG:     %[[LAST:.*]] = arith.addi %[[QPOS]], %[[C40]] : index
// num_full = clamp(first, 0, Nk) floordiv BN
//       CHECK:     %[[F0:.*]] = arith.maxsi %[[FIRST]], %[[C0]] : index
//       CHECK:     %[[F1:.*]] = arith.minsi %[[F0]], %[[C64]] : index
//       CHECK:     %[[NFULL:.*]] = arith.divui %[[F1]], %[[C8]] : index
// num_end = ceildiv(clamp(last, 0, Nk), BN)
//       CHECK:     %[[E0:.*]] = arith.maxsi %[[LAST]], %[[C0]] : index
//       CHECK:     %[[E1:.*]] = arith.minsi %[[E0]], %[[C64]] : index
//       CHECK:     %[[NEND:.*]] = arith.ceildivui %[[E1]], %[[C8]] : index
//       CHECK:     %[[FULL:.*]]:3 = scf.for %{{.*}} = %[[C0]] to %[[NFULL]] step
//  CHECK-SAME:         -> (vector<16xf32>, vector<16xf32>, vector<16x16xf32>)
//       CHECK:       attn.online_attention
//  CHECK-SAME:         rows(%[[QPOS]]) state
//  CHECK-SAME:         mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     %[[MASKED:.*]]:3 = scf.for %{{.*}} = %[[NFULL]] to %[[NEND]] step
//  CHECK-SAME:         iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
//       CHECK:       attn.online_attention
//  CHECK-SAME:         rows(%[[QPOS]], causal_offset %[[C24]])
//  CHECK-SAME:         mask = #attn.mask<causal>
//       CHECK:     } {attn.stage = "masked"}
//       CHECK:     attn.epilogue state(%[[MASKED]]#0, %[[MASKED]]#1, %[[MASKED]]#2
// BM = 8, BN = 16: first = q_pos + 25, last = q_pos + 8 + 24 = q_pos + 32,
// both clamped to [0, 64] and divided by 16.
// BN16-LABEL: func.func @causal_nq_lt_nk
//   BN16-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   BN16-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   BN16-DAG:   %[[C25:.*]] = arith.constant 25 : index
//   BN16-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   BN16-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       BN16:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (5, 2, 2) {
//       BN16:     %[[QPOS:.*]] = arith.muli
//   BN16-DAG:     %[[FIRST:.*]] = arith.addi %[[QPOS]], %[[C25]] : index
//   BN16-DAG:     %[[LAST:.*]] = arith.addi %[[QPOS]], %[[C32]] : index
//       BN16:     %[[F0:.*]] = arith.maxsi %[[FIRST]], %[[C0]] : index
//       BN16:     %[[F1:.*]] = arith.minsi %[[F0]], %[[C64]] : index
//       BN16:     %[[NFULL:.*]] = arith.divui %[[F1]], %[[C16]] : index
//       BN16:     %[[E0:.*]] = arith.maxsi %[[LAST]], %[[C0]] : index
//       BN16:     %[[E1:.*]] = arith.minsi %[[E0]], %[[C64]] : index
//       BN16:     %[[NEND:.*]] = arith.ceildivui %[[E1]], %[[C16]] : index
//       BN16:     scf.for %{{.*}} = %[[C0]] to %[[NFULL]] step
//  BN16-SAME:       -> (vector<8xf32>, vector<8xf32>, vector<8x16xf32>)
//       BN16:     } {attn.stage = "full"}
//       BN16:     scf.for %{{.*}} = %[[NFULL]] to %[[NEND]] step
//       BN16:       attn.online_attention {{.*}} {block_n = 16 : i64, mask = #attn.mask<causal>
//       BN16:     } {attn.stage = "masked"}
func.func @causal_nq_lt_nk(%q: memref<2x2x40x16xf16>, %k: memref<2x2x64x16xf16>,
                           %v: memref<2x2x64x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x64x16xf16>,
                     memref<2x2x64x16xf16>) outs(%o : memref<2x2x40x16xf16>) {causal}
  return
}

// -----

// Causal, Nq = 40 > Nk = 24: offset = -16.
//   first = q_pos - 15, last = q_pos + 16 - 16 = q_pos (the addi folds away);
//   Q block 0 (rows 0..15) gets num_end = 0: it sees no key at all.
// CHECK-LABEL: func.func @causal_nq_gt_nk
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : index
//   CHECK-DAG:   %[[CM15:.*]] = arith.constant -15 : index
//   CHECK-DAG:   %[[CM16:.*]] = arith.constant -16 : index
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (3, 2, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
//       CHECK:     %[[FIRST:.*]] = arith.addi %[[QPOS]], %[[CM15]] : index
//       CHECK:     %[[F0:.*]] = arith.maxsi %[[FIRST]], %[[C0]] : index
//       CHECK:     %[[F1:.*]] = arith.minsi %[[F0]], %[[C24]] : index
//       CHECK:     %[[NFULL:.*]] = arith.divui %[[F1]], %[[C8]] : index
//       CHECK:     %[[E0:.*]] = arith.maxsi %[[QPOS]], %[[C0]] : index
//       CHECK:     %[[E1:.*]] = arith.minsi %[[E0]], %[[C24]] : index
//       CHECK:     %[[NEND:.*]] = arith.ceildivui %[[E1]], %[[C8]] : index
//       CHECK:     scf.for %{{.*}} = %[[C0]] to %[[NFULL]] step
//       CHECK:       mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     scf.for %{{.*}} = %[[NFULL]] to %[[NEND]] step
//       CHECK:       rows(%[[QPOS]], causal_offset %[[CM16]])
//  CHECK-SAME:       mask = #attn.mask<causal>
//       CHECK:     } {attn.stage = "masked"}
func.func @causal_nq_gt_nk(%q: memref<2x2x40x16xf16>, %k: memref<2x2x24x16xf16>,
                           %v: memref<2x2x24x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x24x16xf16>,
                     memref<2x2x24x16xf16>) outs(%o : memref<2x2x40x16xf16>) {causal}
  return
}

// -----

// Already unmasked (Nk = 48 = 6 * BN, non-causal): nothing to split; the
// single loop keeps no stage attribute.
// CHECK-LABEL: func.func @unmasked
//       CHECK:   scf.for
//       CHECK:     mask = #attn.mask<none>
//       CHECK:   }{{$}}
//   CHECK-NOT:   scf.for
//   CHECK-NOT:   attn.stage
//       CHECK:   attn.epilogue
func.func @unmasked(%q: memref<2x2x40x16xf16>, %k: memref<2x2x48x16xf16>,
                    %v: memref<2x2x48x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x48x16xf16>,
                     memref<2x2x48x16xf16>) outs(%o : memref<2x2x40x16xf16>)
  return
}

// -----

// Dynamic Nk, non-causal: num_full = Nk divui 8, num_end = Nk ceildivui 8;
// the masked stage stays a loop.
// CHECK-LABEL: func.func @dynamic_nk
//  CHECK-SAME:   (%{{[a-z0-9]+}}: memref<1x1x?x16xf16>, %[[K:[a-z0-9]+]]: memref<1x1x?x16xf16>
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//       CHECK:   scf.forall
//   CHECK-DAG:     %[[NEND:.*]] = arith.ceildivui %{{.*}}, %[[C8]] : index
//   CHECK-DAG:     %[[NK:.*]] = memref.dim %[[K]], %{{.*}} : memref<1x1x?x16xf16>
//       CHECK:     %[[NFULL:.*]] = arith.divui %[[NK]], %[[C8]] : index
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %[[NFULL]] step
//       CHECK:       mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     scf.for %{{.*}} = %[[NFULL]] to %[[NEND]] step
//       CHECK:       mask = #attn.mask<bounds>
//       CHECK:     } {attn.stage = "masked"}
func.func @dynamic_nk(%q: memref<1x1x?x16xf16>, %k: memref<1x1x?x16xf16>,
                      %v: memref<1x1x?x16xf16>, %o: memref<1x1x?x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x?x16xf16>, memref<1x1x?x16xf16>,
                     memref<1x1x?x16xf16>) outs(%o : memref<1x1x?x16xf16>)
  return
}

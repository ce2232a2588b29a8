// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8 pack-gqa=true" --attn-causal-split --canonicalize | FileCheck %s

// attn-causal-split on the K/V loops of split-KV and GQA packing. With
// offset = Nk - Nq (bottom-right), first / last the Q block's first and last
// query:
//   num_full = clamp(first + offset + 1, 0, Nk) floordiv BN
//   num_end  = ceildiv(clamp(last + offset + 1, 0, Nk), BN)
// A split's loop over blocks [begin, end) keeps its range:
//   full   = [begin, min(max(num_full, begin), end))
//   masked = [that, max(min(num_end, end), that))

// Split-KV, causal: Nq = 3, Nk = 37 (offset 34), BM = 4, BN = 8, S = 3
// splits of P = 2 blocks. first = q_pos, last = q_pos + 3.
// CHECK-LABEL: func.func @ranged
//   CHECK-DAG:   %[[C35:.*]] = arith.constant 35 : index
//   CHECK-DAG:   %[[C38:.*]] = arith.constant 38 : index
//   CHECK-DAG:   %[[C37:.*]] = arith.constant 37 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   scf.forall
//       CHECK:     %[[QPOS:.*]] = arith.muli
//       CHECK:     %[[BEGIN:.*]] = arith.minui
//       CHECK:     %[[END:.*]] = arith.minui
// first + offset + 1 = q_pos + 35; last + offset + 1 = q_pos + 38.
//       CHECK:     %[[FE:.*]] = arith.addi %[[QPOS]], %[[C35]] : index
//       CHECK:     %[[LE:.*]] = arith.addi %[[QPOS]], %[[C38]] : index
//       CHECK:     %[[FC:.*]] = arith.maxsi %[[FE]], %[[C0]] : index
//       CHECK:     %[[FC2:.*]] = arith.minsi %[[FC]], %[[C37]] : index
//       CHECK:     %[[NFULL:.*]] = arith.divui %[[FC2]], %[[C8]] : index
//       CHECK:     %[[LC:.*]] = arith.maxsi %[[LE]], %[[C0]] : index
//       CHECK:     %[[LC2:.*]] = arith.minsi %[[LC]], %[[C37]] : index
//       CHECK:     %[[NEND:.*]] = arith.ceildivui %[[LC2]], %[[C8]] : index
// Clamped into the split's [begin, end).
//       CHECK:     %[[M1:.*]] = arith.maxsi %[[NFULL]], %[[BEGIN]] : index
//       CHECK:     %[[MID:.*]] = arith.minsi %[[M1]], %[[END]] : index
//       CHECK:     %[[E1:.*]] = arith.minsi %[[NEND]], %[[END]] : index
//       CHECK:     %[[LAST:.*]] = arith.maxsi %[[E1]], %[[MID]] : index
//       CHECK:     scf.for %{{.*}} = %[[BEGIN]] to %[[MID]]
//       CHECK:       mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     scf.for %{{.*}} = %[[MID]] to %[[LAST]]
//       CHECK:       mask = #attn.mask<causal>
//       CHECK:     } {attn.stage = "masked"}
func.func @ranged(%q: memref<1x2x3x16xf16>, %k: memref<1x2x37x16xf16>,
                  %op: memref<3x1x2x3x16xf32>, %lp: memref<3x1x2x3xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x2x3x16xf16>, memref<1x2x37x16xf16>,
                             memref<1x2x37x16xf16>)
      outs(%op, %lp : memref<3x1x2x3x16xf32>, memref<3x1x2x3xf32>) {causal}
  return
}

// -----

// GQA packing, causal: G = 4, Nq = 3, Nk = 40 (offset 37). The packed rows
// q_pos .. q_pos + 3 are queries q_pos / 4 .. (q_pos + 3) / 4: the bounds
// use those, not the packed rows. Unsplit: the loop starts at 0.
// CHECK-LABEL: func.func @packed
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[C38:.*]] = arith.constant 38 : index
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   scf.forall
//       CHECK:     %[[QPOS:.*]] = arith.muli %{{.*}}, %[[C4]] : index
//       CHECK:     %[[FIRST:.*]] = arith.divui %[[QPOS]], %[[C4]] : index
//       CHECK:     %[[QLAST:.*]] = arith.addi %[[QPOS]], %[[C3]] : index
//       CHECK:     %[[LAST:.*]] = arith.divui %[[QLAST]], %[[C4]] : index
//       CHECK:     %[[FE:.*]] = arith.addi %[[FIRST]], %[[C38]] : index
//       CHECK:     %[[LE:.*]] = arith.addi %[[LAST]], %[[C38]] : index
//       CHECK:     %[[NFULL:.*]] = arith.divui
//       CHECK:     %[[NEND:.*]] = arith.ceildivui
//       CHECK:     scf.for %{{.*}} = %[[C0]] to %[[NFULL]]
//       CHECK:       gqa_pack = 4 : i64, mask = #attn.mask<none>
//       CHECK:     scf.for %{{.*}} = %[[NFULL]] to %[[NEND]]
//       CHECK:       gqa_pack = 4 : i64, mask = #attn.mask<causal>
func.func @packed(%q: memref<1x8x3x16xbf16>, %k: memref<1x2x40x16xbf16>,
                  %o: memref<1x8x3x16xbf16>) {
  attn.attention ins(%q, %k, %k : memref<1x8x3x16xbf16>, memref<1x2x40x16xbf16>,
                     memref<1x2x40x16xbf16>) outs(%o : memref<1x8x3x16xbf16>) {causal}
  return
}

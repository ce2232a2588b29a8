// RUN: attn-opt %s --split-input-file --attn-tile-grad="block-m=16 block-n=8" --attn-causal-split-grad --canonicalize | FileCheck %s

// attn-causal-split-grad: the masked loops of attn-tile-grad are split.
//   dK/dV (K/V block at k_pos walks Q blocks), causal, offset = Nk - Nq:
//     q_begin = clamp(k_pos - offset, 0, R) floordiv BM           (R = ceil(Nq / BM) * BM)
//     q_full  = ceildiv(clamp(k_pos + BN - 1 - offset, 0, R), BM)
//     scf.for qb = q_begin to q_full             {attn.stage = "masked"}  causal
//     scf.for qb = q_full to ceil(Nq / BM)       {attn.stage = "full"}    none
//     (Q blocks before q_begin see none of the block's keys: skipped)
//   dQ (Q block at q_pos walks K/V blocks): as attn-causal-split,
//     num_full = clamp(q_pos + offset + 1, 0, Nk) floordiv BN
//     num_end  = ceildiv(clamp(q_pos + BM + offset, 0, Nk), BN)
//     scf.for kb = 0 to num_full                 {attn.stage = "full"}    none
//     scf.for kb = num_full to num_end           {attn.stage = "masked"}  causal
// BLOCK_M = 16, BLOCK_N = 8.

// GQA 4/2, causal, Nq = 40, Nk = 48: offset = 8, R = 3 * 16 = 48.
// CHECK-LABEL: func.func @gqa_causal
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C48:.*]] = arith.constant 48 : index
//   CHECK-DAG:   %[[CM1:.*]] = arith.constant -1 : index
//       CHECK:   scf.forall (%[[KB:.*]], %{{.*}}, %{{.*}}) in (6, 2, 2) {
//       CHECK:     %[[KPOS:.*]] = arith.muli %[[KB]], %[[C8]] : index
//       CHECK:     scf.for
// k_pos - offset
//       CHECK:       %[[FIRST:.*]] = arith.subi %[[KPOS]], %[[C8]] : index
// k_pos + BN - 1 - offset = k_pos - 1
//       CHECK:       %[[FULL:.*]] = arith.addi %[[KPOS]], %[[CM1]] : index
//       CHECK:       %[[F0:.*]] = arith.maxsi %[[FIRST]], %[[C0]] : index
//       CHECK:       %[[F1:.*]] = arith.minsi %[[F0]], %[[C48]] : index
//       CHECK:       %[[QBEGIN:.*]] = arith.divui %[[F1]], %[[C16]] : index
//       CHECK:       %[[G0:.*]] = arith.maxsi %[[FULL]], %[[C0]] : index
//       CHECK:       %[[G1:.*]] = arith.minsi %[[G0]], %[[C48]] : index
//       CHECK:       %[[QFULL:.*]] = arith.ceildivui %[[G1]], %[[C16]] : index
// The diagonal Q blocks first, masked.
//       CHECK:       %[[M:.*]]:2 = scf.for %{{.*}} = %[[QBEGIN]] to %[[QFULL]] step %[[C1]]
//       CHECK:         attn.grad_dkdv
//  CHECK-SAME:           causal_offset %[[C8]]
//  CHECK-SAME:           mask = #attn.mask<causal>
//       CHECK:       } {attn.stage = "masked"}
// Then the Q blocks that see every key of the block, without a mask.
//       CHECK:       %{{.*}}:2 = scf.for %{{.*}} = %[[QFULL]] to %[[C3]] step %[[C1]] iter_args(%{{.*}} = %[[M]]#0, %{{.*}} = %[[M]]#1)
//       CHECK:         attn.grad_dkdv
//   CHECK-NOT:           causal_offset
//  CHECK-SAME:           mask = #attn.mask<none>
//       CHECK:       } {attn.stage = "full"}
// dQ: q_pos + offset + 1 = q_pos + 9, q_pos + BM + offset = q_pos + 24.
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (3, 4, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
//       CHECK:     %[[A:.*]] = arith.addi %[[QPOS]], %{{.*}} : index
//       CHECK:     %[[B:.*]] = arith.addi %[[QPOS]], %{{.*}} : index
//       CHECK:     %[[A1:.*]] = arith.maxsi %[[A]], %[[C0]] : index
//       CHECK:     %[[A2:.*]] = arith.minsi %[[A1]], %[[C48]] : index
//       CHECK:     %[[NFULL:.*]] = arith.divui %[[A2]], %[[C8]] : index
//       CHECK:     %[[B1:.*]] = arith.maxsi %[[B]], %[[C0]] : index
//       CHECK:     %[[B2:.*]] = arith.minsi %[[B1]], %[[C48]] : index
//       CHECK:     %[[NEND:.*]] = arith.ceildivui %[[B2]], %[[C8]] : index
//       CHECK:     %[[F:.*]] = scf.for %{{.*}} = %[[C0]] to %[[NFULL]] step %[[C1]]
//       CHECK:       attn.grad_dq
//  CHECK-SAME:         rows(%[[QPOS]]) state
//  CHECK-SAME:         mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     scf.for %{{.*}} = %[[NFULL]] to %[[NEND]] step %[[C1]] iter_args(%{{.*}} = %[[F]])
//       CHECK:       attn.grad_dq
//  CHECK-SAME:         rows(%[[QPOS]], causal_offset %[[C8]])
//  CHECK-SAME:         mask = #attn.mask<causal>
//       CHECK:     } {attn.stage = "masked"}
func.func @gqa_causal(%q: memref<2x4x40x16xf16>, %k: memref<2x2x48x16xf16>,
                      %v: memref<2x2x48x16xf16>, %o: memref<2x4x40x16xf16>,
                      %do: memref<2x4x40x16xf16>, %lse: memref<2x4x40xf32>,
                      %dq: memref<2x4x40x16xf16>, %dk: memref<2x2x48x16xf16>,
                      %dv: memref<2x2x48x16xf16>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<2x4x40x16xf16>,
      memref<2x2x48x16xf16>, memref<2x2x48x16xf16>, memref<2x4x40x16xf16>,
      memref<2x4x40x16xf16>, memref<2x4x40xf32>)
      outs(%dq, %dk, %dv : memref<2x4x40x16xf16>, memref<2x2x48x16xf16>,
           memref<2x2x48x16xf16>) {causal}
  return
}

// -----

// Not causal, Nk = 21: the dK/dV loop is unmasked and left alone; the dQ
// loop runs 21 floordiv 8 = 2 full blocks and the bounds-masked tail (one
// block, which canonicalize inlines after the loop).
// CHECK-LABEL: func.func @tail
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//       CHECK:   scf.forall
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step
//       CHECK:       attn.grad_dkdv
//  CHECK-SAME:         mask = #attn.mask<none>
//   CHECK-NOT:     attn.stage
//       CHECK:   scf.forall
//       CHECK:     %[[F:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C2]] step
//       CHECK:       attn.grad_dq {{.*}} mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     attn.grad_dq {{.*}} at[%{{.*}}, %{{.*}}, %[[C16]]] rows(%{{[^,]*}}) state(%[[F]] : {{.*}} mask = #attn.mask<bounds>
func.func @tail(%q: memref<1x2x19x8xf32>, %k: memref<1x2x21x8xf32>,
                %v: memref<1x2x21x8xf32>, %o: memref<1x2x19x8xf32>,
                %do: memref<1x2x19x8xf32>, %lse: memref<1x2x19xf32>,
                %dq: memref<1x2x19x8xf32>, %dk: memref<1x2x21x8xf32>,
                %dv: memref<1x2x21x8xf32>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x2x19x8xf32>,
      memref<1x2x21x8xf32>, memref<1x2x21x8xf32>, memref<1x2x19x8xf32>,
      memref<1x2x19x8xf32>, memref<1x2x19xf32>)
      outs(%dq, %dk, %dv : memref<1x2x19x8xf32>, memref<1x2x21x8xf32>,
           memref<1x2x21x8xf32>)
  return
}

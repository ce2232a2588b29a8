// RUN: attn-opt %s --split-input-file --attn-tile-grad="block-m=16 block-n=8" --canonicalize | FileCheck %s

// attn-tile-grad: attn.attention_grad -> three CTA grids over a Delta buffer
//   Delta = alloc [B, Hq, Nq] f32
//   (a) forall (qb, h, b):   Delta[b, h, q rows] = rowsum(dO * O)
//   (b) forall (kb, hkv, b): K, V block resident;
//         for g in group: for qb: (dK, dV) = grad_dkdv(Q, dO, LSE, Delta of
//         head hkv * group + g)
//       store dK, dV
//   (c) forall (qb, h, b):   Q block resident; for kb: dQ = grad_dq(...);
//       store dQ
//   dealloc Delta
// BLOCK_M = 16, BLOCK_N = 8; B = 2 keeps the batch dimension in view.

// GQA 4/2, causal, Nq = 40 (tail), Nk = 48: causal_offset = 48 - 40 = 8.
// CHECK-LABEL: func.func @gqa_causal
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x40x16xf16>, %[[K:[a-z0-9]+]]: memref<2x2x48x16xf16>, %[[V:[a-z0-9]+]]: memref<2x2x48x16xf16>, %[[O:[a-z0-9]+]]: memref<2x4x40x16xf16>, %[[DO:[a-z0-9]+]]: memref<2x4x40x16xf16>, %[[LSE:[a-z0-9]+]]: memref<2x4x40xf32>, %[[DQ:[a-z0-9]+]]: memref<2x4x40x16xf16>, %[[DK:[a-z0-9]+]]: memref<2x2x48x16xf16>, %[[DV:[a-z0-9]+]]: memref<2x2x48x16xf16>)
//   CHECK-DAG:   %[[ZQ:.*]] = arith.constant dense<0.000000e+00> : vector<16x16xf32>
//   CHECK-DAG:   %[[ZKV:.*]] = arith.constant dense<0.000000e+00> : vector<8x16xf32>
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
// Delta: fp32 [B, Hq, Nq].
//       CHECK:   %[[DELTA:.*]] = memref.alloc() : memref<2x4x40xf32>
// (a) preprocess, grid (ceil(40 / 16), Hq, B) = (3, 4, 2).
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (3, 4, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
//       CHECK:     %[[OT:.*]] = attn.load_tile %[[O]][%[[B]], %[[H]], %[[QPOS]], %[[C0]]] : memref<2x4x40x16xf16> -> vector<16x16xf16>
//       CHECK:     %[[DOT:.*]] = attn.load_tile %[[DO]][%[[B]], %[[H]], %[[QPOS]], %[[C0]]]
// Delta = rowsum(dO * O), fp32
//       CHECK:     %[[D:.*]] = attn.grad_delta %[[OT]], %[[DOT]] : vector<16x16xf16>, vector<16x16xf16> -> vector<16xf32>
//       CHECK:     attn.store_rows %[[D]], %[[DELTA]][%[[B]], %[[H]], %[[QPOS]]] : vector<16xf32>, memref<2x4x40xf32>
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
// (b) dK/dV, grid (ceil(48 / 8), Hkv, B) = (6, 2, 2); K, V resident.
//       CHECK:   scf.forall (%[[KB:.*]], %[[HKV:.*]], %[[B:.*]]) in (6, 2, 2) {
//       CHECK:     %[[KPOS:.*]] = arith.muli %[[KB]], %[[C8]] : index
//       CHECK:     %[[KT:.*]] = attn.load_tile %[[K]][%[[B]], %[[HKV]], %[[KPOS]], %[[C0]]] : memref<2x2x48x16xf16> -> vector<8x16xf16>
//       CHECK:     %[[VT:.*]] = attn.load_tile %[[V]][%[[B]], %[[HKV]], %[[KPOS]], %[[C0]]] : memref<2x2x48x16xf16> -> vector<8x16xf16>
// The query heads of the group: h = hkv * (Hq / Hkv) + g, g < 2.
//       CHECK:     %[[GR:.*]]:2 = scf.for %[[G:.*]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[GK:.*]] = %[[ZKV]], %[[GV:.*]] = %[[ZKV]])
//       CHECK:       %[[H0:.*]] = arith.muli %[[HKV]], %[[C2]] : index
//       CHECK:       %[[HQ:.*]] = arith.addi %[[H0]], %[[G]] : index
// Their ceil(40 / 16) = 3 Q blocks, all causal-masked until attn-causal-split-grad.
//       CHECK:       scf.for %[[QB2:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[SK:.*]] = %[[GK]], %[[SV:.*]] = %[[GV]])
//       CHECK:         %[[QP2:.*]] = arith.muli %[[QB2]], %[[C16]] : index
//       CHECK:         %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[HQ]], %[[QP2]], %[[C0]]]
//       CHECK:         %[[DOT2:.*]] = attn.load_tile %[[DO]][%[[B]], %[[HQ]], %[[QP2]], %[[C0]]]
//       CHECK:         %[[LR:.*]] = attn.load_rows %[[LSE]][%[[B]], %[[HQ]], %[[QP2]]] : memref<2x4x40xf32> -> vector<16xf32>
//       CHECK:         %[[DR:.*]] = attn.load_rows %[[DELTA]][%[[B]], %[[HQ]], %[[QP2]]]
//       CHECK:         %{{.*}}, %{{.*}} = attn.grad_dkdv q(%[[QT]], %[[DOT2]] : vector<16x16xf16>, vector<16x16xf16>) lse_delta(%[[LR]], %[[DR]] : vector<16xf32>, vector<16xf32>)
//  CHECK-SAME:           kv(%[[KT]], %[[VT]] : vector<8x16xf16>, vector<8x16xf16>) at(%[[QP2]], %[[KPOS]], causal_offset %[[C8]]) state(%[[SK]], %[[SV]] : vector<8x16xf32>, vector<8x16xf32>)
//  CHECK-SAME:           {mask = #attn.mask<causal>, scale = 2.500000e-01 : f32}
//       CHECK:     attn.store_tile %[[GR]]#0, %[[DK]][%[[B]], %[[HKV]], %[[KPOS]]] : vector<8x16xf32>, memref<2x2x48x16xf16>
//       CHECK:     attn.store_tile %[[GR]]#1, %[[DV]][%[[B]], %[[HKV]], %[[KPOS]]] : vector<8x16xf32>, memref<2x2x48x16xf16>
// (c) dQ, grid (3, Hq, B); Q resident, kv_head = h / 2, ceil(48 / 8) = 6 K/V blocks.
//       CHECK:   scf.forall (%[[QB3:.*]], %[[H3:.*]], %[[B3:.*]]) in (3, 4, 2) {
//       CHECK:     %[[QP3:.*]] = arith.muli %[[QB3]], %[[C16]] : index
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H3]], %[[C2]] : index
//       CHECK:     %[[QT3:.*]] = attn.load_tile %[[Q]][%[[B3]], %[[H3]], %[[QP3]], %[[C0]]]
//       CHECK:     attn.load_tile %[[DO]]
//       CHECK:     attn.load_rows %[[LSE]]
//       CHECK:     attn.load_rows %[[DELTA]]
//       CHECK:     %[[R:.*]] = scf.for %[[KB3:.*]] = %[[C0]] to %[[C6]] step %[[C1]] iter_args(%[[S:.*]] = %[[ZQ]]) -> (vector<16x16xf32>)
//       CHECK:       %[[KP3:.*]] = arith.muli %[[KB3]], %[[C8]] : index
//       CHECK:       attn.grad_dq q(%[[QT3]], %{{.*}} : vector<16x16xf16>, vector<16x16xf16>) lse_delta(%{{.*}}, %{{.*}} : vector<16xf32>, vector<16xf32>)
//  CHECK-SAME:         kv(%[[K]], %[[V]] : memref<2x2x48x16xf16>, memref<2x2x48x16xf16>) at[%[[B3]], %[[KVH]], %[[KP3]]] rows(%[[QP3]], causal_offset %[[C8]]) state(%[[S]] : vector<16x16xf32>)
//  CHECK-SAME:         {block_n = 8 : i64, mask = #attn.mask<causal>, scale = 2.500000e-01 : f32}
//       CHECK:     attn.store_tile %[[R]], %[[DQ]][%[[B3]], %[[H3]], %[[QP3]]] : vector<16x16xf32>, memref<2x4x40x16xf16>
//       CHECK:   memref.dealloc %[[DELTA]] : memref<2x4x40xf32>
//   CHECK-NOT:   attn.attention_grad
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

// Not causal: the dK/dV step needs no mask at all (rows past Nq load as zero,
// dK/dV rows past Nk are not stored); the dQ step masks the Nk tail
// (Nk = 21: bounds). f32, MHA (the group loop folds away: h = hkv), explicit
// scale.
// CHECK-LABEL: func.func @mha_f32_tails
//       CHECK:   memref.alloc() : memref<2x2x19xf32>
//       CHECK:   attn.grad_delta %{{.*}}, %{{.*}} : vector<16x8xf32>, vector<16x8xf32> -> vector<16xf32>
//       CHECK:   scf.forall (%{{.*}}, %[[HKV:.*]], %[[B:.*]]) in (3, 2, 2) {
//   CHECK-NOT:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8x8xf32>, vector<8x8xf32>) {
//       CHECK:     scf.for
//       CHECK:       attn.load_tile %{{.*}}[%[[B]], %[[HKV]],
//       CHECK:       attn.grad_dkdv
//  CHECK-SAME:         at(%{{[^,]*}}, %{{[^,]*}}) state
//  CHECK-SAME:         {mask = #attn.mask<none>, scale = 5.000000e-01 : f32}
//       CHECK:   attn.grad_dq
//  CHECK-SAME:       rows(%{{[^,]*}}) state
//  CHECK-SAME:       {block_n = 8 : i64, mask = #attn.mask<bounds>, scale = 5.000000e-01 : f32}
func.func @mha_f32_tails(%q: memref<2x2x19x8xf32>, %k: memref<2x2x21x8xf32>,
                         %v: memref<2x2x21x8xf32>, %o: memref<2x2x19x8xf32>,
                         %do: memref<2x2x19x8xf32>, %lse: memref<2x2x19xf32>,
                         %dq: memref<2x2x19x8xf32>, %dk: memref<2x2x21x8xf32>,
                         %dv: memref<2x2x21x8xf32>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<2x2x19x8xf32>,
      memref<2x2x21x8xf32>, memref<2x2x21x8xf32>, memref<2x2x19x8xf32>,
      memref<2x2x19x8xf32>, memref<2x2x19xf32>)
      outs(%dq, %dk, %dv : memref<2x2x19x8xf32>, memref<2x2x21x8xf32>,
           memref<2x2x21x8xf32>) {scale = 0.5 : f32}
  return
}

// -----

// Dynamic lengths: grids and Delta sized from the memrefs at run time.
// CHECK-LABEL: func.func @dynamic
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x2x?x16xbf16>, %[[K:[a-z0-9]+]]: memref<1x1x?x16xbf16>
//   CHECK-DAG:   %[[NQ:.*]] = memref.dim %[[Q]], %c2 : memref<1x2x?x16xbf16>
//   CHECK-DAG:   %[[NK:.*]] = memref.dim %[[K]], %c2 : memref<1x1x?x16xbf16>
//   CHECK-DAG:   %[[NQB:.*]] = arith.ceildivui %[[NQ]], %c16 : index
//   CHECK-DAG:   %[[NKB:.*]] = arith.ceildivui %[[NK]], %c8 : index
//       CHECK:   %[[DELTA:.*]] = memref.alloc(%[[NQ]]) : memref<1x2x?xf32>
//       CHECK:   scf.forall ({{.*}}) in (%[[NQB]], 2, 1)
//       CHECK:   scf.forall ({{.*}}) in (%[[NKB]], 1, 1)
//       CHECK:   scf.forall ({{.*}}) in (%[[NQB]], 2, 1)
//       CHECK:       mask = #attn.mask<bounds>
//       CHECK:   memref.dealloc %[[DELTA]]
func.func @dynamic(%q: memref<1x2x?x16xbf16>, %k: memref<1x1x?x16xbf16>,
                   %v: memref<1x1x?x16xbf16>, %o: memref<1x2x?x16xbf16>,
                   %do: memref<1x2x?x16xbf16>, %lse: memref<1x2x?xf32>,
                   %dq: memref<1x2x?x16xbf16>, %dk: memref<1x1x?x16xbf16>,
                   %dv: memref<1x1x?x16xbf16>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x2x?x16xbf16>,
      memref<1x1x?x16xbf16>, memref<1x1x?x16xbf16>, memref<1x2x?x16xbf16>,
      memref<1x2x?x16xbf16>, memref<1x2x?xf32>)
      outs(%dq, %dk, %dv : memref<1x2x?x16xbf16>, memref<1x1x?x16xbf16>,
           memref<1x1x?x16xbf16>)
  return
}

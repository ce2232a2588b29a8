// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8" --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8 pack-gqa=true" --canonicalize | FileCheck %s --check-prefix=PACK

// attn-tile on the split-KV ops (attn-split-kv) and with GQA packing.
//   attn.partial_attention (S splits):
//   scf.forall (x, h, b) in (ceil(Nq / BM) * S, Hq, B)
//     s = x mod S, qb = x / S
//     NB = ceil(Nk / BN) K/V blocks, P = ceil(NB / S) per split
//     scf.for kb = min(s * P, NB) to min(min(s * P, NB) + P, NB)   (may be empty)
//       attn.online_attention                       as attn.attention's
//     attn.epilogue to O_partial[s], LSE_partial[s]  (memref.subview, fp32)
//   attn.decode_combine:
//   scf.forall (qb, h, b) in (ceil(Nq / BM), Hq, B)
//     scf.for s = 0 to S iter_args(-inf, 0, 0)
//       attn.combine_step (load_tile O_partial[s], load_rows LSE_partial[s])
//     attn.epilogue to O, LSE                         (l = 0: O = 0, LSE = -inf)

// S = 3 splits of Nk = 37 keys: NB = 5 blocks of 8, P = 2 (the last split
// holds one block). Nq = 3 fits one Q block of 4.
// CHECK-LABEL: func.func @partial
//  CHECK-SAME:   (%[[Q:.*]]: memref<2x4x3x16xf16>, %[[K:.*]]: memref<2x2x37x16xf16>, %[[OP:.*]]: memref<3x2x4x3x16xf32>, %[[LP:.*]]: memref<3x2x4x3xf32>)
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C5:.*]] = arith.constant 5 : index
//       CHECK:   scf.forall (%[[X:.*]], %[[H:.*]], %[[B:.*]]) in (3, 4, 2) {
//       CHECK:     %[[S:.*]] = arith.remui %[[X]], %[[C3]] : index
//       CHECK:     %[[QB:.*]] = arith.divui %[[X]], %[[C3]] : index
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C4]] : index
//       CHECK:     %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[H]], %[[QPOS]], %{{.*}}]
// K/V blocks [min(s * P, NB), min(begin + P, NB)).
//       CHECK:     %[[SP:.*]] = arith.muli %[[S]], %[[C2]] : index
//       CHECK:     %[[BEGIN:.*]] = arith.minui %[[SP]], %[[C5]] : index
//       CHECK:     %[[BP:.*]] = arith.addi %[[BEGIN]], %[[C2]] : index
//       CHECK:     %[[END:.*]] = arith.minui %[[BP]], %[[C5]] : index
// The CTA's split of the workspace.
//       CHECK:     %[[OS:.*]] = memref.subview %[[OP]][%[[S]], 0, 0, 0, 0] [1, 2, 4, 3, 16] [1, 1, 1, 1, 1] : memref<3x2x4x3x16xf32> to memref<2x4x3x16xf32, strided<[192, 48, 16, 1], offset: ?>>
//       CHECK:     %[[LS:.*]] = memref.subview %[[LP]][%[[S]], 0, 0, 0] [1, 2, 4, 3] [1, 1, 1, 1] : memref<3x2x4x3xf32> to memref<2x4x3xf32, strided<[12, 3, 1], offset: ?>>
//       CHECK:     %[[R:.*]]:3 = scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
//       CHECK:       attn.online_attention q(%[[QT]] : vector<4x16xf16>)
//  CHECK-SAME:         mask = #attn.mask<bounds>
//       CHECK:     attn.epilogue state(%[[R]]#0, %[[R]]#1, %[[R]]#2 : {{.*}}) to %[[OS]], lse %[[LS]][%[[B]], %[[H]], %[[QPOS]], %{{.*}}]
func.func @partial(%q: memref<2x4x3x16xf16>, %k: memref<2x2x37x16xf16>,
                   %op: memref<3x2x4x3x16xf32>, %lp: memref<3x2x4x3xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<2x4x3x16xf16>, memref<2x2x37x16xf16>,
                             memref<2x2x37x16xf16>)
      outs(%op, %lp : memref<3x2x4x3x16xf32>, memref<3x2x4x3xf32>)
  return
}

// -----

// The decode_combine grid folds the S = 3 splits of each row block.
// CHECK-LABEL: func.func @combine
//  CHECK-SAME:   (%[[OP:.*]]: memref<3x2x4x3x16xf32>, %[[LP:.*]]: memref<3x2x4x3xf32>, %[[O:.*]]: memref<2x4x3x16xf16>, %[[LSE:.*]]: memref<2x4x3xf32>)
//   CHECK-DAG:   %[[ZACC:.*]] = arith.constant dense<0.000000e+00> : vector<4x16xf32>
//   CHECK-DAG:   %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in (1, 4, 2) {
//       CHECK:     %[[R:.*]]:3 = scf.for %[[S:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[M:.*]] = %[[NEGINF]], %[[L:.*]] = %[[ZROW]], %[[ACC:.*]] = %[[ZACC]])
//       CHECK:       %[[OS:.*]] = memref.subview %[[OP]][%[[S]], 0, 0, 0, 0]
//       CHECK:       %[[OT:.*]] = attn.load_tile %[[OS]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] {{.*}} -> vector<4x16xf32>
//       CHECK:       %[[LS:.*]] = memref.subview %[[LP]][%[[S]], 0, 0, 0]
//       CHECK:       %[[LT:.*]] = attn.load_rows %[[LS]][%[[B]], %[[H]], %{{.*}}] {{.*}} -> vector<4xf32>
//       CHECK:       attn.combine_step partial(%[[OT]], %[[LT]] : vector<4x16xf32>, vector<4xf32>) state(%[[M]], %[[L]], %[[ACC]] :
//       CHECK:     attn.epilogue state(%[[R]]#0, %[[R]]#1, %[[R]]#2 : {{.*}}) to %[[O]], lse %[[LSE]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<2x4x3x16xf16>, memref<2x4x3xf32>
func.func @combine(%op: memref<3x2x4x3x16xf32>, %lp: memref<3x2x4x3xf32>,
                   %o: memref<2x4x3x16xf16>, %lse: memref<2x4x3xf32>) {
  attn.decode_combine ins(%op, %lp : memref<3x2x4x3x16xf32>, memref<3x2x4x3xf32>)
      outs(%o : memref<2x4x3x16xf16>) lse(%lse : memref<2x4x3xf32>)
  return
}

// -----

// GQA packing, Hq = 8, Hkv = 2 (G = 4), Nq = 3: 12 packed rows per KV head,
// 3 blocks of BM = 4 rows; the grid's y walks KV heads and the tile ops
// carry gqa_pack = 4 with head = kv_head * 4 (the group's first head).
// Unpacked, the grid is (1, Hq, B) and the tile ops have no gqa_pack.
// PACK-LABEL: func.func @pack
//  PACK-SAME:   (%[[Q:.*]]: memref<2x8x3x16xbf16>, %[[K:.*]]: memref<2x2x40x16xbf16>, %[[O:.*]]: memref<2x8x3x16xbf16>)
//   PACK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//       PACK:   scf.forall (%[[QB:.*]], %[[KVH:.*]], %[[B:.*]]) in (3, 2, 2) {
//       PACK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C4]] : index
//       PACK:     %[[HEAD:.*]] = arith.muli %[[KVH]], %[[C4]] : index
//       PACK:     %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[HEAD]], %[[QPOS]], %{{.*}}] {gqa_pack = 4 : i64}
//       PACK:       attn.online_attention q(%[[QT]] : vector<4x16xbf16>) kv(%[[K]], %[[K]] : {{.*}}) at[%[[B]], %[[KVH]], %{{.*}}, %{{.*}}] rows(%[[QPOS]], causal_offset %{{.*}})
//  PACK-SAME:         gqa_pack = 4 : i64
//       PACK:     attn.epilogue {{.*}} to %[[O]][%[[B]], %[[HEAD]], %[[QPOS]], %{{.*}}] {gqa_pack = 4 : i64}
// CHECK-LABEL: func.func @pack
//       CHECK:   scf.forall ({{.*}}) in (1, 8, 2) {
//   CHECK-NOT:     gqa_pack
func.func @pack(%q: memref<2x8x3x16xbf16>, %k: memref<2x2x40x16xbf16>,
                %o: memref<2x8x3x16xbf16>) {
  attn.attention ins(%q, %k, %k : memref<2x8x3x16xbf16>, memref<2x2x40x16xbf16>,
                     memref<2x2x40x16xbf16>) outs(%o : memref<2x8x3x16xbf16>) {causal}
  return
}

// -----

// Packing needs a static group Hq / Hkv: with dynamic head counts the
// tiling stays unpacked.
// PACK-LABEL: func.func @pack_dynamic_heads
//       PACK:   scf.forall
//   PACK-NOT:     gqa_pack
func.func @pack_dynamic_heads(%q: memref<1x?x3x16xbf16>, %k: memref<1x?x40x16xbf16>,
                              %o: memref<1x?x3x16xbf16>) {
  attn.attention ins(%q, %k, %k : memref<1x?x3x16xbf16>, memref<1x?x40x16xbf16>,
                     memref<1x?x40x16xbf16>) outs(%o : memref<1x?x3x16xbf16>)
  return
}

// -----

// S = 1 (a workspace of one split, as the verifier allows): no split
// arithmetic, all 5 K/V blocks, the epilogue stores into O_partial[0].
// CHECK-LABEL: func.func @partial_one_split
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 2) {
//       CHECK:     %[[OS:.*]] = memref.subview %{{.*}}[0, 0, 0, 0, 0] [1, 2, 4, 3, 16] [1, 1, 1, 1, 1] : memref<1x2x4x3x16xf32> to memref<2x4x3x16xf32
//       CHECK:     %[[LS:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [1, 2, 4, 3] [1, 1, 1, 1] : memref<1x2x4x3xf32> to memref<2x4x3xf32
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %c5
//       CHECK:     attn.epilogue {{.*}} to %[[OS]], lse %[[LS]]
// PACK-LABEL: func.func @partial_one_split
//       PACK:   attn.epilogue {{.*}} {gqa_pack = 2 : i64}
func.func @partial_one_split(%q: memref<2x4x3x16xf16>, %k: memref<2x2x37x16xf16>, %op: memref<1x2x4x3x16xf32>, %lp: memref<1x2x4x3xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<2x4x3x16xf16>, memref<2x2x37x16xf16>, memref<2x2x37x16xf16>)
      outs(%op, %lp : memref<1x2x4x3x16xf32>, memref<1x2x4x3xf32>)
  return
}

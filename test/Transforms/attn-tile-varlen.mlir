// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8 pack-gqa=true" | FileCheck %s --check-prefix=PACK

// attn-tile on attn.varlen_attention: one-batch [1, H, total, D] views of
// the packed operands before the grid; the FA2 grid over (Q block of
// max_seqlen_q, head, sequence); each CTA reads its sequence's bounds from
// cu_seqlens and runs the dense nest at the sequence's first row (Q, O,
// LSE) and key (key_offset), with the sequence's Nk as num_keys (0 for a Q
// block at or past Nq_b) and O and LSE cut after the sequence's last row.

// CHECK-LABEL: func.func @varlen_causal_gqa
//  CHECK-SAME:   (%[[Q:[^:]*]]: memref<?x4x16xbf16>, %[[K:[^:]*]]: memref<?x2x16xbf16>, %[[V:[^:]*]]: memref<?x2x16xbf16>, %[[CQ:[^:]*]]: memref<?xi32>, %[[CK:[^:]*]]: memref<?xi32>, %[[MQ:[^:]*]]: index, %[[MK:[^:]*]]: index, %[[O:[^:]*]]: memref<?x4x16xbf16>, %[[LSE:[^:]*]]: memref<4x?xf32>)
// B = dim(cu_seqlens_q) - 1.
//       CHECK:   %[[CUDIM:.*]] = memref.dim %[[CQ]], %c0
//       CHECK:   %[[B:.*]] = arith.subi %[[CUDIM]], %c1
// [total, H, D] -> [1, total, H, D] -> [1, H, total, D]; LSE [1, Hq, total].
//       CHECK:   %[[EQ:.*]] = memref.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, %{{.*}}, 4, 16] : memref<?x4x16xbf16> into memref<1x?x4x16xbf16>
//       CHECK:   %[[TQ:.*]] = memref.transpose %[[EQ]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x4x16xbf16> to memref<1x4x?x16xbf16, strided<[?, 16, 64, 1]>>
//       CHECK:   memref.expand_shape %[[K]]
//       CHECK:   %[[TK:.*]] = memref.transpose {{.*}} to memref<1x2x?x16xbf16, strided<[?, 16, 32, 1]>>
//       CHECK:   memref.expand_shape %[[V]]
//       CHECK:   %[[TV:.*]] = memref.transpose
//       CHECK:   memref.expand_shape %[[O]]
//       CHECK:   %[[TO:.*]] = memref.transpose
//       CHECK:   %[[EL:.*]] = memref.expand_shape %[[LSE]] {{\[}}[0, 1], [2]] output_shape [1, 4, %{{.*}}] : memref<4x?xf32> into memref<1x4x?xf32>
// Q blocks: ceil(max_seqlen_q / BLOCK_M).
//       CHECK:   %[[NQB:.*]] = arith.ceildivui %[[MQ]], %c4
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %[[S:.*]]) in (%[[NQB]], %c4, %[[B]]) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %c4
//       CHECK:     %[[HKV:.*]] = arith.divui %[[H]], %c2
// The sequence's rows: [cu[s], cu[s + 1]) of Q/O and of K/V.
//       CHECK:     %[[NEXT:.*]] = arith.addi %[[S]], %c1
//       CHECK:     %[[Q0I:.*]] = memref.load %[[CQ]][%[[S]]] : memref<?xi32>
//       CHECK:     %[[Q0:.*]] = arith.index_cast %[[Q0I]] : i32 to index
//       CHECK:     %[[K0I:.*]] = memref.load %[[CK]][%[[S]]] : memref<?xi32>
//       CHECK:     %[[K0:.*]] = arith.index_cast %[[K0I]] : i32 to index
//       CHECK:     %[[Q1I:.*]] = memref.load %[[CQ]][%[[NEXT]]]
//       CHECK:     %[[Q1:.*]] = arith.index_cast %[[Q1I]]
//       CHECK:     %[[NQ:.*]] = arith.subi %[[Q1]], %[[Q0]]
//       CHECK:     %[[K1I:.*]] = memref.load %[[CK]][%[[NEXT]]]
//       CHECK:     %[[K1:.*]] = arith.index_cast %[[K1I]]
//       CHECK:     %[[NKB:.*]] = arith.subi %[[K1]], %[[K0]]
// A Q block at or past Nq_b (an empty sequence included) sees no key.
//       CHECK:     %[[INSIDE:.*]] = arith.cmpi ult, %[[QPOS]], %[[NQ]]
//       CHECK:     %[[NK:.*]] = arith.select %[[INSIDE]], %[[NKB]], %c0
// O and LSE end after the sequence's last row.
//       CHECK:     %[[END:.*]] = arith.addi %[[Q0]], %[[NQ]]
//       CHECK:     %[[OB:.*]] = memref.subview %[[TO]][0, 0, 0, 0] [1, 4, %[[END]], 16] [1, 1, 1, 1]
//       CHECK:     %[[LB:.*]] = memref.subview %[[EL]][0, 0, 0] [1, 4, %[[END]]] [1, 1, 1]
// The dense nest with batch 0 at row Q0 + q_pos, keys from K0, causal_offset
// = Nk_b - Nq_b.
//       CHECK:     %[[ROW:.*]] = arith.addi %[[Q0]], %[[QPOS]]
//       CHECK:     %[[QT:.*]] = attn.load_tile %[[TQ]][%[[B0:.*]], %[[H]], %[[ROW]], %{{.*}}] : memref<1x4x?x16xbf16, strided<[?, 16, 64, 1]>> -> vector<4x16xbf16>
//       CHECK:     %[[BLOCKS:.*]] = arith.ceildivui %[[NK]], %c8
//       CHECK:     %[[OFF:.*]] = arith.subi %[[NK]], %[[NQ]]
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]]
//       CHECK:       attn.online_attention q(%[[QT]] : vector<4x16xbf16>) kv(%[[TK]], %[[TV]] : {{.*}}) at[%[[B0]], %[[HKV]], %{{.*}}, %{{.*}}] rows(%[[QPOS]], causal_offset %[[OFF]])
//  CHECK-SAME:         num_keys(%[[NK]]) key_offset(%[[K0]])
//  CHECK-SAME:         mask = #attn.mask<causal>
//       CHECK:     attn.epilogue state({{.*}}) to %[[OB]], lse %[[LB]][%[[B0]], %[[H]], %[[ROW]], %{{.*}}]
//       CHECK:   } {attn.varlen, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}

// GQA packing: y walks KV heads, rows = Nq_b * G; the grid's x is
// ceil(max_seqlen_q / (BLOCK_M / G)).
// PACK-LABEL: func.func @varlen_causal_gqa
//       PACK:   %[[NQB:.*]] = arith.ceildivui %{{.*}}, %c2
//       PACK:   scf.forall (%[[QB:.*]], %[[HKV:.*]], %[[S:.*]]) in (%[[NQB]], %c2, %{{.*}}) {
//       PACK:     %[[Q0:.*]] = arith.index_cast
//       PACK:     %[[NQ:.*]] = arith.subi
//       PACK:     %[[NK:.*]] = arith.subi
//       PACK:     %[[PROWS:.*]] = arith.muli %[[NQ]], %c2
//       PACK:     arith.cmpi ult, %{{.*}}, %[[PROWS]]
// Packed rows: the sequence's first packed row is Q0 * G.
//       PACK:     %[[BASE:.*]] = arith.muli %[[Q0]], %c2
//       PACK:     %[[ROW:.*]] = arith.addi %[[BASE]], %{{.*}}
//       PACK:     attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}] {gqa_pack = 2 : i64}
//       PACK:     attn.online_attention {{.*}} gqa_pack = 2 : i64
//       PACK:     attn.epilogue {{.*}} {gqa_pack = 2 : i64}
//       PACK:   } {attn.varlen, mapping
func.func @varlen_causal_gqa(%q: memref<?x4x16xbf16>, %k: memref<?x2x16xbf16>, %v: memref<?x2x16xbf16>,
                             %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                             %o: memref<?x4x16xbf16>, %lse: memref<4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x16xbf16>, memref<?x2x16xbf16>, memref<?x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      outs(%o : memref<?x4x16xbf16>) lse(%lse : memref<4x?xf32>) {causal}
  return
}

// -----

// Not causal, no LSE, static totals and a strided Q (a slice of a packed
// QKV buffer): every block is masked by bounds although total_k (56) is a
// multiple of BLOCK_N (each sequence's N_b is a value; the dense rule,
// no mask when Nk % BLOCK_N == 0, would read past short sequences); the
// views keep Q's strides.
// CHECK-LABEL: func.func @varlen_strided_no_lse
//       CHECK:   memref.transpose {{.*}} to memref<1x4x40x16xf16, strided<[7680, 16, 192, 1], offset: ?>>
//       CHECK:   scf.forall
//       CHECK:     attn.online_attention
//   CHECK-NOT:       causal_offset
//  CHECK-SAME:       mask = #attn.mask<bounds>
//       CHECK:     attn.epilogue state({{.*}}) to %{{[^,]*}}[
//       CHECK:   } {attn.varlen
func.func @varlen_strided_no_lse(%q: memref<40x4x16xf16, strided<[192, 16, 1], offset: ?>>,
                                 %k: memref<56x4x16xf16>, %v: memref<56x4x16xf16>,
                                 %cu_q: memref<3xi32>, %cu_k: memref<3xi32>,
                                 %max_q: index, %max_k: index, %o: memref<40x4x16xf16>) {
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xf16, strided<[192, 16, 1], offset: ?>>,
                            memref<56x4x16xf16>, memref<56x4x16xf16>)
      seqlens(%cu_q, %cu_k : memref<3xi32>, memref<3xi32>) max(%max_q, %max_k)
      outs(%o : memref<40x4x16xf16>)
  return
}

// -----

// Paged K/V and split-KV (the workspace attn-split-kv allocates): K and V
// are read through their caches' [num_pages, Hkv, page_size, D] views with
// the sequence as the block table's row (no key_offset), Nk_b =
// cu_k[b + 1] - cu_k[b] clamped to [0, max_pages * page_size]; each CTA
// stores its split of the workspace, viewed [S, 1, Hq, total_q, D] and cut
// after the sequence; then the combine grid over (row block of total_q,
// head) folds the S splits into O and LSE, cut after cu_q[B].
// CHECK-LABEL: func.func @varlen_paged_split
//  CHECK-SAME:   (%[[Q:[^:]*]]: memref<?x4x16xbf16>, %[[K:[^:]*]]: memref<?x8x2x16xbf16>, %[[V:[^:]*]]: memref<?x8x2x16xbf16>, %[[CQ:[^:]*]]: memref<?xi32>, %[[CK:[^:]*]]: memref<?xi32>, %[[MQ:[^:]*]]: index, %[[MK:[^:]*]]: index, %[[BT:[^:]*]]: memref<?x?xi32>, %[[O:[^:]*]]: memref<?x4x16xbf16>, %[[LSE:[^:]*]]: memref<4x?xf32>, %[[WO:[^:]*]]: memref<2x?x4x16xf32>, %[[WL:[^:]*]]: memref<2x4x?xf32>)
//       CHECK:   %[[TK:.*]] = memref.transpose %[[K]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x8x2x16xbf16> to memref<?x2x8x16xbf16
//       CHECK:   %[[TV:.*]] = memref.transpose %[[V]]
//       CHECK:   %[[EWO:.*]] = memref.expand_shape %[[WO]] {{\[}}[0], [1, 2], [3], [4]] {{.*}} into memref<2x1x?x4x16xf32>
//       CHECK:   %[[TWO:.*]] = memref.transpose %[[EWO]] (d0, d1, d2, d3, d4) -> (d0, d1, d3, d2, d4) : memref<2x1x?x4x16xf32> to memref<2x1x4x?x16xf32
//       CHECK:   %[[EWL:.*]] = memref.expand_shape %[[WL]] {{\[}}[0], [1, 2], [3]] {{.*}} into memref<2x1x4x?xf32>
// Split-minor x: (Q block, split).
//       CHECK:   %[[NQB:.*]] = arith.ceildivui %[[MQ]], %c4
//       CHECK:   %[[X:.*]] = arith.muli %[[NQB]], %c2
//       CHECK:   scf.forall (%[[I:.*]], %[[H:.*]], %[[S:.*]]) in (%[[X]], %c4, %{{.*}}) {
//       CHECK:     %[[SPLIT:.*]] = arith.remui %[[I]], %c2
//       CHECK:     %[[K0I:.*]] = memref.load %[[CK]][%[[S]]]
//       CHECK:     %[[K1I:.*]] = memref.load %[[CK]][%{{.*}}]
//       CHECK:     %[[NKB:.*]] = arith.subi
//       CHECK:     %[[PAGES:.*]] = memref.dim %[[BT]], %c1
//       CHECK:     %[[CAP:.*]] = arith.muli %[[PAGES]], %c8
//       CHECK:     %[[NKPOS:.*]] = arith.maxsi %[[NKB]], %c0
//       CHECK:     %[[NKCAP:.*]] = arith.minsi %[[NKPOS]], %[[CAP]]
//       CHECK:     %[[NK:.*]] = arith.select %{{.*}}, %[[NKCAP]], %c0
//       CHECK:     %[[WOB:.*]] = memref.subview %[[TWO]][0, 0, 0, 0, 0] [2, 1, 4, %[[END:.*]], 16]
//       CHECK:     %[[WLB:.*]] = memref.subview %[[EWL]][0, 0, 0, 0] [2, 1, 4, %[[END]]]
//       CHECK:     %[[WOS:.*]] = memref.subview %[[WOB]][%[[SPLIT]], 0, 0, 0, 0] [1, 1, 4, %[[END]], 16]
//       CHECK:     %[[WLS:.*]] = memref.subview %[[WLB]][%[[SPLIT]], 0, 0, 0] [1, 1, 4, %[[END]]]
//       CHECK:     scf.for
//       CHECK:       attn.online_attention q({{.*}}) kv(%[[TK]], %[[TV]] : {{.*}}) at[%[[S]], {{.*}}]
//  CHECK-SAME:         pages(%[[BT]] : memref<?x?xi32>) num_keys(%[[NK]])
//   CHECK-NOT:         key_offset
//       CHECK:     attn.epilogue state({{.*}}) to %[[WOS]], lse %[[WLS]][
//       CHECK:   } {attn.varlen, mapping
// The combine: rows [0, cu_q[B]) of O and LSE.
//       CHECK:   memref.expand_shape %[[O]]
//       CHECK:   %[[TOTAL:.*]] = memref.dim %[[O]], %c0
//       CHECK:   %[[NRB:.*]] = arith.ceildivui %[[TOTAL]], %c4
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%[[NRB]], %c4{{.*}}, %c1{{.*}}) {
//       CHECK:     %[[LASTI:.*]] = memref.load %[[CQ]][%{{.*}}]
//       CHECK:     %[[LAST:.*]] = arith.index_cast %[[LASTI]]
//       CHECK:     %[[OB:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [1, 4, %[[LAST]], 16]
//       CHECK:     %[[LB:.*]] = memref.subview %{{.*}}[0, 0, 0] [1, 4, %[[LAST]]]
//       CHECK:     scf.for %{{.*}} = %c0{{.*}} to %c2
//       CHECK:       attn.load_tile
//       CHECK:       attn.load_rows
//       CHECK:       attn.combine_step
//       CHECK:     attn.epilogue state({{.*}}) to %[[OB]], lse %[[LB]][
//   CHECK-NOT:   attn.varlen
//       CHECK:   } {mapping
func.func @varlen_paged_split(%q: memref<?x4x16xbf16>, %k: memref<?x8x2x16xbf16>, %v: memref<?x8x2x16xbf16>,
                              %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                              %table: memref<?x?xi32>, %o: memref<?x4x16xbf16>, %lse: memref<4x?xf32>,
                              %wo: memref<2x?x4x16xf32>, %wl: memref<2x4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x16xbf16>, memref<?x8x2x16xbf16>, memref<?x8x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      paged(%table : memref<?x?xi32>)
      outs(%o : memref<?x4x16xbf16>) lse(%lse : memref<4x?xf32>)
      workspace(%wo, %wl : memref<2x?x4x16xf32>, memref<2x4x?xf32>) {causal}
  return
}

// -----

// A static total_q of 0 (paged K/V here): no row to compute or store, so
// the op goes away without a grid.
// CHECK-LABEL: func.func @empty_total
//   CHECK-NOT:   scf.forall
//   CHECK-NOT:   attn.
//       CHECK:   return
// PACK-LABEL: func.func @empty_total
//   PACK-NOT:   scf.forall
func.func @empty_total(%q: memref<0x4x16xbf16>, %k: memref<?x8x2x16xbf16>, %v: memref<?x8x2x16xbf16>,
                       %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                       %bt: memref<?x?xi32>, %o: memref<0x4x16xbf16>, %lse: memref<4x0xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<0x4x16xbf16>, memref<?x8x2x16xbf16>, memref<?x8x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k) paged(%bt : memref<?x?xi32>)
      outs(%o : memref<0x4x16xbf16>) lse(%lse : memref<4x0xf32>) {causal}
  return
}

// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" --canonicalize | FileCheck %s

// attn-tile: attn.attention -> the FlashAttention-2 loop nest
//   scf.forall (qb, h, b) in (ceil(Nq / BM), Hq, B)          one CTA each
//     q_tile = attn.load_tile Q[b, h, qb * BM, 0]
//     (m, l, acc) = scf.for kb = 0 to ceil(Nk / BN)
//         iter_args(-inf, 0, 0)                             fp32 state
//       attn.online_attention ... mask(none | bounds | causal)
//     attn.epilogue state(m, l, acc) to O (, lse LSE)
// BLOCK_M = 16, BLOCK_N = 8. B = 2 everywhere so that canonicalize keeps all
// three forall dimensions in view (the mapped CTA loop keeps unit ones too).

// GQA (Hq = 4, Hkv = 2), Nq = 40, Nk = 48 = 6 * BN, non-causal: no mask.
// CHECK-LABEL: func.func @gqa_nomask
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x40x16xf16>, %[[K:[a-z0-9]+]]: memref<2x2x48x16xf16>, %[[V:[a-z0-9]+]]: memref<2x2x48x16xf16>, %[[O:[a-z0-9]+]]: memref<2x4x40x16xf16>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
// Initial state: m = -inf, l = 0, acc = 0.
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
//   CHECK-DAG:   %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
//   CHECK-DAG:   %[[ZACC:.*]] = arith.constant dense<0.000000e+00> : vector<16x16xf32>
// Grid (ceil(40 / 16), Hq, B) = (3, 4, 2).
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (3, 4, 2) {
// q_pos = qb * BM
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
// kv_head = h / (Hq / Hkv) = h / 2
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %[[C2]] : index
//       CHECK:     %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[H]], %[[QPOS]], %[[C0]]] : memref<2x4x40x16xf16> -> vector<16x16xf16>
// ceil(48 / 8) = 6 K/V blocks.
//       CHECK:     %[[R:.*]]:3 = scf.for %[[KB:.*]] = %[[C0]] to %[[C6]] step %[[C1]]
//  CHECK-SAME:         iter_args(%[[M:.*]] = %[[NEGINF]], %[[L:.*]] = %[[ZROW]], %[[ACC:.*]] = %[[ZACC]])
//  CHECK-SAME:         -> (vector<16xf32>, vector<16xf32>, vector<16x16xf32>) {
// k_pos = kb * BN
//       CHECK:       %[[KPOS:.*]] = arith.muli %[[KB]], %[[C8]] : index
//       CHECK:       %{{.*}}, %{{.*}}, %{{.*}} = attn.online_attention q(%[[QT]] : vector<16x16xf16>)
//  CHECK-SAME:         kv(%[[K]], %[[V]] : memref<2x2x48x16xf16>, memref<2x2x48x16xf16>)
//  CHECK-SAME:         at[%[[B]], %[[KVH]], %[[KPOS]], %[[C0]]] rows(%[[QPOS]]) state(%[[M]], %[[L]], %[[ACC]] :
//  CHECK-SAME:         {block_n = 8 : i64, mask = #attn.mask<none>, scale = 2.500000e-01 : f32}
//       CHECK:       scf.yield
//       CHECK:     }
//   CHECK-NOT:     attn.stage
//       CHECK:     attn.epilogue state(%[[R]]#0, %[[R]]#1, %[[R]]#2 : vector<16xf32>, vector<16xf32>, vector<16x16xf32>)
//  CHECK-SAME:       to %[[O]][%[[B]], %[[H]], %[[QPOS]], %[[C0]]] : memref<2x4x40x16xf16>{{$}}
//   CHECK-NOT:   attn.attention
func.func @gqa_nomask(%q: memref<2x4x40x16xf16>, %k: memref<2x2x48x16xf16>,
                      %v: memref<2x2x48x16xf16>, %o: memref<2x4x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x4x40x16xf16>, memref<2x2x48x16xf16>,
                     memref<2x2x48x16xf16>) outs(%o : memref<2x4x40x16xf16>)
  return
}

// -----

// MHA (Hq = Hkv): kv_head = h / 1 folds to h. Nk = 77 is not a multiple of
// BN: every block gets the bounds mask, ceil(77 / 8) = 10 blocks.
// CHECK-LABEL: func.func @bounds_tail
//   CHECK-DAG:   %[[C10:.*]] = arith.constant 10 : index
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in (3, 2, 2) {
//   CHECK-NOT:     arith.divui
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %[[C10]] step
//       CHECK:       attn.online_attention
//  CHECK-SAME:         at[%[[B]], %[[H]],
//  CHECK-SAME:         mask = #attn.mask<bounds>
func.func @bounds_tail(%q: memref<2x2x40x16xf16>, %k: memref<2x2x77x16xf16>,
                       %v: memref<2x2x77x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x77x16xf16>,
                     memref<2x2x77x16xf16>) outs(%o : memref<2x2x40x16xf16>)
  return
}

// -----

// Causal, Nq = 40 < Nk = 64: causal_offset = Nk - Nq = 24 (bottom-right
// aligned: row i sees key j iff j <= i + 24). ceil(64 / 8) = 8 blocks.
// CHECK-LABEL: func.func @causal_offset_pos
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[OFF:.*]] = arith.constant 24 : index
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (3, 2, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %{{.*}} : index
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %[[C8]] step
//       CHECK:       attn.online_attention
//  CHECK-SAME:         rows(%[[QPOS]], causal_offset %[[OFF]])
//  CHECK-SAME:         mask = #attn.mask<causal>
func.func @causal_offset_pos(%q: memref<2x2x40x16xf16>, %k: memref<2x2x64x16xf16>,
                             %v: memref<2x2x64x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x64x16xf16>,
                     memref<2x2x64x16xf16>) outs(%o : memref<2x2x40x16xf16>) {causal}
  return
}

// -----

// Causal, Nq = 40 > Nk = 24: causal_offset = 24 - 40 = -16 (the first 16
// query rows see no key). ceil(24 / 8) = 3 blocks.
// CHECK-LABEL: func.func @causal_offset_neg
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[OFF:.*]] = arith.constant -16 : index
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %[[C3]] step
//       CHECK:     attn.online_attention
//  CHECK-SAME:       causal_offset %[[OFF]])
//  CHECK-SAME:       mask = #attn.mask<causal>
func.func @causal_offset_neg(%q: memref<2x2x40x16xf16>, %k: memref<2x2x24x16xf16>,
                             %v: memref<2x2x24x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x24x16xf16>,
                     memref<2x2x24x16xf16>) outs(%o : memref<2x2x40x16xf16>) {causal}
  return
}

// -----

// Causal with a ragged Nk (= 77): the mask is causal (which includes the
// bounds check), not bounds. causal_offset = 77 - 40 = 37.
// CHECK-LABEL: func.func @causal_ragged
//   CHECK-DAG:   %[[OFF:.*]] = arith.constant 37 : index
//       CHECK:   attn.online_attention
//  CHECK-SAME:     causal_offset %[[OFF]])
//  CHECK-SAME:     mask = #attn.mask<causal>
func.func @causal_ragged(%q: memref<2x2x40x16xf16>, %k: memref<2x2x77x16xf16>,
                         %v: memref<2x2x77x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x77x16xf16>,
                     memref<2x2x77x16xf16>) outs(%o : memref<2x2x40x16xf16>) {causal}
  return
}

// -----

// Default scale 1/sqrt(D) for D = 32: 0.176776692. State types follow D:
// acc is vector<16x32xf32>; Q keeps its element type (bf16).
// CHECK-LABEL: func.func @default_scale_d32
//   CHECK-DAG:   arith.constant dense<0.000000e+00> : vector<16x32xf32>
//       CHECK:   attn.load_tile {{.*}} -> vector<16x32xbf16>
//       CHECK:   scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16x32xf32>)
//       CHECK:     attn.online_attention q(%{{.*}} : vector<16x32xbf16>)
//  CHECK-SAME:       scale = 0.176776692 : f32
func.func @default_scale_d32(%q: memref<2x2x40x32xbf16>, %k: memref<2x2x40x32xbf16>,
                             %v: memref<2x2x40x32xbf16>, %o: memref<2x2x40x32xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x32xbf16>, memref<2x2x40x32xbf16>,
                     memref<2x2x40x32xbf16>) outs(%o : memref<2x2x40x32xbf16>)
  return
}

// -----

// Explicit scale = 0.5 overrides 1/sqrt(D); the epilogue also writes LSE.
// CHECK-LABEL: func.func @explicit_scale_lse
//  CHECK-SAME:   %[[O:[a-z0-9]+]]: memref<2x2x40x16xf16>, %[[LSE:[a-z0-9]+]]: memref<2x2x40xf32>)
//       CHECK:   attn.online_attention
//  CHECK-SAME:     scale = 5.000000e-01 : f32
//       CHECK:   attn.epilogue state(%{{.*}}) to %[[O]], lse %[[LSE]][%{{.*}}] : memref<2x2x40x16xf16>, memref<2x2x40xf32>
func.func @explicit_scale_lse(%q: memref<2x2x40x16xf16>, %k: memref<2x2x40x16xf16>,
                              %v: memref<2x2x40x16xf16>, %o: memref<2x2x40x16xf16>,
                              %lse: memref<2x2x40xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x40x16xf16>,
                     memref<2x2x40x16xf16>) outs(%o : memref<2x2x40x16xf16>)
                 lse(%lse : memref<2x2x40xf32>) {scale = 0.5 : f32}
  return
}

// -----

// Dynamic B, H, Nq, Nk (D static), causal: sizes come from memref.dim,
// the grid is (ceildivui(Nq, 16), Hq, B), the K/V trip count
// ceildivui(Nk, 8), the GQA group Hq / Hkv and causal_offset Nk - Nq are
// computed at run time.
// CHECK-LABEL: func.func @dynamic_causal
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<?x?x?x16xf16>, %[[K:[a-z0-9]+]]: memref<?x?x?x16xf16>
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   CHECK-DAG:   %[[B:.*]] = memref.dim %[[Q]], %[[C0]]
//   CHECK-DAG:   %[[HQ:.*]] = memref.dim %[[Q]], %[[C1]]
//   CHECK-DAG:   %[[NQ:.*]] = memref.dim %[[Q]], %[[C2]]
//   CHECK-DAG:   %[[HKV:.*]] = memref.dim %[[K]], %[[C1]]
//   CHECK-DAG:   %[[NK:.*]] = memref.dim %[[K]], %[[C2]]
//   CHECK-DAG:   %[[NQB:.*]] = arith.ceildivui %[[NQ]], %[[C16]] : index
//   CHECK-DAG:   %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HKV]] : index
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in (%[[NQB]], %[[HQ]], %[[B]]) {
//       CHECK:     arith.divui %[[H]], %[[GROUP]] : index
//   CHECK-DAG:     %[[NKB:.*]] = arith.ceildivui %[[NK]], %[[C8]] : index
//   CHECK-DAG:     %[[OFF:.*]] = arith.subi %[[NK]], %[[NQ]] : index
//       CHECK:     scf.for %{{.*}} = %[[C0]] to %[[NKB]] step %[[C1]]
//       CHECK:       attn.online_attention
//  CHECK-SAME:         causal_offset %[[OFF]])
//  CHECK-SAME:         mask = #attn.mask<causal>
func.func @dynamic_causal(%q: memref<?x?x?x16xf16>, %k: memref<?x?x?x16xf16>,
                          %v: memref<?x?x?x16xf16>, %o: memref<?x?x?x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<?x?x?x16xf16>, memref<?x?x?x16xf16>,
                     memref<?x?x?x16xf16>) outs(%o : memref<?x?x?x16xf16>) {causal}
  return
}

// -----

// Dynamic Nk, non-causal: Nk may not be a multiple of BN, so bounds mask.
// CHECK-LABEL: func.func @dynamic_nk_bounds
//       CHECK:   %[[NK:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<2x2x?x16xf16>
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 2, 2) {
//       CHECK:     %[[NKB:.*]] = arith.ceildivui %[[NK]], %{{.*}} : index
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %[[NKB]] step
//       CHECK:       attn.online_attention
//  CHECK-SAME:         rows(%{{[a-z0-9_]+}}) state
//  CHECK-SAME:         mask = #attn.mask<bounds>
func.func @dynamic_nk_bounds(%q: memref<2x2x40x16xf16>, %k: memref<2x2x?x16xf16>,
                             %v: memref<2x2x?x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x?x16xf16>,
                     memref<2x2x?x16xf16>) outs(%o : memref<2x2x40x16xf16>)
  return
}

// -----

// FP8, GQA (Hq = 4, Hkv = 2): the descales of (b, kv_head) are loaded once
// per CTA; qk = q_descale * k_descale scales the scores (online_attention's
// descale), v_descale scales O (epilogue's descale). O is bf16.
// CHECK-LABEL: func.func @fp8_gqa
//  CHECK-SAME:   %[[QD:[a-z0-9]+]]: memref<2x2xf32>, %[[KD:[a-z0-9]+]]: memref<2x2xf32>, %[[VD:[a-z0-9]+]]: memref<2x2xf32>
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in (3, 4, 2) {
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %{{.*}} : index
//       CHECK:     %[[QT:.*]] = attn.load_tile {{.*}} -> vector<16x16xf8E4M3FN>
//   CHECK-DAG:     %[[QDS:.*]] = memref.load %[[QD]][%[[B]], %[[KVH]]] : memref<2x2xf32>
//   CHECK-DAG:     %[[KDS:.*]] = memref.load %[[KD]][%[[B]], %[[KVH]]] : memref<2x2xf32>
//   CHECK-DAG:     %[[QK:.*]] = arith.mulf %[[QDS]], %[[KDS]] : f32
//   CHECK-DAG:     %[[VDS:.*]] = memref.load %[[VD]][%[[B]], %[[KVH]]] : memref<2x2xf32>
//       CHECK:     scf.for
//       CHECK:       attn.online_attention q(%[[QT]] : vector<16x16xf8E4M3FN>)
//  CHECK-SAME:         descale(%[[QK]])
//       CHECK:     attn.epilogue
//  CHECK-SAME:       descale(%[[VDS]]) : memref<2x4x40x16xbf16>{{$}}
func.func @fp8_gqa(%q: memref<2x4x40x16xf8E4M3FN>, %k: memref<2x2x48x16xf8E4M3FN>,
                   %v: memref<2x2x48x16xf8E4M3FN>, %o: memref<2x4x40x16xbf16>,
                   %qd: memref<2x2xf32>, %kd: memref<2x2xf32>, %vd: memref<2x2xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x4x40x16xf8E4M3FN>,
                     memref<2x2x48x16xf8E4M3FN>, memref<2x2x48x16xf8E4M3FN>)
                 outs(%o : memref<2x4x40x16xbf16>)
                 descale(%qd, %kd, %vd : memref<2x2xf32>, memref<2x2xf32>,
                         memref<2x2xf32>)
  return
}

// -----

// FP8 with per-block Q/K and per-channel V descales. The scale blocks need
// not be the tiles (32 Q rows and 16 keys per scale here, tiles 16 x 8):
// each tile row gets the q descale of its (head, query / 32) once per CTA
// (row_descale), each key of a K/V block the k descale of its key / 16
// (key_descale, read per block), and the epilogue V's D descales of the KV
// head (channel_descale). No scalar qk or v descale.
// CHECK-LABEL: func.func @fp8_blocks
//  CHECK-SAME:   %[[QD:[a-z0-9]+]]: memref<2x4x2xf32>, %[[KD:[a-z0-9]+]]: memref<2x2x3xf32>, %[[VD:[a-z0-9]+]]: memref<2x2x16xf32>
//       CHECK:   scf.forall (%[[X:.*]], %[[H:.*]], %[[B:.*]]) in (3, 4, 2) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[X]], %c16
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %{{.*}} : index
//       CHECK:     %[[QT:.*]] = attn.load_tile {{.*}} -> vector<16x16xf8E4M3FN>
//       CHECK:     %[[ROWS:.*]] = attn.load_rows %[[QD]][%[[B]], %[[H]], %[[QPOS]]] {row_block = 32 : i64} : memref<2x4x2xf32> -> vector<16xf32>
//       CHECK:     %[[CH:.*]] = vector.transfer_read %[[VD]][%[[B]], %[[KVH]], %c0], %{{.*}} {in_bounds = [true]} : memref<2x2x16xf32>, vector<16xf32>
//       CHECK:     scf.for %[[KB:[a-z0-9]+]] = 
//       CHECK:       %[[KPOS:.*]] = arith.muli %[[KB]], %c8
//       CHECK:       %[[KEYS:.*]] = attn.load_rows %[[KD]][%[[B]], %[[KVH]], %[[KPOS]]] {row_block = 16 : i64} : memref<2x2x3xf32> -> vector<8xf32>
//       CHECK:       attn.online_attention q(%[[QT]] : vector<16x16xf8E4M3FN>)
//   CHECK-NOT:         descale(
//  CHECK-SAME:         row_descale(%[[ROWS]] : vector<16xf32>) key_descale(%[[KEYS]] : vector<8xf32>)
//       CHECK:     attn.epilogue
//  CHECK-SAME:       channel_descale(%[[CH]] : vector<16xf32>) : memref<2x4x40x16xbf16>{{$}}
func.func @fp8_blocks(%q: memref<2x4x40x16xf8E4M3FN>, %k: memref<2x2x48x16xf8E4M3FN>,
                      %v: memref<2x2x48x16xf8E4M3FN>, %o: memref<2x4x40x16xbf16>,
                      %qd: memref<2x4x2xf32>, %kd: memref<2x2x3xf32>, %vd: memref<2x2x16xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x4x40x16xf8E4M3FN>,
                     memref<2x2x48x16xf8E4M3FN>, memref<2x2x48x16xf8E4M3FN>)
                 outs(%o : memref<2x4x40x16xbf16>)
                 descale(%qd, %kd, %vd : memref<2x4x2xf32>, memref<2x2x3xf32>,
                         memref<2x2x16xf32>) {q_descale_block = 32 : i64, k_descale_block = 16 : i64}
  return
}

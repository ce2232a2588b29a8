// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=2" --attn-causal-split --attn-online-softmax --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=2" --attn-causal-split --attn-distribute-rows --attn-online-softmax --canonicalize | FileCheck %s --check-prefix=DIST

// attn-online-softmax: tile ops -> exp2-domain online softmax, BLOCK_M = 4,
// BLOCK_N = 2 (each K/V block unrolls into keys j = 0, 1), D = 8. Per block,
// with c = scale * log2(e) folded into Q:
//   S_j    = rowsum(Q * c * K[j])             S_j = mask_j ? S_j : -inf
//   m_new  = max(m, S_0, S_1)
//   m_safe = m_new == -inf ? 0 : m_new
//   alpha  = exp2(m - m_safe)
//   P_j    = exp2(S_j - m_safe)
//   l_new  = alpha * l + P_0 + P_1
//   acc    = alpha * acc + P_0 (x) V[0] + P_1 (x) V[1]
// Epilogue: O = acc / l (l == 0 -> 1), LSE = (m + log2 l) * ln 2 (-inf if l == 0).

// Nq = 6 (the second Q block is a tail: rows 6, 7 padded), Nk = 4 = 2 * BN,
// non-causal: one unmasked loop, no LSE.
// CHECK-LABEL: func.func @nomask
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x1x6x8xf16>, %[[K:[a-z0-9]+]]: memref<1x1x4x8xf16>, %[[V:[a-z0-9]+]]: memref<1x1x4x8xf16>, %[[O:[a-z0-9]+]]: memref<1x1x6x8xf16>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[PAD:.*]] = arith.constant 0.000000e+00 : f16
// c = (1 / sqrt(8)) * log2(e) = 0.353553 * 1.442695 = 0.510070
//   CHECK-DAG:   %[[SCALE:.*]] = arith.constant dense<0.510069728> : vector<4x8xf32>
//   CHECK-DAG:   %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (2, 1, 1) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %{{.*}} : index
// Q tile: rows past Nq read as 0 (row dim not in bounds), D fully in bounds.
//       CHECK:     %[[QT:.*]] = vector.transfer_read %[[Q]][%[[C0]], %[[C0]], %[[QPOS]], %[[C0]]], %[[PAD]] {in_bounds = [false, true]} : memref<1x1x6x8xf16>, vector<4x8xf16>
//       CHECK:     %[[R:.*]]:3 = scf.for %[[KB:.*]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[M:.*]] = %[[NEGINF]], %[[L:.*]] = %[[ZROW]], %[[ACC:.*]] = %{{.*}})
//       CHECK:       %[[KPOS:.*]] = arith.muli %[[KB]], %[[C2]] : index
// Qc = Q * scale * log2(e)
//       CHECK:       %[[QF:.*]] = arith.extf %[[QT]] : vector<4x8xf16> to vector<4x8xf32>
//       CHECK:       %[[QC:.*]] = arith.mulf %[[QF]], %[[SCALE]] : vector<4x8xf32>
// S_0 = rowsum(Qc * K[k_pos]); unmasked: the row index is not clamped
//       CHECK:       %[[K0:.*]] = vector.transfer_read %[[K]][%[[C0]], %[[C0]], %[[KPOS]], %[[C0]]], %[[PAD]] {in_bounds = [true]} : memref<1x1x4x8xf16>, vector<8xf16>
//       CHECK:       %[[K0F:.*]] = arith.extf %[[K0]] : vector<8xf16> to vector<8xf32>
//       CHECK:       %[[K0B:.*]] = vector.broadcast %[[K0F]] : vector<8xf32> to vector<4x8xf32>
//       CHECK:       %[[QK0:.*]] = arith.mulf %[[QC]], %[[K0B]] : vector<4x8xf32>
//       CHECK:       %[[S0:.*]] = vector.multi_reduction <add>, %[[QK0]], %[[ZROW]] [1] : vector<4x8xf32> to vector<4xf32>
// S_1 = rowsum(Qc * K[k_pos + 1])
//       CHECK:       %[[KEY1:.*]] = arith.addi %[[KPOS]], %[[C1]] : index
//       CHECK:       vector.transfer_read %[[K]][%[[C0]], %[[C0]], %[[KEY1]], %[[C0]]]
//       CHECK:       %[[S1:.*]] = vector.multi_reduction <add>, %{{.*}}, %[[ZROW]] [1] : vector<4x8xf32> to vector<4xf32>
//   CHECK-NOT:       arith.select
// m_new = max(max(m, S_0), S_1)
//       CHECK:       %[[MX:.*]] = arith.maximumf %[[M]], %[[S0]] : vector<4xf32>
//       CHECK:       %[[MNEW:.*]] = arith.maximumf %[[MX]], %[[S1]] : vector<4xf32>
// m_safe = m_new == -inf ? 0 : m_new
//       CHECK:       %[[NOKEY:.*]] = arith.cmpf oeq, %[[MNEW]], %[[NEGINF]] : vector<4xf32>
//       CHECK:       %[[MSAFE:.*]] = arith.select %[[NOKEY]], %[[ZROW]], %[[MNEW]] : vector<4xi1>, vector<4xf32>
// alpha = exp2(m - m_safe); l' = alpha * l; acc' = acc * alpha (per row)
//       CHECK:       %[[DM:.*]] = arith.subf %[[M]], %[[MSAFE]] : vector<4xf32>
//       CHECK:       %[[ALPHA:.*]] = math.exp2 %[[DM]] : vector<4xf32>
//       CHECK:       %[[LA:.*]] = arith.mulf %[[ALPHA]], %[[L]] : vector<4xf32>
//       CHECK:       %[[AB:.*]] = vector.broadcast %[[ALPHA]] : vector<4xf32> to vector<8x4xf32>
//       CHECK:       %[[AT:.*]] = vector.transpose %[[AB]], [1, 0] : vector<8x4xf32> to vector<4x8xf32>
//       CHECK:       %[[ACCA:.*]] = arith.mulf %[[ACC]], %[[AT]] : vector<4x8xf32>
// P_0 = exp2(S_0 - m_safe); l' += P_0; acc' += P_0 (x) V[k_pos]
//       CHECK:       %[[D0:.*]] = arith.subf %[[S0]], %[[MSAFE]] : vector<4xf32>
//       CHECK:       %[[P0:.*]] = math.exp2 %[[D0]] : vector<4xf32>
//       CHECK:       %[[L0:.*]] = arith.addf %[[LA]], %[[P0]] : vector<4xf32>
//       CHECK:       %[[V0:.*]] = vector.transfer_read %[[V]][%[[C0]], %[[C0]], %[[KPOS]], %[[C0]]], %[[PAD]] {in_bounds = [true]}
//       CHECK:       %[[V0F:.*]] = arith.extf %[[V0]] : vector<8xf16> to vector<8xf32>
//       CHECK:       %[[ACC0:.*]] = vector.outerproduct %[[P0]], %[[V0F]], %[[ACCA]] {kind = #vector.kind<add>} : vector<4xf32>, vector<8xf32>
// P_1 = exp2(S_1 - m_safe); l' += P_1; acc' += P_1 (x) V[k_pos + 1]
//       CHECK:       %[[D1:.*]] = arith.subf %[[S1]], %[[MSAFE]] : vector<4xf32>
//       CHECK:       %[[P1:.*]] = math.exp2 %[[D1]] : vector<4xf32>
//       CHECK:       %[[L1:.*]] = arith.addf %[[L0]], %[[P1]] : vector<4xf32>
//       CHECK:       vector.transfer_read %[[V]][%[[C0]], %[[C0]], %[[KEY1]], %[[C0]]]
//       CHECK:       %[[ACC1:.*]] = vector.outerproduct %[[P1]], %{{.*}}, %[[ACC0]] {kind = #vector.kind<add>}
// the new state is (m_new, l', acc'): m_new, not m_safe
//       CHECK:       scf.yield %[[MNEW]], %[[L1]], %[[ACC1]] : vector<4xf32>, vector<4xf32>, vector<4x8xf32>
// Epilogue: O = acc * (1 / l_safe), l_safe = l == 0 ? 1 : l
//       CHECK:     %[[LZ:.*]] = arith.cmpf oeq, %[[R]]#1, %[[ZROW]] : vector<4xf32>
//       CHECK:     %[[LSAFE:.*]] = arith.select %[[LZ]], %[[ONE]], %[[R]]#1 : vector<4xi1>, vector<4xf32>
//       CHECK:     %[[INV:.*]] = arith.divf %[[ONE]], %[[LSAFE]] : vector<4xf32>
//       CHECK:     %[[IB:.*]] = vector.broadcast %[[INV]] : vector<4xf32> to vector<8x4xf32>
//       CHECK:     %[[IT:.*]] = vector.transpose %[[IB]], [1, 0] : vector<8x4xf32> to vector<4x8xf32>
//       CHECK:     %[[OF:.*]] = arith.mulf %[[R]]#2, %[[IT]] : vector<4x8xf32>
//       CHECK:     %[[OH:.*]] = arith.truncf %[[OF]] : vector<4x8xf32> to vector<4x8xf16>
// rows past Nq are not stored (row dim not in bounds)
//       CHECK:     vector.transfer_write %[[OH]], %[[O]][%[[C0]], %[[C0]], %[[QPOS]], %[[C0]]] {in_bounds = [false, true]} : vector<4x8xf16>, memref<1x1x6x8xf16>
// no LSE operand: no log2, no LSE store
//   CHECK-NOT:     math.log2
//   CHECK-NOT:     vector.transfer_write
//       CHECK:   return
// One lane per row (D = 8): no shuffle; the state is one row per thread.
// DIST-LABEL: func.func @nomask
//       DIST:   scf.forall (%{{.*}}) in (4) {
//       DIST:     vector.transfer_read {{.*}} {in_bounds = [false, true]} : memref<1x1x6x8xf16>, vector<1x8xf16>
//   DIST-NOT:     gpu.shuffle
//       DIST:     vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x8xf32> to vector<1xf32>
//   DIST-NOT:     gpu.shuffle
//       DIST:     vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<1x8xf16>, memref<1x1x6x8xf16>
func.func @nomask(%q: memref<1x1x6x8xf16>, %k: memref<1x1x4x8xf16>,
                  %v: memref<1x1x4x8xf16>, %o: memref<1x1x6x8xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x8xf16>, memref<1x1x4x8xf16>,
                     memref<1x1x4x8xf16>) outs(%o : memref<1x1x6x8xf16>)
  return
}

// -----

// Causal with LSE, Nq = 6, Nk = 7: causal_offset = 1 (row i sees keys
// j <= i + 1). The masked stage clamps K/V row indices to Nk - 1 = 6 and
// masks S_j with (j < Nk) && (j <= row + 1).
// CHECK-LABEL: func.func @causal_lse
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x1x6x8xf16>, %[[K:[a-z0-9]+]]: memref<1x1x7x8xf16>, %[[V:[a-z0-9]+]]: memref<1x1x7x8xf16>, %[[O:[a-z0-9]+]]: memref<1x1x6x8xf16>, %[[LSE:[a-z0-9]+]]: memref<1x1x6xf32>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
//   CHECK-DAG:   %[[C7:.*]] = arith.constant 7 : index
// ln 2 = 0.693147182
//   CHECK-DAG:   %[[LN2:.*]] = arith.constant dense<0.693147182> : vector<4xf32>
//   CHECK-DAG:   %[[OFF:.*]] = arith.constant dense<1> : vector<4xindex>
//   CHECK-DAG:   %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
//   CHECK-DAG:   %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
//       CHECK:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (2, 1, 1) {
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %{{.*}} : index
// the full stage is unmasked: no clamp, no select
//       CHECK:     scf.for
//   CHECK-NOT:       arith.minsi
//   CHECK-NOT:       arith.select %{{.*}}, %{{.*}}, %[[NEGINF]]
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     %[[R:.*]]:3 = scf.for %[[KB:.*]] = {{.*}} iter_args(%[[M:.*]] = %{{.*}}#0, %{{.*}} = %{{.*}}#1, %{{.*}} = %{{.*}}#2)
//       CHECK:       %[[KPOS:.*]] = arith.muli %[[KB]], %{{.*}} : index
// rows = q_pos + [0, 1, 2, 3]
//       CHECK:       %[[QB4:.*]] = vector.broadcast %[[QPOS]] : index to vector<4xindex>
//       CHECK:       %[[ROWS:.*]] = arith.addi %[[QB4]], %[[IOTA]] : vector<4xindex>
// key 0 = k_pos, read at min(k_pos, Nk - 1)
//       CHECK:       %[[KR0:.*]] = arith.minsi %[[KPOS]], %[[C6]] : index
//       CHECK:       vector.transfer_read %[[K]][%[[C0]], %[[C0]], %[[KR0]], %[[C0]]]
//       CHECK:       %[[S0:.*]] = vector.multi_reduction <add>
// S_0 = (k_pos < Nk && k_pos <= rows + 1) ? S_0 : -inf
//       CHECK:       %[[IN0:.*]] = arith.cmpi slt, %[[KPOS]], %[[C7]] : index
//       CHECK:       %[[IN0V:.*]] = vector.broadcast %[[IN0]] : i1 to vector<4xi1>
//       CHECK:       %[[LIM0:.*]] = arith.addi %[[ROWS]], %[[OFF]] : vector<4xindex>
//       CHECK:       %[[KEY0V:.*]] = vector.broadcast %[[KPOS]] : index to vector<4xindex>
//       CHECK:       %[[VIS0:.*]] = arith.cmpi sle, %[[KEY0V]], %[[LIM0]] : vector<4xindex>
//       CHECK:       %[[OK0:.*]] = arith.andi %[[IN0V]], %[[VIS0]] : vector<4xi1>
//       CHECK:       %[[SM0:.*]] = arith.select %[[OK0]], %[[S0]], %[[NEGINF]] : vector<4xi1>, vector<4xf32>
// key 1 = k_pos + 1, read at min(k_pos + 1, Nk - 1)
//       CHECK:       %[[KEY1:.*]] = arith.addi %[[KPOS]], %[[C1]] : index
//       CHECK:       %[[KR1:.*]] = arith.minsi %[[KEY1]], %[[C6]] : index
//       CHECK:       vector.transfer_read %[[K]][%[[C0]], %[[C0]], %[[KR1]], %[[C0]]]
//       CHECK:       %[[S1:.*]] = vector.multi_reduction <add>
//       CHECK:       arith.cmpi slt, %[[KEY1]], %[[C7]] : index
//       CHECK:       arith.cmpi sle
//       CHECK:       %[[SM1:.*]] = arith.select %{{.*}}, %[[S1]], %[[NEGINF]] : vector<4xi1>, vector<4xf32>
// m_new from the masked scores
//       CHECK:       %[[MX:.*]] = arith.maximumf %[[M]], %[[SM0]] : vector<4xf32>
//       CHECK:       %[[MNEW:.*]] = arith.maximumf %[[MX]], %[[SM1]] : vector<4xf32>
//       CHECK:       %[[MSAFE:.*]] = arith.select %{{.*}}, %[[ZROW]], %[[MNEW]]
//       CHECK:       math.exp2
// P_0 = exp2(S_0 - m_safe), V row also clamped
//       CHECK:       %[[D0:.*]] = arith.subf %[[SM0]], %[[MSAFE]] : vector<4xf32>
//       CHECK:       math.exp2 %[[D0]]
//       CHECK:       vector.transfer_read %[[V]][%[[C0]], %[[C0]], %[[KR0]], %[[C0]]]
//       CHECK:       vector.outerproduct
//       CHECK:       %[[D1:.*]] = arith.subf %[[SM1]], %[[MSAFE]] : vector<4xf32>
//       CHECK:       math.exp2 %[[D1]]
//       CHECK:       vector.transfer_read %[[V]][%[[C0]], %[[C0]], %[[KR1]], %[[C0]]]
//       CHECK:       vector.outerproduct
//       CHECK:     } {attn.stage = "masked"}
//       CHECK:     %[[LZ:.*]] = arith.cmpf oeq, %[[R]]#1, %[[ZROW]] : vector<4xf32>
//       CHECK:     %[[LSAFE:.*]] = arith.select %[[LZ]], %{{.*}}, %[[R]]#1
//       CHECK:     vector.transfer_write %{{.*}}, %[[O]][%[[C0]], %[[C0]], %[[QPOS]], %[[C0]]] {in_bounds = [false, true]}
// LSE = (m + log2(l_safe)) * ln 2, -inf where l == 0
//       CHECK:     %[[LG:.*]] = math.log2 %[[LSAFE]] : vector<4xf32>
//       CHECK:     %[[ML:.*]] = arith.addf %[[R]]#0, %[[LG]] : vector<4xf32>
//       CHECK:     %[[LNL:.*]] = arith.mulf %[[ML]], %[[LN2]] : vector<4xf32>
//       CHECK:     %[[LSEV:.*]] = arith.select %[[LZ]], %[[NEGINF]], %[[LNL]] : vector<4xi1>, vector<4xf32>
// CTA level: the tile holds column 0, so the "col == 0" guard folds away.
//   CHECK-NOT:     scf.if
//       CHECK:     vector.transfer_write %[[LSEV]], %[[LSE]][%[[C0]], %[[C0]], %[[QPOS]]] : vector<4xf32>, memref<1x1x6xf32>
//   CHECK-NOT:     scf.if
//       CHECK:   return
func.func @causal_lse(%q: memref<1x1x6x8xf16>, %k: memref<1x1x7x8xf16>,
                      %v: memref<1x1x7x8xf16>, %o: memref<1x1x6x8xf16>,
                      %lse: memref<1x1x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x8xf16>, memref<1x1x7x8xf16>,
                     memref<1x1x7x8xf16>) outs(%o : memref<1x1x6x8xf16>)
                 lse(%lse : memref<1x1x6xf32>) {causal}
  return
}

// -----

// Dynamic Nk, non-causal: the masked stage is a loop; K rows clamped to
// dim - 1 and S_j masked by j < Nk only (no causal compare).
// CHECK-LABEL: func.func @bounds_dynamic
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
//       CHECK:   } {attn.stage = "full"}
//       CHECK:   scf.for
//       CHECK:     %[[KPOS:.*]] = arith.muli
//       CHECK:     %[[NK:.*]] = memref.dim
//       CHECK:     %[[LAST:.*]] = arith.subi %[[NK]], %{{.*}} : index
//       CHECK:     arith.minsi %[[KPOS]], %[[LAST]] : index
//       CHECK:     %[[S0:.*]] = vector.multi_reduction <add>
//       CHECK:     %[[IN0:.*]] = arith.cmpi slt, %[[KPOS]], %[[NK]] : index
//       CHECK:     %[[IN0V:.*]] = vector.broadcast %[[IN0]] : i1 to vector<4xi1>
//       CHECK:     arith.select %[[IN0V]], %[[S0]], %[[NEGINF]] : vector<4xi1>, vector<4xf32>
//   CHECK-NOT:     arith.cmpi sle
//       CHECK:   } {attn.stage = "masked"}
func.func @bounds_dynamic(%q: memref<1x1x6x8xf16>, %k: memref<1x1x?x8xf16>,
                          %v: memref<1x1x?x8xf16>, %o: memref<1x1x6x8xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x8xf16>, memref<1x1x?x8xf16>,
                     memref<1x1x?x8xf16>) outs(%o : memref<1x1x6x8xf16>)
  return
}

// -----

// D = 64 with LSE. At CTA level (default prefix) nothing crosses threads.
// After attn-distribute-rows (DIST): 2 lanes per row, each holding 32
// columns. A lane's partial score is completed with a shuffle-xor butterfly
// (offset 1 for 2 lanes), and only the lane with column 0 writes LSE.
// CHECK-LABEL: func.func @d64_lse
//   CHECK-NOT:   gpu.shuffle
//   CHECK-NOT:   scf.if
//       CHECK:   return
// DIST-LABEL: func.func @d64_lse
//  DIST-SAME:   %[[LSE:[a-z0-9]+]]: memref<1x1x6xf32>)
//   DIST-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   DIST-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   DIST-DAG:   %[[C1I:.*]] = arith.constant 1 : i32
//   DIST-DAG:   %[[W32:.*]] = arith.constant 32 : i32
// Q * (1/sqrt(64)) * log2(e) = 0.125 * 1.442695 = 0.180337
//   DIST-DAG:   arith.constant dense<0.180336878> : vector<1x32xf32>
//       DIST:   scf.forall (%{{.*}}) in (8) {
//       DIST:     %[[LANE:.*]] = arith.remui
//       DIST:     %[[COL:.*]] = arith.muli %[[LANE]], %[[C32]] : index
//       DIST:     vector.transfer_read %{{.*}}[%[[C0]], %[[C0]], %{{.*}}, %[[COL]]], %{{.*}} {in_bounds = [false, true]} : memref<1x1x6x64xf16>, vector<1x32xf16>
//       DIST:     scf.for
// K is read at this lane's 32 columns
//       DIST:       vector.transfer_read %{{.*}}[%[[C0]], %[[C0]], %{{.*}}, %[[COL]]], %{{.*}} {in_bounds = [true]} : memref<1x1x4x64xf16>, vector<32xf16>
// partial S_0 over 32 columns, then S_0 = partial + shuffle_xor(partial, 1)
//       DIST:       %[[PS0:.*]] = vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x32xf32> to vector<1xf32>
//       DIST:       %[[X0:.*]] = vector.extract %[[PS0]][0] : f32 from vector<1xf32>
//       DIST:       %[[SH0:.*]], %{{.*}} = gpu.shuffle  xor %[[X0]], %[[C1I]], %[[W32]] : f32
//       DIST:       %[[SUM0:.*]] = arith.addf %[[X0]], %[[SH0]] : f32
//       DIST:       %[[S0:.*]] = vector.broadcast %[[SUM0]] : f32 to vector<1xf32>
//       DIST:       gpu.shuffle  xor %{{.*}}, %[[C1I]], %[[W32]] : f32
//       DIST:       arith.maximumf %{{.*}}, %[[S0]] : vector<1xf32>
//       DIST:       vector.outerproduct {{.*}} : vector<1xf32>, vector<32xf32>
//       DIST:     vector.transfer_write %{{.*}}, %{{.*}}[%[[C0]], %[[C0]], %[[ROW:.*]], %[[COL]]] {in_bounds = [false, true]} : vector<1x32xf16>, memref<1x1x6x64xf16>
// if (col == 0) store LSE
//       DIST:     %[[FIRST:.*]] = arith.cmpi eq, %[[COL]], %[[C0]] : index
//       DIST:     scf.if %[[FIRST]] {
//       DIST:       vector.transfer_write %{{.*}}, %[[LSE]][%[[C0]], %[[C0]], %[[ROW]]] : vector<1xf32>, memref<1x1x6xf32>
//       DIST:     }
//       DIST:   } {mapping = [#gpu.thread<x>]}
func.func @d64_lse(%q: memref<1x1x6x64xf16>, %k: memref<1x1x4x64xf16>,
                   %v: memref<1x1x4x64xf16>, %o: memref<1x1x6x64xf16>,
                   %lse: memref<1x1x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x64xf16>, memref<1x1x4x64xf16>,
                     memref<1x1x4x64xf16>) outs(%o : memref<1x1x6x64xf16>)
                 lse(%lse : memref<1x1x6xf32>)
  return
}

// -----

// D = 128: 4 lanes per row, butterfly offsets 1 then 2 per score.
// CHECK-LABEL: func.func @d128_butterfly
//   CHECK-NOT:   gpu.shuffle
// DIST-LABEL: func.func @d128_butterfly
//   DIST-DAG:   %[[C1I:.*]] = arith.constant 1 : i32
//   DIST-DAG:   %[[C2I:.*]] = arith.constant 2 : i32
//   DIST-DAG:   %[[W32:.*]] = arith.constant 32 : i32
//       DIST:   scf.forall (%{{.*}}) in (16) {
//       DIST:     vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<1x32xf32> to vector<1xf32>
//       DIST:     %[[SH1:.*]], %{{.*}} = gpu.shuffle  xor %[[X:.*]], %[[C1I]], %[[W32]] : f32
//       DIST:     %[[Y:.*]] = arith.addf %[[X]], %[[SH1]] : f32
//       DIST:     %[[SH2:.*]], %{{.*}} = gpu.shuffle  xor %[[Y]], %[[C2I]], %[[W32]] : f32
//       DIST:     %[[Z:.*]] = arith.addf %[[Y]], %[[SH2]] : f32
//       DIST:     vector.broadcast %[[Z]] : f32 to vector<1xf32>
func.func @d128_butterfly(%q: memref<1x1x6x128xbf16>, %k: memref<1x1x4x128xbf16>,
                          %v: memref<1x1x4x128xbf16>, %o: memref<1x1x6x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x128xbf16>, memref<1x1x4x128xbf16>,
                     memref<1x1x4x128xbf16>) outs(%o : memref<1x1x6x128xbf16>)
  return
}

// RUN: attn-opt %s --split-input-file --attn-decompose-grad --cse | FileCheck %s

// attn-decompose-grad: the backward tile ops -> vector/arith/math, per key j
// of a block (unrolled), c = scale * log2(e):
//   S_j  = rowsum(Q * c * K[j])
//   P_j  = mask_j ? exp2(S_j - LSE2) : 0,  LSE2 = LSE == -inf ? +inf : LSE * log2(e)
//   dP_j = rowsum(dO * V[j]);  dS_j = P_j * (dP_j - Delta)
//   grad_dkdv: dV[j] += sum_i P_j[i] dO[i];  dK[j] += sum_i (dS_j * scale)[i] Q[i]
//   grad_dq:   dQ += (dS_j * scale) (x) K[j]

// One dK/dV step, BLOCK_M = 2, BLOCK_N = 2, D = 8, causal, scale = 0.5.
// CHECK-LABEL: func.func @dkdv
//  CHECK-SAME:   (%[[Q:.*]]: vector<2x8xf16>, %[[DO:.*]]: vector<2x8xf16>, %[[LSE:.*]]: vector<2xf32>, %[[DELTA:.*]]: vector<2xf32>, %[[K:.*]]: vector<2x8xf16>, %[[V:.*]]: vector<2x8xf16>, %[[QPOS:.*]]: index, %[[KPOS:.*]]: index, %[[OFF:.*]]: index, %[[DK:.*]]: vector<2x8xf32>, %[[DV:.*]]: vector<2x8xf32>)
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
//   CHECK-DAG:   %[[SCALE:.*]] = arith.constant dense<5.000000e-01> : vector<2xf32>
//   CHECK-DAG:   %[[INF:.*]] = arith.constant dense<0x7F800000> : vector<2xf32>
//   CHECK-DAG:   %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<2xf32>
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<2xf32>
//   CHECK-DAG:   %[[C:.*]] = arith.constant dense<0.72134751> : vector<2x8xf32>
// Q in f32, and Q * c for S.
//       CHECK:   %[[QF:.*]] = arith.extf %[[Q]] : vector<2x8xf16> to vector<2x8xf32>
//       CHECK:   %[[QS:.*]] = arith.mulf %[[QF]], %[[C]] : vector<2x8xf32>
//       CHECK:   %[[DOF:.*]] = arith.extf %[[DO]]
// LSE2: rows without keys (LSE = -inf) get +inf, so P = 0.
//       CHECK:   %[[NOKEY:.*]] = arith.cmpf oeq, %[[LSE]], %[[NEGINF]] : vector<2xf32>
//       CHECK:   %[[L2:.*]] = arith.mulf %[[LSE]], %[[LOG2E]] : vector<2xf32>
//       CHECK:   %[[LSE2:.*]] = arith.select %[[NOKEY]], %[[INF]], %[[L2]]
//       CHECK:   %[[KF:.*]] = arith.extf %[[K]]
//       CHECK:   %[[VF:.*]] = arith.extf %[[V]]
// Causal: row q_pos + i sees key k_pos + j iff k_pos + j <= q_pos + i + offset.
//       CHECK:   %[[ROWS:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<2xindex>
//       CHECK:   %[[LIMIT:.*]] = arith.addi %[[ROWS]], %{{.*}} : vector<2xindex>
//       CHECK:   %[[KEY0:.*]] = vector.broadcast %[[KPOS]] : index to vector<2xindex>
//       CHECK:   %[[VIS0:.*]] = arith.cmpi sle, %[[KEY0]], %[[LIMIT]] : vector<2xindex>
// Key 0: S_0, P_0 = exp2(S_0 - LSE2) masked, dP_0, dS_0.
//       CHECK:   %[[K0:.*]] = vector.extract %[[KF]][0] : vector<8xf32> from vector<2x8xf32>
//       CHECK:   %[[V0:.*]] = vector.extract %[[VF]][0] : vector<8xf32> from vector<2x8xf32>
//       CHECK:   %[[K0B:.*]] = vector.broadcast %[[K0]] : vector<8xf32> to vector<2x8xf32>
//       CHECK:   %[[QK:.*]] = arith.mulf %[[QS]], %[[K0B]] : vector<2x8xf32>
//       CHECK:   %[[S0:.*]] = vector.multi_reduction <add>, %[[QK]], %[[ZERO]] [1] : vector<2x8xf32> to vector<2xf32>
//       CHECK:   %[[SL:.*]] = arith.subf %[[S0]], %[[LSE2]] : vector<2xf32>
//       CHECK:   %[[E:.*]] = math.exp2 %[[SL]] : vector<2xf32>
//       CHECK:   %[[P0:.*]] = arith.select %[[VIS0]], %[[E]], %[[ZERO]] : vector<2xi1>, vector<2xf32>
//       CHECK:   %[[V0B:.*]] = vector.broadcast %[[V0]] : vector<8xf32> to vector<2x8xf32>
//       CHECK:   %[[DOV:.*]] = arith.mulf %[[DOF]], %[[V0B]] : vector<2x8xf32>
//       CHECK:   %[[DP0:.*]] = vector.multi_reduction <add>, %[[DOV]], %[[ZERO]] [1]
//       CHECK:   %[[DPD:.*]] = arith.subf %[[DP0]], %[[DELTA]] : vector<2xf32>
//       CHECK:   %[[DS0:.*]] = arith.mulf %[[P0]], %[[DPD]] : vector<2xf32>
// dV[0] += P_0[0] dO[0] + P_0[1] dO[1]
//       CHECK:   %[[PB:.*]] = vector.broadcast %[[P0]] : vector<2xf32> to vector<8x2xf32>
//       CHECK:   %[[PT:.*]] = vector.transpose %[[PB]], [1, 0]
//       CHECK:   %[[PDO:.*]] = arith.mulf %[[PT]], %[[DOF]] : vector<2x8xf32>
//       CHECK:   %[[DV0:.*]] = vector.extract %[[DV]][0]
//       CHECK:   %[[R0:.*]] = vector.extract %[[PDO]][0]
//       CHECK:   %[[A0:.*]] = arith.addf %[[DV0]], %[[R0]] : vector<8xf32>
//       CHECK:   %[[R1:.*]] = vector.extract %[[PDO]][1]
//       CHECK:   %[[NEWDV0:.*]] = arith.addf %[[A0]], %[[R1]] : vector<8xf32>
// dK[0] += sum_i (dS_0 * scale)[i] Q[i]
//       CHECK:   %[[DSS:.*]] = arith.mulf %[[DS0]], %[[SCALE]] : vector<2xf32>
//       CHECK:   %[[DSB:.*]] = vector.broadcast %[[DSS]]
//       CHECK:   %[[DST:.*]] = vector.transpose %[[DSB]], [1, 0]
//       CHECK:   %[[DSQ:.*]] = arith.mulf %[[DST]], %[[QF]] : vector<2x8xf32>
//       CHECK:   %[[DK0:.*]] = vector.extract %[[DK]][0]
//       CHECK:   arith.addf %[[DK0]]
//       CHECK:   %[[NEWDK0:.*]] = arith.addf
//       CHECK:   %[[DVI:.*]] = vector.insert %[[NEWDV0]], %[[DV]] [0]
//       CHECK:   %[[DKI:.*]] = vector.insert %[[NEWDK0]], %[[DK]] [0]
// Key 1 likewise, then the results (dK, dV).
//   CHECK-COUNT-1:   math.exp2
//       CHECK:   %[[DV1:.*]] = vector.insert %{{.*}}, %[[DVI]] [1]
//       CHECK:   %[[DK1:.*]] = vector.insert %{{.*}}, %[[DKI]] [1]
//       CHECK:   return %[[DK1]], %[[DV1]]
func.func @dkdv(%q: vector<2x8xf16>, %do: vector<2x8xf16>, %lse: vector<2xf32>,
                %delta: vector<2xf32>, %k: vector<2x8xf16>, %v: vector<2x8xf16>,
                %qpos: index, %kpos: index, %off: index, %dk: vector<2x8xf32>,
                %dv: vector<2x8xf32>) -> (vector<2x8xf32>, vector<2x8xf32>) {
  %dk1, %dv1 = attn.grad_dkdv q(%q, %do : vector<2x8xf16>, vector<2x8xf16>)
      lse_delta(%lse, %delta : vector<2xf32>, vector<2xf32>)
      kv(%k, %v : vector<2x8xf16>, vector<2x8xf16>) at(%qpos, %kpos, causal_offset %off)
      state(%dk, %dv : vector<2x8xf32>, vector<2x8xf32>)
      {mask = #attn.mask<causal>, scale = 0.5 : f32}
  return %dk1, %dv1 : vector<2x8xf32>, vector<2x8xf32>
}

// -----

// One dQ step on f32 (no extf), BLOCK_N = 2, bounds mask: key rows are
// clamped to Nk - 1 and keys >= Nk get P = 0.
// CHECK-LABEL: func.func @dq
//  CHECK-SAME:   (%[[Q:.*]]: vector<2x8xf32>, %{{.*}}: vector<2x8xf32>, %{{.*}}: vector<2xf32>, %{{.*}}: vector<2xf32>, %[[K:.*]]: memref<1x1x?x8xf32>, %[[V:.*]]: memref<1x1x?x8xf32>, %[[B:.*]]: index, %[[H:.*]]: index, %[[KPOS:.*]]: index, %{{.*}}: index, %[[DQ:.*]]: vector<2x8xf32>)
//   CHECK-NOT:   arith.extf
//       CHECK:   %[[NK:.*]] = memref.dim %[[K]], %c2
//       CHECK:   %[[LAST:.*]] = arith.subi %[[NK]], %c1 : index
// Key 0: row min(k_pos, Nk - 1) of K and V; P_0 = 0 unless k_pos < Nk.
//       CHECK:   %[[ROW0:.*]] = arith.minsi %[[KPOS]], %[[LAST]] : index
//       CHECK:   %[[K0:.*]] = vector.transfer_read %[[K]][%[[B]], %[[H]], %[[ROW0]], %c0]
//       CHECK:   vector.transfer_read %[[V]][%[[B]], %[[H]], %[[ROW0]], %c0]
//       CHECK:   %[[INB:.*]] = arith.cmpi slt, %[[KPOS]], %[[NK]] : index
//       CHECK:   %[[VALID:.*]] = vector.broadcast %[[INB]] : i1 to vector<2xi1>
//       CHECK:   math.exp2
//       CHECK:   %[[P0:.*]] = arith.select %[[VALID]]
//       CHECK:   %[[DS0:.*]] = arith.mulf %[[P0]], %{{.*}} : vector<2xf32>
// dQ += (dS_0 * scale) (x) K[0]
//       CHECK:   %[[DSS:.*]] = arith.mulf %[[DS0]], %{{.*}} : vector<2xf32>
//       CHECK:   %[[DQ1:.*]] = vector.outerproduct %[[DSS]], %[[K0]], %[[DQ]] {kind = #vector.kind<add>} : vector<2xf32>, vector<8xf32>
// Key 1: k_pos + 1.
//       CHECK:   arith.minsi
//       CHECK:   %[[DQ2:.*]] = vector.outerproduct %{{.*}}, %{{.*}}, %[[DQ1]]
//       CHECK:   return %[[DQ2]]
func.func @dq(%q: vector<2x8xf32>, %do: vector<2x8xf32>, %lse: vector<2xf32>,
              %delta: vector<2xf32>, %k: memref<1x1x?x8xf32>, %v: memref<1x1x?x8xf32>,
              %b: index, %h: index, %kpos: index, %qpos: index,
              %dq: vector<2x8xf32>) -> vector<2x8xf32> {
  %dq1 = attn.grad_dq q(%q, %do : vector<2x8xf32>, vector<2x8xf32>)
      lse_delta(%lse, %delta : vector<2xf32>, vector<2xf32>)
      kv(%k, %v : memref<1x1x?x8xf32>, memref<1x1x?x8xf32>)
      at[%b, %h, %kpos] rows(%qpos) state(%dq : vector<2x8xf32>)
      {block_n = 2 : i64, mask = #attn.mask<bounds>, scale = 0.25 : f32}
  return %dq1 : vector<2x8xf32>
}

// -----

// Preprocess and memory: Delta = rowsum(O * dO) in f32; rows past N read as
// 0 and are not written; the gradient is rounded to bf16 once, at the store.
// CHECK-LABEL: func.func @memory
//  CHECK-SAME:   (%[[O:.*]]: vector<4x8xbf16>, %[[DO:.*]]: vector<4x8xbf16>, %[[ROWS:.*]]: memref<1x2x9xf32>, %[[DQ:.*]]: vector<4x8xf32>, %[[MEM:.*]]: memref<1x2x9x8xbf16>, %[[I:.*]]: index)
//       CHECK:   %[[OF:.*]] = arith.extf %[[O]] : vector<4x8xbf16> to vector<4x8xf32>
//       CHECK:   %[[DOF:.*]] = arith.extf %[[DO]] : vector<4x8xbf16> to vector<4x8xf32>
//       CHECK:   %[[PROD:.*]] = arith.mulf %[[OF]], %[[DOF]] : vector<4x8xf32>
//       CHECK:   %[[D:.*]] = vector.multi_reduction <add>, %[[PROD]], %{{.*}} [1] : vector<4x8xf32> to vector<4xf32>
//       CHECK:   vector.transfer_write %[[D]], %[[ROWS]][%[[I]], %[[I]], %[[I]]] : vector<4xf32>, memref<1x2x9xf32>
//       CHECK:   %[[R:.*]] = vector.transfer_read %[[ROWS]][%[[I]], %[[I]], %[[I]]], %{{.*}} : memref<1x2x9xf32>, vector<4xf32>
//       CHECK:   %[[T:.*]] = arith.truncf %[[DQ]] : vector<4x8xf32> to vector<4x8xbf16>
//       CHECK:   vector.transfer_write %[[T]], %[[MEM]][%[[I]], %[[I]], %[[I]], %c0] {in_bounds = [false, true]} : vector<4x8xbf16>, memref<1x2x9x8xbf16>
//       CHECK:   return %[[R]]
func.func @memory(%o: vector<4x8xbf16>, %do: vector<4x8xbf16>, %rows: memref<1x2x9xf32>,
                  %dq: vector<4x8xf32>, %mem: memref<1x2x9x8xbf16>, %i: index) -> vector<4xf32> {
  %d = attn.grad_delta %o, %do : vector<4x8xbf16>, vector<4x8xbf16> -> vector<4xf32>
  attn.store_rows %d, %rows[%i, %i, %i] : vector<4xf32>, memref<1x2x9xf32>
  %r = attn.load_rows %rows[%i, %i, %i] : memref<1x2x9xf32> -> vector<4xf32>
  attn.store_tile %dq, %mem[%i, %i, %i] : vector<4x8xf32>, memref<1x2x9x8xbf16>
  return %r : vector<4xf32>
}

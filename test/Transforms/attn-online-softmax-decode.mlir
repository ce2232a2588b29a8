// RUN: attn-opt %s --split-input-file --attn-online-softmax --canonicalize | FileCheck %s

// attn-online-softmax on the split-KV combine step and GQA-packed tiles.

// attn.combine_step, in the log2 domain of the online-softmax state:
// CHECK-LABEL: func.func @combine_step
//  CHECK-SAME:   (%[[OS:.*]]: vector<2x8xf32>, %[[LSE:.*]]: vector<2xf32>, %[[M:.*]]: vector<2xf32>, %[[L:.*]]: vector<2xf32>, %[[ACC:.*]]: vector<2x8xf32>)
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<2xf32>
//   CHECK-DAG:   %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<2xf32>
// x = LSE_s * log2(e)
//       CHECK:   %[[X:.*]] = arith.mulf %[[LSE]], %[[LOG2E]] : vector<2xf32>
// m_new = max(m, x); m_safe = m_new == -inf ? 0 : m_new   (no split with keys yet: no NaN)
//       CHECK:   %[[MNEW:.*]] = arith.maximumf %[[M]], %[[X]] : vector<2xf32>
//       CHECK:   %[[NOKEY:.*]] = arith.cmpf oeq, %[[MNEW]], %[[NEGINF]] : vector<2xf32>
//       CHECK:   %[[MSAFE:.*]] = arith.select %[[NOKEY]], %[[ZERO]], %[[MNEW]]
// alpha = exp2(m - m_safe), w = exp2(x - m_safe)
//       CHECK:   %[[D1:.*]] = arith.subf %[[M]], %[[MSAFE]] : vector<2xf32>
//       CHECK:   %[[ALPHA:.*]] = math.exp2 %[[D1]] : vector<2xf32>
//       CHECK:   %[[D2:.*]] = arith.subf %[[X]], %[[MSAFE]] : vector<2xf32>
//       CHECK:   %[[W:.*]] = math.exp2 %[[D2]] : vector<2xf32>
// l' = alpha * l + w
//       CHECK:   %[[AL:.*]] = arith.mulf %[[ALPHA]], %[[L]] : vector<2xf32>
//       CHECK:   %[[LNEW:.*]] = arith.addf %[[AL]], %[[W]] : vector<2xf32>
// acc' = alpha * acc + w * O_s (per-row factors broadcast across D)
//       CHECK:   %[[WB:.*]] = vector.broadcast %[[W]] : vector<2xf32> to vector<8x2xf32>
//       CHECK:   %[[WT:.*]] = vector.transpose %[[WB]], [1, 0]
//       CHECK:   %[[WO:.*]] = arith.mulf %[[OS]], %[[WT]] : vector<2x8xf32>
//       CHECK:   %[[AB:.*]] = vector.broadcast %[[ALPHA]] : vector<2xf32> to vector<8x2xf32>
//       CHECK:   %[[AT:.*]] = vector.transpose %[[AB]], [1, 0]
//       CHECK:   %[[AACC:.*]] = arith.mulf %[[ACC]], %[[AT]] : vector<2x8xf32>
//       CHECK:   %[[ACCNEW:.*]] = arith.addf %[[AACC]], %[[WO]] : vector<2x8xf32>
//       CHECK:   return %[[MNEW]], %[[LNEW]], %[[ACCNEW]]
func.func @combine_step(%os: vector<2x8xf32>, %lse: vector<2xf32>, %m: vector<2xf32>,
                        %l: vector<2xf32>, %acc: vector<2x8xf32>) -> (vector<2xf32>, vector<2xf32>, vector<2x8xf32>) {
  %m1, %l1, %a1 = attn.combine_step partial(%os, %lse : vector<2x8xf32>, vector<2xf32>)
      state(%m, %l, %acc : vector<2xf32>, vector<2xf32>, vector<2x8xf32>)
  return %m1, %l1, %a1 : vector<2xf32>, vector<2xf32>, vector<2x8xf32>
}

// -----

// A packed Q tile (gqa_pack = 2): tile row t is packed row r = row + t,
// read alone from head `head + r mod 2`, query `r / 2`; zero past Nq.
// CHECK-LABEL: func.func @packed_load
//  CHECK-SAME:   (%[[Q:.*]]: memref<1x4x3x8xbf16>, %[[B:.*]]: index, %[[H:.*]]: index, %[[R:.*]]: index)
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//       CHECK:   %[[G0:.*]] = arith.remui %[[R]], %[[C2]] : index
//       CHECK:   %[[H0:.*]] = arith.addi %[[H]], %[[G0]] : index
//       CHECK:   %[[I0:.*]] = arith.divui %[[R]], %[[C2]] : index
//       CHECK:   vector.transfer_read %[[Q]][%[[B]], %[[H0]], %[[I0]], %[[B]]], %{{.*}} {in_bounds = [false, true]} : memref<1x4x3x8xbf16>, vector<1x8xbf16>
//       CHECK:   %[[R1:.*]] = arith.addi %[[R]], %[[C1]] : index
//       CHECK:   %[[G1:.*]] = arith.remui %[[R1]], %[[C2]] : index
//       CHECK:   %[[H1:.*]] = arith.addi %[[H]], %[[G1]] : index
//       CHECK:   %[[I1:.*]] = arith.divui %[[R1]], %[[C2]] : index
//       CHECK:   vector.transfer_read %[[Q]][%[[B]], %[[H1]], %[[I1]], %[[B]]], %{{.*}} {in_bounds = [false, true]} : memref<1x4x3x8xbf16>, vector<1x8xbf16>
func.func @packed_load(%q: memref<1x4x3x8xbf16>, %b: index, %h: index, %r: index) -> vector<2x8xbf16> {
  %t = attn.load_tile %q[%b, %h, %r, %b] {gqa_pack = 2 : i64} : memref<1x4x3x8xbf16> -> vector<2x8xbf16>
  return %t : vector<2x8xbf16>
}

// -----

// A packed epilogue into an fp32 O (the split-KV workspace): no truncf; each
// row of O and LSE is stored at its (head, query), dropped past Nq.
// CHECK-LABEL: func.func @packed_store_f32
//  CHECK-SAME:   (%{{.*}}: vector<2xf32>, %{{.*}}: vector<2xf32>, %{{.*}}: vector<2x8xf32>, %[[O:.*]]: memref<1x4x3x8xf32>, %[[LSE:.*]]: memref<1x4x3xf32>, %[[B:.*]]: index, %[[H:.*]]: index, %[[R:.*]]: index)
//   CHECK-NOT:   arith.truncf
//       CHECK:   %[[H0:.*]] = arith.addi %[[H]], %{{.*}} : index
//       CHECK:   %[[I0:.*]] = arith.divui %[[R]], %{{.*}} : index
//       CHECK:   vector.transfer_write %{{.*}}, %[[O]][%[[B]], %[[H0]], %[[I0]], %[[B]]] {in_bounds = [false, true]} : vector<1x8xf32>, memref<1x4x3x8xf32>
//       CHECK:   vector.transfer_write %{{.*}}, %[[O]][%[[B]], %{{.*}}, %{{.*}}, %[[B]]] {in_bounds = [false, true]} : vector<1x8xf32>, memref<1x4x3x8xf32>
//       CHECK:   scf.if
//       CHECK:     vector.transfer_write %{{.*}}, %[[LSE]][%[[B]], %{{.*}}, %{{.*}}] : vector<1xf32>, memref<1x4x3xf32>
//       CHECK:     vector.transfer_write %{{.*}}, %[[LSE]][%[[B]], %{{.*}}, %{{.*}}] : vector<1xf32>, memref<1x4x3xf32>
func.func @packed_store_f32(%m: vector<2xf32>, %l: vector<2xf32>, %acc: vector<2x8xf32>,
                            %o: memref<1x4x3x8xf32>, %lse: memref<1x4x3xf32>, %b: index, %h: index, %r: index) {
  attn.epilogue state(%m, %l, %acc : vector<2xf32>, vector<2xf32>, vector<2x8xf32>)
      to %o, lse %lse[%b, %h, %r, %b] {gqa_pack = 2 : i64} : memref<1x4x3x8xf32>, memref<1x4x3xf32>
  return
}

// -----

// Causal with packed rows: the mask compares each key with the row's query
// index (q_pos + t) / G, not with the packed row q_pos + t.
// CHECK-LABEL: func.func @packed_causal
//  CHECK-SAME:   %[[QPOS:[a-z0-9]+]]: index, %[[OFF:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: vector<4xf32>
//   CHECK-DAG:   %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
//   CHECK-DAG:   %[[G:.*]] = arith.constant dense<2> : vector<4xindex>
//       CHECK:   %[[QB:.*]] = vector.broadcast %[[QPOS]] : index to vector<4xindex>
//       CHECK:   %[[ROWS:.*]] = arith.addi %[[QB]], %[[IOTA]] : vector<4xindex>
//       CHECK:   %[[QUERY:.*]] = arith.divui %[[ROWS]], %[[G]] : vector<4xindex>
//       CHECK:   %[[OB:.*]] = vector.broadcast %[[OFF]] : index to vector<4xindex>
//       CHECK:   %[[LIMIT:.*]] = arith.addi %[[QUERY]], %[[OB]] : vector<4xindex>
//       CHECK:   arith.cmpi sle, %{{.*}}, %[[LIMIT]] : vector<4xindex>
func.func @packed_causal(%q: vector<4x8xbf16>, %k: memref<1x1x5x8xbf16>, %i: index,
                         %qpos: index, %off: index, %m: vector<4xf32>, %acc: vector<4x8xf32>)
    -> (vector<4xf32>, vector<4xf32>, vector<4x8xf32>) {
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x8xbf16>)
      kv(%k, %k : memref<1x1x5x8xbf16>, memref<1x1x5x8xbf16>)
      at[%i, %i, %i, %i] rows(%qpos, causal_offset %off)
      state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x8xf32>)
      {block_n = 1 : i64, mask = #attn.mask<causal>, scale = 0.25 : f32, gqa_pack = 2 : i64}
  return %m1, %l1, %a1 : vector<4xf32>, vector<4xf32>, vector<4x8xf32>
}

// RUN: attn-opt %s --split-input-file -verify-diagnostics --attn-tile="block-m=16 block-n=4" --attn-causal-split --attn-distribute-rows --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file -verify-diagnostics --attn-tile="block-m=16 block-n=4" --attn-causal-split --attn-distribute-rows="lanes-per-row=2" --canonicalize | FileCheck %s --check-prefix=LANES2
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=4" --attn-distribute-rows="lanes-per-row=3" 2>&1 | FileCheck %s --check-prefix=LANES3
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=512 block-n=4" --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: BLOCK_M * lanes-per-row = 2048 threads per CTA, but a CTA has at most 1024
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=4" --attn-distribute-rows="lanes-per-row=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=4" --attn-distribute-rows="lanes-per-row=64" 2>&1 | FileCheck %s --check-prefix=BIG
// NEG: attn-distribute-rows: lanes-per-row must be in [0, 32] (0: chosen per D), but got -1
// BIG: attn-distribute-rows: lanes-per-row must be in [0, 32] (0: chosen per D), but got 64

// attn-distribute-rows: one CTA per (Q block, head, batch), L lanes per query
// row, D / L columns per lane:
//   scf.forall (qb, h, b) in (...)            [#gpu.block<x>, <y>, <z>]
//     scf.forall (tid) in (BM * L)            [#gpu.thread<x>]
//       row = tid / L,  col = (tid % L) * (D / L)
//       q_pos' = q_pos + row                  every tile op, one row each
//       vector<BM x f32> -> vector<1 x f32>, vector<BM x D> -> vector<1 x D/L>
// L defaults to the fewest lanes that keep D / L <= 32: D = 16 -> 1,
// D = 64 -> 2, D = 128 -> 4. BLOCK_M = 16, BLOCK_N = 4.

// D = 16: one lane per row (L = 1), 16 threads. row = tid / 1 = tid and
// col = 0 fold away; no row_lanes attribute (its default is 1).
// CHECK-LABEL: func.func @d16_one_lane
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x2x40x16xf16>, %[[K:[a-z0-9]+]]: memref<2x2x40x16xf16>, %[[V:[a-z0-9]+]]: memref<2x2x40x16xf16>, %[[O:[a-z0-9]+]]: memref<2x2x40x16xf16>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
// The fp32 state constants are narrowed to one row.
//   CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<1xf32>
//   CHECK-DAG:   %[[ZROW:.*]] = arith.constant dense<0.000000e+00> : vector<1xf32>
//   CHECK-DAG:   %[[ZACC:.*]] = arith.constant dense<0.000000e+00> : vector<1x16xf32>
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (3, 2, 2) {
//       CHECK:     scf.forall (%[[TID:.*]]) in (16) {
//   CHECK-NOT:       arith.divui
//   CHECK-NOT:       arith.remui
//       CHECK:       %[[QPOS:.*]] = arith.muli %[[QB]], %[[C16]] : index
// this thread's query row: q_pos + tid
//       CHECK:       %[[ROW:.*]] = arith.addi %[[QPOS]], %[[TID]] : index
//       CHECK:       %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[H]], %[[ROW]], %[[C0]]] : memref<2x2x40x16xf16> -> vector<1x16xf16>
//       CHECK:       %[[R:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[NEGINF]], %{{.*}} = %[[ZROW]], %{{.*}} = %[[ZACC]]) -> (vector<1xf32>, vector<1xf32>, vector<1x16xf32>) {
//       CHECK:         %[[ROW2:.*]] = arith.addi %[[QPOS]], %[[TID]] : index
//       CHECK:         attn.online_attention q(%[[QT]] : vector<1x16xf16>) kv(%[[K]], %[[V]] : {{.*}}) at[%[[B]], %[[H]], %{{.*}}, %[[C0]]] rows(%[[ROW2]]) state({{.*}} : vector<1xf32>, vector<1xf32>, vector<1x16xf32>)
//  CHECK-SAME:           {block_n = 4 : i64, mask = #attn.mask<none>, scale = 2.500000e-01 : f32}
//       CHECK:       }
//       CHECK:       %[[ROW3:.*]] = arith.addi %[[QPOS]], %[[TID]] : index
//       CHECK:       attn.epilogue state(%[[R]]#0, %[[R]]#1, %[[R]]#2 : vector<1xf32>, vector<1xf32>, vector<1x16xf32>) to %[[O]][%[[B]], %[[H]], %[[ROW3]], %[[C0]]]
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
// lanes-per-row=2 on D = 16: 32 threads, row = tid / 2, each lane holds 8
// columns starting at (tid % 2) * 8.
// LANES2-LABEL: func.func @d16_one_lane
//   LANES2-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   LANES2-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   LANES2-DAG:   arith.constant dense<0.000000e+00> : vector<1x8xf32>
//       LANES2:   scf.forall (%[[QB:.*]], %{{.*}}, %{{.*}}) in (3, 2, 2) {
//       LANES2:     scf.forall (%[[TID:.*]]) in (32) {
//       LANES2:       %[[ROW:.*]] = arith.divui %[[TID]], %[[C2]] : index
//       LANES2:       %[[LANE:.*]] = arith.remui %[[TID]], %[[C2]] : index
//       LANES2:       %[[COL:.*]] = arith.muli %[[LANE]], %[[C8]] : index
//       LANES2:       %[[QPOS:.*]] = arith.muli %[[QB]], %{{.*}} : index
//       LANES2:       %[[QROW:.*]] = arith.addi %[[QPOS]], %[[ROW]] : index
//       LANES2:       attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %[[QROW]], %[[COL]]] : memref<2x2x40x16xf16> -> vector<1x8xf16>
//       LANES2:       scf.for {{.*}} -> (vector<1xf32>, vector<1xf32>, vector<1x8xf32>)
//       LANES2:         attn.online_attention q(%{{.*}} : vector<1x8xf16>) {{.*}} at[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]]
//  LANES2-SAME:           row_lanes = 2 : i64
//       LANES2:       attn.epilogue {{.*}} : vector<1xf32>, vector<1xf32>, vector<1x8xf32>) to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]]
// lanes-per-row=3 does not divide D and is not a power of two.
// LANES3: attn-distribute-rows.mlir:[[# @LINE + 3]]:3: error: attn-distribute-rows: lanes-per-row (3) must be a power of two <= 32 dividing D (16)
func.func @d16_one_lane(%q: memref<2x2x40x16xf16>, %k: memref<2x2x40x16xf16>,
                        %v: memref<2x2x40x16xf16>, %o: memref<2x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x40x16xf16>, memref<2x2x40x16xf16>,
                     memref<2x2x40x16xf16>) outs(%o : memref<2x2x40x16xf16>)
  return
}

// -----

// D = 64: two lanes per row (32 columns each), 32 threads, causal with LSE.
// The causal-split bounds stay those of the CTA (computed from the CTA's
// q_pos, before the per-thread row is added), so all threads of a CTA run
// the same K/V blocks; only the tile ops see the thread's row.
// CHECK-LABEL: func.func @d64_two_lanes_causal
//  CHECK-SAME:   %[[O:[a-z0-9]+]]: memref<1x2x40x64xf16>, %[[LSE:[a-z0-9]+]]: memref<1x2x40xf32>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   CHECK-DAG:   arith.constant dense<0.000000e+00> : vector<1x32xf32>
// B = 1 is kept as a grid dimension: the mapped forall is not folded.
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %{{.*}}) in (3, 2, 1) {
//       CHECK:     scf.forall (%[[TID:.*]]) in (32) {
// row = tid / 2, col = (tid % 2) * 32
//       CHECK:       %[[ROW:.*]] = arith.divui %[[TID]], %[[C2]] : index
//       CHECK:       %[[LANE:.*]] = arith.remui %[[TID]], %[[C2]] : index
//       CHECK:       %[[COL:.*]] = arith.muli %[[LANE]], %[[C32]] : index
//       CHECK:       %[[QPOS:.*]] = arith.muli %[[QB]], %{{.*}} : index
//       CHECK:       %[[QROW:.*]] = arith.addi %[[QPOS]], %[[ROW]] : index
//       CHECK:       %[[QT:.*]] = attn.load_tile %{{.*}}[%[[C0]], %[[H]], %[[QROW]], %[[COL]]] : memref<1x2x40x64xf16> -> vector<1x32xf16>
// num_full from the CTA's first row: clamp(q_pos + 0 + 1, 0, 40) / 4
//       CHECK:       %[[FIRST:.*]] = arith.addi %[[QPOS]], %[[C1]] : index
//       CHECK:       %[[NFULL:.*]] = arith.divui
//       CHECK:       scf.for %{{.*}} = %[[C0]] to %[[NFULL]] step {{.*}} -> (vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
//       CHECK:         %[[R1:.*]] = arith.addi %[[QPOS]], %[[ROW]] : index
//       CHECK:         attn.online_attention q(%[[QT]] : vector<1x32xf16>) {{.*}} at[%[[C0]], %[[H]], %{{.*}}, %[[COL]]] rows(%[[R1]]) state
//  CHECK-SAME:           {block_n = 4 : i64, mask = #attn.mask<none>, row_lanes = 2 : i64, scale = 1.250000e-01 : f32}
//       CHECK:       } {attn.stage = "full"}
//       CHECK:       scf.for %{{.*}} = %[[NFULL]] to
//       CHECK:         %[[R2:.*]] = arith.addi %[[QPOS]], %[[ROW]] : index
//       CHECK:         attn.online_attention {{.*}} rows(%[[R2]], causal_offset %[[C0]]) state
//  CHECK-SAME:           {block_n = 4 : i64, mask = #attn.mask<causal>, row_lanes = 2 : i64, scale = 1.250000e-01 : f32}
//       CHECK:       } {attn.stage = "masked"}
//       CHECK:       %[[R3:.*]] = arith.addi %[[QPOS]], %[[ROW]] : index
//       CHECK:       attn.epilogue state({{.*}} : vector<1xf32>, vector<1xf32>, vector<1x32xf32>) to %[[O]], lse %[[LSE]][%[[C0]], %[[H]], %[[R3]], %[[COL]]]
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
func.func @d64_two_lanes_causal(%q: memref<1x2x40x64xf16>, %k: memref<1x2x40x64xf16>,
                                %v: memref<1x2x40x64xf16>, %o: memref<1x2x40x64xf16>,
                                %lse: memref<1x2x40xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x40x64xf16>, memref<1x2x40x64xf16>,
                     memref<1x2x40x64xf16>) outs(%o : memref<1x2x40x64xf16>)
                 lse(%lse : memref<1x2x40xf32>) {causal}
  return
}

// -----

// D = 128: four lanes per row (32 columns each), 16 * 4 = 64 threads.
// CHECK-LABEL: func.func @d128_four_lanes
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   CHECK-DAG:   arith.constant dense<0.000000e+00> : vector<1x32xf32>
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 2, 1) {
//       CHECK:     scf.forall (%[[TID:.*]]) in (64) {
//       CHECK:       arith.divui %[[TID]], %[[C4]] : index
//       CHECK:       %[[LANE:.*]] = arith.remui %[[TID]], %[[C4]] : index
//       CHECK:       %[[COL:.*]] = arith.muli %[[LANE]], %[[C32]] : index
//       CHECK:       attn.load_tile {{.*}}, %[[COL]]] : memref<1x2x40x128xbf16> -> vector<1x32xbf16>
//       CHECK:       scf.for {{.*}} -> (vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
//       CHECK:         attn.online_attention q(%{{.*}} : vector<1x32xbf16>)
//  CHECK-SAME:           row_lanes = 4 : i64
// LANES2-LABEL: func.func @d128_four_lanes
//       LANES2:     scf.forall (%{{.*}}) in (32) {
//       LANES2:       attn.load_tile {{.*}} -> vector<1x64xbf16>
//       LANES2:         row_lanes = 2 : i64
func.func @d128_four_lanes(%q: memref<1x2x40x128xbf16>, %k: memref<1x2x40x128xbf16>,
                           %v: memref<1x2x40x128xbf16>, %o: memref<1x2x40x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x40x128xbf16>, memref<1x2x40x128xbf16>,
                     memref<1x2x40x128xbf16>) outs(%o : memref<1x2x40x128xbf16>)
  return
}

// -----

// The pass narrows tile values only; it rejects a CTA body that already
// holds vector ops (attn-online-softmax output).
func.func @partially_decomposed(%q: memref<1x1x16x16xf16>) {
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %t = attn.load_tile %q[%c0, %c0, %c0, %c0] : memref<1x1x16x16xf16> -> vector<16x16xf16>
    // expected-error @+1 {{attn-distribute-rows must run before attn-online-softmax}}
    %e = vector.extract %t[0, 0] : f16 from vector<16x16xf16>
  }
  return
}

// -----

// Regression: running after attn-online-softmax (the real pipeline order
// swapped) was silently accepted.
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=4" --attn-online-softmax --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=LATE
// LATE: error: attn-distribute-rows must run before attn-online-softmax
func.func @late(%q: memref<1x1x16x16xf16>, %k: memref<1x1x16x16xf16>,
                %v: memref<1x1x16x16xf16>, %o: memref<1x1x16x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x16x16xf16>, memref<1x1x16x16xf16>,
                     memref<1x1x16x16xf16>) outs(%o : memref<1x1x16x16xf16>)
  return
}

// -----

// Split-KV's combine (attn.decode_combine tiled by attn-tile): every tile
// (O_s, LSE_s, the state) is narrowed to the thread's row and column slice
// as the forward's are, with min(32, D / 4) lanes per row: D = 64, 16
// lanes of 4 fp32 columns, 16 x 16 threads. The loop over the 3 splits is
// unrolled, so a thread's loads of every split are in flight together.
// CHECK-LABEL: func.func @combine
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in (1, 4, 2) {
//       CHECK:     scf.forall (%[[TID:.*]]) in (256) {
//       CHECK:       %[[ROW:.*]] = arith.divui %[[TID]], %c16 : index
//       CHECK:       %[[COL:.*]] = arith.muli %{{.*}}, %c4 : index
//   CHECK-NOT:       scf.for
//       CHECK:       attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[ROW]], %[[COL]]] {{.*}} -> vector<1x4xf32>
//       CHECK:       attn.load_rows %{{.*}}[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> vector<1xf32>
//       CHECK:       attn.combine_step partial({{.*}} : vector<1x4xf32>, vector<1xf32>)
//       CHECK:       attn.load_tile {{.*}} -> vector<1x4xf32>
//       CHECK:       attn.combine_step
//       CHECK:       attn.load_tile {{.*}} -> vector<1x4xf32>
//       CHECK:       attn.combine_step
//   CHECK-NOT:       attn.combine_step
//       CHECK:       attn.epilogue {{.*}} to %{{.*}}, lse %{{.*}}[%[[B]], %[[H]], %[[ROW]], %[[COL]]]
//       CHECK:     } {mapping = [#gpu.thread<x>]}
func.func @combine(%op: memref<3x2x4x3x64xf32>, %lp: memref<3x2x4x3xf32>,
                   %o: memref<2x4x3x64xbf16>, %lse: memref<2x4x3xf32>) {
  attn.decode_combine ins(%op, %lp : memref<3x2x4x3x64xf32>, memref<3x2x4x3xf32>)
      outs(%o : memref<2x4x3x64xbf16>) lse(%lse : memref<2x4x3xf32>)
  return
}

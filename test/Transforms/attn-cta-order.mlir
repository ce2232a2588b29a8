// attn-cta-order on the CTA loops that attn-tile and attn-causal-split
// leave (hand-written: one Q tile load, the K/V loops, the epilogue).
// RUN: attn-opt %s --split-input-file --attn-cta-order | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-cta-order=l2-budget=1024 | FileCheck %s --check-prefix=SERIAL

// K and V take 2 x 64 KiB <= 40 MiB: the whole grid runs heaviest first.
// Launch position p = qb + 2 (h + 2 b) runs Q block 1 - p / (2 * 1) of
// (head, batch) pair p mod 2.
// CHECK-LABEL: func.func @fits
//       CHECK: scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (2, 2, 1)
//       CHECK:   %[[PAIR:.*]] = arith.addi %[[H]], %{{.*}} : index
//       CHECK:   %[[POS:.*]] = arith.addi %[[QB]], %{{.*}} : index
//       CHECK:   %[[PAIRS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
//       CHECK:   %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}} : index
//       CHECK:   %[[DIV:.*]] = arith.divui %[[POS]], %[[PAIRS]] : index
//       CHECK:   %[[QB2:.*]] = arith.subi %[[LAST]], %[[DIV]] : index
//       CHECK:   %[[REST:.*]] = arith.remui %[[POS]], %[[PAIRS]] : index
//       CHECK:   %[[H2:.*]] = arith.remui %[[REST]], %{{.*}} : index
//       CHECK:   %[[B2:.*]] = arith.divui %[[REST]], %{{.*}} : index
// Every use of (Q block, head, batch) reads the rebound tile.
//       CHECK:   %[[ROW:.*]] = arith.muli %[[QB2]], %{{.*}} : index
//       CHECK:   attn.load_tile %{{.*}}[%[[B2]], %[[H2]], %[[ROW]], %{{.*}}]
//       CHECK:   attn.online_attention {{.*}} at[%[[B2]], %[[H2]],
//       CHECK:   attn.epilogue {{.*}} to %{{.*}}[%[[B2]], %[[H2]], %[[ROW]],
//       CHECK: } {attn.heaviest_first, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
// Over the budget: each head's Q blocks from the last, head after head.
// SERIAL-LABEL: func.func @fits
//       SERIAL: scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (2, 2, 1)
//       SERIAL:   %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}} : index
//       SERIAL:   %[[QB2:.*]] = arith.subi %[[LAST]], %[[QB]] : index
//       SERIAL:   %[[ROW:.*]] = arith.muli %[[QB2]], %{{.*}} : index
//       SERIAL:   attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[ROW]], %{{.*}}]
//       SERIAL: } {attn.heaviest_first, mapping
func.func @fits(%q: memref<1x2x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
                %v: memref<1x2x256x64xbf16>, %o: memref<1x2x256x64xbf16>) {
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  scf.forall (%qb, %h, %b) in (2, 2, 1) {
    %row = arith.muli %qb, %c128 : index
    %qt = attn.load_tile %q[%b, %h, %row, %c0] : memref<1x2x256x64xbf16> -> vector<128x64xbf16>
    %end = arith.addi %qb, %c1 : index
    %r:3 = scf.for %kb = %c0 to %end step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {
      %key = arith.muli %kb, %c128 : index
      %nm, %nl, %nacc = attn.online_attention q(%qt : vector<128x64xbf16>) kv(%k, %v : memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>) at[%b, %h, %key, %c0] rows(%row, causal_offset %c0) state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {block_n = 128 : i64, mask = #attn.mask<causal>, scale = 1.250000e-01 : f32}
      scf.yield %nm, %nl, %nacc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>
    } {attn.stage = "masked"}
    attn.epilogue state(%r#0, %r#1, %r#2 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) to %o[%b, %h, %row, %c0] : memref<1x2x256x64xbf16>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// A dynamic K: the order is chosen at run time from K's bytes,
// 2 * 2 bytes * B * Hkv * Nk * D <= l2-budget (a select per coordinate).
// CHECK-LABEL: func.func @dynamic
//       CHECK: scf.forall
//       CHECK:   memref.dim %{{.*}}, %c0{{.*}} : memref<?x2x?x64xbf16>
//       CHECK:   memref.dim %{{.*}}, %c2{{.*}} : memref<?x2x?x64xbf16>
//       CHECK:   %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %c41943040{{.*}} : index
//       CHECK:   %[[QB:.*]] = arith.select %[[FITS]], %{{.*}}, %{{.*}} : index
//       CHECK:   %[[H:.*]] = arith.select %[[FITS]], %{{.*}}, %{{.*}} : index
//       CHECK:   %[[B:.*]] = arith.select %[[FITS]], %{{.*}}, %{{.*}} : index
//       CHECK:   attn.load_tile %{{.*}}[%[[B]], %[[H]],
//       CHECK: } {attn.heaviest_first
func.func @dynamic(%q: memref<?x2x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
                   %v: memref<?x2x?x64xbf16>, %o: memref<?x2x?x64xbf16>,
                   %nq: index, %nbatch: index) {
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.forall (%qb, %h, %b) in (%nq, 2, %nbatch) {
    %row = arith.muli %qb, %c128 : index
    %qt = attn.load_tile %q[%b, %h, %row, %c0] : memref<?x2x?x64xbf16> -> vector<128x64xbf16>
    %end = arith.addi %qb, %c1 : index
    %r:3 = scf.for %kb = %c0 to %end step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {
      %key = arith.muli %kb, %c128 : index
      %nm, %nl, %nacc = attn.online_attention q(%qt : vector<128x64xbf16>) kv(%k, %v : memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>) at[%b, %h, %key, %c0] rows(%row, causal_offset %c0) state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {block_n = 128 : i64, mask = #attn.mask<causal>, scale = 1.250000e-01 : f32}
      scf.yield %nm, %nl, %nacc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>
    } {attn.stage = "masked"}
    attn.epilogue state(%r#0, %r#1, %r#2 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) to %o[%b, %h, %row, %c0] : memref<?x2x?x64xbf16>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// Without a causal step every CTA has the same length: launch order stays.
// CHECK-LABEL: func.func @full
//       CHECK: scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (2, 2, 1)
//  CHECK-NEXT:   %[[ROW:.*]] = arith.muli %[[QB]], %{{.*}} : index
//  CHECK-NEXT:   attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[ROW]],
//   CHECK-NOT: attn.heaviest_first
//       CHECK: } {mapping
func.func @full(%q: memref<1x2x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
                %v: memref<1x2x256x64xbf16>, %o: memref<1x2x256x64xbf16>) {
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  scf.forall (%qb, %h, %b) in (2, 2, 1) {
    %row = arith.muli %qb, %c128 : index
    %qt = attn.load_tile %q[%b, %h, %row, %c0] : memref<1x2x256x64xbf16> -> vector<128x64xbf16>
    %r:3 = scf.for %kb = %c0 to %c2 step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {
      %key = arith.muli %kb, %c128 : index
      %nm, %nl, %nacc = attn.online_attention q(%qt : vector<128x64xbf16>) kv(%k, %v : memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>) at[%b, %h, %key, %c0] rows(%row) state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {block_n = 128 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
      scf.yield %nm, %nl, %nacc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>
    } {attn.stage = "full"}
    attn.epilogue state(%r#0, %r#1, %r#2 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) to %o[%b, %h, %row, %c0] : memref<1x2x256x64xbf16>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

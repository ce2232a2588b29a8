// RUN: attn-opt %s --attn-quantize-fp8 --cse | FileCheck %s

// The quantize step's copies load a thread's chunks before any store.
// V^T's copy takes CTAs of 128 keys: Nk = 300 gives three. At D = 32 a CTA
// has 128 x 4 chunks of 8 columns, two per thread. A CTA whose 128 keys lie
// below Nk takes them straight-line with both row loads before the first
// store into the tile (a load issued after a store would wait for it); the
// last CTA (44 keys) takes the loop, each chunk under its key's bound and
// zero past Nk.
// CHECK-LABEL: func.func @vt
// K's per-block copy (blocks of BLOCK_N = 128 keys at D = 32, 512 chunks):
// a whole block loads both of a thread's chunks before storing either.
//       CHECK:   %[[K8:.*]] = memref.alloc() : memref<1x1x300x32xf8E4M3FN>
//       CHECK:   %[[KD:.*]] = memref.alloc() : memref<1x1x3xf32>
//       CHECK:   memref.store %{{.*}}, %[[KD]]
//       CHECK:   arith.cmpi eq, %{{.*}}, %c128
//  CHECK-NEXT:   scf.if
//       CHECK:     vector.load %[[K:.*]][{{.*}}] : memref<1x1x300x32xbf16>, vector<8xbf16>
//   CHECK-NOT:     vector.store
//       CHECK:     vector.load %[[K]]
//   CHECK-NOT:     vector.load
//       CHECK:     vector.store %{{.*}}, %[[K8]]
//   CHECK-NOT:     vector.load
//       CHECK:     vector.store %{{.*}}, %[[K8]]
//       CHECK:   } else {
//       CHECK:   scf.forall (%[[NB:.*]], %[[H:.*]], %[[B:.*]]) in (3, 1, 1) {
//       CHECK:     %[[TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     %[[N0:.*]] = arith.muli %[[NB]], %c128
//       CHECK:     scf.forall (%[[T:.*]]) in (256) {
//       CHECK:       scf.if %{{.*}} {
//       CHECK:         %[[END:.*]] = arith.addi %[[N0]], %c128
//       CHECK:         %[[WHOLE:.*]] = arith.cmpi ule, %[[END]], %c300
//       CHECK:         scf.if %[[WHOLE]] {
//   CHECK-NOT:           memref.store
//       CHECK:           vector.load %[[V:.*]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<1x1x300x32xbf16>, vector<8xbf16>
//   CHECK-NOT:           memref.store
//       CHECK:           vector.load %[[V]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<1x1x300x32xbf16>, vector<8xbf16>
//   CHECK-NOT:           vector.load
// CHECK-COUNT-16:        memref.store %{{.*}}, %[[TILE]]
//   CHECK-NOT:           vector.load
//       CHECK:         } else {
//       CHECK:           scf.for %{{.*}} = %[[T]] to %c512 step %c256 {
//       CHECK:             arith.cmpi ult, %{{.*}}, %c300
//       CHECK:             scf.if %{{.*}} -> (vector<8xf8E4M3FN>) {
//       CHECK:               vector.load %[[V]]
//       CHECK:             } else {
//       CHECK:               arith.constant dense<0.000000e+00> : vector<8xf8E4M3FN>
// CHECK-COUNT-8:           memref.store %{{.*}}, %[[TILE]]
func.func @vt(%q: memref<1x2x8x32xbf16>, %k: memref<1x1x300x32xbf16>,
              %v: memref<1x1x300x32xbf16>, %o: memref<1x2x8x32xbf16>,
              %lse: memref<1x2x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x8x32xbf16>, memref<1x1x300x32xbf16>, memref<1x1x300x32xbf16>) outs(%o : memref<1x2x8x32xbf16>) lse(%lse : memref<1x2x8xf32>)
  return
}

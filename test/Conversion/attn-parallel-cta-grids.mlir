// RUN: attn-opt %s --attn-parallel-cta-grids | FileCheck %s

// attn-distribute-rows' nest: the CTA loop (Q block, head, batch) on blocks
// x, y, z and the rows on threads x. The mappings go, both loops become
// scf.parallel, and the CTA loop is collapsed to one dimension of
// 4 * 2 * 3 = 24 blocks.
// CHECK-LABEL: func.func @rows
//   CHECK-NOT:   scf.forall
//       CHECK:   arith.muli
//       CHECK:   arith.muli
//       CHECK:   %[[N:.*]] = arith.muli %{{.*}}, %{{.*}} : index
//       CHECK:   scf.parallel (%[[CTA:.*]]) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
//       CHECK:     arith.remsi %[[CTA]]
//       CHECK:     scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
//   CHECK-NOT:   mapping
func.func @rows(%out: memref<3x2x4x64xf32>) {
  scf.forall (%q, %h, %b) in (4, 2, 3) {
    scf.forall (%t) in (64) {
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%b, %h, %q, %t] : memref<3x2x4x64xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

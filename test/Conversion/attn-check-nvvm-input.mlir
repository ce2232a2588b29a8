// RUN: attn-opt %s --split-input-file --attn-check-nvvm-input | FileCheck %s

// Input attn-lower-to-nvvm can build passes unchanged: a CTA loop whose row
// loop is mapped to threads (attn-distribute-rows).
// CHECK-LABEL: func.func @mapped
//       CHECK:   scf.forall
//       CHECK:     scf.forall
//       CHECK:     {mapping = [#gpu.thread<x>]}
//       CHECK:   {mapping = [#gpu.block<x>]}
func.func @mapped(%out: memref<4x64xf32>) {
  scf.forall (%i) in (4) {
    scf.forall (%t) in (64) {
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%i, %t] : memref<4x64xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// A tensor-core CTA (attn-lower-to-wgmma's thread count) on sm_90a.
// CHECK-LABEL: func.func @hopper
//       CHECK:   {attn.threads = 384 : i64}
func.func @hopper(%out: memref<4xf32>) {
  scf.forall (%q, %h, %b) in (4, 1, 1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %out[%q] : memref<4xf32>
  } {attn.threads = 384 : i64}
  return
}

// RUN: attn-opt %s --split-input-file --attn-launch-hopper-ctas | FileCheck %s

// The CTA loop (Q block, head, batch) of a tensor-core kernel: a 1-D grid
// of 4 * 2 * 3 blocks, the Q block fastest, attn.threads threads, and the
// dynamic shared memory its views reach (a 4096-byte view at 1024).
// CHECK-LABEL: func.func @cta
//       CHECK:   %[[Q:.*]] = arith.constant 4 : index
//       CHECK:   %[[H:.*]] = arith.constant 2 : index
//       CHECK:   %[[B:.*]] = arith.constant 3 : index
//       CHECK:   %[[QH:.*]] = arith.muli %[[Q]], %[[H]] : index
//       CHECK:   %[[GRID:.*]] = arith.muli %[[QH]], %[[B]] : index
//       CHECK:   %[[THREADS:.*]] = arith.constant 384 : index
//       CHECK:   %[[SMEM:.*]] = arith.constant 5120 : i32
//       CHECK:   gpu.launch blocks(%[[ID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// q = id % 4, h = (id / 4) % 2, b = (id / 4) / 2
//       CHECK:     %[[REST:.*]] = arith.divui %[[ID]], %[[Q]]
//       CHECK:     %[[QI:.*]] = arith.remui %[[ID]], %[[Q]]
//       CHECK:     %[[HI:.*]] = arith.remui %[[REST]], %[[H]]
//       CHECK:     %[[BI:.*]] = arith.divui %[[REST]], %[[H]]
//       CHECK:     memref.store %{{.*}}, %{{.*}}[%[[BI]], %[[HI]], %[[QI]]]
//       CHECK:     gpu.terminator
//   CHECK-NOT:   scf.forall
func.func @cta(%out: memref<3x2x4xf32>) {
  %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  scf.forall (%q, %h, %b) in (4, 2, 3) {
    %c1024 = arith.constant 1024 : index
    %tile = memref.view %smem[%c1024][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %z = arith.constant 0.0 : f32
    memref.store %z, %out[%b, %h, %q] : memref<3x2x4xf32>
  } {attn.threads = 384 : i64}
  return
}

// -----

// Persistent CTAs: as many as attn.persistent_ctas, whatever the tiles.
// CHECK-LABEL: func.func @persistent
//       CHECK:   %[[GRID:.*]] = arith.constant 132 : index
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]],
func.func @persistent(%out: memref<4xf32>) {
  scf.forall (%q, %h, %b) in (4, 1, 1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %out[%q] : memref<4xf32>
  } {attn.threads = 384 : i64, attn.persistent_ctas = 132 : i64}
  return
}

// Kernels take only attn.attention's memrefs: every size and scalar the
// kernel needs is computed inside it from the descriptors (the bundle's
// parameter list and the runtime rely on it). Covers dynamic lengths,
// dynamic strides and offsets on every operand, and a strided LSE (whose
// scalar stores go through affine index arithmetic).
// RUN: attn-opt %s --attn-to-cubin="format=none path=fma" | FileCheck %s
// RUN: attn-opt %s --attn-to-cubin="format=isa path=fma" | FileCheck %s --check-prefix=PTX

!q = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @dynamic_strided(
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: memref
//  CHECK-SAME:   %[[K:[a-z0-9]+]]: memref
//  CHECK-SAME:   %[[V:[a-z0-9]+]]: memref
//  CHECK-SAME:   %[[O:[a-z0-9]+]]: memref
//  CHECK-SAME:   %[[LSE:[a-z0-9]+]]: memref
// One grid dimension: ceil(Nq / 64) * Hq * B (B or Hq may exceed 65535).
//       CHECK:   %[[B:.*]] = memref.dim %[[Q]], %c0
//       CHECK:   %[[H:.*]] = memref.dim %[[Q]], %c1
//       CHECK:   %[[NQ:.*]] = memref.dim %[[Q]], %c2
//       CHECK:   %[[BLOCKS:.*]] = arith.ceildivui %[[NQ]], %c64
//       CHECK:   %[[X:.*]] = arith.muli %[[BLOCKS]], %[[H]]
//       CHECK:   %[[GRID:.*]] = arith.muli %[[X]], %[[B]]
//       CHECK:   gpu.launch_func @dynamic_strided_kernel::@dynamic_strided_kernel
//  CHECK-SAME:     blocks in (%[[GRID]], %c1, %c1) threads in (%c{{[0-9]+}}, %c1, %c1)
//  CHECK-SAME:     args(%{{arg[0-4]}} : memref<{{[^>]*}}>>, %{{arg[0-4]}} : memref<{{[^>]*}}>>, %{{arg[0-4]}} : memref<{{[^>]*}}>>, %{{arg[0-4]}} : memref<{{[^>]*}}>>, %{{arg[0-4]}} : memref<{{[^>]*}}>>)
//   CHECK-NOT:   : index
//       CHECK:   return
// PTX: .visible .entry dynamic_strided_kernel(
func.func @dynamic_strided(%q: !q, %k: !kv, %v: !kv, %o: !q, %lse: !lse) {
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q)
                 lse(%lse : !lse) {causal}
  return
}

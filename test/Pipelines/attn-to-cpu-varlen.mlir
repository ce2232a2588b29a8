// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=8" | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=8 pack-gqa=true" | FileCheck %s

// attn-to-cpu takes attn.varlen_attention: attn-tile's per-sequence views
// (subview, expand_shape, transpose) fold into memref descriptors and
// everything lowers to the LLVM dialect with a C interface. Numerics:
// unittests/CpuVarlenNumericsTest.cpp.
// CHECK-LABEL: llvm.func @varlen
//   CHECK-NOT:   attn.
//   CHECK-NOT:   memref.
//       CHECK: llvm.func @_mlir_ciface_varlen
func.func @varlen(%q: memref<?x4x16xbf16>, %k: memref<?x2x16xbf16>, %v: memref<?x2x16xbf16>,
                  %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                  %o: memref<?x4x16xbf16>, %lse: memref<4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x16xbf16>, memref<?x2x16xbf16>, memref<?x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      outs(%o : memref<?x4x16xbf16>) lse(%lse : memref<4x?xf32>) {causal}
  return
}

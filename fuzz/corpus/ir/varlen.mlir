func.func @varlen(%q: memref<?x4x16xbf16>, %k: memref<?x2x16xbf16>, %v: memref<?x2x16xbf16>,
                  %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                  %o: memref<?x4x16xbf16>, %lse: memref<4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x16xbf16>, memref<?x2x16xbf16>,
                            memref<?x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      outs(%o : memref<?x4x16xbf16>) lse(%lse : memref<4x?xf32>) {causal}
  return
}
func.func @varlen_static(%q: memref<40x2x16xf32, strided<[96, 16, 1], offset: ?>>,
                         %k: memref<56x2x16xf32>, %cu_q: memref<4xi32>, %cu_k: memref<4xi32>,
                         %max_q: index, %max_k: index, %o: memref<40x2x16xf32>) {
  attn.varlen_attention ins(%q, %k, %k : memref<40x2x16xf32, strided<[96, 16, 1], offset: ?>>,
                            memref<56x2x16xf32>, memref<56x2x16xf32>)
      seqlens(%cu_q, %cu_k : memref<4xi32>, memref<4xi32>) max(%max_q, %max_k)
      outs(%o : memref<40x2x16xf32>) {scale = 0.5 : f32}
  return
}

func.func @varlen_paged_split(%q: memref<?x4x16xbf16>, %k: memref<?x8x2x16xbf16>,
                              %v: memref<?x8x2x16xbf16>, %cu_q: memref<?xi32>,
                              %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                              %table: memref<?x?xi32>, %o: memref<?x4x16xbf16>,
                              %lse: memref<4x?xf32>, %wo: memref<2x?x4x16xf32>,
                              %wl: memref<2x4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x16xbf16>, memref<?x8x2x16xbf16>,
                            memref<?x8x2x16xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      paged(%table : memref<?x?xi32>)
      outs(%o : memref<?x4x16xbf16>) lse(%lse : memref<4x?xf32>)
      workspace(%wo, %wl : memref<2x?x4x16xf32>, memref<2x4x?xf32>) {causal}
  return
}

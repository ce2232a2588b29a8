// A varlen attention in its bundle form (bundle-varlen.test): dynamic
// totals and B + 1, strided layouts with unit stride on D, f16, LSE.
func.func @vl(%q: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>,
              %k: memref<?x2x64xf16, strided<[?, ?, 1], offset: ?>>,
              %v: memref<?x2x64xf16, strided<[?, ?, 1], offset: ?>>,
              %cu_q: memref<?xi32, strided<[?], offset: ?>>,
              %cu_k: memref<?xi32, strided<[?], offset: ?>>,
              %max_q: index, %max_k: index,
              %o: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>,
              %lse: memref<4x?xf32, strided<[?, ?], offset: ?>>)
    attributes {attn.block_m = 128 : i64} {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>, memref<?x2x64xf16, strided<[?, ?, 1], offset: ?>>, memref<?x2x64xf16, strided<[?, ?, 1], offset: ?>>)
      seqlens(%cu_q, %cu_k : memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) max(%max_q, %max_k)
      outs(%o : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>) lse(%lse : memref<4x?xf32, strided<[?, ?], offset: ?>>) {causal}
  return
}

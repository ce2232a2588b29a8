// A varlen paged attention whose block table has a static B
// (bundle-varlen.test): the runtime could not match calls on it.
func.func @vlp(%q: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>,
               %k: memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
               %v: memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
               %cu_q: memref<?xi32, strided<[?], offset: ?>>,
               %cu_k: memref<?xi32, strided<[?], offset: ?>>,
               %max_q: index, %max_k: index,
               %bt: memref<4x?xi32, strided<[?, ?], offset: ?>>,
               %o: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>, memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>)
      seqlens(%cu_q, %cu_k : memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) max(%max_q, %max_k)
      paged(%bt : memref<4x?xi32, strided<[?, ?], offset: ?>>)
      outs(%o : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>)
  return
}

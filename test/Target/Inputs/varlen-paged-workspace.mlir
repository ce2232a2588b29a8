// A varlen paged attention that passes its own split-KV workspace
// (bundle-varlen.test): a bundle's workspace is the runtime's.
func.func @vlw(%q: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>,
               %k: memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
               %v: memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
               %cu_q: memref<?xi32, strided<[?], offset: ?>>,
               %cu_k: memref<?xi32, strided<[?], offset: ?>>,
               %max_q: index, %max_k: index,
               %bt: memref<?x?xi32, strided<[?, ?], offset: ?>>,
               %o: memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>,
               %op: memref<2x?x4x64xf32>, %lp: memref<2x4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>, memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x16x2x64xf16, strided<[?, ?, ?, 1], offset: ?>>)
      seqlens(%cu_q, %cu_k : memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) max(%max_q, %max_k)
      paged(%bt : memref<?x?xi32, strided<[?, ?], offset: ?>>)
      outs(%o : memref<?x4x64xf16, strided<[?, ?, 1], offset: ?>>)
      workspace(%op, %lp : memref<2x?x4x64xf32>, memref<2x4x?xf32>)
  return
}

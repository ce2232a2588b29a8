// A paged kernel with a static max_pages (4): bundle-paged.test.
func.func @k(%q: memref<2x4x1x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
             %k: memref<?x16x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
             %v: memref<?x16x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
             %o: memref<2x4x1x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
             %t: memref<2x4xi32, strided<[?, ?], offset: ?>>,
             %n: memref<2xi32, strided<[?], offset: ?>>) {
  attn.attention ins(%q, %k, %v : memref<2x4x1x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                     memref<?x16x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                     memref<?x16x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>)
      outs(%o : memref<2x4x1x64xbf16, strided<[?, ?, ?, 1], offset: ?>>)
      paged(%t, %n : memref<2x4xi32, strided<[?, ?], offset: ?>>, memref<2xi32, strided<[?], offset: ?>>)
  return
}

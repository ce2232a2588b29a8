func.func @dyn(%q: memref<?x4x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>,
               %k: memref<?x2x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>,
               %v: memref<?x2x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>,
               %o: memref<?x4x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>) {
  attn.attention ins(%q, %k, %v : memref<?x4x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                     memref<?x2x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                     memref<?x2x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>)
                 outs(%o : memref<?x4x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>) {causal}
  return
}

!s = memref<1x1x64x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @lse_layout(%q: !s, %k: !s, %v: !s, %o: !s, %lse: memref<1x1x64xf32>) {
  attn.attention ins(%q, %k, %v : !s, !s, !s) outs(%o : !s)
                 lse(%lse : memref<1x1x64xf32>)
  return
}

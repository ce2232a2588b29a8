!s = memref<1x1x64x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mixed(%q: !s, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: !s) {
  attn.attention ins(%q, %k, %v : !s, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : !s)
  return
}

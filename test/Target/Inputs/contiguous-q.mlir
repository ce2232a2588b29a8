!s = memref<1x1x64x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<1x1x64x64xf16>
func.func @contiguous_q(%q: !c, %k: !c, %v: !s, %o: !c) {
  attn.attention ins(%q, %k, %v : !c, !c, !s) outs(%o : !c)
  return
}

!s = memref<1x1x64x64xf16, strided<[8192, 8192, 128, 1]>>
!c = memref<1x1x64x64xf16>
func.func @static_strides(%q: !s, %k: !c, %v: !c, %o: !c) {
  attn.attention ins(%q, %k, %v : !s, !c, !c) outs(%o : !c)
  return
}

func.func @aliased(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  attn.attention ins(%q, %k, %k : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>)
  return
}

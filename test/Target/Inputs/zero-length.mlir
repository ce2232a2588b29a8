func.func @empty(%q: memref<1x1x0x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x0x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x0x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x0x64xf16>)
  return
}

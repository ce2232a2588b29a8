func.func @dyn_vs_static_mismatch_o(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x128x64xbf16>, %v: memref<1x4x128x64xbf16>, %o: memref<1x4x64x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) outs(%o : memref<1x4x64x64xbf16>)
  return
}

func.func @dyn_nq_static_lse(%q: memref<1x4x?x64xbf16>, %k: memref<1x4x128x64xbf16>, %v: memref<1x4x128x64xbf16>, %o: memref<1x4x?x64xbf16>, %lse: memref<1x4x128xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) outs(%o : memref<1x4x?x64xbf16>) lse(%lse : memref<1x4x128xf32>)
  return
}

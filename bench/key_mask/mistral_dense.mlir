func.func @mistral_dense(%q: memref<1x32x32768x128xbf16>, %k: memref<1x8x32768x128xbf16>,
                   %v: memref<1x8x32768x128xbf16>, %o: memref<1x32x32768x128xbf16>,
                   %lse: memref<1x32x32768xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x32x32768x128xbf16>,
      memref<1x8x32768x128xbf16>, memref<1x8x32768x128xbf16>)
      outs(%o : memref<1x32x32768x128xbf16>) lse(%lse : memref<1x32x32768xf32>)
      {causal}
  return
}

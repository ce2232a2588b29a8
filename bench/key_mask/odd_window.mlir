func.func @odd_window(%q: memref<2x8x1000x64xbf16>, %k: memref<2x2x3000x64xbf16>,
                   %v: memref<2x2x3000x64xbf16>, %o: memref<2x8x1000x64xbf16>,
                   %lse: memref<2x8x1000xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1000x64xbf16>,
      memref<2x2x3000x64xbf16>, memref<2x2x3000x64xbf16>)
      outs(%o : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>)
      {key_mask = #attn.key_mask<left = 300, right = 50>}
  return
}

func.func @decode(%q: memref<1x4x1x16xbf16>, %k: memref<1x1x37x16xbf16>,
                  %v: memref<1x1x37x16xbf16>, %o: memref<1x4x1x16xbf16>,
                  %lse: memref<1x4x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x1x16xbf16>, memref<1x1x37x16xbf16>,
                     memref<1x1x37x16xbf16>) outs(%o : memref<1x4x1x16xbf16>)
                 lse(%lse : memref<1x4x1xf32>) {causal}
  return
}
func.func @partial(%q: memref<1x2x3x16xf32>, %k: memref<1x2x9x16xf32>,
                   %op: memref<3x1x2x3x16xf32>, %lp: memref<3x1x2x3xf32>,
                   %o: memref<1x2x3x16xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x2x3x16xf32>, memref<1x2x9x16xf32>,
                             memref<1x2x9x16xf32>)
      outs(%op, %lp : memref<3x1x2x3x16xf32>, memref<3x1x2x3xf32>) {causal}
  attn.decode_combine ins(%op, %lp : memref<3x1x2x3x16xf32>, memref<3x1x2x3xf32>)
      outs(%o : memref<1x2x3x16xf32>)
  return
}

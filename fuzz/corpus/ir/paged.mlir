func.func @paged(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                 %v: memref<?x16x2x64xbf16>, %o: memref<2x8x1x64xbf16>,
                 %lse: memref<2x8x1xf32>, %t: memref<2x?xi32>, %n: memref<2xi32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>,
                     memref<?x16x2x64xbf16>) outs(%o : memref<2x8x1x64xbf16>)
                 lse(%lse : memref<2x8x1xf32>)
                 paged(%t, %n : memref<2x?xi32>, memref<2xi32>) {causal}
  return
}
func.func @partial_paged(%q: memref<1x4x3x16xf16>, %k: memref<5x8x2x16xf16>,
                         %op: memref<3x1x4x3x16xf32>, %lp: memref<3x1x4x3xf32>,
                         %t: memref<1x4xi32>, %n: memref<1xi32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x3x16xf16>, memref<5x8x2x16xf16>,
                             memref<5x8x2x16xf16>)
      outs(%op, %lp : memref<3x1x4x3x16xf32>, memref<3x1x4x3xf32>)
      paged(%t, %n : memref<1x4xi32>, memref<1xi32>)
  return
}

// @k_v1 is also the name attn-compile --variant gives @k's first variant.
func.func @k(%q: memref<1x4x64x64xbf16>, %k: memref<1x4x64x64xbf16>,
             %v: memref<1x4x64x64xbf16>, %o: memref<1x4x64x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>)
                 outs(%o : memref<1x4x64x64xbf16>)
  return
}
func.func @k_v1(%q: memref<1x4x64x64xbf16>, %k: memref<1x4x64x64xbf16>,
                %v: memref<1x4x64x64xbf16>, %o: memref<1x4x64x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>)
                 outs(%o : memref<1x4x64x64xbf16>)
  return
}

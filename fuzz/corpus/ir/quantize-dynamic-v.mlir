// Static Q, K and O with a dynamic V: attn-quantize-fp8 once checked only Q
// and K and emitted IR that did not verify.
func.func @vdyn(%q: memref<1x2x8x16xbf16>, %k: memref<1x2x8x16xbf16>,
                %v: memref<1x2x?x16xbf16>, %o: memref<1x2x8x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x8x16xbf16>, memref<1x2x8x16xbf16>,
                     memref<1x2x?x16xbf16>) outs(%o : memref<1x2x8x16xbf16>)
  return
}

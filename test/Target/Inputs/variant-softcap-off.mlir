// softcap = 0 is off: an ordinary kernel.
func.func @softcap_off(%q: memref<1x4x256x64xbf16>, %k: memref<1x4x256x64xbf16>,
                       %v: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      {softcap = 0.0 : f32}
  return
}

// A softcapped kernel (host lowering only so far).
func.func @softcap(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      {softcap = 50.0 : f32}
  return
}

// A kernel with ALiBi (host lowering only so far).
func.func @alibi(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                 %slopes: memref<4xf32>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      alibi(%slopes : memref<4xf32>)
  return
}

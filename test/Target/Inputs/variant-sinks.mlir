// A kernel with attention sinks (host lowering only so far).
func.func @sinks(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                 %sinks: memref<4xf32>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      sinks(%sinks : memref<4xf32>)
  return
}

func.func @alloc(%q: memref<1x1x64x64xf16>) {
  %o = memref.alloc() : memref<1x1x64x64xf16>
  attn.attention ins(%q, %q, %q : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>)
  return
}

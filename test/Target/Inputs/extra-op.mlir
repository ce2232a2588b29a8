func.func @extra(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>, %x: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%c0] : memref<1xf32>
  attn.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>)
  return
}

func.func @fp8(%q: memref<1x2x64x64xf8E4M3FN>, %k: memref<1x1x64x64xf8E4M3FN>, %v: memref<1x1x64x64xf8E4M3FN>, %o: memref<1x2x64x64xbf16>, %qd: memref<1x1xf32>, %kd: memref<1x1xf32>, %vd: memref<1x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf8E4M3FN>, memref<1x1x64x64xf8E4M3FN>, memref<1x1x64x64xf8E4M3FN>) outs(%o : memref<1x2x64x64xbf16>) descale(%qd, %kd, %vd : memref<1x1xf32>, memref<1x1xf32>, memref<1x1xf32>)
  return
}

func.func @gqa(%q: memref<1x2x6x16xf16>, %k: memref<1x1x6x16xf16>,
               %v: memref<1x1x6x16xf16>, %o: memref<1x2x6x16xf16>,
               %lse: memref<1x2x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x1x6x16xf16>,
                     memref<1x1x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
                 lse(%lse : memref<1x2x6xf32>) {causal}
  return
}

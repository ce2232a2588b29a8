func.func @tails(%q: memref<2x2x7x8xbf16>, %k: memref<2x2x5x8xbf16>,
                 %v: memref<2x2x5x8xbf16>, %o: memref<2x2x7x8xbf16>,
                 %lse: memref<2x2x7xf32>) attributes {attn.block_m = 4 : i64} {
  attn.attention ins(%q, %k, %v : memref<2x2x7x8xbf16>, memref<2x2x5x8xbf16>,
                     memref<2x2x5x8xbf16>) outs(%o : memref<2x2x7x8xbf16>)
                 lse(%lse : memref<2x2x7xf32>) {scale = 0.25 : f32}
  return
}

// The default example: Llama-3-8B prefill attention.
// B=1, Hq=32, Hkv=8 (GQA group 4), N=8192, D=128, causal, bf16, with LSE.
func.func @llama3_8b_prefill(%q: memref<1x32x8192x128xbf16>,
                             %k: memref<1x8x8192x128xbf16>,
                             %v: memref<1x8x8192x128xbf16>,
                             %o: memref<1x32x8192x128xbf16>,
                             %lse: memref<1x32x8192xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x32x8192x128xbf16>,
                     memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
                 outs(%o : memref<1x32x8192x128xbf16>)
                 lse(%lse : memref<1x32x8192xf32>) {causal}
  return
}

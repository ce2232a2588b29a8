// A static bf16 attention that attn-quantize-fp8 rewrites (GQA, causal, LSE).
func.func @quantize(%q: memref<1x4x8x16xbf16>, %k: memref<1x2x8x16xbf16>,
                    %v: memref<1x2x8x16xbf16>, %o: memref<1x4x8x16xbf16>,
                    %lse: memref<1x4x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x8x16xbf16>, memref<1x2x8x16xbf16>,
                     memref<1x2x8x16xbf16>) outs(%o : memref<1x4x8x16xbf16>)
                 lse(%lse : memref<1x4x8xf32>) {causal}
  return
}

// The backward: GQA 4/2, causal, Nq < Nk with tails, bf16.
func.func @grad(%q: memref<1x4x13x16xbf16>, %k: memref<1x2x19x16xbf16>,
                %v: memref<1x2x19x16xbf16>, %o: memref<1x4x13x16xbf16>,
                %do: memref<1x4x13x16xbf16>, %lse: memref<1x4x13xf32>,
                %dq: memref<1x4x13x16xbf16>, %dk: memref<1x2x19x16xbf16>,
                %dv: memref<1x2x19x16xbf16>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x13x16xbf16>,
      memref<1x2x19x16xbf16>, memref<1x2x19x16xbf16>, memref<1x4x13x16xbf16>,
      memref<1x4x13x16xbf16>, memref<1x4x13xf32>)
      outs(%dq, %dk, %dv : memref<1x4x13x16xbf16>, memref<1x2x19x16xbf16>,
           memref<1x2x19x16xbf16>) {causal}
  return
}

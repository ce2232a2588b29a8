func.func @window_softcap_alibi_sinks(%q: memref<1x4x37x64xbf16>,
                                      %k: memref<1x2x45x64xbf16>,
                                      %o: memref<1x4x37x64xbf16>,
                                      %lse: memref<1x4x37xf32>,
                                      %slopes: memref<4xf32>,
                                      %sinks: memref<4xf32>) {
  attn.attention ins(%q, %k, %k : memref<1x4x37x64xbf16>, memref<1x2x45x64xbf16>,
                     memref<1x2x45x64xbf16>) outs(%o : memref<1x4x37x64xbf16>)
                 lse(%lse : memref<1x4x37xf32>)
                 alibi(%slopes : memref<4xf32>) sinks(%sinks : memref<4xf32>)
                 {causal, key_mask = #attn.key_mask<left = 8>, softcap = 30.0 : f32}
  return
}
func.func @chunked(%q: memref<1x2x?x16xf16>, %o: memref<1x2x?x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x2x?x16xf16>, memref<1x2x?x16xf16>,
                     memref<1x2x?x16xf16>) outs(%o : memref<1x2x?x16xf16>)
                 {key_mask = #attn.key_mask<right = 0, chunk = 5>}
  return
}
func.func @prefix_combine(%q: memref<1x4x3x16xf16>, %k: memref<1x2x40x16xf16>,
                          %op: memref<3x1x4x3x16xf32>, %lp: memref<3x1x4x3xf32>,
                          %o: memref<1x4x3x16xf16>, %sinks: memref<4xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x3x16xf16>, memref<1x2x40x16xf16>,
                             memref<1x2x40x16xf16>)
      outs(%op, %lp : memref<3x1x4x3x16xf32>, memref<3x1x4x3xf32>)
      {causal, key_mask = #attn.key_mask<prefix = 7>}
  attn.decode_combine ins(%op, %lp : memref<3x1x4x3x16xf32>, memref<3x1x4x3xf32>)
      outs(%o : memref<1x4x3x16xf16>) sinks(%sinks : memref<4xf32>)
  return
}

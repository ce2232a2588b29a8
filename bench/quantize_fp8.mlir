// Llama-3-8B prefill in bf16 (B1 Hq32 Hkv8 N8192 D128, causal): the input
// of bench/quantize_fp8_check.py (attn-quantize-fp8 then attn-to-cubin).
!q = memref<1x32x8192x128xbf16>
!kv = memref<1x8x8192x128xbf16>
func.func @quantized(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) {causal}
  return
}

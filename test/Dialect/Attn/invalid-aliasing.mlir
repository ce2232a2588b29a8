// RUN: attn-opt %s --split-input-file -verify-diagnostics

// Every op with ins and outs refuses an output that is an input or another
// output (the same SSA value), as attn.attention_grad does: its outputs are
// written while its inputs are still read (invalid-grad.mlir has the
// backward's cases). Each case's types are otherwise valid.

!t = memref<1x4x64x16xf16>
func.func @attention_o_is_k(%q: !t, %k: !t, %v: !t) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'k' (outputs are written while the inputs are read)}}
  attn.attention ins(%q, %k, %v : !t, !t, !t) outs(%k : !t)
  return
}

// -----

!t = memref<1x4x64x16xf16>
func.func @attention_o_is_q(%q: !t, %k: !t, %v: !t) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'q'}}
  attn.attention ins(%q, %k, %v : !t, !t, !t) outs(%q : !t) {causal}
  return
}

// -----

!t = memref<1x4x64x16xf16>
func.func @attention_o_is_v(%q: !t, %k: !t, %v: !t, %lse: memref<1x4x64xf32>) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'v'}}
  attn.attention ins(%q, %k, %v : !t, !t, !t) outs(%v : !t)
      lse(%lse : memref<1x4x64xf32>)
  return
}

// -----

// A per-row Q descale has LSE's type.
!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x128x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @attention_lse_is_q_descale(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                                      %qd: memref<1x8x128xf32>,
                                      %kd: memref<1x2xf32>,
                                      %vd: memref<1x2xf32>) {
  // expected-error @+1 {{operand 'lse' must not be the same buffer as operand 'q_descale'}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      lse(%qd : memref<1x8x128xf32>)
      descale(%qd, %kd, %vd : memref<1x8x128xf32>, memref<1x2xf32>, memref<1x2xf32>)
      {q_descale_block = 1 : i64}
  return
}

// -----

!t = memref<40x4x16xbf16>
func.func @varlen_o_is_q(%q: !t, %k: !t, %v: !t, %cq: memref<5xi32>,
                         %ck: memref<5xi32>, %mq: index, %mk: index) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'q'}}
  attn.varlen_attention ins(%q, %k, %v : !t, !t, !t)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%q : !t)
  return
}

// -----

!t = memref<40x4x16xbf16>
func.func @varlen_o_is_k(%q: !t, %k: !t, %v: !t, %cq: memref<5xi32>,
                         %ck: memref<5xi32>, %mq: index, %mk: index) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'k'}}
  attn.varlen_attention ins(%q, %k, %v : !t, !t, !t)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%k : !t) {causal}
  return
}

// -----

// f32 Q [total_q, Hq, D] and LSE_partial [S, Hq, total_q] of one type.
!t = memref<8x8x8xf32>
func.func @varlen_lse_partial_is_q(%q: !t, %k: !t, %v: !t, %o: !t,
                                   %cq: memref<5xi32>, %ck: memref<5xi32>,
                                   %mq: index, %mk: index,
                                   %op: memref<8x8x8x8xf32>) {
  // expected-error @+1 {{operand 'lse_partial' must not be the same buffer as operand 'q'}}
  attn.varlen_attention ins(%q, %k, %v : !t, !t, !t)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : !t) workspace(%op, %q : memref<8x8x8x8xf32>, !t)
  return
}

// -----

// f32 Q [B, Hq, Nq, D] and LSE_partial [S, B, Hq, Nq] of one type.
!t = memref<8x8x8x8xf32>
func.func @partial_lse_is_q(%q: !t, %k: !t, %v: !t,
                            %op: memref<8x8x8x8x8xf32>) {
  // expected-error @+1 {{operand 'lse_partial' must not be the same buffer as operand 'q'}}
  attn.partial_attention ins(%q, %k, %v : !t, !t, !t)
      outs(%op, %q : memref<8x8x8x8x8xf32>, !t)
  return
}

// -----

// f32 O [B, Hq, Nq, D] and LSE_partial [S, B, Hq, Nq] of one type.
!t = memref<8x8x8x8xf32>
func.func @combine_o_is_lse_partial(%op: memref<8x8x8x8x8xf32>, %lp: !t) {
  // expected-error @+1 {{operand 'o' must not be the same buffer as operand 'lse_partial'}}
  attn.decode_combine ins(%op, %lp : memref<8x8x8x8x8xf32>, !t) outs(%lp : !t)
  return
}

// RUN: attn-opt %s --split-input-file -verify-diagnostics

// The optional clauses come in a fixed order. One out of order, given twice
// or not the op's is an error on its keyword that gives the order (it ended
// the op early and was reported as an unknown op: "custom op 'lse' is
// unknown").

func.func @varlen_workspace_before_lse(%q: memref<40x4x16xbf16>, %cq: memref<5xi32>, %mq: index, %lse: memref<4x40xf32>, %op: memref<2x40x4x16xf32>, %lp: memref<2x4x40xf32>) {
  attn.varlen_attention ins(%q, %q, %q : memref<40x4x16xbf16>, memref<40x4x16xbf16>, memref<40x4x16xbf16>)
      seqlens(%cq, %cq : memref<5xi32>, memref<5xi32>) max(%mq, %mq)
      outs(%q : memref<40x4x16xbf16>) workspace(%op, %lp : memref<2x40x4x16xf32>, memref<2x4x40xf32>)
      // expected-error @+1 {{custom op 'attn.varlen_attention' clause 'lse' is out of order or given twice: the clauses are ins(...) seqlens(...) max(...) [paged(...)] outs(...) [lse(...)] [workspace(...)] [alibi(...)] [sinks(...)] [{attributes}], in this order}}
      lse(%lse : memref<4x40xf32>)
  return
}

// -----

!t = memref<1x2x64x16xf16>
func.func @attention_paged_before_lse(%q: !t, %lse: memref<1x2x64xf32>, %bt: memref<1x4xi32>, %cs: memref<1xi32>) {
  attn.attention ins(%q, %q, %q : !t, !t, !t) outs(%q : !t)
      paged(%bt, %cs : memref<1x4xi32>, memref<1xi32>)
      // expected-error @+1 {{custom op 'attn.attention' clause 'lse' is out of order or given twice: the clauses are ins(...) outs(...) [lse(...)] [descale(...)] [paged(...)] [alibi(...)] [sinks(...)] [{attributes}], in this order}}
      lse(%lse : memref<1x2x64xf32>)
  return
}

// -----

!t = memref<1x2x64x16xf8E4M3FN>
func.func @attention_descale_before_lse(%q: !t, %o: memref<1x2x64x16xbf16>, %d: memref<1x2xf32>, %lse: memref<1x2x64xf32>) {
  attn.attention ins(%q, %q, %q : !t, !t, !t) outs(%o : memref<1x2x64x16xbf16>)
      descale(%d, %d, %d : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
      // expected-error @+1 {{custom op 'attn.attention' clause 'lse' is out of order or given twice}}
      lse(%lse : memref<1x2x64xf32>)
  return
}

// -----

!t = memref<1x2x64x16xf16>
func.func @attention_attributes_before_lse(%q: !t, %o: !t, %lse: memref<1x2x64xf32>) {
  attn.attention ins(%q, %q, %q : !t, !t, !t) outs(%o : !t) {causal}
      // expected-error @+1 {{custom op 'attn.attention' clause 'lse' is out of order or given twice}}
      lse(%lse : memref<1x2x64xf32>)
  return
}

// -----

!t = memref<1x2x64x16xf16>
func.func @attention_lse_twice(%q: !t, %o: !t, %lse: memref<1x2x64xf32>) {
  attn.attention ins(%q, %q, %q : !t, !t, !t) outs(%o : !t)
      lse(%lse : memref<1x2x64xf32>)
      // expected-error @+1 {{custom op 'attn.attention' clause 'lse' is out of order or given twice}}
      lse(%lse : memref<1x2x64xf32>)
  return
}

// -----

!t = memref<1x2x64x16xf16>
func.func @attention_no_workspace(%q: !t, %o: !t) {
  attn.attention ins(%q, %q, %q : !t, !t, !t) outs(%o : !t)
      // expected-error @+1 {{custom op 'attn.attention' has no clause 'workspace': the clauses are ins(...) outs(...) [lse(...)] [descale(...)] [paged(...)] [alibi(...)] [sinks(...)] [{attributes}], in this order}}
      workspace(%o, %o : !t, !t)
  return
}

// -----

!t = memref<1x2x64x16xf16>
func.func @partial_attributes_before_paged(%q: !t, %op: memref<2x1x2x64x16xf32>, %lp: memref<2x1x2x64xf32>, %bt: memref<1x4xi32>, %cs: memref<1xi32>) {
  attn.partial_attention ins(%q, %q, %q : !t, !t, !t)
      outs(%op, %lp : memref<2x1x2x64x16xf32>, memref<2x1x2x64xf32>) {causal}
      // expected-error @+1 {{custom op 'attn.partial_attention' clause 'paged' is out of order or given twice: the clauses are ins(...) outs(...) [paged(...)] [alibi(...)] [{attributes}], in this order}}
      paged(%bt, %cs : memref<1x4xi32>, memref<1xi32>)
  return
}

// -----

func.func @combine_lse_twice(%op: memref<2x1x2x1x16xf32>, %lp: memref<2x1x2x1xf32>, %o: memref<1x2x1x16xbf16>, %lse: memref<1x2x1xf32>) {
  attn.decode_combine ins(%op, %lp : memref<2x1x2x1x16xf32>, memref<2x1x2x1xf32>) outs(%o : memref<1x2x1x16xbf16>)
      lse(%lse : memref<1x2x1xf32>)
      // expected-error @+1 {{custom op 'attn.decode_combine' clause 'lse' is out of order or given twice: the clauses are ins(...) outs(...) [lse(...)] [sinks(...)] [{attributes}], in this order}}
      lse(%lse : memref<1x2x1xf32>)
  return
}

// -----

!t = memref<1x2x64x16xbf16>
func.func @grad_no_lse_clause(%t: !t, %lse: memref<1x2x64xf32>) {
  attn.attention_grad ins(%t, %t, %t, %t, %t, %lse : !t, !t, !t, !t, !t, memref<1x2x64xf32>)
      outs(%t, %t, %t : !t, !t, !t) {causal}
      // expected-error @+1 {{custom op 'attn.attention_grad' has no clause 'lse': the clauses are ins(...) outs(...) [{attributes}], in this order}}
      lse(%lse : memref<1x2x64xf32>)
  return
}

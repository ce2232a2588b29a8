// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of attn.attention_grad's verifier
// (lib/Dialect/Attn/IR/AttnOps.cpp), in the order they are checked. Each
// message names the operand and states the expectation. Valid operands:
// B = 1, Hq = 4, Hkv = 2, Nq = 16, Nk = 24, D = 32, bf16.

//===----------------------------------------------------------------------===//
// attn.attention_grad: ranks
//===----------------------------------------------------------------------===//

func.func @q_rank(%q: memref<4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'q' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @k_rank(%q: memref<1x4x16x32xbf16>,
                 %k: memref<2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'k' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @v_rank(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'v' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @o_rank(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'o' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dO_rank(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dO' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dQ_rank(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dQ' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dK_rank(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dK' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dV_rank(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dV' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<2x24x32xbf16>)
  return
}

// -----

func.func @lse_rank(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<1x4x16x1xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x2x24x32xbf16>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'lse' must be a rank-3 memref [B, Hq, Nq], but got rank 4}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x1xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad: memory space, layout, D stride, extent (shared with attn.attention)
//===----------------------------------------------------------------------===//

func.func @dK_space(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x2x24x32xbf16, 3>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dK' must be in the default (global) memory space, but got memory space 3}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16, 3>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dV_layout(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>>) {
  // expected-error @+1 {{operand 'dV' must have a strided layout (identity or strided<[...]>), but got affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>>)
  return
}

// -----

func.func @dQ_d_stride(%q: memref<1x4x16x32xbf16>,
                      %k: memref<1x2x24x32xbf16>,
                      %v: memref<1x2x24x32xbf16>,
                      %o: memref<1x4x16x32xbf16>,
                      %dO: memref<1x4x16x32xbf16>,
                      %lse: memref<1x4x16xf32>,
                      %dQ: memref<1x4x16x32xbf16, strided<[4096, 1024, 64, 2]>>,
                      %dK: memref<1x2x24x32xbf16>,
                      %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dQ' must have unit stride along D, but got stride 2}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16, strided<[4096, 1024, 64, 2]>>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dO_extent(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x4294967296x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dO' dimension 2 is 4294967296, but static lengths must be at most 2^31 - 1 (make it dynamic or split the call)}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x4294967296x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @lse_span(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<2147483647x2147483647x4xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x2x24x32xbf16>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'lse' spans more than 2^63 - 1 bytes}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<2147483647x2147483647x4xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad: outputs that are inputs (same SSA value)
//===----------------------------------------------------------------------===//

func.func @dq_is_do(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dQ' must not be the same buffer as operand 'dO' (outputs are written while the inputs are read)}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dO, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dk_is_k(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dK' must not be the same buffer as operand 'k' (outputs are written while the inputs are read)}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %k, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dv_is_dk(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dV' must not be the same buffer as operand 'dK' (outputs are written while the inputs are read)}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dK :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad: element types
//===----------------------------------------------------------------------===//

func.func @q_fp8(%q: memref<1x4x16x32xf8E4M3FN>,
                %k: memref<1x2x24x32xf8E4M3FN>,
                %v: memref<1x2x24x32xf8E4M3FN>,
                %o: memref<1x4x16x32xf8E4M3FN>,
                %dO: memref<1x4x16x32xf8E4M3FN>,
                %lse: memref<1x4x16xf32>,
                %dQ: memref<1x4x16x32xf8E4M3FN>,
                %dK: memref<1x2x24x32xf8E4M3FN>,
                %dV: memref<1x2x24x32xf8E4M3FN>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16 or f32 (there is no FP8 backward), but got 'f8E4M3FN'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xf8E4M3FN>,
      memref<1x2x24x32xf8E4M3FN>,
      memref<1x2x24x32xf8E4M3FN>,
      memref<1x4x16x32xf8E4M3FN>,
      memref<1x4x16x32xf8E4M3FN>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xf8E4M3FN>,
      memref<1x2x24x32xf8E4M3FN>,
      memref<1x2x24x32xf8E4M3FN>)
  return
}

// -----

func.func @q_f64(%q: memref<1x4x16x32xf64>,
                %k: memref<1x2x24x32xf64>,
                %v: memref<1x2x24x32xf64>,
                %o: memref<1x4x16x32xf64>,
                %dO: memref<1x4x16x32xf64>,
                %lse: memref<1x4x16xf32>,
                %dQ: memref<1x4x16x32xf64>,
                %dK: memref<1x2x24x32xf64>,
                %dV: memref<1x2x24x32xf64>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16 or f32 (there is no FP8 backward), but got 'f64'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xf64>,
      memref<1x2x24x32xf64>,
      memref<1x2x24x32xf64>,
      memref<1x4x16x32xf64>,
      memref<1x4x16x32xf64>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xf64>,
      memref<1x2x24x32xf64>,
      memref<1x2x24x32xf64>)
  return
}

// -----

func.func @k_elt(%q: memref<1x4x16x32xbf16>,
                %k: memref<1x2x24x32xf16>,
                %v: memref<1x2x24x32xbf16>,
                %o: memref<1x4x16x32xbf16>,
                %dO: memref<1x4x16x32xbf16>,
                %lse: memref<1x4x16xf32>,
                %dQ: memref<1x4x16x32xbf16>,
                %dK: memref<1x2x24x32xbf16>,
                %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'k' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @v_elt(%q: memref<1x4x16x32xbf16>,
                %k: memref<1x2x24x32xbf16>,
                %v: memref<1x2x24x32xf16>,
                %o: memref<1x4x16x32xbf16>,
                %dO: memref<1x4x16x32xbf16>,
                %lse: memref<1x4x16xf32>,
                %dQ: memref<1x4x16x32xbf16>,
                %dK: memref<1x2x24x32xbf16>,
                %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'v' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @o_elt(%q: memref<1x4x16x32xbf16>,
                %k: memref<1x2x24x32xbf16>,
                %v: memref<1x2x24x32xbf16>,
                %o: memref<1x4x16x32xf16>,
                %dO: memref<1x4x16x32xbf16>,
                %lse: memref<1x4x16xf32>,
                %dQ: memref<1x4x16x32xbf16>,
                %dK: memref<1x2x24x32xbf16>,
                %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'o' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dO_elt(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dO' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dQ_elt(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dQ' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dK_elt(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xf16>,
                 %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dK' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dV_elt(%q: memref<1x4x16x32xbf16>,
                 %k: memref<1x2x24x32xbf16>,
                 %v: memref<1x2x24x32xbf16>,
                 %o: memref<1x4x16x32xbf16>,
                 %dO: memref<1x4x16x32xbf16>,
                 %lse: memref<1x4x16xf32>,
                 %dQ: memref<1x4x16x32xbf16>,
                 %dK: memref<1x2x24x32xbf16>,
                 %dV: memref<1x2x24x32xf16>) {
  // expected-error @+1 {{operand 'dV' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xf16>)
  return
}

// -----

func.func @lse_elt(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf16>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'lse' element type must be f32, but got 'f16'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf16>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad: shapes
//===----------------------------------------------------------------------===//

func.func @k_batch(%q: memref<1x4x16x32xbf16>,
                  %k: memref<2x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'k' batch B must equal q's (1), but got 2}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<2x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @k_head_dim(%q: memref<1x4x16x32xbf16>,
                     %k: memref<1x2x24x64xbf16>,
                     %v: memref<1x2x24x32xbf16>,
                     %o: memref<1x4x16x32xbf16>,
                     %dO: memref<1x4x16x32xbf16>,
                     %lse: memref<1x4x16xf32>,
                     %dQ: memref<1x4x16x32xbf16>,
                     %dK: memref<1x2x24x32xbf16>,
                     %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'k' head dim D must equal q's (32), but got 64}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x64xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @v_shape(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x20x32xbf16>,
                  %o: memref<1x4x16x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'v' shape must equal 'k' shape [1, 2, 24, 32], but got [1, 2, 20, 32]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x20x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @o_shape(%q: memref<1x4x16x32xbf16>,
                  %k: memref<1x2x24x32xbf16>,
                  %v: memref<1x2x24x32xbf16>,
                  %o: memref<1x4x15x32xbf16>,
                  %dO: memref<1x4x16x32xbf16>,
                  %lse: memref<1x4x16xf32>,
                  %dQ: memref<1x4x16x32xbf16>,
                  %dK: memref<1x2x24x32xbf16>,
                  %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'o' shape must equal 'q' shape [1, 4, 16, 32], but got [1, 4, 15, 32]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x15x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dO_shape(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x2x16x32xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x2x24x32xbf16>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dO' shape must equal 'q' shape [1, 4, 16, 32], but got [1, 2, 16, 32]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x2x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dQ_shape(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x24xbf16>,
                   %dK: memref<1x2x24x32xbf16>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dQ' shape must equal 'q' shape [1, 4, 16, 32], but got [1, 4, 16, 24]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x24xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dK_shape(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x4x24x32xbf16>,
                   %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'dK' shape must equal 'k' shape [1, 2, 24, 32], but got [1, 4, 24, 32]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x4x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

func.func @dV_shape(%q: memref<1x4x16x32xbf16>,
                   %k: memref<1x2x24x32xbf16>,
                   %v: memref<1x2x24x32xbf16>,
                   %o: memref<1x4x16x32xbf16>,
                   %dO: memref<1x4x16x32xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x32xbf16>,
                   %dK: memref<1x2x24x32xbf16>,
                   %dV: memref<1x2x16x32xbf16>) {
  // expected-error @+1 {{operand 'dV' shape must equal 'k' shape [1, 2, 24, 32], but got [1, 2, 16, 32]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x16x32xbf16>)
  return
}

// -----

func.func @gqa_heads(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x3x24x32xbf16>,
                    %v: memref<1x3x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x3x24x32xbf16>,
                    %dV: memref<1x3x24x32xbf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (4) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x3x24x32xbf16>,
      memref<1x3x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x3x24x32xbf16>,
      memref<1x3x24x32xbf16>)
  return
}

// -----

func.func @zero_kv_heads(%q: memref<1x4x16x32xbf16>,
                        %k: memref<1x0x24x32xbf16>,
                        %v: memref<1x0x24x32xbf16>,
                        %o: memref<1x4x16x32xbf16>,
                        %dO: memref<1x4x16x32xbf16>,
                        %lse: memref<1x4x16xf32>,
                        %dQ: memref<1x4x16x32xbf16>,
                        %dK: memref<1x0x24x32xbf16>,
                        %dV: memref<1x0x24x32xbf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (4) must be a positive multiple of operand 'k' head count Hkv (0) for GQA/MQA}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x0x24x32xbf16>,
      memref<1x0x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x0x24x32xbf16>,
      memref<1x0x24x32xbf16>)
  return
}

// -----

func.func @head_dim(%q: memref<1x4x16x12xbf16>,
                   %k: memref<1x2x24x12xbf16>,
                   %v: memref<1x2x24x12xbf16>,
                   %o: memref<1x4x16x12xbf16>,
                   %dO: memref<1x4x16x12xbf16>,
                   %lse: memref<1x4x16xf32>,
                   %dQ: memref<1x4x16x12xbf16>,
                   %dK: memref<1x2x24x12xbf16>,
                   %dV: memref<1x2x24x12xbf16>) {
  // expected-error @+1 {{operand 'q' head dim D must be a multiple of 8 in [8, 256], but got 12}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x12xbf16>,
      memref<1x2x24x12xbf16>,
      memref<1x2x24x12xbf16>,
      memref<1x4x16x12xbf16>,
      memref<1x4x16x12xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x12xbf16>,
      memref<1x2x24x12xbf16>,
      memref<1x2x24x12xbf16>)
  return
}

// -----

func.func @lse_shape(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x24xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{operand 'lse' shape must be [B, Hq, Nq] = [1, 4, 16], but got [1, 4, 24]}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x24xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad: attributes
//===----------------------------------------------------------------------===//

func.func @scale_zero(%q: memref<1x4x16x32xbf16>,
                     %k: memref<1x2x24x32xbf16>,
                     %v: memref<1x2x24x32xbf16>,
                     %o: memref<1x4x16x32xbf16>,
                     %dO: memref<1x4x16x32xbf16>,
                     %lse: memref<1x4x16xf32>,
                     %dQ: memref<1x4x16x32xbf16>,
                     %dK: memref<1x2x24x32xbf16>,
                     %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got 0}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>) {scale = 0.0 : f32}
  return
}

// -----

func.func @scale_negative(%q: memref<1x4x16x32xbf16>,
                         %k: memref<1x2x24x32xbf16>,
                         %v: memref<1x2x24x32xbf16>,
                         %o: memref<1x4x16x32xbf16>,
                         %dO: memref<1x4x16x32xbf16>,
                         %lse: memref<1x4x16xf32>,
                         %dQ: memref<1x4x16x32xbf16>,
                         %dK: memref<1x2x24x32xbf16>,
                         %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got -1}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>) {causal, scale = -1.0 : f32}
  return
}

// -----

func.func @scale_inf(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got inf}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>) {scale = 0x7F800000 : f32}
  return
}

// -----

func.func @scale_nan(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got nan}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>) {scale = 0x7FC00000 : f32}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Backward tile ops (attn-tile-grad)
//===----------------------------------------------------------------------===//

func.func @load_rows_source(%m: memref<1x4x40xf16>, %i: index) {
  // expected-error @+1 {{operand 'source' must be an f32 [B, H, N] memref, but got 'memref<1x4x40xf16>'}}
  %r = attn.load_rows %m[%i, %i, %i] : memref<1x4x40xf16> -> vector<8xf32>
  return
}

// -----

func.func @load_rows_space(%m: memref<1x4x40xf32, 3>, %i: index) {
  // expected-error @+1 {{operand 'source' must be in the default (global) memory space, but got memory space 3}}
  %r = attn.load_rows %m[%i, %i, %i] : memref<1x4x40xf32, 3> -> vector<8xf32>
  return
}

// -----

func.func @load_rows_result(%m: memref<1x4x40xf32>, %i: index) {
  // expected-error @+1 {{result must be vector<BLOCK_M x f32>, but got 'vector<8x2xf32>'}}
  %r = attn.load_rows %m[%i, %i, %i] : memref<1x4x40xf32> -> vector<8x2xf32>
  return
}

// -----

func.func @store_rows_dest(%m: memref<1x4x40x1xf32>, %v: vector<8xf32>, %i: index) {
  // expected-error @+1 {{operand 'dest' must be an f32 [B, H, N] memref, but got 'memref<1x4x40x1xf32>'}}
  attn.store_rows %v, %m[%i, %i, %i] : vector<8xf32>, memref<1x4x40x1xf32>
  return
}

// -----

func.func @store_rows_value(%m: memref<1x4x40xf32>, %v: vector<8xf16>, %i: index) {
  // expected-error @+1 {{operand 'value' must be vector<BLOCK_M x f32>, but got 'vector<8xf16>'}}
  attn.store_rows %v, %m[%i, %i, %i] : vector<8xf16>, memref<1x4x40xf32>
  return
}

// -----

func.func @store_tile_value(%m: memref<1x4x40x16xf16>, %v: vector<8x16xf16>, %i: index) {
  // expected-error @+1 {{operand 'value' must be a [ROWS, D] f32 tile, but got 'vector<8x16xf16>'}}
  attn.store_tile %v, %m[%i, %i, %i] : vector<8x16xf16>, memref<1x4x40x16xf16>
  return
}

// -----

// A fragment is stored as a [ROWS, D] tile too (the tensor-core dK, dV).
func.func @store_tile_fragment_rows(%m: memref<1x4x256x16xf16>, %v: !attn.wg_fragment<128xf32>, %i: index) {
  // expected-error @+1 {{operand 'value' must be a [ROWS, D] f32 tile, but got '!attn.wg_fragment<128xf32>'}}
  attn.store_tile %v, %m[%i, %i, %i] : !attn.wg_fragment<128xf32>, memref<1x4x256x16xf16>
  return
}

// -----

func.func @store_tile_fragment_dest(%m: memref<1x4x256x64xf16>, %v: !attn.wg_fragment<128x128xf32>, %i: index) {
  // expected-error @+1 {{operand 'dest' must be a [B, H, N, 128] memref of f16, bf16 or f32, but got 'memref<1x4x256x64xf16>'}}
  attn.store_tile %v, %m[%i, %i, %i] : !attn.wg_fragment<128x128xf32>, memref<1x4x256x64xf16>
  return
}

// -----

func.func @store_tile_dest(%m: memref<1x4x40x32xf16>, %v: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'dest' must be a [B, H, N, 16] memref of f16, bf16 or f32, but got 'memref<1x4x40x32xf16>'}}
  attn.store_tile %v, %m[%i, %i, %i] : vector<8x16xf32>, memref<1x4x40x32xf16>
  return
}

// -----

func.func @store_tile_stride(%m: memref<1x4x40x16xf16, strided<[2560, 640, 16, 2]>>, %v: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'dest' must have unit stride along D, but got stride 2}}
  attn.store_tile %v, %m[%i, %i, %i] : vector<8x16xf32>, memref<1x4x40x16xf16, strided<[2560, 640, 16, 2]>>
  return
}

// -----

func.func @grad_delta_o(%o: vector<8xf16>, %do: vector<8x16xf16>) {
  // expected-error @+1 {{operand 'o' must be a [ROWS, D] tile of f16, bf16 or f32, but got 'vector<8xf16>'}}
  %d = attn.grad_delta %o, %do : vector<8xf16>, vector<8x16xf16> -> vector<8xf32>
  return
}

// -----

func.func @grad_delta_do(%o: vector<8x16xf16>, %do: vector<8x16xbf16>) {
  // expected-error @+1 {{operand 'dO' must be a [8, 16] tile of 'f16', but got 'vector<8x16xbf16>'}}
  %d = attn.grad_delta %o, %do : vector<8x16xf16>, vector<8x16xbf16> -> vector<8xf32>
  return
}

// -----

func.func @grad_delta_result(%o: vector<8x16xf16>, %do: vector<8x16xf16>) {
  // expected-error @+1 {{result must be vector<8xf32>, but got 'vector<4xf32>'}}
  %d = attn.grad_delta %o, %do : vector<8x16xf16>, vector<8x16xf16> -> vector<4xf32>
  return
}

// -----

func.func @dkdv_q(%q: vector<8x16xi8>, %r: vector<8xf32>, %k: vector<4x16xi8>,
                  %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'q' must be a [ROWS, D] tile of f16, bf16 or f32, but got 'vector<8x16xi8>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xi8>, vector<8x16xi8>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xi8>, vector<4x16xi8>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_do(%q: vector<8x16xf16>, %do: vector<8x8xf16>, %r: vector<8xf32>,
                   %k: vector<4x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'dO' must be a [8, 16] tile of 'f16', but got 'vector<8x8xf16>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %do : vector<8x16xf16>, vector<8x8xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_lse(%q: vector<8x16xf16>, %r: vector<8xf32>, %r4: vector<4xf32>,
                    %k: vector<4x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'lse' must be 'vector<8xf32>', but got 'vector<4xf32>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r4, %r : vector<4xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_delta(%q: vector<8x16xf16>, %r: vector<8xf32>, %h: vector<8xf16>,
                      %k: vector<4x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'delta' must be 'vector<8xf32>', but got 'vector<8xf16>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %h : vector<8xf32>, vector<8xf16>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_scale(%q: vector<8x16xf16>, %r: vector<8xf32>,
                      %k: vector<4x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got 0}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.0 : f32}
  return
}

// -----

func.func @dkdv_causal_offset(%q: vector<8x16xf16>, %r: vector<8xf32>,
                              %k: vector<4x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'causal_offset' must be present exactly when mask is causal}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<causal>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_k(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<4x32xf16>,
                  %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'k' must be a [ROWS, 16] tile of 'f16', but got 'vector<4x32xf16>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x32xf16>, vector<4x32xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_block_n(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<512x16xf16>,
                        %s: vector<512x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'k' must have BLOCK_N in [1, 256] rows, but got 512}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<512x16xf16>, vector<512x16xf16>) at(%i, %i)
      state(%s, %s : vector<512x16xf32>, vector<512x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_v(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<4x16xf16>,
                  %v: vector<2x16xf16>, %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'v' must be a [4, 16] tile of 'f16', but got 'vector<2x16xf16>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %v : vector<4x16xf16>, vector<2x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_state(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<4x16xf16>,
                      %s: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'dK' must be 'vector<4x16xf32>', but got 'vector<8x16xf32>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<8x16xf32>, vector<8x16xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_dv_state(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<4x16xf16>,
                         %s: vector<4x16xf32>, %t: vector<4x8xf32>, %i: index) {
  // expected-error @+1 {{operand 'dV' must be 'vector<4x16xf32>', but got 'vector<4x8xf32>'}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %t : vector<4x16xf32>, vector<4x8xf32>) {mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dkdv_bounds(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: vector<4x16xf16>,
                       %s: vector<4x16xf32>, %i: index) {
  // expected-error @+1 {{attribute 'mask' must be none or causal (rows past Nq load as zero and contribute nothing), but got bounds}}
  %dk, %dv = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>) at(%i, %i)
      state(%s, %s : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<bounds>, scale = 0.25 : f32}
  return
}

// -----

func.func @dq_k(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: memref<1x2x24x16xbf16>,
                %s: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'k' must be a [B, Hkv, Nk, 16] memref of 'f16', but got 'memref<1x2x24x16xbf16>'}}
  %dq = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : memref<1x2x24x16xbf16>, memref<1x2x24x16xbf16>)
      at[%i, %i, %i] rows(%i) state(%s : vector<8x16xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dq_v_space(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: memref<1x2x24x16xf16>,
                      %v: memref<1x2x24x16xf16, 3>, %s: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'v' must be in the default (global) memory space, but got memory space 3}}
  %dq = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %v : memref<1x2x24x16xf16>, memref<1x2x24x16xf16, 3>)
      at[%i, %i, %i] rows(%i) state(%s : vector<8x16xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dq_v(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: memref<1x2x24x16xf16>,
                %v: memref<1x2x24x8xf16>, %s: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{operand 'v' must be a [B, Hkv, Nk, 16] memref of 'f16', but got 'memref<1x2x24x8xf16>'}}
  %dq = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %v : memref<1x2x24x16xf16>, memref<1x2x24x8xf16>)
      at[%i, %i, %i] rows(%i) state(%s : vector<8x16xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dq_block_n(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: memref<1x2x24x16xf16>,
                      %s: vector<8x16xf32>, %i: index) {
  // expected-error @+1 {{attribute 'block_n' must be in [1, 256], but got 0}}
  %dq = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : memref<1x2x24x16xf16>, memref<1x2x24x16xf16>)
      at[%i, %i, %i] rows(%i) state(%s : vector<8x16xf32>)
      {block_n = 0 : i64, mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

func.func @dq_state(%q: vector<8x16xf16>, %r: vector<8xf32>, %k: memref<1x2x24x16xf16>,
                    %s: vector<8x32xf32>, %i: index) {
  // expected-error @+1 {{operand 'dQ' must be 'vector<8x16xf32>', but got 'vector<8x32xf32>'}}
  %dq = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%r, %r : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : memref<1x2x24x16xf16>, memref<1x2x24x16xf16>)
      at[%i, %i, %i] rows(%i) state(%s : vector<8x32xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.25 : f32}
  return
}

// -----

// A backward tile op left inside a function lowered to LLVM.
llvm.func @grad_in_llvm_func() {
  %o = arith.constant dense<1.0> : vector<8x16xf16>
  // expected-error @+1 {{'attn.grad_delta' op is inside an LLVM function: it was not rewritten before the lowering to LLVM (run attn-tile-grad and attn-decompose-grad first, or use --attn-to-cpu)}}
  %d = attn.grad_delta %o, %o : vector<8x16xf16>, vector<8x16xf16> -> vector<8xf32>
  llvm.return
}

// -----

func.func @misspelt(%q: memref<1x4x16x32xbf16>,
                    %k: memref<1x2x24x32xbf16>,
                    %v: memref<1x2x24x32xbf16>,
                    %o: memref<1x4x16x32xbf16>,
                    %dO: memref<1x4x16x32xbf16>,
                    %lse: memref<1x4x16xf32>,
                    %dQ: memref<1x4x16x32xbf16>,
                    %dK: memref<1x2x24x32xbf16>,
                    %dV: memref<1x2x24x32xbf16>) {
  // expected-error @+1 {{'attn.attention_grad' op has no attribute 'causl'}}
  attn.attention_grad ins(%q, %k, %v, %o, %dO, %lse :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16x32xbf16>,
      memref<1x4x16xf32>)
    outs(%dQ, %dK, %dV :
      memref<1x4x16x32xbf16>,
      memref<1x2x24x32xbf16>,
      memref<1x2x24x32xbf16>) {causl}
  return
}

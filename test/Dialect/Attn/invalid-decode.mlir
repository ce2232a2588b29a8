// RUN: attn-opt %s --split-input-file -verify-diagnostics

// Verifiers of the split-KV ops (attn.partial_attention, attn.decode_combine,
// attn.combine_step) and of GQA packing on the tile ops: one case per message.

// attn.partial_attention: Q, K, V as attn.attention (no FP8), the workspace
func.func @partial_q_fp8(%q: memref<1x4x1x16xf8E4M3FN>, %k: memref<1x2x37x16xf8E4M3FN>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16 or f32, but got 'f8E4M3FN'}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xf8E4M3FN>, memref<1x2x37x16xf8E4M3FN>, memref<1x2x37x16xf8E4M3FN>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_gqa(%q: memref<1x4x1x16xbf16>, %k: memref<1x3x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'q' head count Hq (4) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x3x37x16xbf16>, memref<1x3x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_o_rank(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'o_partial' must be a rank-5 memref [S, B, Hq, Nq, D], but got rank 4}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<1x4x1x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_o_type(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xbf16>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'o_partial' element type must be f32, but got 'bf16'}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xbf16>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_o_dynamic_splits(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<?x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'o_partial' split count S (dimension 0) must be static and at least 1, but got ?}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<?x1x4x1x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_o_zero_splits(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<0x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'o_partial' split count S (dimension 0) must be static and at least 1, but got 0}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<0x1x4x1x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_o_shape(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x2x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{operand 'o_partial' shape must be [S, B, Hq, Nq, D] = [2, 1, 4, 1, 16], but got [2, 1, 4, 2, 16]}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x2x16xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

func.func @partial_lse_splits(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<3x1x4x1xf32>) {
  // expected-error @+1 {{operand 'lse_partial' split count S must equal 'o_partial''s (2), but got 3}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<3x1x4x1xf32>)
  return
}

// -----

func.func @partial_lse_rank(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x4x1xf32>) {
  // expected-error @+1 {{operand 'lse_partial' must be a rank-4 memref [S, B, Hq, Nq], but got rank 3}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x4x1xf32>)
  return
}

// -----

func.func @partial_lse_type(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf16>) {
  // expected-error @+1 {{operand 'lse_partial' element type must be f32, but got 'f16'}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf16>)
  return
}

// -----

func.func @partial_lse_shape(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x2x1xf32>) {
  // expected-error @+1 {{operand 'lse_partial' shape must be [S, B, Hq, Nq] = [2, 1, 4, 1], but got [2, 1, 2, 1]}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x2x1xf32>)
  return
}

// -----

func.func @partial_scale(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got -1}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xbf16>, memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      outs(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) {scale = -1.0 : f32}
  return
}

// -----

// attn.decode_combine: O and LSE of the full problem, the same workspace
func.func @combine_o_rank(%op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<4x1x16xbf16>) {
  // expected-error @+1 {{operand 'o' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) outs(%o : memref<4x1x16xbf16>)
  return
}

// -----

func.func @combine_o_type(%op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<1x4x1x16xi8>) {
  // expected-error @+1 {{operand 'o' element type must be f16, bf16 or f32, but got 'i8'}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) outs(%o : memref<1x4x1x16xi8>)
  return
}

// -----

func.func @combine_o_partial_shape(%op: memref<2x1x4x1x32xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<1x4x1x16xbf16>) {
  // expected-error @+1 {{operand 'o_partial' shape must be [S, B, Hq, Nq, D] = [2, 1, 4, 1, 16], but got [2, 1, 4, 1, 32]}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x32xf32>, memref<2x1x4x1xf32>) outs(%o : memref<1x4x1x16xbf16>)
  return
}

// -----

func.func @combine_lse_rank(%op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<1x4x1x16xbf16>, %lse: memref<4x1xf32>) {
  // expected-error @+1 {{operand 'lse' must be a rank-3 memref [B, Hq, Nq], but got rank 2}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) outs(%o : memref<1x4x1x16xbf16>) lse(%lse : memref<4x1xf32>)
  return
}

// -----

func.func @combine_lse_type(%op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<1x4x1x16xbf16>, %lse: memref<1x4x1xf16>) {
  // expected-error @+1 {{operand 'lse' element type must be f32, but got 'f16'}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) outs(%o : memref<1x4x1x16xbf16>) lse(%lse : memref<1x4x1xf16>)
  return
}

// -----

func.func @combine_lse_shape(%op: memref<2x1x4x1x16xf32>, %lp: memref<2x1x4x1xf32>, %o: memref<1x4x1x16xbf16>, %lse: memref<1x4x2xf32>) {
  // expected-error @+1 {{operand 'lse' shape must be [B, Hq, Nq] = [1, 4, 1], but got [1, 4, 2]}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x16xf32>, memref<2x1x4x1xf32>) outs(%o : memref<1x4x1x16xbf16>) lse(%lse : memref<1x4x2xf32>)
  return
}

// -----

// attn.combine_step: an fp32 O_s tile, its LSE_s rows, the online-softmax state
func.func @combine_step_o(%o: vector<4x16xf16>, %r: vector<4xf32>, %acc: vector<4x16xf32>) {
  // expected-error @+1 {{operand 'o_s' must be a [BLOCK_M, D] f32 tile, but got 'vector<4x16xf16>'}}
  %m, %l, %a = attn.combine_step partial(%o, %r : vector<4x16xf16>, vector<4xf32>)
      state(%r, %r, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
  return
}

// -----

func.func @combine_step_lse(%o: vector<4x16xf32>, %r: vector<4xf32>, %lse: vector<8xf32>) {
  // expected-error @+1 {{operand 'lse_s' must be 'vector<4xf32>', but got 'vector<8xf32>'}}
  %m, %l, %a = attn.combine_step partial(%o, %lse : vector<4x16xf32>, vector<8xf32>)
      state(%r, %r, %o : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
  return
}

// -----

func.func @combine_step_state(%o: vector<4x16xf32>, %r: vector<4xf32>, %acc: vector<4x8xf32>) {
  // expected-error @+1 {{operand 'acc' must be 'vector<4x16xf32>', but got 'vector<4x8xf32>'}}
  %m, %l, %a = attn.combine_step partial(%o, %r : vector<4x16xf32>, vector<4xf32>)
      state(%r, %r, %acc : vector<4xf32>, vector<4xf32>, vector<4x8xf32>)
  return
}

// -----

// gqa_pack (GQA packing) on the tile ops: at least 1
func.func @load_tile_pack(%q: memref<1x4x1x16xbf16>, %i: index) {
  // expected-error @+1 {{attribute 'gqa_pack' must be at least 1, but got 0}}
  %t = attn.load_tile %q[%i, %i, %i, %i] {gqa_pack = 0 : i64} : memref<1x4x1x16xbf16> -> vector<4x16xbf16>
  return
}

// -----

func.func @online_pack(%q: vector<4x16xbf16>, %k: memref<1x2x37x16xbf16>, %i: index,
                       %r: vector<4xf32>, %acc: vector<4x16xf32>) {
  // expected-error @+1 {{attribute 'gqa_pack' must be at least 1, but got -2}}
  %m, %l, %a = attn.online_attention q(%q : vector<4x16xbf16>)
      kv(%k, %k : memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      at[%i, %i, %i, %i] rows(%i) state(%r, %r, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      {block_n = 8 : i64, mask = #attn.mask<none>, scale = 0.25 : f32, gqa_pack = -2 : i64}
  return
}

// -----

func.func @epilogue_pack(%r: vector<4xf32>, %acc: vector<4x16xf32>, %o: memref<1x4x1x16xbf16>, %i: index) {
  // expected-error @+1 {{attribute 'gqa_pack' must be at least 1, but got 0}}
  attn.epilogue state(%r, %r, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      to %o[%i, %i, %i, %i] {gqa_pack = 0 : i64} : memref<1x4x1x16xbf16>
  return
}

// -----

// An fp32 O (the split-KV workspace) has no staging tile (tensor-core path).
func.func @epilogue_f32_staging(%r: vector<64xf32>, %acc: vector<64x64xf32>, %o: memref<1x4x64x64xf32>,
                                %s: memref<1x64x64xf32, #gpu.address_space<workgroup>>, %i: index) {
  // expected-error @+1 {{operand 'staging' needs an f16 or bf16 'o', but 'o' is f32}}
  attn.epilogue state(%r, %r, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o[%i, %i, %i, %i] staging(%s : memref<1x64x64xf32, #gpu.address_space<workgroup>>) : memref<1x4x64x64xf32>
  return
}

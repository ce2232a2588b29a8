// RUN: attn-opt %s --split-input-file -verify-diagnostics

// Verifier of attn.varlen_attention: one case per message (docs/ir.md,
// section 3), in the order they are checked.

// Packed operands: rank, memory space, layout, D stride, extent.
func.func @q_rank(%q: memref<1x40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' must be a rank-3 memref [total_q, Hq, D], but got rank 4}}
  attn.varlen_attention ins(%q, %k, %v : memref<1x40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @k_rank(%q: memref<40x4x16xbf16>, %k: memref<56x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' must be a rank-3 memref [total_k, Hkv, D], but got rank 2}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @o_rank(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x64xbf16>) {
  // expected-error @+1 {{operand 'o' must be a rank-3 memref [total_q, Hq, D], but got rank 2}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x64xbf16>)
  return
}

// -----

func.func @q_memory_space(%q: memref<40x4x16xbf16, 3>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' must be in the default (global) memory space, but got memory space 3 : i64}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16, 3>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @k_not_strided(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16, affine_map<(a, b, c) -> (a, c, b)>>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' must have a strided layout (identity or strided<[...]>), but got affine_map<(d0, d1, d2) -> (d0, d2, d1)>}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16, affine_map<(a, b, c) -> (a, c, b)>>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @v_d_stride(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16, strided<[64, 32, 2]>>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'v' must have unit stride along D, but got stride 2}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16, strided<[64, 32, 2]>>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @q_too_long(%q: memref<4294967296x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' dimension 0 is 4294967296, but static lengths must be at most 2^31 - 1 (make it dynamic or split the call)}}
  attn.varlen_attention ins(%q, %k, %v : memref<4294967296x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

// Element types.
func.func @q_fp8(%q: memref<40x4x16xf8E4M3FN>, %k: memref<56x2x16xf8E4M3FN>, %v: memref<56x2x16xf8E4M3FN>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16 or f32 (there is no FP8 varlen attention), but got 'f8E4M3FN'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xf8E4M3FN>, memref<56x2x16xf8E4M3FN>, memref<56x2x16xf8E4M3FN>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @k_type(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @o_type(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xf32>) {
  // expected-error @+1 {{operand 'o' element type must match 'q' ('bf16'), but got 'f32'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xf32>)
  return
}

// -----

// Shapes.
func.func @k_head_dim(%q: memref<40x4x16xbf16>, %k: memref<56x2x32xbf16>, %v: memref<56x2x32xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' head dim D must equal q's (16), but got 32}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x32xbf16>, memref<56x2x32xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @v_shape(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<48x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'v' shape must equal 'k' shape [56, 2, 16], but got [48, 2, 16]}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<48x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @o_shape(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x2x16xbf16>) {
  // expected-error @+1 {{operand 'o' shape must equal 'q' shape [40, 4, 16], but got [40, 2, 16]}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x2x16xbf16>)
  return
}

// -----

func.func @gqa(%q: memref<40x4x16xbf16>, %k: memref<56x3x16xbf16>, %v: memref<56x3x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (4) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x3x16xbf16>, memref<56x3x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @head_dim(%q: memref<40x4x12xbf16>, %k: memref<56x2x12xbf16>, %v: memref<56x2x12xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x12xbf16>) {
  // expected-error @+1 {{operand 'q' head dim D must be a multiple of 8 in [8, 256], but got 12}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x12xbf16>, memref<56x2x12xbf16>, memref<56x2x12xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x12xbf16>)
  return
}

// -----

// cu_seqlens: i32 [B + 1], B + 1 >= 1, the same B for Q and K/V.
func.func @cu_rank(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5x1xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' must be a rank-1 memref of i32 [B + 1], but got rank 2}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5x1xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @cu_type(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi64>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' element type must be i32, but got 'i64'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi64>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @cu_empty(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<0xi32>, %ck: memref<?xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' must have B + 1 >= 1 entries (prefix sums starting at 0), but got 0}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<0xi32>, memref<?xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @cu_batch(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<4xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' length B + 1 must equal cu_seqlens_q's (5), but got 4}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<4xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

// LSE: fp32 [Hq, total_q].
func.func @lse_rank(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %lse: memref<1x4x40xf32>) {
  // expected-error @+1 {{operand 'lse' must be a rank-2 memref [Hq, total_q], but got rank 3}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      lse(%lse : memref<1x4x40xf32>)
  return
}

// -----

func.func @lse_type(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %lse: memref<4x40xbf16>) {
  // expected-error @+1 {{operand 'lse' element type must be f32, but got 'bf16'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      lse(%lse : memref<4x40xbf16>)
  return
}

// -----

func.func @lse_shape(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %lse: memref<40x4xf32>) {
  // expected-error @+1 {{operand 'lse' shape must be [Hq, total_q] = [4, 40], but got [40, 4]}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      lse(%lse : memref<40x4xf32>)
  return
}

// -----

func.func @scale(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got -1}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>) {scale = -1.0 : f32}
  return
}

// -----
// Paged K/V: the caches are [num_pages, page_size, Hkv, D].

func.func @paged_cache_rank(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<2x4xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' must be a rank-4 memref [num_pages, page_size, Hkv, D], but got rank 3}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<2x4xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_cache_page_size(%q: memref<40x4x16xbf16>, %k: memref<8x0x2x16xbf16>, %v: memref<8x0x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<2x4xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' page_size (dimension 1) must be at least 1, but got 0}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x0x2x16xbf16>, memref<8x0x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<2x4xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_cache_head_dim(%q: memref<40x4x16xbf16>, %k: memref<8x16x2x32xbf16>, %v: memref<8x16x2x32xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<2x4xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'k' head dim D must equal q's (16), but got 32}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x16x2x32xbf16>, memref<8x16x2x32xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<2x4xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_cache_heads(%q: memref<40x4x16xbf16>, %k: memref<8x16x3x16xbf16>, %v: memref<8x16x3x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<2x4xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (4) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x16x3x16xbf16>, memref<8x16x3x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<2x4xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_table_type(%q: memref<40x4x16xbf16>, %k: memref<8x16x2x16xbf16>, %v: memref<8x16x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<2x4xi64>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'block_table' element type must be i32, but got 'i64'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x16x2x16xbf16>, memref<8x16x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<2x4xi64>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_table_rank(%q: memref<40x4x16xbf16>, %k: memref<8x16x2x16xbf16>, %v: memref<8x16x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<8xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'block_table' must be a rank-2 memref [B, max_pages], but got rank 1}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x16x2x16xbf16>, memref<8x16x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<8xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----

func.func @paged_table_rows(%q: memref<40x4x16xbf16>, %k: memref<8x16x2x16xbf16>, %v: memref<8x16x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %bt: memref<3x4xi32>, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{operand 'block_table' must have B = 2 rows (cu_seqlens_q has B + 1 = 3 entries), but got 3}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<8x16x2x16xbf16>, memref<8x16x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      paged(%bt : memref<3x4xi32>)
      outs(%o : memref<40x4x16xbf16>)
  return
}

// -----
// Split-KV workspace: o_partial [S, total_q, Hq, D], lse_partial [S, Hq, total_q], fp32.

func.func @workspace_rank(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<2x1x40x4x16xf32>, %lp: memref<2x4x40xf32>) {
  // expected-error @+1 {{operand 'o_partial' must be a rank-4 memref [S, total_q, Hq, D], but got rank 5}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<2x1x40x4x16xf32>, memref<2x4x40xf32>)
  return
}

// -----

func.func @workspace_type(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<2x40x4x16xbf16>, %lp: memref<2x4x40xf32>) {
  // expected-error @+1 {{operand 'o_partial' element type must be f32, but got 'bf16'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<2x40x4x16xbf16>, memref<2x4x40xf32>)
  return
}

// -----

func.func @workspace_splits(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<?x40x4x16xf32>, %lp: memref<2x4x40xf32>) {
  // expected-error @+1 {{operand 'o_partial' split count S (dimension 0) must be static and at least 1, but got ?}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<?x40x4x16xf32>, memref<2x4x40xf32>)
  return
}

// -----

func.func @workspace_shape(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<2x40x16x4xf32>, %lp: memref<2x4x40xf32>) {
  // expected-error @+1 {{operand 'o_partial' shape must be [S, total_q, Hq, D] = [2, 40, 4, 16], but got [2, 40, 16, 4]}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<2x40x16x4xf32>, memref<2x4x40xf32>)
  return
}

// -----

func.func @workspace_lse_splits(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<2x40x4x16xf32>, %lp: memref<3x4x40xf32>) {
  // expected-error @+1 {{operand 'lse_partial' split count S must equal 'o_partial''s (2), but got 3}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<2x40x4x16xf32>, memref<3x4x40xf32>)
  return
}

// -----

func.func @workspace_lse_shape(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>, %op: memref<2x40x4x16xf32>, %lp: memref<2x40x4xf32>) {
  // expected-error @+1 {{operand 'lse_partial' shape must be [S, Hq, total_q] = [2, 4, 40], but got [2, 40, 4]}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<3xi32>, memref<3xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>)
      workspace(%op, %lp : memref<2x40x4x16xf32>, memref<2x40x4xf32>)
  return
}

// -----

func.func @misspelt(%q: memref<40x4x16xbf16>, %k: memref<56x2x16xbf16>, %v: memref<56x2x16xbf16>, %cq: memref<5xi32>, %ck: memref<5xi32>, %mq: index, %mk: index, %o: memref<40x4x16xbf16>) {
  // expected-error @+1 {{'attn.varlen_attention' op has no attribute 'casual'}}
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x16xbf16>, memref<56x2x16xbf16>, memref<56x2x16xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>) max(%mq, %mk)
      outs(%o : memref<40x4x16xbf16>) {casual}
  return
}

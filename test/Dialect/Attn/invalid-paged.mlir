// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One diagnostic per malformed `paged` clause (paged K/V caches
// [num_pages, page_size, Hkv, D], block_table i32 [B, max_pages],
// cache_seqlens i32 [B]).

func.func @valid(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                 %v: memref<?x16x2x64xbf16>, %o: memref<2x8x1x64xbf16>,
                 %t: memref<2x?xi32>, %n: memref<2xi32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x?xi32>, memref<2xi32>) {causal}
  return
}

// -----

func.func @table_without_seqlens(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                                 %o: memref<2x8x1x64xbf16>, %t: memref<2x?xi32>) {
  // expected-error @+1 {{operands 'block_table' and 'cache_seqlens' must be given together (paged K/V)}}
  "attn.attention"(%q, %k, %k, %o, %t) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0>}>
      : (memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>, memref<2x8x1x64xbf16>, memref<2x?xi32>) -> ()
  return
}

// -----

func.func @table_element_type(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                              %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi64>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'block_table' element type must be i32, but got 'i64'}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi64>, memref<2xi32>)
  return
}

// -----

func.func @table_rank(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                      %o: memref<2x8x1x64xbf16>, %t: memref<8xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'block_table' must be a rank-2 memref [B, max_pages], but got rank 1}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<8xi32>, memref<2xi32>)
  return
}

// -----

func.func @table_batch(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                       %o: memref<2x8x1x64xbf16>, %t: memref<3x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'block_table' batch B must equal q's (2), but got 3}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<3x4xi32>, memref<2xi32>)
  return
}

// -----

func.func @seqlens_batch(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                         %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<4xi32>) {
  // expected-error @+1 {{operand 'cache_seqlens' batch B must equal q's (2), but got 4}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<4xi32>)
  return
}

// -----

func.func @seqlens_rank(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                        %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<2x1xi32>) {
  // expected-error @+1 {{operand 'cache_seqlens' must be a rank-1 memref [B], but got rank 2}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<2x1xi32>)
  return
}

// -----

func.func @seqlens_element_type(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                                %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<2xindex>) {
  // expected-error @+1 {{operand 'cache_seqlens' element type must be i32, but got 'index'}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<2xindex>)
  return
}

// -----

// Paged caches keep Hkv in dimension 2: 8 query heads over 3 KV heads.
func.func @paged_heads(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x3x64xbf16>,
                       %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'q' head count Hq (8) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x3x64xbf16>, memref<?x16x3x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<2xi32>)
  return
}

// -----

func.func @page_size_zero(%q: memref<2x8x1x64xbf16>, %k: memref<?x0x2x64xbf16>,
                          %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'k' page_size (dimension 1) must be at least 1, but got 0}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x0x2x64xbf16>, memref<?x0x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<2xi32>)
  return
}

// -----

func.func @paged_head_dim(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x32xbf16>,
                          %o: memref<2x8x1x64xbf16>, %t: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{operand 'k' head dim D must equal q's (64), but got 32}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xbf16>, memref<?x16x2x32xbf16>, memref<?x16x2x32xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x4xi32>, memref<2xi32>)
  return
}

// -----

func.func @paged_fp8(%q: memref<2x8x1x64xf8E4M3FN>, %k: memref<?x16x2x64xf8E4M3FN>,
                     %o: memref<2x8x1x64xbf16>, %d: memref<2x2xf32>,
                     %t: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{paged K/V takes f16, bf16 or f32 operands, but 'q' is 'f8E4M3FN'}}
  attn.attention ins(%q, %k, %k : memref<2x8x1x64xf8E4M3FN>, memref<?x16x2x64xf8E4M3FN>, memref<?x16x2x64xf8E4M3FN>)
      outs(%o : memref<2x8x1x64xbf16>) descale(%d, %d, %d : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>)
      paged(%t, %n : memref<2x4xi32>, memref<2xi32>)
  return
}

// -----

func.func @partial_paged_seqlens(%q: memref<1x4x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                                 %op: memref<2x1x4x1x64xf32>, %lp: memref<2x1x4x1xf32>,
                                 %t: memref<1x4xi32>, %n: memref<1xf32>) {
  // expected-error @+1 {{operand 'cache_seqlens' element type must be i32, but got 'f32'}}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%op, %lp : memref<2x1x4x1x64xf32>, memref<2x1x4x1xf32>) paged(%t, %n : memref<1x4xi32>, memref<1xf32>)
  return
}

// -----

func.func @step_table_without_num_keys(%q: vector<4x16xbf16>, %k: memref<?x2x16x16xbf16>,
                                       %t: memref<1x4xi32>, %i: index,
                                       %m: vector<4xf32>, %acc: vector<4x16xf32>) {
  // expected-error @+1 {{operand 'num_keys' is required with 'block_table' (the sequence's key count)}}
  %r:3 = attn.online_attention q(%q : vector<4x16xbf16>) kv(%k, %k : memref<?x2x16x16xbf16>, memref<?x2x16x16xbf16>)
      at [%i, %i, %i, %i] rows(%i) state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      pages(%t : memref<1x4xi32>) {block_n = 8 : i64, mask = #attn.mask<bounds>, scale = 1.0 : f32}
  return
}

// -----

func.func @step_table_type(%q: vector<4x16xbf16>, %k: memref<?x2x16x16xbf16>,
                           %t: memref<4xi32>, %i: index,
                           %m: vector<4xf32>, %acc: vector<4x16xf32>) {
  // expected-error @+1 {{operand 'block_table' must be an i32 [B, max_pages] memref, but got 'memref<4xi32>'}}
  %r:3 = attn.online_attention q(%q : vector<4x16xbf16>) kv(%k, %k : memref<?x2x16x16xbf16>, memref<?x2x16x16xbf16>)
      at [%i, %i, %i, %i] rows(%i) state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      pages(%t : memref<4xi32>) num_keys(%i) {block_n = 8 : i64, mask = #attn.mask<bounds>, scale = 1.0 : f32}
  return
}

// -----

func.func @step_table_and_key_offset(%q: vector<4x16xbf16>, %k: memref<?x2x16x16xbf16>,
                                     %t: memref<1x4xi32>, %i: index,
                                     %m: vector<4xf32>, %acc: vector<4x16xf32>) {
  // expected-error @+1 {{operand 'key_offset' (varlen) cannot be combined with 'block_table' (paged K/V)}}
  %r:3 = attn.online_attention q(%q : vector<4x16xbf16>) kv(%k, %k : memref<?x2x16x16xbf16>, memref<?x2x16x16xbf16>)
      at [%i, %i, %i, %i] rows(%i) state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      pages(%t : memref<1x4xi32>) num_keys(%i) key_offset(%i) {block_n = 8 : i64, mask = #attn.mask<bounds>, scale = 1.0 : f32}
  return
}

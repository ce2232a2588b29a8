// RUN: attn-opt %s -split-input-file -verify-diagnostics

// FP8 descale granularity: one case per diagnostic of the per-block Q/K and
// per-channel V descales of attn.attention and of the tile ops that carry
// them (lib/Dialect/Attn/IR/AttnOps.cpp). Shapes: B = 1, Hq = 8, Hkv = 2,
// Nq = 128, Nk = 100, D = 64.

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @v_descale_rank(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                          %qd: memref<1x2xf32>, %kd: memref<1x2xf32>,
                          %vd: memref<1x2x64x1xf32>) {
  // expected-error @+1 {{operand 'v_descale' must be a rank-2 memref [B, Hkv] or a rank-3 memref [B, Hkv, D], but got rank 4}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x64x1xf32>)
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
// A per-block descale says how many rows each entry covers.
func.func @q_block_missing(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                           %qd: memref<1x8x2xf32>, %kd: memref<1x2xf32>,
                           %vd: memref<1x2xf32>) {
  // expected-error @+1 {{operand 'q_descale' is per block [B, Hq, ceil(Nq / bm)] and needs attribute 'q_descale_block'}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x8x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @k_block_without_blocks(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                                  %qd: memref<1x2xf32>, %kd: memref<1x2xf32>,
                                  %vd: memref<1x2xf32>) {
  // expected-error @+1 {{attribute 'k_descale_block' needs a per-block 'k_descale' [B, Hkv, ceil(Nk / bn)], but 'k_descale' is [B, Hkv]}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
      {k_descale_block = 64 : i64}
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @q_block_zero(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                        %qd: memref<1x8x2xf32>, %kd: memref<1x2xf32>,
                        %vd: memref<1x2xf32>) {
  // expected-error @+1 {{attribute 'q_descale_block' must be at least 1, but got 0}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x8x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
      {q_descale_block = 0 : i64}
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
// Per-block Q descales are per query head (not per KV head).
func.func @q_block_shape(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                         %qd: memref<1x2x2xf32>, %kd: memref<1x2xf32>,
                         %vd: memref<1x2xf32>) {
  // expected-error @+1 {{operand 'q_descale' shape must be [B, Hq, ceil(Nq / bm)] = [1, 8, 2], but got [1, 2, 2]}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
      {q_descale_block = 64 : i64}
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
// 100 keys in blocks of 64: the tail block has its own scale.
func.func @k_block_shape(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                         %qd: memref<1x2xf32>, %kd: memref<1x2x1xf32>,
                         %vd: memref<1x2xf32>) {
  // expected-error @+1 {{operand 'k_descale' shape must be [B, Hkv, ceil(Nk / bn)] = [1, 2, 2], but got [1, 2, 1]}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2x1xf32>, memref<1x2xf32>)
      {k_descale_block = 64 : i64}
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @v_channel_shape(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                           %qd: memref<1x2xf32>, %kd: memref<1x2xf32>,
                           %vd: memref<1x2x32xf32>) {
  // expected-error @+1 {{operand 'v_descale' shape must be [B, Hkv, D] = [1, 2, 64], but got [1, 2, 32]}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x32xf32>)
  return
}

// -----

!q8 = memref<1x8x128x64xf8E4M3FN>
!kv8 = memref<1x2x100x64xf8E4M3FN>
!o = memref<1x8x128x64xbf16>
func.func @k_block_elt(%q: !q8, %k: !kv8, %v: !kv8, %o: !o,
                       %qd: memref<1x2xf32>, %kd: memref<1x2x2xf16>,
                       %vd: memref<1x2xf32>) {
  // expected-error @+1 {{operand 'k_descale' element type must be f32, but got 'f16'}}
  attn.attention ins(%q, %k, %v : !q8, !kv8, !kv8) outs(%o : !o)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2x2xf16>, memref<1x2xf32>)
      {k_descale_block = 64 : i64}
  return
}

// -----

!q = memref<1x8x128x64xbf16>
!kv = memref<1x2x100x64xbf16>
func.func @block_attr_without_fp8(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  // expected-error @+1 {{attributes 'q_descale_block' and 'k_descale_block' are only valid with FP8 descales}}
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) {q_descale_block = 64 : i64}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Tile ops: attn.online_attention's row/key descales, attn.epilogue's
// channel descales, attn.load_rows' row_block
//===----------------------------------------------------------------------===//

!k8 = memref<1x2x100x32xf8E4M3FN>
func.func @row_descale_shape(%q: vector<4x32xf8E4M3FN>, %k: !k8, %i: index,
                             %m: vector<4xf32>, %acc: vector<4x32xf32>,
                             %r: vector<8xf32>) {
  // expected-error @+1 {{operand 'row_descale' must be 'vector<4xf32>', but got 'vector<8xf32>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x32xf8E4M3FN>)
      kv(%k, %k : !k8, !k8) at[%i, %i, %i, %i] rows(%i)
      state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      row_descale(%r : vector<8xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

!k8 = memref<1x2x100x32xf8E4M3FN>
// One k descale per key of the block (block_n).
func.func @key_descale_shape(%q: vector<4x32xf8E4M3FN>, %k: !k8, %i: index,
                             %m: vector<4xf32>, %acc: vector<4x32xf32>,
                             %kd: vector<8xf32>) {
  // expected-error @+1 {{operand 'key_descale' must be 'vector<16xf32>', but got 'vector<8xf32>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x32xf8E4M3FN>)
      kv(%k, %k : !k8, !k8) at[%i, %i, %i, %i] rows(%i)
      state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      key_descale(%kd : vector<8xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

!k = memref<1x2x100x32xbf16>
func.func @key_descale_not_fp8(%q: vector<4x32xbf16>, %k: !k, %i: index,
                               %m: vector<4xf32>, %acc: vector<4x32xf32>,
                               %kd: vector<16xf32>) {
  // expected-error @+1 {{operand 'key_descale' is only valid for an f8E4M3FN tile, but 'q' is 'bf16'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x32xbf16>)
      kv(%k, %k : !k, !k) at[%i, %i, %i, %i] rows(%i)
      state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      key_descale(%kd : vector<16xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

// One v descale per column the tile holds.
func.func @channel_descale_shape(%m: vector<4xf32>, %acc: vector<4x32xf32>,
                                 %o: memref<1x8x128x32xbf16>, %i: index,
                                 %c: vector<64xf32>) {
  // expected-error @+1 {{operand 'channel_descale' must be 'vector<32xf32>', but got 'vector<64xf32>'}}
  attn.epilogue state(%m, %m, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      to %o[%i, %i, %i, %i] channel_descale(%c : vector<64xf32>) : memref<1x8x128x32xbf16>
  return
}

// -----

func.func @load_rows_block(%d: memref<1x8x2xf32>, %i: index) {
  // expected-error @+1 {{attribute 'row_block' must be at least 1, but got 0}}
  %r = attn.load_rows %d[%i, %i, %i] {row_block = 0 : i64} : memref<1x8x2xf32> -> vector<8xf32>
  return
}

// -----

func.func @load_rows_pack(%d: memref<1x8x2xf32>, %i: index) {
  // expected-error @+1 {{attribute 'gqa_pack' must be at least 1, but got 0}}
  %r = attn.load_rows %d[%i, %i, %i] {gqa_pack = 0 : i64} : memref<1x8x2xf32> -> vector<8xf32>
  return
}

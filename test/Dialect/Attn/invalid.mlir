// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the attn verifiers (lib/Dialect/Attn/IR/AttnOps.cpp).
// Each message names the operand and states the expectation.

//===----------------------------------------------------------------------===//
// attn.attention: ranks
//===----------------------------------------------------------------------===//

func.func @q_rank(%q: memref<8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                  %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'q' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention ins(%q, %k, %v : memref<8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @k_rank(%q: memref<1x8x128x64xf16>, %k: memref<8x128x64xf16>,
                  %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'k' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 3}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @v_rank(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                  %v: memref<1x1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'v' must be a rank-4 memref [B, Hkv, Nk, D], but got rank 5}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @o_rank(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                  %v: memref<1x8x128x64xf16>, %o: memref<8x128x64xf16>) {
  // expected-error @+1 {{operand 'o' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<8x128x64xf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: element types
//===----------------------------------------------------------------------===//

func.func @q_f64(%q: memref<1x8x128x64xf64>, %k: memref<1x8x128x64xf64>,
                 %v: memref<1x8x128x64xf64>, %o: memref<1x8x128x64xf64>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16, f32 or f8E4M3FN, but got 'f64'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf64>, memref<1x8x128x64xf64>,
                     memref<1x8x128x64xf64>) outs(%o : memref<1x8x128x64xf64>)
  return
}

// -----

func.func @k_elt(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xbf16>,
                 %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'k' element type must match 'q' ('f16'), but got 'bf16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xbf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @v_elt(%q: memref<1x8x128x64xbf16>, %k: memref<1x8x128x64xbf16>,
                 %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xbf16>) {
  // expected-error @+1 {{operand 'v' element type must match 'q' ('bf16'), but got 'f16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xbf16>)
  return
}

// -----

func.func @o_elt(%q: memref<1x8x128x64xbf16>, %k: memref<1x8x128x64xbf16>,
                 %v: memref<1x8x128x64xbf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'o' element type must be 'bf16' (the element type of 'q'), but got 'f16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>,
                     memref<1x8x128x64xbf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @o_elt_fp8(%q: memref<1x8x128x64xf8E4M3FN>,
                     %k: memref<1x8x128x64xf8E4M3FN>,
                     %v: memref<1x8x128x64xf8E4M3FN>,
                     %o: memref<1x8x128x64xf8E4M3FN>, %qd: memref<1x8xf32>,
                     %kd: memref<1x8xf32>, %vd: memref<1x8xf32>) {
  // expected-error @+1 {{operand 'o' element type must be 'bf16' for FP8 inputs, but got 'f8E4M3FN'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf8E4M3FN>,
                     memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>)
                 outs(%o : memref<1x8x128x64xf8E4M3FN>)
                 descale(%qd, %kd, %vd : memref<1x8xf32>, memref<1x8xf32>,
                         memref<1x8xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: shapes
//===----------------------------------------------------------------------===//

func.func @batch_mismatch(%q: memref<1x8x128x64xf16>, %k: memref<2x8x128x64xf16>,
                          %v: memref<2x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'k' batch B must equal q's (1), but got 2}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<2x8x128x64xf16>,
                     memref<2x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @head_dim_mismatch(%q: memref<1x8x128x64xf16>,
                             %k: memref<1x8x128x128xf16>,
                             %v: memref<1x8x128x128xf16>,
                             %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'k' head dim D must equal q's (64), but got 128}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x128xf16>,
                     memref<1x8x128x128xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @v_shape(%q: memref<1x8x128x64xf16>, %k: memref<1x8x256x64xf16>,
                   %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'v' shape must equal 'k' shape [1, 8, 256, 64], but got [1, 8, 128, 64]}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x256x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

// A dynamic dimension is compatible with any size; a static mismatch is not.
func.func @v_shape_dynamic(%q: memref<1x8x?x64xf16>, %k: memref<1x8x?x64xf16>,
                           %v: memref<1x4x?x64xf16>, %o: memref<1x8x?x64xf16>) {
  // expected-error @+1 {{operand 'v' shape must equal 'k' shape [1, 8, ?, 64], but got [1, 4, ?, 64]}}
  attn.attention ins(%q, %k, %v : memref<1x8x?x64xf16>, memref<1x8x?x64xf16>,
                     memref<1x4x?x64xf16>) outs(%o : memref<1x8x?x64xf16>)
  return
}

// -----

func.func @o_shape(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                   %v: memref<1x8x128x64xf16>, %o: memref<1x8x64x64xf16>) {
  // expected-error @+1 {{operand 'o' shape must equal 'q' shape [1, 8, 128, 64], but got [1, 8, 64, 64]}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x64x64xf16>)
  return
}

// -----

func.func @gqa_not_multiple(%q: memref<1x8x128x64xf16>, %k: memref<1x3x128x64xf16>,
                            %v: memref<1x3x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (8) must be a positive multiple of operand 'k' head count Hkv (3) for GQA/MQA}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x3x128x64xf16>,
                     memref<1x3x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @gqa_zero_kv_heads(%q: memref<1x8x128x64xf16>, %k: memref<1x0x128x64xf16>,
                             %v: memref<1x0x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{operand 'q' head count Hq (8) must be a positive multiple of operand 'k' head count Hkv (0) for GQA/MQA}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x0x128x64xf16>,
                     memref<1x0x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
  return
}

// -----

func.func @head_dim_not_multiple_of_8(%q: memref<1x8x128x60xf16>,
                                      %k: memref<1x8x128x60xf16>,
                                      %v: memref<1x8x128x60xf16>,
                                      %o: memref<1x8x128x60xf16>) {
  // expected-error @+1 {{operand 'q' head dim D must be a multiple of 8 in [8, 256], but got 60}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x60xf16>, memref<1x8x128x60xf16>,
                     memref<1x8x128x60xf16>) outs(%o : memref<1x8x128x60xf16>)
  return
}

// -----

func.func @head_dim_too_large(%q: memref<1x8x128x264xbf16>,
                              %k: memref<1x8x128x264xbf16>,
                              %v: memref<1x8x128x264xbf16>,
                              %o: memref<1x8x128x264xbf16>) {
  // expected-error @+1 {{operand 'q' head dim D must be a multiple of 8 in [8, 256], but got 264}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x264xbf16>, memref<1x8x128x264xbf16>,
                     memref<1x8x128x264xbf16>) outs(%o : memref<1x8x128x264xbf16>)
  return
}

// -----

func.func @head_dim_zero(%q: memref<1x8x128x0xf16>, %k: memref<1x8x128x0xf16>,
                         %v: memref<1x8x128x0xf16>, %o: memref<1x8x128x0xf16>) {
  // expected-error @+1 {{operand 'q' head dim D must be a multiple of 8 in [8, 256], but got 0}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x0xf16>, memref<1x8x128x0xf16>,
                     memref<1x8x128x0xf16>) outs(%o : memref<1x8x128x0xf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: LSE
//===----------------------------------------------------------------------===//

func.func @lse_rank(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                    %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>,
                    %lse: memref<1x8x128x1xf32>) {
  // expected-error @+1 {{operand 'lse' must be a rank-3 memref [B, Hq, Nq], but got rank 4}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 lse(%lse : memref<1x8x128x1xf32>)
  return
}

// -----

func.func @lse_elt(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                   %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>,
                   %lse: memref<1x8x128xf16>) {
  // expected-error @+1 {{operand 'lse' element type must be f32, but got 'f16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 lse(%lse : memref<1x8x128xf16>)
  return
}

// -----

func.func @lse_shape(%q: memref<1x32x128x64xf16>, %k: memref<1x8x128x64xf16>,
                     %v: memref<1x8x128x64xf16>, %o: memref<1x32x128x64xf16>,
                     %lse: memref<1x8x128xf32>) {
  // expected-error @+1 {{operand 'lse' shape must be [B, Hq, Nq] = [1, 32, 128], but got [1, 8, 128]}}
  attn.attention ins(%q, %k, %v : memref<1x32x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x32x128x64xf16>)
                 lse(%lse : memref<1x8x128xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: scale
//===----------------------------------------------------------------------===//

func.func @scale_zero(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                      %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got 0}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {scale = 0.0 : f32}
  return
}

// -----

func.func @scale_negative(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                          %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got -1}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {causal, scale = -1.0 : f32}
  return
}

// -----

func.func @scale_inf(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                     %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got inf}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {scale = 0x7F800000 : f32}
  return
}

// -----

func.func @scale_nan(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                     %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got nan}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {scale = 0x7FC00000 : f32}
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: FP8 descales
//===----------------------------------------------------------------------===//

func.func @fp8_without_descale(%q: memref<1x8x128x64xf8E4M3FN>,
                               %k: memref<1x8x128x64xf8E4M3FN>,
                               %v: memref<1x8x128x64xf8E4M3FN>,
                               %o: memref<1x8x128x64xbf16>) {
  // expected-error @+1 {{FP8 (f8E4M3FN) operands 'q', 'k', 'v' require descale operands (q_descale, k_descale, v_descale), but none were given}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf8E4M3FN>,
                     memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>)
                 outs(%o : memref<1x8x128x64xbf16>)
  return
}

// -----

func.func @descale_with_bf16(%q: memref<1x8x128x64xbf16>,
                             %k: memref<1x8x128x64xbf16>,
                             %v: memref<1x8x128x64xbf16>,
                             %o: memref<1x8x128x64xbf16>, %qd: memref<1x8xf32>,
                             %kd: memref<1x8xf32>, %vd: memref<1x8xf32>) {
  // expected-error @+1 {{descale operands are only valid with FP8 (f8E4M3FN) inputs, but 'q' is 'bf16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xbf16>,
                     memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
                 outs(%o : memref<1x8x128x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x8xf32>, memref<1x8xf32>,
                         memref<1x8xf32>)
  return
}

// -----

func.func @descale_rank(%q: memref<1x8x128x64xf8E4M3FN>,
                        %k: memref<1x8x128x64xf8E4M3FN>,
                        %v: memref<1x8x128x64xf8E4M3FN>,
                        %o: memref<1x8x128x64xbf16>, %qd: memref<8xf32>,
                        %kd: memref<1x8xf32>, %vd: memref<1x8xf32>) {
  // expected-error @+1 {{operand 'q_descale' must be a rank-2 memref [B, Hkv] or a rank-3 memref [B, Hq, ceil(Nq / bm)], but got rank 1}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf8E4M3FN>,
                     memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>)
                 outs(%o : memref<1x8x128x64xbf16>)
                 descale(%qd, %kd, %vd : memref<8xf32>, memref<1x8xf32>,
                         memref<1x8xf32>)
  return
}

// -----

// Descales are per KV head ([B, Hkv]) even for q, as in FlashAttention-3.
func.func @descale_shape(%q: memref<1x32x128x64xf8E4M3FN>,
                         %k: memref<1x8x128x64xf8E4M3FN>,
                         %v: memref<1x8x128x64xf8E4M3FN>,
                         %o: memref<1x32x128x64xbf16>, %qd: memref<1x8xf32>,
                         %kd: memref<1x32xf32>, %vd: memref<1x8xf32>) {
  // expected-error @+1 {{operand 'k_descale' shape must be [B, Hkv] = [1, 8], but got [1, 32]}}
  attn.attention ins(%q, %k, %v : memref<1x32x128x64xf8E4M3FN>,
                     memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>)
                 outs(%o : memref<1x32x128x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x8xf32>, memref<1x32xf32>,
                         memref<1x8xf32>)
  return
}

// -----

func.func @descale_elt(%q: memref<1x8x128x64xf8E4M3FN>,
                       %k: memref<1x8x128x64xf8E4M3FN>,
                       %v: memref<1x8x128x64xf8E4M3FN>,
                       %o: memref<1x8x128x64xbf16>, %qd: memref<1x8xf32>,
                       %kd: memref<1x8xf32>, %vd: memref<1x8xf16>) {
  // expected-error @+1 {{operand 'v_descale' element type must be f32, but got 'f16'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf8E4M3FN>,
                     memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>)
                 outs(%o : memref<1x8x128x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x8xf32>, memref<1x8xf32>,
                         memref<1x8xf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.load_tile
//===----------------------------------------------------------------------===//

func.func @load_tile_rank(%q: memref<8x128x64xbf16>, %i: index) {
  // expected-error @+1 {{operand 'source' must be a rank-4 memref, but got rank 3}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<8x128x64xbf16> -> vector<64x64xbf16>
  return
}

// -----

func.func @load_tile_elt(%q: memref<1x8x128x64xbf16>, %i: index) {
  // expected-error @+1 {{result must be a [BLOCK_M, Dt] vector of the source element type with Dt <= D (64), but got 'vector<64x64xf16>'}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<1x8x128x64xbf16> -> vector<64x64xf16>
  return
}

// -----

func.func @load_tile_head_dim(%q: memref<1x8x128x64xbf16>, %i: index) {
  // expected-error @+1 {{result must be a [BLOCK_M, Dt] vector of the source element type with Dt <= D (64), but got 'vector<64x128xbf16>'}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<1x8x128x64xbf16> -> vector<64x128xbf16>
  return
}

// -----

func.func @load_tile_result_rank(%q: memref<1x8x128x64xbf16>, %i: index) {
  // expected-error @+1 {{result must be a [BLOCK_M, Dt] vector of the source element type with Dt <= D (64), but got 'vector<64xbf16>'}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<1x8x128x64xbf16> -> vector<64xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.online_attention
//===----------------------------------------------------------------------===//

func.func @online_q_rank(%q: vector<64xbf16>, %k: memref<1x8x128x64xbf16>,
                         %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                         %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'q' must be a [BLOCK_M, D] tile, but got 'vector<64xbf16>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_k_head_dim(%q: vector<64x64xbf16>, %k: memref<1x8x128x32xbf16>,
                             %v: memref<1x8x128x64xbf16>, %i: index,
                             %m: vector<64xf32>, %l: vector<64xf32>,
                             %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'k' must be a [B, Hkv, Nk, D >= 64] memref of 'bf16', but got 'memref<1x8x128x32xbf16>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %v : memref<1x8x128x32xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_v_elt(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                        %v: memref<1x8x128x64xf16>, %i: index,
                        %m: vector<64xf32>, %l: vector<64xf32>,
                        %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'v' must be a [B, Hkv, Nk, D >= 64] memref of 'bf16', but got 'memref<1x8x128x64xf16>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %v : memref<1x8x128x64xbf16>, memref<1x8x128x64xf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_v_rank(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                         %v: memref<8x128x64xbf16>, %i: index,
                         %m: vector<64xf32>, %l: vector<64xf32>,
                         %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'v' must be a [B, Hkv, Nk, D >= 64] memref of 'bf16', but got 'memref<8x128x64xbf16>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %v : memref<1x8x128x64xbf16>, memref<8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_block_n_zero(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                               %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                               %acc: vector<64x64xf32>) {
  // expected-error @+1 {{attribute 'block_n' must be in [1, 256], but got 0}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 0 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

// attn.block_n = 100000000000 used to run for minutes: the keys of a block
// are unrolled.
func.func @online_block_n_huge(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                               %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                               %acc: vector<64x64xf32>) {
  // expected-error @+1 {{attribute 'block_n' must be in [1, 256], but got 100000000000}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 100000000000 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_scale(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                        %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                        %acc: vector<64x64xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got }}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = -0.125 : f32}
  return
}

// -----

func.func @online_row_lanes_not_pow2(%q: vector<1x32xbf16>,
                                      %k: memref<1x8x128x128xbf16>, %i: index,
                                      %m: vector<1xf32>, %l: vector<1xf32>,
                                      %acc: vector<1x32xf32>) {
  // expected-error @+1 {{attribute 'row_lanes' must be a power of two in [1, 32], but got 3}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<1x32xbf16>)
      kv(%k, %k : memref<1x8x128x128xbf16>, memref<1x8x128x128xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, row_lanes = 3 : i64,
       scale = 0.125 : f32}
  return
}

// -----

func.func @online_row_lanes_too_many(%q: vector<1x32xbf16>,
                                     %k: memref<1x8x128x128xbf16>, %i: index,
                                     %m: vector<1xf32>, %l: vector<1xf32>,
                                     %acc: vector<1x32xf32>) {
  // expected-error @+1 {{attribute 'row_lanes' must be a power of two in [1, 32], but got 64}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<1x32xbf16>)
      kv(%k, %k : memref<1x8x128x128xbf16>, memref<1x8x128x128xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, row_lanes = 64 : i64,
       scale = 0.125 : f32}
  return
}

// -----

// qk_descale (q_descale * k_descale) belongs to FP8 tiles only.
func.func @online_descale_not_fp8(%q: vector<4x32xbf16>,
                                  %k: memref<1x8x128x32xbf16>, %i: index,
                                  %m: vector<4xf32>, %l: vector<4xf32>,
                                  %acc: vector<4x32xf32>, %d: f32) {
  // expected-error @+1 {{operand 'qk_descale' is only valid for an f8E4M3FN tile, but 'q' is 'bf16'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x32xbf16>)
      kv(%k, %k : memref<1x8x128x32xbf16>, memref<1x8x128x32xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      descale(%d) {block_n = 16 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_row_lanes_multi_row(%q: vector<4x32xbf16>,
                                      %k: memref<1x8x128x128xbf16>, %i: index,
                                      %m: vector<4xf32>, %l: vector<4xf32>,
                                      %acc: vector<4x32xf32>) {
  // expected-error @+1 {{attribute 'row_lanes' > 1 requires a one-row tile, but 'q' has 4 rows}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<4x32xbf16>)
      kv(%k, %k : memref<1x8x128x128xbf16>, memref<1x8x128x128xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<4xf32>, vector<4xf32>, vector<4x32xf32>)
      {block_n = 16 : i64, mask = #attn.mask<none>, row_lanes = 4 : i64,
       scale = 0.125 : f32}
  return
}

// -----

func.func @online_causal_without_offset(%q: vector<64x64xbf16>,
                                        %k: memref<1x8x128x64xbf16>, %i: index,
                                        %m: vector<64xf32>, %l: vector<64xf32>,
                                        %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'causal_offset' must be present exactly when mask is causal}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<causal>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_bounds_with_offset(%q: vector<64x64xbf16>,
                                     %k: memref<1x8x128x64xbf16>, %i: index,
                                     %m: vector<64xf32>, %l: vector<64xf32>,
                                     %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'causal_offset' must be present exactly when mask is causal}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i, causal_offset %i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<bounds>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_m_block_m(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                            %i: index, %m: vector<128xf32>, %l: vector<64xf32>,
                            %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'm' must be 'vector<64xf32>', but got 'vector<128xf32>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<128xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_l_elt(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                        %i: index, %m: vector<64xf32>, %l: vector<64xf16>,
                        %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'l' must be 'vector<64xf32>', but got 'vector<64xf16>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf16>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @online_acc_shape(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                            %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                            %acc: vector<64x128xf32>) {
  // expected-error @+1 {{operand 'acc' must be 'vector<64x64xf32>', but got 'vector<64x128xf32>'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xbf16>)
      kv(%k, %k : memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

// The state results have the types of the state operands (only the generic
// form can spell a mismatch).
func.func @online_result_type(%q: vector<64x64xbf16>, %k: memref<1x8x128x64xbf16>,
                              %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                              %acc: vector<64x64xf32>) {
  // expected-error @+1 {{failed to verify that all of {m, new_m} have same type}}
  %r:3 = "attn.online_attention"(%q, %k, %k, %i, %i, %i, %i, %i, %m, %l, %acc)
      <{block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32,
        operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}>
      : (vector<64x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>,
         index, index, index, index, index, vector<64xf32>, vector<64xf32>,
         vector<64x64xf32>) -> (vector<32xf32>, vector<64xf32>, vector<64x64xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.epilogue
//===----------------------------------------------------------------------===//

func.func @epilogue_acc_rank(%m: vector<64xf32>, %l: vector<64xf32>,
                             %acc: vector<64xf32>, %o: memref<1x8x128x64xbf16>,
                             %i: index) {
  // expected-error @+1 {{operand 'acc' must be a [BLOCK_M, D] f32 tile}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64xf32>)
      to %o[%i, %i, %i, %i] : memref<1x8x128x64xbf16>
  return
}

// -----

func.func @epilogue_acc_elt(%m: vector<64xf32>, %l: vector<64xf32>,
                            %acc: vector<64x64xf16>, %o: memref<1x8x128x64xbf16>,
                            %i: index) {
  // expected-error @+1 {{operand 'acc' must be 'vector<64x64xf32>', but got 'vector<64x64xf16>'}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf16>)
      to %o[%i, %i, %i, %i] : memref<1x8x128x64xbf16>
  return
}

// -----

func.func @epilogue_m_shape(%m: vector<32xf32>, %l: vector<64xf32>,
                            %acc: vector<64x64xf32>, %o: memref<1x8x128x64xbf16>,
                            %i: index) {
  // expected-error @+1 {{operand 'm' must be 'vector<64xf32>', but got 'vector<32xf32>'}}
  attn.epilogue state(%m, %l, %acc : vector<32xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o[%i, %i, %i, %i] : memref<1x8x128x64xbf16>
  return
}

// -----

func.func @epilogue_o_head_dim(%m: vector<64xf32>, %l: vector<64xf32>,
                               %acc: vector<64x64xf32>, %o: memref<1x8x128x32xbf16>,
                               %i: index) {
  // expected-error @+1 {{operand 'o' must be a [B, Hq, Nq, D >= 64] memref, but got 'memref<1x8x128x32xbf16>'}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o[%i, %i, %i, %i] : memref<1x8x128x32xbf16>
  return
}

// -----

func.func @epilogue_lse_elt(%m: vector<64xf32>, %l: vector<64xf32>,
                            %acc: vector<64x64xf32>, %o: memref<1x8x128x64xbf16>,
                            %lse: memref<1x8x128xf16>, %i: index) {
  // expected-error @+1 {{operand 'lse' must be an f32 [B, Hq, Nq] memref, but got 'memref<1x8x128xf16>'}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o, lse %lse[%i, %i, %i, %i] : memref<1x8x128x64xbf16>, memref<1x8x128xf16>
  return
}

// -----

func.func @epilogue_lse_rank(%m: vector<64xf32>, %l: vector<64xf32>,
                             %acc: vector<64x64xf32>, %o: memref<1x8x128x64xbf16>,
                             %lse: memref<1x8x128x1xf32>, %i: index) {
  // expected-error @+1 {{operand 'lse' must be an f32 [B, Hq, Nq] memref, but got 'memref<1x8x128x1xf32>'}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o, lse %lse[%i, %i, %i, %i] : memref<1x8x128x64xbf16>, memref<1x8x128x1xf32>
  return
}

// -----

// Regression: a partial set of descales (only expressible in generic form)
// used to crash the verifier. Every partial subset is rejected.
func.func @fp8_partial_descale_q_only(%q: memref<1x8x128x64xf8E4M3FN>,
                                      %k: memref<1x8x128x64xf8E4M3FN>,
                                      %v: memref<1x8x128x64xf8E4M3FN>,
                                      %o: memref<1x8x128x64xbf16>,
                                      %d: memref<1x8xf32>) {
  // expected-error @+1 {{descale operands q_descale, k_descale and v_descale must be given together}}
  "attn.attention"(%q, %k, %v, %o, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0>}>
      : (memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>,
         memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xbf16>, memref<1x8xf32>) -> ()
  return
}

// -----

func.func @fp8_partial_descale_k_v(%q: memref<1x8x128x64xf8E4M3FN>,
                                   %k: memref<1x8x128x64xf8E4M3FN>,
                                   %v: memref<1x8x128x64xf8E4M3FN>,
                                   %o: memref<1x8x128x64xbf16>,
                                   %d: memref<1x8xf32>) {
  // expected-error @+1 {{descale operands q_descale, k_descale and v_descale must be given together}}
  "attn.attention"(%q, %k, %v, %o, %d, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0>}>
      : (memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xf8E4M3FN>,
         memref<1x8x128x64xf8E4M3FN>, memref<1x8x128x64xbf16>, memref<1x8xf32>,
         memref<1x8xf32>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// attn.attention: layouts, memory spaces and extents
//===----------------------------------------------------------------------===//

// A non-strided layout has no memref descriptor: no lowering can address it.
func.func @not_strided(%q: memref<1x4x64x64xf16, affine_map<(a, b, c, d) -> (a, b, d, c)>>,
                       %k: memref<1x4x64x64xf16>, %v: memref<1x4x64x64xf16>,
                       %o: memref<1x4x64x64xf16>) {
  // expected-error @+1 {{operand 'q' must have a strided layout (identity or strided<[...]>), but got affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf16, affine_map<(a, b, c, d) -> (a, b, d, c)>>,
                     memref<1x4x64x64xf16>, memref<1x4x64x64xf16>)
                 outs(%o : memref<1x4x64x64xf16>)
  return
}

// -----

func.func @lse_not_strided(%q: memref<1x4x64x64xf16>, %k: memref<1x4x64x64xf16>,
                           %v: memref<1x4x64x64xf16>, %o: memref<1x4x64x64xf16>,
                           %lse: memref<1x4x64xf32, affine_map<(a, b, c) -> (c, b, a)>>) {
  // expected-error @+1 {{operand 'lse' must have a strided layout}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf16>, memref<1x4x64x64xf16>,
                     memref<1x4x64x64xf16>) outs(%o : memref<1x4x64x64xf16>)
                 lse(%lse : memref<1x4x64xf32, affine_map<(a, b, c) -> (c, b, a)>>)
  return
}

// -----

// D must have unit stride; a static stride says it does not.
func.func @d_stride(%q: memref<1x4x64x64xf16>,
                    %k: memref<1x4x64x64xf16, strided<[32768, 8192, 128, 2]>>,
                    %v: memref<1x4x64x64xf16>, %o: memref<1x4x64x64xf16>) {
  // expected-error @+1 {{operand 'k' must have unit stride along D, but got stride 2}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf16>,
                     memref<1x4x64x64xf16, strided<[32768, 8192, 128, 2]>>,
                     memref<1x4x64x64xf16>) outs(%o : memref<1x4x64x64xf16>)
  return
}

// -----

// An FP8 V may be stored V^T (unit stride along Nk), but a static layout
// with unit stride along neither D nor Nk is refused.
func.func @fp8_v_stride(%q: memref<1x4x64x64xf8E4M3FN>,
                        %k: memref<1x4x64x64xf8E4M3FN>,
                        %v: memref<1x4x64x64xf8E4M3FN, strided<[16384, 4096, 2, 128]>>,
                        %o: memref<1x4x64x64xbf16>, %qd: memref<1x4xf32>,
                        %kd: memref<1x4xf32>, %vd: memref<1x4xf32>) {
  // expected-error @+1 {{operand 'v' must have unit stride along D (or, for FP8, along Nk: V^T storage), but got strides [2, 128]}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf8E4M3FN>,
                     memref<1x4x64x64xf8E4M3FN>,
                     memref<1x4x64x64xf8E4M3FN, strided<[16384, 4096, 2, 128]>>)
                 outs(%o : memref<1x4x64x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x4xf32>, memref<1x4xf32>,
                         memref<1x4xf32>)
  return
}

// -----

// V^T storage is for FP8 only: a bf16 V needs unit stride along D.
func.func @vt_not_fp8(%q: memref<1x4x64x64xbf16>, %k: memref<1x4x64x64xbf16>,
                      %v: memref<1x4x64x64xbf16, strided<[16384, 4096, 1, 64]>>,
                      %o: memref<1x4x64x64xbf16>) {
  // expected-error @+1 {{operand 'v' must have unit stride along D, but got stride 64}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>,
                     memref<1x4x64x64xbf16, strided<[16384, 4096, 1, 64]>>)
                 outs(%o : memref<1x4x64x64xbf16>)
  return
}

// -----

// Workgroup memory (address space 3) is not what a caller passes.
func.func @memory_space(%q: memref<1x4x64x64xf16>, %k: memref<1x4x64x64xf16>,
                        %v: memref<1x4x64x64xf16>, %o: memref<1x4x64x64xf16, 3>) {
  // expected-error @+1 {{operand 'o' must be in the default (global) memory space, but got memory space 3 : i64}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf16>, memref<1x4x64x64xf16>,
                     memref<1x4x64x64xf16>) outs(%o : memref<1x4x64x64xf16, 3>)
  return
}

// -----

func.func @memory_space_attr(%q: memref<1x4x64x64xf16, #gpu.address_space<workgroup>>,
                             %k: memref<1x4x64x64xf16>, %v: memref<1x4x64x64xf16>,
                             %o: memref<1x4x64x64xf16>) {
  // expected-error @+1 {{operand 'q' must be in the default (global) memory space, but got memory space #gpu.address_space<workgroup>}}
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf16, #gpu.address_space<workgroup>>,
                     memref<1x4x64x64xf16>, memref<1x4x64x64xf16>)
                 outs(%o : memref<1x4x64x64xf16>)
  return
}

// -----

// Nq = 2^40: one CTA per BLOCK_M rows cannot fit CUDA's grid.
func.func @length_2_40(%q: memref<1x1x1099511627776x64xf16>, %k: memref<1x1x64x64xf16>,
                       %v: memref<1x1x64x64xf16>, %o: memref<1x1x1099511627776x64xf16>) {
  // expected-error @+1 {{operand 'q' dimension 2 is 1099511627776, but static lengths must be at most 2^31 - 1 (make it dynamic or split the call)}}
  attn.attention ins(%q, %k, %v : memref<1x1x1099511627776x64xf16>, memref<1x1x64x64xf16>,
                     memref<1x1x64x64xf16>) outs(%o : memref<1x1x1099511627776x64xf16>)
  return
}

// -----

// Every length fits, their product in bytes does not fit 64-bit offsets.
func.func @bytes_2_63(%q: memref<2147483647x2147483647x4x64xf16>, %k: memref<2147483647x1x64x64xf16>,
                      %v: memref<2147483647x1x64x64xf16>, %o: memref<2147483647x2147483647x4x64xf16>) {
  // expected-error @+1 {{operand 'q' spans more than 2^63 - 1 bytes}}
  attn.attention ins(%q, %k, %v : memref<2147483647x2147483647x4x64xf16>,
                     memref<2147483647x1x64x64xf16>, memref<2147483647x1x64x64xf16>)
                 outs(%o : memref<2147483647x2147483647x4x64xf16>)
  return
}

// -----

// The tile ops check their memrefs the same way.
func.func @load_tile_space(%q: memref<1x4x64x64xf16, 3>, %i: index) -> vector<16x64xf16> {
  // expected-error @+1 {{operand 'source' must be in the default (global) memory space}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<1x4x64x64xf16, 3> -> vector<16x64xf16>
  return %t : vector<16x64xf16>
}

// -----

// Found by attn-fuzz: tile ops on i8 passed verification and crashed
// attn-online-softmax (arith.extf / truncf of integers). Element types are
// checked like attn.attention's.
func.func @load_tile_i8(%q: memref<1x4x64x64xi8>, %i: index) -> vector<16x64xi8> {
  // expected-error @+1 {{operand 'source' element type must be f16, bf16, f32 or f8E4M3FN, but got 'i8'}}
  %t = attn.load_tile %q[%i, %i, %i, %i] : memref<1x4x64x64xi8> -> vector<16x64xi8>
  return %t : vector<16x64xi8>
}

// -----

func.func @online_f64(%q: vector<64x64xf64>, %k: memref<1x8x128x64xf64>,
                      %i: index, %m: vector<64xf32>, %l: vector<64xf32>,
                      %acc: vector<64x64xf32>) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16, f32 or f8E4M3FN, but got 'f64'}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<64x64xf64>)
      kv(%k, %k : memref<1x8x128x64xf64>, memref<1x8x128x64xf64>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @epilogue_i8(%m: vector<64xf32>, %l: vector<64xf32>, %acc: vector<64x64xf32>,
                       %o: memref<1x8x128x64xi8>, %i: index) {
  // expected-error @+1 {{operand 'o' element type must be f16, bf16 or f32, but got 'i8'}}
  attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o[%i, %i, %i, %i] : memref<1x8x128x64xi8>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.warp_specialize
//===----------------------------------------------------------------------===//

// -----

func.func @ws_groups() {
  // expected-error @+1 {{attribute 'consumer_warpgroups' must be 1, 2 or 3, but got 4}}
  attn.warp_specialize consumers(4) registers(24, 96) producer {
  } consumer {
  }
  return
}

// -----

func.func @ws_registers() {
  // expected-error @+1 {{attribute 'producer_registers' must be a multiple of 8 in [24, 256] (setmaxnreg), but got 20}}
  attn.warp_specialize consumers(2) registers(20, 240) producer {
  } consumer {
  }
  return
}

// -----

func.func @ws_budget() {
  // expected-error @+1 {{register budgets need 69632 registers per CTA, but an SM has 65536}}
  attn.warp_specialize consumers(2) registers(32, 256) producer {
  } consumer {
  }
  return
}

//===----------------------------------------------------------------------===//
// attn.online_attention_mma
//===----------------------------------------------------------------------===//

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_head_dim(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{attribute 'head_dim' must be a multiple of 8 in [8, 256], but got 100}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 100 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xf32, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xf32, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_dtype(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'q' element type must be f16, bf16 or f8E4M3FN, but got 'f32'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x100x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<100xf32>
!acc = vector<100x128xf32>
func.func @mma_block_m(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'q' must be a [C, BLOCK_M, 128 bytes] tile with BLOCK_M a multiple of 64}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_q_chunks(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'q' must be a workgroup-memory tile [2, 128, 64] of 'bf16' (128 columns in 64-column chunks), but got 'memref<1x128x64xbf16, #gpu.address_space<workgroup>>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_kv_global(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'k' must be a workgroup-memory tile [2, 64, 64] of 'bf16' (128 columns in 64-column chunks), but got 'memref<2x64x64xbf16>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x40x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_block_n(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'k' must be a [C, BLOCK_N, 128 bytes] tile with BLOCK_N a multiple of 16 in [16, 256]}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

// FP8 tiles: 128-column chunks, BLOCK_N a multiple of 32, V^T in 'v', and
// qk_descale exactly with f8E4M3FN.
!qs = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!ks = memref<1x48x128xf8E4M3FN, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_fp8_block_n(%q: !qs, %k: !ks, %i: index, %d: f32, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'k' must be a [C, BLOCK_N, 128 bytes] tile with BLOCK_N a multiple of 32 in [32, 256], but got 'memref<1x48x128xf8E4M3FN, #gpu.address_space<workgroup>>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !ks, !ks) keys(%i, %i) rows(%i) descale(%d)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!ks = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!vs = memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x64xf32>
func.func @mma_fp8_v_not_transposed(%q: !qs, %k: !ks, %v: !vs, %i: index, %d: f32, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'v' must be a workgroup-memory tile [1, 64, 128] of 'f8E4M3FN' (128 columns in 128-column chunks), but got 'memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !ks, !ks) keys(%i, %i) rows(%i) descale(%d)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!ks = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_fp8_no_descale(%q: !qs, %k: !ks, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'qk_descale' must be present exactly when the tiles are f8E4M3FN}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !ks, !ks) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_bf16_descale(%q: !qs, %k: !kvs, %i: index, %d: f32, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'qk_descale' must be present exactly when the tiles are f8E4M3FN}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i) descale(%d)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

// unfilled_tail: rows past Nk hold anything, so they must be masked.
!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_unfilled_tail_unmasked(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{attribute 'unfilled_tail' needs f16 or bf16 tiles and a mask (rows past Nk are masked and V's zeroed)}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32, unfilled_tail}
  return
}

// -----

// unfilled_tail: FP8's V^T holds keys as columns.
!qs = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!ks = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_unfilled_tail_fp8(%q: !qs, %k: !ks, %i: index, %d: f32, %m: !m, %acc: !acc) {
  // expected-error @+1 {{attribute 'unfilled_tail' needs f16 or bf16 tiles and a mask}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !ks, !ks) keys(%i, %i) rows(%i) descale(%d)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<bounds>, scale = 1.0 : f32, unfilled_tail}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!vs = memref<2x64x64xf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_v_dtype(%q: !qs, %k: !kvs, %v: !vs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'v' must be a workgroup-memory tile [2, 64, 64] of 'bf16'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %v : !kvs, !vs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_scale(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got -1}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = -1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @mma_causal_offset(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'causal_offset' must be present exactly when mask is causal}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = 1.0 : f32}
  return
}

// -----

!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!m = vector<128xf32>
!acc = vector<128x96xf32>
func.func @mma_state(%q: !qs, %k: !kvs, %i: index, %m: !m, %acc: !acc) {
  // expected-error @+1 {{operand 'acc' must be 'vector<128x128xf32>', but got 'vector<128x96xf32>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %m, %acc : !m, !m, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

// attn.epilogue's staging tile has O's element type and the Q tile's shape.
!m = vector<128xf32>
!acc = vector<128x128xf32>
!st = memref<2x128x64xf16, #gpu.address_space<workgroup>>
func.func @epilogue_staging(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index, %s: !st) {
  // expected-error @+1 {{operand 'staging' must be a workgroup-memory tile [2, 128, 64] of 'bf16'}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] staging(%s : !st) : memref<1x2x256x128xbf16>
  return
}

// -----

// The tensor-core epilogue (staging) stores each warpgroup's 64 rows as
// whole queries: G must divide 64. (A v_descale is FP8's, which the
// tensor-core path lowers: ops.mlir.)
!m = vector<128xf32>
!acc = vector<128x128xf32>
!st = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @epilogue_staging_packed(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index, %s: !st) {
  // expected-error @+1 {{operand 'staging' (the tensor-core epilogue) needs gqa_pack to divide 64 (a warpgroup's rows hold whole queries), but got 3}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] staging(%s : !st) {gqa_pack = 3 : i64} : memref<1x2x256x128xbf16>
  return
}

// -----

// attn.epilogue's O descriptor: [1, 1, 64, 64] boxes of O's element type,
// 128-byte swizzled (one warpgroup's rows, one chunk of D).
!m = vector<128xf32>
!acc = vector<128x128xf32>
!st = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @epilogue_map_box(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index, %s: !st, %d: !map) {
  // expected-error @+1 {{operand 'o_map' must be a 128-byte swizzled !nvgpu.tensormap.descriptor of [1, 1, 64, 64] boxes of 'bf16', but got '!nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] staging(%s : !st) tma_store(%d : !map) : memref<1x2x256x128xbf16>
  return
}

// -----

// With GQA packing (G = 4) the box is 16 queries of the group's 4 heads.
!m = vector<128xf32>
!acc = vector<128x128xf32>
!st = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @epilogue_map_packed_box(%m: !m, %acc: !acc, %o: memref<1x8x256x128xbf16>, %i: index, %s: !st, %d: !map) {
  // expected-error @+1 {{operand 'o_map' must be a 128-byte swizzled !nvgpu.tensormap.descriptor of [1, 16, 4, 64] boxes of 'bf16'}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] staging(%s : !st) tma_store(%d : !map) {gqa_pack = 4 : i64} : memref<1x8x256x128xbf16>
  return
}

// -----

!m = vector<128xf32>
!acc = vector<128x128xf32>
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @epilogue_map_type(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index, %d: !map) {
  // expected-error @+1 {{operand 'o_map' must be a 128-byte swizzled !nvgpu.tensormap.descriptor of [1, 1, 64, 64] boxes of 'bf16'}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] tma_store(%d : !map) : memref<1x2x256x128xbf16>
  return
}

// -----

!m = vector<128xf32>
!acc = vector<128x128xf32>
func.func @epilogue_map_not_descriptor(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index) {
  // expected-error @+1 {{operand 'o_map' must be a 128-byte swizzled !nvgpu.tensormap.descriptor of [1, 1, 64, 64] boxes of 'bf16', but got 'index'}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] tma_store(%i : index) : memref<1x2x256x128xbf16>
  return
}

// -----

// The TMA stores read the staged O: o_map needs the staging tile.
!m = vector<128xf32>
!acc = vector<128x128xf32>
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @epilogue_map_without_staging(%m: !m, %acc: !acc, %o: memref<1x2x256x128xbf16>, %i: index, %d: !map) {
  // expected-error @+1 {{operand 'o_map' needs the 'staging' tile the TMA stores read}}
  attn.epilogue state(%m, %m, %acc : !m, !m, !acc) to %o[%i, %i, %i, %i] tma_store(%d : !map) : memref<1x2x256x128xbf16>
  return
}

// -----

func.func @ws_ping_pong_one_group() {
  // expected-error @+1 {{ping_pong needs two or three consumer warpgroups, but got 1}}
  attn.warp_specialize consumers(1) registers(24, 240) ping_pong producer {
  } consumer {
  }
  return
}

//===----------------------------------------------------------------------===//
// attn.grad_dkdv_mma
//===----------------------------------------------------------------------===//

// -----

func.func @gmma_head_dim(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{attribute 'head_dim' must be 64 or 128 (dK and dV stay in registers), but got 96}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 96 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_dtype(%q: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %do: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'q' element type must be f16 or bf16, but got 'f32'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xf32, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_do_shape(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'dO'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_k_shape(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x64x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'k'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_ds_shape(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<1x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'ds'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<1x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_lse(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64x1xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'lse_log2' must be a rank-3 f32 memref, but got 'memref<1x2x64x1xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64x1xf32>, memref<1x2x64x1xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_dq(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x64x128xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'dq_acc' must be a rank-6 f32 memref, but got 'memref<1x2x64x128xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x64x128xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_dq_tiles(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x32xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'dq_acc' must be [B, Hq, Q blocks, 2, 64, 64] tiles, but got 'memref<1x2x1x2x64x32xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x32xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_rows(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>, %delta: memref<1x2x100xf32>,
    %dqa: memref<1x2x2x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'delta' must hold whole Q blocks (rows a multiple of 64, +inf and 0 past Nq), but got 'memref<1x2x100xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %delta : memref<1x2x64xf32>, memref<1x2x100xf32>) dq(%dqa : memref<1x2x2x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_stage(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x32xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'dq_stage' must be a workgroup-memory [2, 64, 64] f32 buffer, but got 'memref<2x64x32xf32, #gpu.address_space<workgroup>>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x32xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_state(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<64x128xf32>) {
  // expected-error @+1 {{operand 'dK' must be '!attn.wg_fragment<128x128xf32>', but got '!attn.wg_fragment<64x128xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<64x128xf32>, !attn.wg_fragment<64x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

// dK and dV are the consumer warpgroups' fragments (attn-grad-async-pipeline
// types them so), never CTA vectors: ODS's type constraint.
func.func @gmma_vector_state(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: vector<128x128xf32>) {
  // expected-error @+1 {{operand #13 must be a CTA-level f32 tile held in the consumer warpgroups' accumulator registers, but got 'vector<128x128xf32>'}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : vector<128x128xf32>, vector<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_bounds(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{attribute 'mask' must be none or causal, but got bounds}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<bounds>, scale = 0.125 : f32}
  return
}

// -----

func.func @gmma_causal(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %do: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %ds: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %lse: memref<1x2x64xf32>,
    %dqa: memref<1x2x1x2x64x64xf32>, %i: index, %dk: !attn.wg_fragment<128x128xf32>) {
  // expected-error @+1 {{operand 'causal_offset' must be present exactly when mask is causal}}
  %a, %b = attn.grad_dkdv_mma q(%q, %do : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%ds, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = 0.125 : f32}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Attributes that are not the op's own
//===----------------------------------------------------------------------===//

// A misspelt attribute would be kept as a discardable one and ignored: a
// kernel without the causal mask, or with the default scale.
func.func @misspelt_causal(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                           %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'casual' (its attributes: }}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {casual}
  return
}

// -----

func.func @misspelt_scale(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                          %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'scal'}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {causal, scal = 0.5 : f32}
  return
}

// -----

// A subnormal scale is flushed to 0 by the kernels' f32 arithmetic; a
// literal below the smallest subnormal reads as 0.
func.func @scale_subnormal(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                           %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be a positive normal f32 (in [1.17549e-38, 3.40282e+38]), but got 9.99995e-41}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {scale = 1.0e-40 : f32}
  return
}

// -----

func.func @scale_underflow(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                           %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{but got 0 (a literal below f32's smallest subnormal also reads as 0)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {scale = 1.0e-50 : f32}
  return
}

// -----

// The dialect prefix does not make one of the op's own attributes legal:
// `attn.causal` would be ignored as a pass's annotation.
func.func @prefixed_causal(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                           %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'attn.causal' (did you mean 'causal'?)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.causal}
  return
}

// -----

// Every attn op, the tile ops too.
func.func @load_tile_misspelt(%q: memref<1x8x128x64xbf16>, %i: index) {
  // expected-error @+1 {{'attn.load_tile' op has no attribute 'gqa_pak' (its attributes: }}
  %t = attn.load_tile %q[%i, %i, %i, %i] {gqa_pak = 4 : i64} : memref<1x8x128x64xbf16> -> vector<64x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// !attn.wg_fragment and attn.to_wg_fragment
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{!attn.wg_fragment must be [BLOCK_M] or [BLOCK_M, D] with BLOCK_M a multiple of 64}}
func.func @fragment_rows(%m: !attn.wg_fragment<100xf32>) {
  return
}

// -----

// expected-error @+1 {{!attn.wg_fragment holds f32, not 'f16'}}
func.func @fragment_f16(%m: !attn.wg_fragment<64x64xf16>) {
  return
}

// -----

func.func @to_fragment_shape(%m: vector<128xf32>) {
  // expected-error @+1 {{result must hold the source's tile, 'vector<128xf32>', but got '!attn.wg_fragment<64xf32>'}}
  %f = attn.to_wg_fragment %m : vector<128xf32> to !attn.wg_fragment<64xf32>
  return
}

// -----

// The state is all vectors or all warpgroup fragments.
!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!f = !attn.wg_fragment<128xf32>
!acc = !attn.wg_fragment<128x128xf32>
func.func @mma_mixed_state(%q: !qs, %k: !kvs, %i: index, %m: vector<128xf32>, %f: !f, %acc: !acc) {
  // expected-error @+1 {{operand 'm' must be '!attn.wg_fragment<128xf32>', but got 'vector<128xf32>'}}
  %a, %b, %c = attn.online_attention_mma q(%q : !qs) kv(%k, %k : !kvs, !kvs) keys(%i, %i) rows(%i)
      state(%m, %f, %acc : vector<128xf32>, !f, !acc) {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 1.0 : f32}
  return
}

// -----

// A misspelt attribute with the dialect prefix is refused too, with the
// nearest of the op's own names.
func.func @prefixed_misspelt(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                             %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'attn.casual' (did you mean 'causal'?)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.casual}
  return
}

// -----

// A kernel spec's attribute belongs on the function, not the op.
func.func @spec_attr_on_op(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                           %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'attn.splits' (a bundle kernel function's: put it on the func.func)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.splits = 3 : i64}
  return
}

// -----

// A misspelling of a pass's attribute names it.
func.func @pass_attr_misspelt(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                              %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'attn.confg' (did you mean 'attn.config'?)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.confg}
  return
}

// -----

func.func @unknown_prefixed(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                            %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has no attribute 'attn.window' (the attn attributes passes set on attn ops are attn.config, attn.v_permuted, attn.tree_reductions, attn.ping_pong_turns, attn.wait_dq_reductions)}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.window = 128 : i64}
  return
}

// -----

// attn.config holds the typed config attn-select-config records.
func.func @config_not_typed(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                            %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'attn.config' must be #attn.config<...> (attn-select-config's), but got 1 : i64}}
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>,
                     memref<1x8x128x64xf16>) outs(%o : memref<1x8x128x64xf16>)
                 {attn.config = 1 : i64}
  return
}

// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=128 pack-gqa=true" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute -verify-diagnostics -o /dev/null

// Per-block FP8 descales on tensor cores need attn-quantize-fp8's scale
// blocks to be the tiles (one Q descale per CTA, one K descale per K/V
// block) and one query head per tile. Tiles here: BLOCK_M = BLOCK_N = 128.

!q = memref<1x1x256x128xf8E4M3FN>
!vt = memref<1x1x256x128xf8E4M3FN, strided<[32768, 32768, 1, 256]>>
!o = memref<1x1x256x128xbf16>
func.func @q_block(%q: !q, %k: !q, %v: !vt, %o: !o, %qd: memref<1x1x4xf32>,
                   %kd: memref<1x1x2xf32>, %vd: memref<1x1xf32>) {
  // expected-error @+1 {{attn-tma-ring: per-block FP8 descales on tensor cores need attn-quantize-fp8's block-m equal to the tile's BLOCK_M (one descale per tile), but got block-m=64 and BLOCK_M=128}}
  attn.attention ins(%q, %k, %v : !q, !q, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x1x4xf32>, memref<1x1x2xf32>, memref<1x1xf32>)
                 {q_descale_block = 64 : i64, k_descale_block = 128 : i64}
  return
}

// -----

!q = memref<1x1x256x128xf8E4M3FN>
!vt = memref<1x1x256x128xf8E4M3FN, strided<[32768, 32768, 1, 256]>>
!o = memref<1x1x256x128xbf16>
func.func @k_block(%q: !q, %k: !q, %v: !vt, %o: !o, %qd: memref<1x1x2xf32>,
                   %kd: memref<1x1x1xf32>, %vd: memref<1x1xf32>) {
  // expected-error @+1 {{attn-tma-ring: per-block FP8 descales on tensor cores need attn-quantize-fp8's block-n equal to the tile's BLOCK_N (one descale per tile), but got block-n=256 and BLOCK_N=128}}
  attn.attention ins(%q, %k, %v : !q, !q, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x1x2xf32>, memref<1x1x1xf32>, memref<1x1xf32>)
                 {q_descale_block = 128 : i64, k_descale_block = 256 : i64}
  return
}

// -----

// GQA packing puts two query heads, each with its own Q descales, in a tile.
!q = memref<1x2x256x128xf8E4M3FN>
!k = memref<1x1x256x128xf8E4M3FN>
!vt = memref<1x1x256x128xf8E4M3FN, strided<[32768, 32768, 1, 256]>>
!o = memref<1x2x256x128xbf16>
func.func @packed(%q: !q, %k: !k, %v: !vt, %o: !o, %qd: memref<1x2x2xf32>,
                  %kd: memref<1x1x2xf32>, %vd: memref<1x1xf32>) {
  // expected-error @+1 {{attn-tma-ring: per-block Q descales with GQA packing have no tensor-core lowering (a packed tile's rows are 2 query heads, each with its own descale); leave attn-tile's pack-gqa off}}
  attn.attention ins(%q, %k, %v : !q, !k, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x2x2xf32>, memref<1x1x2xf32>, memref<1x1xf32>)
                 {q_descale_block = 128 : i64, k_descale_block = 128 : i64}
  return
}

// -----

// Per-channel V descales lower to the host only.
!q = memref<1x1x256x128xf8E4M3FN>
!vt = memref<1x1x256x128xf8E4M3FN, strided<[32768, 32768, 1, 256]>>
!o = memref<1x1x256x128xbf16>
func.func @v_channel(%q: !q, %k: !q, %v: !vt, %o: !o, %qd: memref<1x1x2xf32>,
                     %kd: memref<1x1x2xf32>, %vd: memref<1x1x128xf32>) {
  // expected-error @+1 {{attn-tma-ring: per-block Q/K descales and per-channel V descales have no lowering here; the tensor-core path (attn-async-pipeline) takes Q/K descales per head, per tensor or per block of its tiles and V descales per head (attn-quantize-fp8 v-granularity=head); per-channel V descales lower to the host only: --attn-to-cpu}}
  attn.attention ins(%q, %k, %v : !q, !q, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x1x2xf32>, memref<1x1x2xf32>, memref<1x1x128xf32>)
                 {q_descale_block = 128 : i64, k_descale_block = 128 : i64}
  return
}

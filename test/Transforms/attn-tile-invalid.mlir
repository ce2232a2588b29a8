// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=-3 block-n=8" 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=-4" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=1024" 2>&1 | FileCheck %s --check-prefix=BIGN
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=2048 block-n=16" 2>&1 | FileCheck %s --check-prefix=BIGM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=16 combine-block-m=-1" 2>&1 | FileCheck %s --check-prefix=COMBINEM
// RUN: not attn-opt %s --split-input-file --attn-to-cpu="block-n=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not attn-opt %s --split-input-file --attn-to-cpu="block-m=128 block-n=128" 2>&1 | FileCheck %s --check-prefix=UNROLL

// Errors of attn-tile (lib/Transforms/AttnTile.cpp). Inputs the attn.attention
// verifier accepts but the tiling cannot lower yet.

// The op verifier accepts a dynamic head dim (it only range-checks a static
// D); the tile types vector<BM x D> need it static.
func.func @dynamic_head_dim(%q: memref<1x2x8x?xf16>, %k: memref<1x2x8x?xf16>,
                            %v: memref<1x2x8x?xf16>, %o: memref<1x2x8x?xf16>) {
  // expected-error @+1 {{attn-tile needs a static head dim D}}
  attn.attention ins(%q, %k, %v : memref<1x2x8x?xf16>, memref<1x2x8x?xf16>,
                     memref<1x2x8x?xf16>) outs(%o : memref<1x2x8x?xf16>)
  return
}

// -----

// Block sizes out of range: a pass-option error, reported once, without a
// location (RUN lines 2 to 6; with valid options this function tiles). BLOCK_N and
// BLOCK_M have upper bounds (block-n=1024 took 88 s).
// BLOCKM: attn-opt: error: attn-tile: block-m must be in [1, 1024] and block-n in [1, 256] (or 0: per D), but got block-m=-3 block-n=8
// BLOCKN: attn-opt: error: attn-tile: block-m must be in [1, 1024] and block-n in [1, 256] (or 0: per D), but got block-m=16 block-n=-4
// BIGN: attn-opt: error: attn-tile: {{.*}} but got block-m=16 block-n=1024
// BIGM: attn-opt: error: attn-tile: {{.*}} but got block-m=2048 block-n=16
// HUGE: attn-opt: error: attn-select-config: {{.*}} but got block-m=16 block-n=9223372036854775807
// COMBINEM: attn-opt: error: attn-tile: combine-block-m must be in [1, 1024] (or 0: block-m), but got -1
// The host lowering unrolls BLOCK_N keys over BLOCK_M rows (128 x 128: 22 s, 3 GB).
// UNROLL: attn-tile-invalid.mlir:[[# @LINE + 4]]:3: error: attn-online-softmax unrolls block_n (128) keys over the tile's 128 rows, but at most 4096 key-rows per block compile in reasonable time; use smaller tiles (e.g. block-m=64 block-n=64)
// BLOCKM-NOT: attn.load_tile
func.func @valid(%q: memref<1x2x40x16xf16>, %k: memref<1x2x40x16xf16>,
                 %v: memref<1x2x40x16xf16>, %o: memref<1x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x40x16xf16>, memref<1x2x40x16xf16>,
                     memref<1x2x40x16xf16>) outs(%o : memref<1x2x40x16xf16>)
  return
}

// -----

// The split-KV ops need a static D as well (their tiles are vector<BM x D>).
func.func @partial_dynamic_head_dim(%q: memref<1x2x1x?xf16>, %k: memref<1x2x8x?xf16>,
                                    %op: memref<2x1x2x1x?xf32>, %lp: memref<2x1x2x1xf32>) {
  // expected-error @+1 {{attn-tile needs a static head dim D}}
  attn.partial_attention ins(%q, %k, %k : memref<1x2x1x?xf16>, memref<1x2x8x?xf16>,
                             memref<1x2x8x?xf16>)
      outs(%op, %lp : memref<2x1x2x1x?xf32>, memref<2x1x2x1xf32>)
  return
}

// -----

func.func @combine_dynamic_head_dim(%op: memref<2x1x2x1x?xf32>, %lp: memref<2x1x2x1xf32>,
                                    %o: memref<1x2x1x?xf16>) {
  // expected-error @+1 {{attn-tile needs a static head dim D}}
  attn.decode_combine ins(%op, %lp : memref<2x1x2x1x?xf32>, memref<2x1x2x1xf32>)
      outs(%o : memref<1x2x1x?xf16>)
  return
}

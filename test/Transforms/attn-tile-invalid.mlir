// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=0 block-n=8" 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=-4" 2>&1 | FileCheck %s --check-prefix=BLOCKN

// Errors of attn-tile (lib/Transforms/AttnTile.cpp). Inputs the attn.attention
// verifier accepts but the tiling cannot lower yet.

// The op verifier accepts a dynamic head dim (it only range-checks a static
// D); the tile types vector<BM x D> need it static.
func.func @dynamic_head_dim(%q: memref<1x2x8x?xf16>, %k: memref<1x2x8x?xf16>,
                            %v: memref<1x2x8x?xf16>, %o: memref<1x2x8x?xf16>) {
  // expected-error @+1 {{'attn.attention' op attn-tile needs a static head dim D}}
  attn.attention ins(%q, %k, %v : memref<1x2x8x?xf16>, memref<1x2x8x?xf16>,
                     memref<1x2x8x?xf16>) outs(%o : memref<1x2x8x?xf16>)
  return
}

// -----

// FP8 (f8E4M3FN with descales) is valid attn.attention but not tiled yet.
func.func @fp8(%q: memref<1x2x8x16xf8E4M3FN>, %k: memref<1x2x8x16xf8E4M3FN>,
               %v: memref<1x2x8x16xf8E4M3FN>, %o: memref<1x2x8x16xbf16>,
               %qd: memref<1x2xf32>, %kd: memref<1x2xf32>, %vd: memref<1x2xf32>) {
  // expected-error @+1 {{'attn.attention' op FP8 inputs are not lowered yet (attn-quantize-fp8 is a later pass)}}
  attn.attention ins(%q, %k, %v : memref<1x2x8x16xf8E4M3FN>,
                     memref<1x2x8x16xf8E4M3FN>, memref<1x2x8x16xf8E4M3FN>)
                 outs(%o : memref<1x2x8x16xbf16>)
                 descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>,
                         memref<1x2xf32>)
  return
}

// -----

// Non-positive block sizes: a pass-option error, reported on the function
// (second and third RUN lines; with valid options this function tiles).
// BLOCKM: attn-tile-invalid.mlir:[[# @LINE + 3]]:1: error: attn-tile: block-m must be positive and block-n positive or 0 (per D)
// BLOCKN: attn-tile-invalid.mlir:[[# @LINE + 2]]:1: error: attn-tile: block-m must be positive and block-n positive or 0 (per D)
// BLOCKM-NOT: attn.load_tile
func.func @valid(%q: memref<1x2x40x16xf16>, %k: memref<1x2x40x16xf16>,
                 %v: memref<1x2x40x16xf16>, %o: memref<1x2x40x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x40x16xf16>, memref<1x2x40x16xf16>,
                     memref<1x2x40x16xf16>) outs(%o : memref<1x2x40x16xf16>)
  return
}

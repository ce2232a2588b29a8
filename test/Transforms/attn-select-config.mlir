// RUN: attn-opt %s --split-input-file --attn-select-config | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-select-config="path=fma" | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --split-input-file --attn-select-config="block-m=64 block-n=64 stages=2" | FileCheck %s --check-prefix=GIVEN
// RUN: attn-opt %s --split-input-file --attn-select-config="block-m=128 ping-pong=false overlap=false" | FileCheck %s --check-prefix=SERIAL

// attn-select-config records on each forward attention op the tile and the
// schedule its kernel runs (#attn.config), per D, dtype, Nq and path. The
// wgmma tile (HopperConfig.h): BLOCK_M 192 (three consumer warpgroups) for
// D <= 64 and FP8 at 64 < D <= 128 unless a static Nq pads 5% more rows,
// else 128; BLOCK_N 96 for FP8 with 192 rows, 128 for D <= 128, else 64.
// stages: 4 for one 128-byte chunk per row, else 3, fewer if Q and the
// ring exceed 227 KiB of shared memory.

// bf16, D 128: two 128-byte chunks per row; Q 32 KiB + 3 x (K 32 KiB + V
// 32 KiB) fit.
// CHECK-LABEL: func.func @bf16_d128
// CHECK: attn.attention
// CHECK: attn.config = #attn.config<block_m = 128, block_n = 128, stages = 3, consumer_warpgroups = 2, ping_pong = true, overlap = true>
// The CUDA-core path: 64 x 16, no ring.
// FMA-LABEL: func.func @bf16_d128
// FMA: attn.config = #attn.config<block_m = 64, block_n = 16, stages = 0, consumer_warpgroups = 0, ping_pong = false, overlap = false>
// Given sizes: one consumer warpgroup (no ping-pong), two stages (no overlap).
// GIVEN-LABEL: func.func @bf16_d128
// GIVEN: attn.config = #attn.config<block_m = 64, block_n = 64, stages = 2, consumer_warpgroups = 1, ping_pong = false, overlap = false>
// SERIAL-LABEL: func.func @bf16_d128
// SERIAL: attn.config = #attn.config<block_m = 128, block_n = 128, stages = 3, consumer_warpgroups = 2, ping_pong = false, overlap = false>
func.func @bf16_d128(%q: memref<1x8x1024x128xbf16>, %o: memref<1x8x1024x128xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x8x1024x128xbf16>, memref<1x8x1024x128xbf16>,
                     memref<1x8x1024x128xbf16>) outs(%o : memref<1x8x1024x128xbf16>)
  return
}

// -----

// bf16, D 64, Nq 4096: 192-row blocks pad 4224 rows, within 5% of 4096;
// one chunk per row: 4 stages.
// CHECK-LABEL: func.func @bf16_d64_long
// CHECK: attn.config = #attn.config<block_m = 192, block_n = 128, stages = 4, consumer_warpgroups = 3, ping_pong = true, overlap = true>
// SERIAL-LABEL: func.func @bf16_d64_long
// SERIAL: attn.config = #attn.config<block_m = 128, block_n = 128, stages = 4, consumer_warpgroups = 2, ping_pong = false, overlap = false>
func.func @bf16_d64_long(%q: memref<1x2x4096x64xbf16>, %o: memref<1x2x4096x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x2x4096x64xbf16>, memref<1x2x4096x64xbf16>,
                     memref<1x2x4096x64xbf16>) outs(%o : memref<1x2x4096x64xbf16>)
  return
}

// -----

// bf16, D 64, Nq 1024 (GPT-2): 192-row blocks would compute 1152 rows, 12.5%
// more: 128.
// CHECK-LABEL: func.func @bf16_d64_gpt2
// CHECK: attn.config = #attn.config<block_m = 128, block_n = 128, stages = 4, consumer_warpgroups = 2, ping_pong = true, overlap = true>
func.func @bf16_d64_gpt2(%q: memref<1x12x1024x64xbf16>, %o: memref<1x12x1024x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x12x1024x64xbf16>, memref<1x12x1024x64xbf16>,
                     memref<1x12x1024x64xbf16>) outs(%o : memref<1x12x1024x64xbf16>)
  return
}

// -----

// bf16, D 256: BLOCK_N 64; Q 64 KiB leaves room for two stages of 64 KiB
// (no overlap).
// CHECK-LABEL: func.func @bf16_d256
// CHECK: attn.config = #attn.config<block_m = 128, block_n = 64, stages = 2, consumer_warpgroups = 2, ping_pong = true, overlap = false>
func.func @bf16_d256(%q: memref<1x2x512x256xbf16>, %o: memref<1x2x512x256xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x2x512x256xbf16>, memref<1x2x512x256xbf16>,
                     memref<1x2x512x256xbf16>) outs(%o : memref<1x2x512x256xbf16>)
  return
}

// -----

// FP8 (e4m3), D 128, Nq 384: three warpgroups of 96-key blocks; one
// 128-column chunk per row, O staged in bf16 beside Q: 4 stages.
// CHECK-LABEL: func.func @fp8_d128
// CHECK: attn.config = #attn.config<block_m = 192, block_n = 96, stages = 4, consumer_warpgroups = 3, ping_pong = true, overlap = true>
!q8 = memref<1x2x384x128xf8E4M3FN>
!v8 = memref<1x2x384x128xf8E4M3FN, strided<[98304, 49152, 1, 384]>>
func.func @fp8_d128(%q: !q8, %v: !v8, %o: memref<1x2x384x128xbf16>,
                    %d: memref<1x2xf32>) {
  attn.attention ins(%q, %q, %v : !q8, !q8, !v8) outs(%o : memref<1x2x384x128xbf16>)
      descale(%d, %d, %d : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// -----

// Varlen: Nq is per sequence, so D 64 takes the 192-row tile.
// CHECK-LABEL: func.func @varlen
// CHECK: attn.varlen_attention
// CHECK: attn.config = #attn.config<block_m = 192, block_n = 128, stages = 4, consumer_warpgroups = 3, ping_pong = true, overlap = true>
func.func @varlen(%q: memref<?x4x64xbf16>, %k: memref<?x2x64xbf16>, %cu: memref<?xi32>,
                  %max: index, %o: memref<?x4x64xbf16>) {
  attn.varlen_attention ins(%q, %k, %k : memref<?x4x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>)
      seqlens(%cu, %cu : memref<?xi32>, memref<?xi32>) max(%max, %max)
      outs(%o : memref<?x4x64xbf16>)
  return
}

// -----

// Split-KV's partial attention gets a config too (attn-to-cubin asks for
// BLOCK_M 64); an op that has one keeps it.
// CHECK-LABEL: func.func @partial_and_kept
// CHECK: attn.partial_attention
// CHECK: attn.config = #attn.config<block_m = 128, block_n = 128, stages = 3, consumer_warpgroups = 2, ping_pong = true, overlap = true>
// CHECK: attn.attention
// CHECK: attn.config = #attn.config<block_m = 64, block_n = 32, stages = 2, consumer_warpgroups = 1, ping_pong = false, overlap = false>
func.func @partial_and_kept(%q: memref<2x4x3x128xf16>, %k: memref<2x2x37x128xf16>,
                            %op: memref<3x2x4x3x128xf32>, %lp: memref<3x2x4x3xf32>,
                            %o: memref<2x4x3x128xf16>) {
  attn.partial_attention ins(%q, %k, %k : memref<2x4x3x128xf16>, memref<2x2x37x128xf16>,
                             memref<2x2x37x128xf16>)
      outs(%op, %lp : memref<3x2x4x3x128xf32>, memref<3x2x4x3xf32>)
  attn.attention ins(%q, %k, %k : memref<2x4x3x128xf16>, memref<2x2x37x128xf16>,
                     memref<2x2x37x128xf16>) outs(%o : memref<2x4x3x128xf16>)
      {attn.config = #attn.config<block_m = 64, block_n = 32, stages = 2, consumer_warpgroups = 1, ping_pong = false, overlap = false>}
  return
}

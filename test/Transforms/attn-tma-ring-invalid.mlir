// Every error attn-async-pipeline can raise, located on the attention op
// whose CTA loop it rewrites.
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=32 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=BM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=256 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=BM4
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=192 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=consumer-registers=240 --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=BUDGET3
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=192 block-n=144" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=ACC3
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=24" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=BN
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=stages=1 --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=consumer-registers=250 --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=producer-registers=20 --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=PREGS
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring="producer-registers=40 consumer-registers=256" --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-distribute-rows --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=256" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-tma-ring --attn-fp8-v-permute --attn-persistent-ctas=ctas=-1 2>&1 | FileCheck %s --check-prefix=PERS
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=192 block-n=64 pack-gqa=true" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=PACK3

func.func @d64(%q: memref<1x2x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
               %v: memref<1x2x256x64xbf16>, %o: memref<1x2x256x64xbf16>) {
  // BM: attn-tma-ring-invalid.mlir:[[# @LINE + 10]]:3: error: attn-tma-ring: BLOCK_M must be 64, 128 or 192 (one to three consumer warpgroups of 64 rows), but got 32
  // BM4: error: attn-tma-ring: BLOCK_M must be 64, 128 or 192 (one to three consumer warpgroups of 64 rows), but got 256
  // ACC3: error: attn-tma-ring: with three consumer warpgroups (BLOCK_M 192) ptxas has 128 registers per thread, room for 96 S and O accumulators (BLOCK_N / 2 + D / 2) beside 16-bit P, but BLOCK_N 144 and D 64 need 104; use BLOCK_M 128 or a smaller BLOCK_N
  // BUDGET3: attn-tma-ring-invalid.mlir:[[# @LINE + 7]]:3: error: attn-tma-ring: producer-registers 24 and consumer-registers 240 for 3 consumer warpgroups (BLOCK_M 192) need 95232 registers per CTA, but an SM has 65536
  // BN: attn-tma-ring-invalid.mlir:[[# @LINE + 6]]:3: error: attn-tma-ring: BLOCK_N must be a multiple of 16 up to 256, but got 24
  // STAGES: error: attn-tma-ring: stages must be 0 (chosen per D) or at least 2, but got 1
  // REGS: attn-opt: error: attn-tma-ring: consumer-registers must be a multiple of 8 in [24, 256] (setmaxnreg), or 0: per BLOCK_M, but got 250
  // BUDGET: error: attn-tma-ring: producer-registers 40 and consumer-registers 256 for 2 consumer warpgroups (BLOCK_M 128) need 70656 registers per CTA, but an SM has 65536
  // PERS: attn-opt: error: attn-persistent-ctas: ctas must be a CTA count in [1, 2^31 - 1], but got -1
  // ORDER: error: attn-tma-ring: the CTA loop is already mapped to threads (attn-distribute-rows); run attn-tma-ring instead of attn-distribute-rows
  attn.attention ins(%q, %k, %v : memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>)
                 outs(%o : memref<1x2x256x64xbf16>) {causal}
  // PREGS: attn-opt: error: attn-tma-ring: producer-registers must be a multiple of 8 in [24, 256] (setmaxnreg), or 0: 24, or for FP8 and paged K/V what the consumers leave, but got 20
  return
}

// -----

// D = 256 in four chunks: Q is 64 KiB, a 256-key stage of K or V 128 KiB.
func.func @d256(%q: memref<1x2x256x256xbf16>, %k: memref<1x2x256x256xbf16>,
                %v: memref<1x2x256x256xbf16>, %o: memref<1x2x256x256xbf16>) {
  // SMEM: error: attn-tma-ring: Q and two K/V stages need 589824 bytes of shared memory, more than the 232448 a CTA may use; use a smaller block-n
  attn.attention ins(%q, %k, %v : memref<1x2x256x256xbf16>, memref<1x2x256x256xbf16>, memref<1x2x256x256xbf16>)
                 outs(%o : memref<1x2x256x256xbf16>)
  return
}

// -----

// persistent-ctas re-creates the CTA body's per-tile values in each tile
// loop; a per-tile op with side effects (here a store a hand-written nest
// adds) cannot be re-run there.
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split \
// RUN:   | sed -e 's/^\( *\)\(%[0-9]* = attn.load_tile %arg0\[%arg7, %arg6, \)\(%[0-9]*\)\(.*\)$/\1memref.store %cst_side, %arg4[%arg7, %arg6, \3] : memref<1x4x256xf32>\n\1\2\3\4/' \
// RUN:   -e 's/^\( *\)\(scf.forall\)/\1%cst_side = arith.constant 0.0 : f32\n\1\2/' \
// RUN:   | not attn-opt --split-input-file --attn-tma-ring --attn-fp8-v-permute --attn-persistent-ctas=ctas=132 2>&1 | FileCheck %s --check-prefix=SIDE
// SIDE: error: attn-persistent-ctas: re-creates the per-tile values of the CTA body, which must be free of side effects
func.func @side(%q: memref<1x4x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
                %v: memref<1x2x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x256x64xbf16>, memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>)
                 outs(%o : memref<1x4x256x64xbf16>) lse(%lse : memref<1x4x256xf32>) {causal}
  return
}

// -----

// FP8 reads V as V^T (unit stride along Nk): a row-major V is refused, as
// is a BLOCK_N that is not a whole number of k32 steps of P V.
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=FP8V
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=144" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=FP8BN
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute 2>&1 | FileCheck %s --check-prefix=PAGE
// FP8V: error: attn-tma-ring: FP8 on tensor cores reads V as V^T: operand 'v' needs unit stride along Nk (stored [B, Hkv, D, Nk]), but got 'memref<1x2x256x128xf8E4M3FN>'
// FP8BN: error: attn-tma-ring: FP8 needs BLOCK_N a multiple of 32 (whole k32 steps of P V), but got 144
func.func @fp8_row_major_v(%q: memref<1x2x256x128xf8E4M3FN>, %k: memref<1x2x256x128xf8E4M3FN>,
                           %v: memref<1x2x256x128xf8E4M3FN>, %o: memref<1x2x256x128xbf16>,
                           %d: memref<1x2xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x256x128xf8E4M3FN>, memref<1x2x256x128xf8E4M3FN>, memref<1x2x256x128xf8E4M3FN>)
                 outs(%o : memref<1x2x256x128xbf16>)
                 descale(%d, %d, %d : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// -----

!vt = memref<1x2x256x128xf8E4M3FN, strided<[65536, 32768, 1, 256]>>
func.func @fp8_block_n(%q: memref<1x2x256x128xf8E4M3FN>, %k: memref<1x2x256x128xf8E4M3FN>,
                       %v: !vt, %o: memref<1x2x256x128xbf16>, %d: memref<1x2xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x256x128xf8E4M3FN>, memref<1x2x256x128xf8E4M3FN>, !vt)
                 outs(%o : memref<1x2x256x128xbf16>)
                 descale(%d, %d, %d : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// -----

// A group of 3 query heads per KV head does not divide a warpgroup's 64 rows.
func.func @group3(%q: memref<1x6x64x64xbf16>, %k: memref<1x2x64x64xbf16>,
                  %o: memref<1x6x64x64xbf16>) {
  // PACK3: error: attn-tma-ring: GQA packing needs the group size Hq / Hkv to divide 64 (a warpgroup's rows hold whole queries), but got 3
  attn.attention ins(%q, %k, %k : memref<1x6x64x64xbf16>, memref<1x2x64x64xbf16>,
                     memref<1x2x64x64xbf16>) outs(%o : memref<1x6x64x64xbf16>)
  return
}

// -----

// Paged K/V: pages of 12 tokens neither hold whole 64-key blocks nor keep
// the 128-byte swizzle's 8-row period; pages of 128 and of 8 would.
func.func @page12(%q: memref<1x4x1x64xbf16>, %k: memref<?x12x4x64xbf16>,
                  %o: memref<1x4x1x64xbf16>, %t: memref<1x?xi32>, %n: memref<1xi32>) {
  // PAGE: error: attn-tma-ring: paged K/V needs a static page_size that is a multiple of BLOCK_N (64) or a multiple of 8 dividing it, but got 12 (BLOCK_N is attn-tile's block-n: attn-compile --block-n, a spec's block_n)
  attn.attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<?x12x4x64xbf16>,
                     memref<?x12x4x64xbf16>) outs(%o : memref<1x4x1x64xbf16>)
      paged(%t, %n : memref<1x?xi32>, memref<1xi32>)
  return
}

// -----

// A dynamic page size cannot size the TMA boxes.
func.func @page_dynamic(%q: memref<1x4x1x64xbf16>, %k: memref<?x?x4x64xbf16>,
                        %o: memref<1x4x1x64xbf16>, %t: memref<1x?xi32>, %n: memref<1xi32>) {
  // PAGE: error: attn-tma-ring: paged K/V needs a static page_size that is a multiple of BLOCK_N (64) or a multiple of 8 dividing it, but got ? (BLOCK_N is attn-tile's block-n: attn-compile --block-n, a spec's block_n)
  attn.attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<?x?x4x64xbf16>,
                     memref<?x?x4x64xbf16>) outs(%o : memref<1x4x1x64xbf16>)
      paged(%t, %n : memref<1x?xi32>, memref<1xi32>)
  return
}

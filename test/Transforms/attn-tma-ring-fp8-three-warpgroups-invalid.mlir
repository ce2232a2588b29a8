// RUN: attn-opt %s --attn-tile="block-m=192 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute -verify-diagnostics -o /dev/null
// RUN: attn-opt %s --attn-tile="block-m=192 block-n=96" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute -o /dev/null

// Three FP8 consumer warpgroups (BLOCK_M 192) at D = 128: e4m3 P packs four
// keys per register, so S and O may take 112 of ptxas's 128 registers
// (BLOCK_N 96: 48 + 64, the default tile), not BLOCK_N 128's 64 + 64
// (600 B of spills).

!q = memref<1x2x384x128xf8E4M3FN>
!vt = memref<1x2x384x128xf8E4M3FN, strided<[98304, 49152, 1, 384]>>
!o = memref<1x2x384x128xbf16>
func.func @fp8_d128(%q: !q, %k: !q, %v: !vt, %o: !o, %qd: memref<1x2xf32>,
                    %kd: memref<1x2xf32>, %vd: memref<1x2xf32>) {
  // expected-error @+1 {{attn-tma-ring: with three consumer warpgroups (BLOCK_M 192) ptxas has 128 registers per thread, room for 112 S and O accumulators (BLOCK_N / 2 + D / 2) beside e4m3 P, but BLOCK_N 128 and D 128 need 128; use BLOCK_M 128 or a smaller BLOCK_N}}
  attn.attention ins(%q, %k, %v : !q, !q, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma=fp8-p-scale-log2=0 | FileCheck %s --check-prefix=NOSCALE
// RUN: not attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline --attn-lower-to-wgmma=fp8-p-scale-log2=9 2>&1 | FileCheck %s --check-prefix=BADSCALE
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma=fp8-poly-exp2=4 | FileCheck %s --check-prefix=POLY
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma | FileCheck %s --check-prefix=NOPOLY
// RUN: not attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline --attn-lower-to-wgmma=fp8-poly-exp2=-1 2>&1 | FileCheck %s --check-prefix=BADPOLY
// RUN: attn-opt %s --attn-tile="block-m=128 block-n=192" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma | FileCheck %s --check-prefix=BN192

// FP8 on the tensor cores (FlashAttention-3 section 3.3; PTX ISA wgmma register
// layouts), D = 128, BLOCK_N = 128, serial schedule:
//  * S = Q K^T: four e4m3 wgmma m64n128k32 (32 bytes of the 128-byte rows
//    per step), the first overwriting the accumulator;
//  * the softmax folds qk_descale into the exp2 factor and adds 8 to the
//    exp2 argument (P * 2^8, so small probabilities survive e4m3; the
//    option fp8-p-scale-log2 sets the 8, 0 turns it off);
//  * P -> e4m3 A registers: per 16 keys and row half, two satfinite cvts
//    make this thread's word of keys 2q, 2q + 1, 8 + 2q, 9 + 2q, used as
//    it is (attn-async-pipeline gave V^T's keys the same order): no data
//    crosses threads;
//  * O += P V: four register-A e4m3 wgmma k32 on V^T (K-major, no
//    transpose immediate);
//  * the epilogue multiplies 1 / l by v_descale and subtracts the 8 from
//    LSE's log2.
// BLOCK_N 192: S is four m64n192k32 wgmmas; P V six register-A k32 steps,
// the last two on V^T's second 128-key row (D * 128 = 16384 bytes on, then
// 32 more).
// BN192-LABEL: func.func @fp8
// BN192-COUNT-4:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 192, k = 32>
//       BN192:     arith.constant 16384 : i64
//       BN192:     arith.constant 16416 : i64
// BN192-COUNT-6:   wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// CHECK-LABEL: func.func @fp8
//       CHECK:   %[[QK:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
//       CHECK:   %[[VD:.*]] = memref.load %arg6
//       CHECK:     nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-COUNT-3:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
//       CHECK:     %[[C:.*]] = arith.mulf %{{.*}}, %[[QK]] : f32
//       CHECK:     %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
//       CHECK:     %[[NEG:.*]] = arith.subf %[[EIGHT]], %{{.*}} : f32
//       CHECK:     %[[ARG:.*]] = llvm.intr.fma(%{{.*}}, %[[C]], %[[NEG]])
//       CHECK:     llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[ARG]])
//       CHECK:     %[[LO:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
//       CHECK:     %[[HI:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
//       CHECK:     %[[HIW:.*]] = arith.extui %[[HI]] : i16 to i32
//       CHECK:     %[[SH:.*]] = arith.shli %[[HIW]], %{{.*}} : i32
//       CHECK:     arith.ori %{{.*}}, %[[SH]] : i32
// 64 f32 S registers: 16 words, 32 cvts, nothing exchanged.
// CHECK-COUNT-30:  nvvm.convert.f32x2.to.f8x2
//   CHECK-NOT:     gpu.shuffle  idx
//   CHECK-NOT:     nvvm.prmt
// CHECK-COUNT-4:   llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {$128, $129, $130, $131}, $132, 1, 1, 1;"
//       CHECK:   arith.mulf %{{.*}}, %[[VD]] : f32
//       CHECK:   %[[L2:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK:   arith.subf %[[L2]], %{{.*}} : f32
// NOSCALE-NOT: arith.constant 8.000000e+00 : f32
// NOSCALE:     arith.negf
// With fp8-poly-exp2=4 one in four of P's exponentials (registers 3, 7,
// ..) is a polynomial on the FMA pipe (by default none is): x = max(x, -126), t = x + 1.5 * 2^23 (rint),
// f = x - (t - 1.5 * 2^23), p = (c2 f + c1) f + c0, bits(p) + (bits(t) << 23).
// POLY-LABEL: func.func @fp8
// POLY-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
//      POLY:    %[[LOW:.*]] = arith.constant -1.260000e+02 : f32
//      POLY:    %[[X:.*]] = llvm.intr.maxnum(%{{.*}}, %[[LOW]])
//      POLY:    %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
//      POLY:    %[[T:.*]] = arith.addf %[[X]], %[[MAGIC]] : f32
//      POLY:    %[[J:.*]] = arith.subf %[[T]], %[[MAGIC]] : f32
//      POLY:    %[[F:.*]] = arith.subf %[[X]], %[[J]] : f32
//      POLY:    %[[P1:.*]] = llvm.intr.fma(%[[F]], %{{.*}}, %{{.*}})
//      POLY:    %[[P:.*]] = llvm.intr.fma(%[[P1]], %[[F]], %{{.*}})
//      POLY:    %[[TB:.*]] = arith.bitcast %[[T]] : f32 to i32
//      POLY:    %[[E:.*]] = arith.shli %[[TB]], %{{.*}} : i32
//      POLY:    %[[PB:.*]] = arith.bitcast %[[P]] : f32 to i32
//      POLY:    %[[B:.*]] = arith.addi %[[PB]], %[[E]] : i32
//      POLY:    arith.bitcast %[[B]] : i32 to f32
// NOPOLY-LABEL: func.func @fp8
// NOPOLY-COUNT-4: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// NOPOLY-NOT:  arith.constant 0x4B400000 : f32
// BADPOLY: error: attn-lower-to-wgmma: fp8-poly-exp2 must be >= 0 (0: every exponential on MUFU), but got -1
// BADSCALE: error: attn-lower-to-wgmma: fp8-p-scale-log2 must be in [0, 8] (P * 2^8 <= 256 stays below e4m3's 448), but got 9
!q = memref<1x4x256x128xf8E4M3FN>
!k = memref<1x2x256x128xf8E4M3FN>
!v = memref<1x2x256x128xf8E4M3FN, strided<[65536, 32768, 1, 256]>>
!o = memref<1x4x256x128xbf16>
!d = memref<1x2xf32>
func.func @fp8(%q: !q, %k: !k, %v: !v, %o: !o, %qd: !d, %kd: !d, %vd: !d,
               %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : !q, !k, !v) outs(%o : !o)
                 lse(%lse : memref<1x4x256xf32>)
                 descale(%qd, %kd, %vd : !d, !d, !d)
  return
}

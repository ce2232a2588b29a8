// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=false ping-pong=false" --attn-lower-to-wgmma | FileCheck %s

// FP8 on the tensor cores (FlashAttention-3 section 3.3; HOPPER.md register
// layouts), D = 128, BLOCK_N = 128, serial schedule:
//  * S = Q K^T: four e4m3 wgmma m64n128k32 (32 bytes of the 128-byte rows
//    per step), the first overwriting the accumulator;
//  * the softmax folds qk_descale into the exp2 factor and adds 8 to the
//    exp2 argument (P * 2^8, so small probabilities survive e4m3);
//  * P -> e4m3 A registers: per 16 keys and row half, two satfinite cvts
//    make this thread's word, the quad exchanges words (two idx shuffles)
//    and a byte permute keeps the two pairs this thread's keys need;
//  * O += P V: four register-A e4m3 wgmma k32 on V^T (K-major, no
//    transpose immediate);
//  * the epilogue multiplies 1 / l by v_descale and subtracts the 8 from
//    LSE's log2.
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
//       CHECK:     %[[WORD:.*]] = arith.ori
//       CHECK:     %[[Y:.*]], %{{.*}} = gpu.shuffle  idx %[[WORD]], %{{.*}}, %{{.*}} : i32
//       CHECK:     %[[X:.*]], %{{.*}} = gpu.shuffle  idx %[[WORD]], %{{.*}}, %{{.*}} : i32
//       CHECK:     nvvm.prmt <default> %{{.*}}, %[[X]], %[[Y]] : i32
// 64 f32 S registers: 16 words, 32 shuffles.
// CHECK-COUNT-15:  nvvm.prmt
//   CHECK-NOT:     nvvm.prmt
// CHECK-COUNT-4:   llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {$128, $129, $130, $131}, $132, 1, 1, 1;"
//       CHECK:   arith.mulf %{{.*}}, %[[VD]] : f32
//       CHECK:   %[[L2:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK:   arith.subf %[[L2]], %{{.*}} : f32
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

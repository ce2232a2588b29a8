// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=128" --attn-causal-split --attn-tma-ring --attn-fp8-v-permute --attn-persistent-ctas=ctas=132 | FileCheck %s --check-prefix=PERS
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute --attn-lower-to-wgmma | FileCheck %s --check-prefix=WGMMA

// Per-block FP8 descales on the tensor-core path (attn-quantize-fp8's
// default qk-granularity=block): a scale block of Q is BLOCK_M = 128 rows of
// one query head and one of K is BLOCK_N = 128 keys of one KV head, so a
// CTA's rows share one Q descale and a K/V block's keys one K descale. The
// step's per-row and per-key descales (attn.load_rows with row_block)
// become scalars, their product the step's qk_descale, folded into the
// exp2 scale as with per-head descales:
//   qd = q_descale[b, h, q_pos / 128]            once per CTA
//   kd = k_descale[b, kv_head, k_pos / 128]      per K/V block
//   qk_descale = qd * kd
// Nq = Nk = 256, Hq = 2, Hkv = 1: Q descales [1, 2, 2], K [1, 1, 2].
// CHECK-LABEL: func.func @blocks
//  CHECK-SAME:   %[[QD:[a-z0-9]+]]: memref<1x2x2xf32>, %[[KD:[a-z0-9]+]]: memref<1x1x2xf32>, %[[VD:[a-z0-9]+]]: memref<1x1xf32>
//       CHECK:   scf.forall (%[[QB0:[a-z0-9]+]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in
// (Causal: the CTA's tile is rebound, the last Q block of every head first;
// test/Transforms/attn-tma-ring.mlir.)
//       CHECK:     %[[POS:.*]] = arith.addi %[[QB0]], %{{.*}} : index
//       CHECK:     %[[ROUND:.*]] = arith.divui %[[POS]], %{{.*}} : index
//       CHECK:     %[[QB:.*]] = arith.subi %{{.*}}, %[[ROUND]] : index
//       CHECK:     %[[REST:.*]] = arith.remui %[[POS]], %{{.*}} : index
//       CHECK:     %[[H:.*]] = arith.remui %[[REST]], %c2{{.*}} : index
//       CHECK:     %[[B:.*]] = arith.divui %[[REST]], %c2{{.*}} : index
//       CHECK:     %[[QPOS:.*]] = arith.muli %[[QB]], %c128{{.*}}
//       CHECK:     %[[HKV:.*]] = arith.divui %[[H]], %c2
//       CHECK:     memref.load %[[VD]][%[[B]], %[[HKV]]]
//   CHECK-NOT:     attn.load_rows
//       CHECK:     %[[QI:.*]] = arith.divui %[[QPOS]], %c128{{.*}}
//       CHECK:     %[[Q:.*]] = memref.load %[[QD]][%[[B]], %[[H]], %[[QI]]] : memref<1x2x2xf32>
//       CHECK:     attn.warp_specialize
//       CHECK:     } consumer {
// Blocks below the diagonal, then the diagonal block (causal): each K/V
// block loads its K descale.
//       CHECK:       scf.for %[[KB:[a-z0-9]+]] =
//       CHECK:         %[[KPOS:.*]] = arith.muli %[[KB]], %c128{{.*}}
//       CHECK:         %[[KI:.*]] = arith.divui %[[KPOS]], %c128{{.*}}
//       CHECK:         %[[K:.*]] = memref.load %[[KD]][%[[B]], %[[HKV]], %[[KI]]] : memref<1x1x2xf32>
//       CHECK:         %[[QK:.*]] = arith.mulf %[[Q]], %[[K]] : f32
//       CHECK:         attn.online_attention_mma {{.*}} descale(%[[QK]]) state
//       CHECK:       scf.for %[[KB:[a-z0-9]+]] =
//       CHECK:         memref.load %[[KD]]
//       CHECK:         %[[QK:.*]] = arith.mulf %[[Q]], %{{.*}} : f32
//       CHECK:         attn.online_attention_mma {{.*}} descale(%[[QK]]) state({{.*}}) {{{.*}}mask = #attn.mask<causal>
//   CHECK-NOT:   attn.load_rows
// Persistent CTAs re-load the Q descale of each tile they visit. FP8
// stages O in a buffer of its own, so the consumers release Q (the Q-empty
// barrier, 256 arrivals) after the K/V loops, before the epilogue: the
// producer loads the next tile's Q while the epilogue runs.
// PERS-LABEL: func.func @blocks
//       PERS:   nvgpu.mbarrier.init %[[QEMPTY:[0-9]+]][%{{.*}}], %c256{{.*}} : <memorySpace = #gpu.address_space<workgroup>>
//       PERS:   } consumer {
//       PERS:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step
//       PERS:       %[[QI:.*]] = arith.divui %{{.*}}, %c128{{.*}}
//       PERS:       %[[Q:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[QI]]] : memref<1x2x2xf32>
//       PERS:       scf.for
//       PERS:         memref.load %{{.*}} : memref<1x1x2xf32>
//       PERS:         arith.mulf %[[Q]], %{{.*}} : f32
//       PERS:       } {attn.stage = "masked"}
//  PERS-NEXT:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  PERS-NEXT:       nvgpu.mbarrier.arrive %[[QEMPTY]]
//  PERS-NEXT:       attn.epilogue
// attn-lower-to-wgmma: each K/V block's softmax scales S by
// c = scale * log2(e) * qk_descale, its own block's product (0.1275 =
// log2(e) / sqrt(128)).
// WGMMA-LABEL: func.func @blocks
//       WGMMA:   %[[Q:.*]] = memref.load %{{.*}} : memref<1x2x2xf32>
//       WGMMA:   scf.for
//       WGMMA:     %[[K:.*]] = memref.load %{{.*}} : memref<1x1x2xf32>
//       WGMMA:     %[[QK:.*]] = arith.mulf %[[Q]], %[[K]] : f32
//       WGMMA:     %[[C:.*]] = arith.constant 0.127517432 : f32
//       WGMMA:     arith.mulf %[[C]], %[[QK]] : f32
//       WGMMA:     llvm.intr.maxnum
!q = memref<1x2x256x128xf8E4M3FN>
!k = memref<1x1x256x128xf8E4M3FN>
!vt = memref<1x1x256x128xf8E4M3FN, strided<[32768, 32768, 1, 256]>>
!o = memref<1x2x256x128xbf16>
func.func @blocks(%q: !q, %k: !k, %v: !vt, %o: !o, %qd: memref<1x2x2xf32>,
                  %kd: memref<1x1x2xf32>, %vd: memref<1x1xf32>) {
  attn.attention ins(%q, %k, %v : !q, !k, !vt) outs(%o : !o)
                 descale(%qd, %kd, %vd : memref<1x2x2xf32>, memref<1x1x2xf32>, memref<1x1xf32>)
                 {causal, q_descale_block = 128 : i64, k_descale_block = 128 : i64}
  return
}

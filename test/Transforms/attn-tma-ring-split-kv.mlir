// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-tma-store --canonicalize | FileCheck %s --check-prefix=TS
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128" --attn-causal-split --attn-tma-ring --attn-persistent-ctas=ctas=132 2>&1 | FileCheck %s --check-prefix=PERS

// attn-async-pipeline on split-KV's partial attention (attn-split-kv,
// attn-tile): the CTA's K/V blocks are its split's, [begin, end), so the
// producer copies blocks begin .. end - 1 and both sides number the ring by
// kb - begin (slot (kb - begin) mod stages, parity ((kb - begin) / stages)
// mod 2): a split starts on a fresh ring like a whole CTA. O is the fp32
// workspace: the epilogue takes no staging tile (attn-lower-to-wgmma
// stores the accumulator from the registers).
// S = 3 splits of Nk = 1000: NB = 8 blocks of 128, P = 3.
// CHECK-LABEL: func.func @partial
//       CHECK:   scf.forall (%[[X:.*]], %[[H:.*]], %{{.*}}) in (3, 4, 1) {
//       CHECK:     %[[S:.*]] = arith.remui %[[X]], %c3 : index
//       CHECK:     %[[SP:.*]] = arith.muli %[[S]], %c3 : index
//       CHECK:     %[[BEGIN:.*]] = arith.minui %[[SP]], %c8 : index
//       CHECK:     %[[BP:.*]] = arith.addi %[[BEGIN]], %c3 : index
//       CHECK:     %[[SEND:.*]] = arith.minui %[[BP]], %c8 : index
//       CHECK:     %[[OS:.*]] = memref.subview %arg2[%[[S]], 0, 0, 0, 0]
//       CHECK:     %[[LS:.*]] = memref.subview %arg3[%[[S]], 0, 0, 0]
// The causal stages clamped to the split (attn-causal-split).
//       CHECK:     %[[FULLEND:.*]] = arith.minsi %{{.*}}, %[[SEND]] : index
//       CHECK:     %[[MASKEND:.*]] = arith.minsi %{{.*}}, %[[SEND]] : index
//       CHECK:     %[[END:.*]] = arith.maxsi %[[MASKEND]], %[[FULLEND]] : index
//       CHECK:     attn.warp_specialize consumers(1)
//       CHECK:       scf.for %[[KB:.*]] = %[[BEGIN]] to %[[END]] step %c1 {
//       CHECK:         %[[RING:.*]] = arith.subi %[[KB]], %[[BEGIN]] : index
//       CHECK:         %[[SLOT:.*]] = arith.remui %[[RING]], %c4 : index
//       CHECK:         nvgpu.mbarrier.try_wait.parity %{{.*}}[%[[SLOT]]]
//       CHECK:         %[[ROW:.*]] = arith.muli %[[KB]], %c128 : index
//       CHECK:         nvgpu.tma.async.load %{{.*}}[%c0, %[[ROW]], %{{.*}}, %c0]
//       CHECK:     } consumer {
//       CHECK:       scf.for %[[KB2:.*]] = %[[BEGIN]] to %[[FULLEND]] step %c1
//       CHECK:         %[[RING2:.*]] = arith.subi %[[KB2]], %[[BEGIN]] : index
//       CHECK:         arith.remui %[[RING2]], %c4 : index
//       CHECK:       } {attn.stage = "full"}
//       CHECK:       scf.for %{{.*}} = %[[FULLEND]] to %[[END]] step %c1
//       CHECK:       } {attn.stage = "masked"}
//       CHECK:       attn.epilogue {{.*}} to %[[OS]], lse %[[LS]][%c0, %[[H]], %{{.*}}, %c0] : memref<1x4x1x64xf32, {{.*}}>, memref<1x4x1xf32, {{.*}}>
//   CHECK-NOT:       staging
// TS-LABEL: func.func @partial
//   TS-NOT:   tma_store
//   TS-NOT:   staging
// PERS: error: attn-persistent-ctas: does not take split-KV (attn.partial_attention) tiles yet
func.func @partial(%q: memref<1x4x1x64xbf16>, %k: memref<1x2x1000x64xbf16>,
                   %op: memref<3x1x4x1x64xf32>, %lp: memref<3x1x4x1xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<1x2x1000x64xbf16>,
                             memref<1x2x1000x64xbf16>)
      outs(%op, %lp : memref<3x1x4x1x64xf32>, memref<3x1x4x1xf32>) {causal}
  return
}

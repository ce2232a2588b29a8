// RUN: attn-opt %s --verify-each --attn-lower-to-wgmma | FileCheck %s
// RUN: attn-opt %S/../Transforms/attn-tma-ring.mlir --split-input-file --attn-tile="block-m=192 block-n=64" --attn-causal-split --attn-async-pipeline="persistent-ctas=132 tma-store=true ping-pong=true" --attn-lower-to-wgmma | FileCheck %s --check-prefix=PERS

// The TMA-store epilogue (attn.epilogue with O's descriptor), D = 128 (two
// 64-column chunks), BLOCK_M = 128 (two consumer warpgroups).
!q = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
func.func @epilogue(%qt: !q, %o: memref<1x4x200x128xbf16>, %lse: memref<1x4x200xf32>,
                    %omap: !map, %qpos: index, %h: index) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<1.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.5> : vector<128x128xf32>
  scf.forall (%qb, %hh, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %m = attn.to_wg_fragment %m0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %l = attn.to_wg_fragment %l0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %acc = attn.to_wg_fragment %acc0 : vector<128x128xf32> to !attn.wg_fragment<128x128xf32>
      attn.epilogue state(%m, %l, %acc : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x128xf32>)
          to %o, lse %lse[%b, %h, %qpos, %c0] staging(%qt : !q) tma_store(%omap : !map)
          : memref<1x4x200x128xbf16>, memref<1x4x200xf32>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// Every thread stages its O pairs, then fences them for the async proxy
// before the warpgroup's named barrier; thread 0 of the warpgroup stores its
// 64 rows (q_pos + 64 w) chunk by chunk from [1, 1, 64, 64] views of the
// staging tile, commits the bulk group and waits until TMA has read it.
// No 16-byte st.global of O is left; LSE is still stored by the quad leaders.
// CHECK-LABEL: func.func @epilogue(
//   CHECK-SAME:     %[[Q:[a-z0-9]+]]: memref<2x128x64xbf16, #gpu.address_space<workgroup>>
//   CHECK-SAME:     %[[O:[a-z0-9]+]]: memref<1x4x200x128xbf16>
//   CHECK-SAME:     %[[MAP:[a-z0-9]+]]: !nvgpu.tensormap.descriptor
//   CHECK-SAME:     %[[QPOS:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: index
//        CHECK:   scf.forall (%{{.*}}, %{{.*}}, %[[B:.*]]) in
//        CHECK:       vector.store %{{.*}}, %[[Q]][{{.*}}] : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
//        CHECK:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//        CHECK:       arith.index_cast
//   CHECK-NEXT:       arith.constant 128
//   CHECK-NEXT:       nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
//        CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
//        CHECK:       scf.if %[[FIRST]] {
//        CHECK:         %[[WGROW:.*]] = arith.muli %{{.*}}, %c64
//        CHECK:         %[[ROW:.*]] = arith.addi %[[QPOS]], %[[WGROW]]
//        CHECK:         %[[S0:.*]] = memref.subview %[[Q]][0, %[[WGROW]], 0] [1, 64, 64] [1, 1, 1]
//        CHECK:         %[[B0:.*]] = memref.expand_shape %[[S0]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 1, 64, 64]
//        CHECK:         nvgpu.tma.async.store %[[B0]] to %[[MAP]][%c0{{.*}}, %[[ROW]], %[[H]], %[[B]]]
//        CHECK:         %[[S1:.*]] = memref.subview %[[Q]][1, %[[WGROW]], 0] [1, 64, 64] [1, 1, 1]
//        CHECK:         %[[B1:.*]] = memref.expand_shape %[[S1]]
//        CHECK:         nvgpu.tma.async.store %[[B1]] to %[[MAP]][%c64{{.*}}, %[[ROW]], %[[H]], %[[B]]]
//   CHECK-NEXT:         nvvm.cp.async.bulk.commit.group
//   CHECK-NEXT:         nvvm.cp.async.bulk.wait_group 0 {read}
//        CHECK:       }
//    CHECK-NOT:       vector.store %{{.*}}, %[[O]]
//        CHECK:       memref.store %{{.*}}, %{{.*}} : memref<1x4x200xf32>
//        CHECK:   } {attn.threads = 384 : i64, mapping

// Persistent CTAs with three consumer warpgroups: the staged O is read by TMA
// before the thread that issued the stores arrives on Q-empty (the next
// tile's Q lands in the staging tile), and every thread fences its staging
// writes before the stores.
// PERS-LABEL: func.func @causal
//       PERS:   nvgpu.mbarrier.init %[[QEMPTY:[0-9]+]][%{{.*}}], %c384
//       PERS:   scf.for
//       PERS:         nvgpu.tma.async.store
//       PERS:         nvvm.cp.async.bulk.commit.group
//  PERS-NEXT:         nvvm.cp.async.bulk.wait_group 0 {read}
//       PERS:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  PERS-NEXT:       nvgpu.mbarrier.arrive %[[QEMPTY]]

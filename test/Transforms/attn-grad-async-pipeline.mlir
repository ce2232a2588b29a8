// RUN: attn-opt %s --attn-grad-async-pipeline --cse | FileCheck %s
// RUN: sed 's/128xbf16/64xbf16/g' %s | attn-opt --attn-grad-async-pipeline="stages=4" | FileCheck %s --check-prefix=STAGES

// The tensor-core backward of a causal GQA call with tails (Hq 2, Hkv 1,
// Nq 200, Nk 300, D 128): preprocess, dQ zeroing, the dK/dV CTAs (K/V
// resident, Q/dO through a 2-stage TMA ring, the causal diagonal masked
// before the mask-free blocks), dQ conversion.

!q = memref<1x2x200x128xbf16>
!kv = memref<1x1x300x128xbf16>
!l = memref<1x2x200xf32>
func.func @grad(%q: !q, %k: !kv, %v: !kv, %o: !q, %do: !q, %lse: !l,
                %dq: !q, %dk: !kv, %dv: !kv) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : !q, !kv, !kv, !q, !q, !l)
      outs(%dq, %dk, %dv : !q, !kv, !kv) {causal}
  return
}

// CHECK-LABEL: func.func @grad
// Delta and LSE_log2 hold whole Q blocks: 256 rows for Nq 200.
// CHECK-DAG:     %[[DELTA:.*]] = memref.alloc() : memref<1x2x256xf32>
// CHECK-DAG:     %[[LSE2:.*]] = memref.alloc() : memref<1x2x256xf32>
// CHECK-DAG:     %[[DQACC:.*]] = memref.alloc() : memref<1x2x4x2x64x64xf32>
// (a) preprocess: ceil(200 / 128) row blocks, one thread per row; rows
// 200 .. 255 get Delta 0 and LSE_log2 +inf.
// CHECK:         scf.forall ({{.*}}) in (2, 2, 1) {
// CHECK:           scf.forall ({{.*}}) in (128) {
// CHECK:             %[[PADDED:.*]] = arith.cmpi ult, %[[ROW:.*]], %c256
// CHECK:             scf.if %[[PADDED]] {
// CHECK:               %[[INSIDE:.*]] = arith.cmpi ult, %[[ROW]], %c200
// CHECK:               scf.if %[[INSIDE]] {
// CHECK:                 math.fma
// CHECK:                 memref.store {{.*}}, %[[DELTA]]
// CHECK:                 arith.select
// CHECK:                 memref.store {{.*}}, %[[LSE2]]
// CHECK:               } else {
// CHECK:                 memref.store %[[ZERO:.*]], %[[DELTA]][{{.*}}, %[[ROW]]]
// CHECK:                 memref.store %[[INF:.*]], %[[LSE2]][{{.*}}, %[[ROW]]]
// (b) dQ_acc = 0: CTAs of 16 rows (padding rows too: 4 x 64), one thread
// per column, stored at the tile, half and swizzled column group.
// CHECK:         scf.forall ({{.*}}) in (16, 2, 1) {
// CHECK:           scf.forall ({{.*}}) in (128) {
// CHECK:             memref.store {{.*}}, %[[DQACC]]
// (c) dK/dV: descriptors of Q, dO (64-row boxes) and K, V (128-row boxes).
// CHECK:         nvgpu.tma.create.descriptor {{.*}} box[%c1, %c1, %c64, %c64]
// CHECK:         nvgpu.tma.create.descriptor {{.*}} box[%c1, %c1, %c64, %c64]
// CHECK:         nvgpu.tma.create.descriptor {{.*}} box[%c1, %c1, %c128, %c64]
// CHECK:         nvgpu.tma.create.descriptor {{.*}} box[%c1, %c1, %c128, %c64]
// CHECK:         scf.forall (%[[HIB:.*]], %[[KB:.*]], %[[BB:.*]]) in (1, 3, 1) {
// CHECK:           memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<1x2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<1x2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<2x2x64x64xf32, #gpu.address_space<workgroup>>
// CHECK:           attn.warp_specialize consumers(2) registers(24, 240) producer {
// CHECK:             nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c65536
// CHECK-COUNT-4:     nvgpu.tma.async.load
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 nvgpu.mbarrier.try_wait.parity
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c32768
// CHECK-COUNT-4:         nvgpu.tma.async.load
// dK and dV start from zero as the consumer warpgroups' fragments (one
// attn.to_wg_fragment after --cse), the type the loops carry and the steps
// and stores take.
// CHECK:           } consumer {
// CHECK:             %[[ZERO_FRAG:.*]] = attn.to_wg_fragment %{{.*}} : vector<128x128xf32> to !attn.wg_fragment<128x128xf32>
// CHECK:             nvgpu.mbarrier.try_wait.parity
// CHECK:             scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO_FRAG]], %{{.*}} = %[[ZERO_FRAG]]) -> (!attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>) {
// CHECK:               scf.for {{.*}} -> (!attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>) {
// CHECK:                 nvgpu.mbarrier.try_wait.parity
// CHECK:                 attn.grad_dkdv_mma {{.*}} dq(%[[DQACC]] : memref<1x2x4x2x64x64xf32>)
// CHECK-SAME:              causal_offset
// CHECK-SAME:              state(%{{.*}}, %{{.*}} : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
// CHECK-SAME:              mask = #attn.mask<causal>
// CHECK:                 nvgpu.mbarrier.arrive
// CHECK:               scf.for
// CHECK:                 attn.grad_dkdv_mma
// CHECK-SAME:              mask = #attn.mask<none>
// CHECK:             attn.store_tile {{.*}}, %arg7[{{.*}}] : !attn.wg_fragment<128x128xf32>, memref<1x1x300x128xbf16>
// CHECK:             attn.store_tile {{.*}}, %arg8[{{.*}}] : !attn.wg_fragment<128x128xf32>, memref<1x1x300x128xbf16>
// (d) dQ = dQ_acc, rounded.
// CHECK:         scf.forall ({{.*}}) in (13, 2, 1) {
// CHECK:             memref.load %[[DQACC]]
// CHECK:             arith.truncf
// CHECK:             memref.store {{.*}}, %arg6
// CHECK-DAG:     memref.dealloc %[[DELTA]]
// CHECK-DAG:     memref.dealloc %[[LSE2]]
// CHECK-DAG:     memref.dealloc %[[DQACC]]

// D = 64 fits 4 stages of Q and dO.
// STAGES: memref.view {{.*}} to memref<4x1x64x64xbf16, #gpu.address_space<workgroup>>

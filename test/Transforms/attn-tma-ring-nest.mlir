// attn-tma-ring on a hand-written nest as attn-tile / attn-causal-split
// leave it (BLOCK_M 64: one consumer warpgroup; BLOCK_N 64; D 64; a
// mask-free loop over K/V blocks [0, 2), then the epilogue).
// RUN: attn-opt %s --verify-each --attn-tma-ring=stages=2 | FileCheck %s

// CHECK-LABEL: func.func @nest
// Host: TMA descriptors of Q, K, V in [1, 1, 64, 64] boxes (128B swizzle,
// out-of-bounds reads as zero).
//       CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero
//       CHECK: nvgpu.tma.create.descriptor
//       CHECK: nvgpu.tma.create.descriptor
//       CHECK: scf.forall
// Shared memory: Q [1, 1, 64, 64] at 0, K and V rings [2, 1, 64, 64] at
// 8 KiB and 24 KiB.
//       CHECK:   %[[SMEM:.*]] = gpu.dynamic_shared_memory
//       CHECK:   memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<1x1x64x64xbf16
//       CHECK:   %[[KRING:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<2x1x64x64xbf16
//       CHECK:   %[[VRING:.*]] = memref.view %[[SMEM]][%{{.*}}][] {{.*}} to memref<2x1x64x64xbf16
// Barriers: q (1 arrival), full[2] (1 arrival + bytes), empty[2] (128
// consumer threads), initialized by thread 0, published.
//       CHECK:   %[[QBAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       CHECK:   %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
//       CHECK:   %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
//       CHECK:   nvgpu.mbarrier.init %[[QBAR]][%{{.*}}], %c1
//       CHECK:   nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %c1
//       CHECK:   nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %c128
//       CHECK:   nvvm.fence.mbarrier.init
//       CHECK:   gpu.barrier
//       CHECK:   attn.warp_specialize consumers(1) registers(24, 240) producer {
// Producer thread 0: Q, then block kb into slot kb mod 2 once it is free
// (parity ^ 1: a fresh barrier lets the first round pass).
//       CHECK:     nvgpu.mbarrier.arrive.expect_tx %[[QBAR]][%{{.*}}], %c8192
//       CHECK:     scf.for %[[KB:.*]] = %{{.*}} to %{{.*}} step
//       CHECK:       %[[SLOT:.*]] = arith.remui %[[KB]], %c2
//       CHECK:       nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[SLOT]]]
//       CHECK:       nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[SLOT]]], %c16384
//       CHECK:       nvgpu.tma.async.load {{.*}} %[[FULL]][%[[SLOT]]]
//       CHECK:       nvgpu.tma.async.load {{.*}} %[[FULL]][%[[SLOT]]]
// Consumers: the online-softmax state as warpgroup fragments from the
// start; wait for Q, then per block for its slot; the step reads the
// shared tiles; the slot is released.
//       CHECK:   } consumer {
//  CHECK-NEXT:     %[[MF:.*]] = attn.to_wg_fragment %{{.*}} : vector<64xf32> to !attn.wg_fragment<64xf32>
//  CHECK-NEXT:     %[[LF:.*]] = attn.to_wg_fragment %{{.*}} : vector<64xf32> to !attn.wg_fragment<64xf32>
//  CHECK-NEXT:     %[[AF:.*]] = attn.to_wg_fragment %{{.*}} : vector<64x64xf32> to !attn.wg_fragment<64x64xf32>
//       CHECK:     nvgpu.mbarrier.try_wait.parity %[[QBAR]][%{{.*}}], %false
//       CHECK:     %[[R:.*]]:3 = scf.for %[[CKB:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MF]], %{{.*}} = %[[LF]], %{{.*}} = %[[AF]]) -> (!attn.wg_fragment<64xf32>, !attn.wg_fragment<64xf32>, !attn.wg_fragment<64x64xf32>)
//       CHECK:       %[[CSLOT:.*]] = arith.remui %[[CKB]], %c2
//       CHECK:       nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[CSLOT]]]
//       CHECK:       attn.online_attention_mma q(%[[QTILE:.*]] : memref<1x64x64xbf16{{.*}}>) kv(
//  CHECK-SAME:         state({{.*}} : !attn.wg_fragment<64xf32>, !attn.wg_fragment<64xf32>, !attn.wg_fragment<64x64xf32>)
//       CHECK:       nvgpu.mbarrier.arrive %[[EMPTY]][%[[CSLOT]]]
// O is staged in Q's tile.
//       CHECK:     attn.epilogue state(%[[R]]#0, %[[R]]#1, %[[R]]#2 : !attn.wg_fragment<64xf32>, !attn.wg_fragment<64xf32>, !attn.wg_fragment<64x64xf32>) {{.*}} staging(%[[QTILE]] :
func.func @nest(%q: memref<1x1x128x64xbf16>, %k: memref<1x1x128x64xbf16>,
                %v: memref<1x1x128x64xbf16>, %o: memref<1x1x128x64xbf16>) {
  %m0 = arith.constant dense<0xFF800000> : vector<64xf32>
  %l0 = arith.constant dense<0.0> : vector<64xf32>
  %acc0 = arith.constant dense<0.0> : vector<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  scf.forall (%qb, %h, %b) in (2, 1, 1) {
    %row = arith.muli %qb, %c64 : index
    %qt = attn.load_tile %q[%b, %h, %row, %c0] : memref<1x1x128x64xbf16> -> vector<64x64xbf16>
    %r:3 = scf.for %kb = %c0 to %c2 step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {
      %key = arith.muli %kb, %c64 : index
      %nm, %nl, %nacc = attn.online_attention q(%qt : vector<64x64xbf16>) kv(%k, %v : memref<1x1x128x64xbf16>, memref<1x1x128x64xbf16>) at[%b, %h, %key, %c0] rows(%row) state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {block_n = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
      scf.yield %nm, %nl, %nacc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>
    } {attn.stage = "full"}
    attn.epilogue state(%r#0, %r#1, %r#2 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %o[%b, %h, %row, %c0] : memref<1x1x128x64xbf16>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// RUN: attn-opt %s --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma --canonicalize | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline="overlap=true stages=2" | FileCheck %s --check-prefix=TWO

// Intra-warpgroup overlap with the K/V ring (causal, D = 64, BLOCK_N = 64,
// 4 stages): each K/V loop is pipelined by one block. A block waits for its
// slot (full) before its S GEMM, but its slot is released (empty) only
// after the next iteration's P V, so the loop carries the slot to release;
// the last block's slot is released after the drained P V.
func.func @causal(%q: memref<1x4x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
                  %v: memref<1x2x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                  %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x256x64xbf16>, memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>)
                 outs(%o : memref<1x4x256x64xbf16>) lse(%lse : memref<1x4x256xf32>) {causal}
  return
}

// CHECK-LABEL: func.func @causal
//       CHECK:   %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:   %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// Mask-free blocks, then the diagonal ones: each loop peeled and pipelined.
// CHECK-COUNT-2: scf.if %{{.*}} -> (vector<2xf32>, vector<2xf32>, vector<32xf32>) {
//       CHECK:     nvgpu.mbarrier.try_wait.parity %[[FULL]][[[SLOT0:%[a-z0-9_]+]]]
//       CHECK:     nvvm.wgmma.fence.aligned
//       CHECK:     nvvm.wgmma.wait.group.sync.aligned 0
//   CHECK-NOT:     nvgpu.mbarrier.arrive %[[EMPTY]]
//       CHECK:     %[[R:.*]]:6 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args({{.*}}, %[[PREV:[a-z0-9_]+]] = [[SLOT0]]) -> ({{.*}}, vector<16xi32>, i64, index) {
//       CHECK:       nvgpu.mbarrier.try_wait.parity %[[FULL]][[[SLOT:%[a-z0-9_]+]]]
//       CHECK:       nvvm.wgmma.fence.aligned
//       CHECK:       nvvm.wgmma.wait.group.sync.aligned 1
//       CHECK:       nvvm.wgmma.wait.group.sync.aligned 0
//       CHECK:       nvgpu.mbarrier.arrive %[[EMPTY]][%[[PREV]]]
//       CHECK:       scf.yield {{.*}}, [[SLOT]] : {{.*}}, index
//       CHECK:     nvvm.wgmma.wait.group.sync.aligned 0
//       CHECK:     nvgpu.mbarrier.arrive %[[EMPTY]][%[[R]]#5]

// With two stages the producer could not run ahead: no overlap.
// TWO: attn.warp_specialize consumers(2) registers(24, 240) producer {

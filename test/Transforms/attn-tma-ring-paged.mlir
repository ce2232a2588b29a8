// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-lower-to-wgmma | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=FMA

// Paged K/V on the tensor cores. Pages of 16 tokens, BLOCK_N 64: the K and
// V descriptors are built on the [num_pages, Hkv, page_size, D] views of
// the caches in boxes of one page (16 rows); the producer loads the
// block's four table entries first (slot key / 16, clamped to the table's
// last column; page -1, which TMA fills with zeros, for a box that starts
// at or past Nk), then copies each box at (column, row in page, KV head,
// page) into its 16 rows of the stage.
// CHECK-LABEL: func.func @page16
//       CHECK:   %[[KT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   %[[VT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   %[[KC:.*]] = memref.cast %[[KT]]
//       CHECK:   %[[KMAP:.*]] = nvgpu.tma.create.descriptor %[[KC]] box[%{{.*}}, %{{.*}}, %c16{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x16x64xbf16
//       CHECK:   %[[VC:.*]] = memref.cast %[[VT]]
//       CHECK:   %[[VMAP:.*]] = nvgpu.tma.create.descriptor %[[VC]] box[%{{.*}}, %{{.*}}, %c16{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x16x64xbf16
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %c4
//       CHECK:     %[[NK:.*]] = arith.minsi
// The producer, which reads the table, keeps 40 registers beside one
// consumer warpgroup (at 24 ptxas spilled in paged decode kernels).
//       CHECK:     attn.warp_specialize consumers(1) registers(40, 240)
// The table is read before the wait for the slot (its latency hides
// behind the wait).
//       CHECK:       scf.for %[[KB:.*]] =
//       CHECK:         %[[KEY:.*]] = arith.muli %[[KB]], %c64
//       CHECK:         %[[LAST:.*]] = arith.subi %{{.*}}, %c1
//       CHECK:         %[[AT0:.*]] = arith.addi %[[KEY]], %c0
//       CHECK:         %[[S0:.*]] = arith.divui %[[AT0]], %c16
//       CHECK:         %[[C0:.*]] = arith.minui %[[S0]], %[[LAST]]
//       CHECK:         %[[E0:.*]] = memref.load %{{.*}}[%[[B]], %[[C0]]] : memref<2x?xi32>
//       CHECK:         %[[P0:.*]] = arith.index_cast %[[E0]]
//       CHECK:         %[[IN0:.*]] = arith.cmpi ult, %[[AT0]], %[[NK]]
//       CHECK:         %[[PAGE0:.*]] = arith.select %[[IN0]], %[[P0]], %c-1
//       CHECK:         %[[ROW0:.*]] = arith.remui %[[AT0]], %c16
//   CHECK-COUNT-3:     memref.load
//   CHECK-NOT:         memref.load
//       CHECK:         nvgpu.mbarrier.try_wait.parity
//       CHECK:         nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%[[SLOT:.*]]], %c16384
//       CHECK:         %[[DST0:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [1, 1, 16, 64]
//       CHECK:         nvgpu.tma.async.load %[[KMAP]][%{{.*}}, %[[ROW0]], %[[KVH]], %[[PAGE0]]], %{{.*}}[%[[SLOT]]] to %[[DST0]]
//       CHECK:         memref.subview %{{.*}}[0, 0, 16, 0] [1, 1, 16, 64]
//   CHECK-COUNT-3:     nvgpu.tma.async.load %[[KMAP]]
//       CHECK:         nvgpu.tma.async.load %[[VMAP]][%{{.*}}, %[[ROW0]], %[[KVH]], %[[PAGE0]]]
//   CHECK-COUNT-3:     nvgpu.tma.async.load %[[VMAP]]
//       CHECK:     } consumer {
// Blocks without a mask end at or before Nk; the last page's rows past Nk
// hold anything (TMA bounds the cache, not the sequence), so the masked
// tail block says so (unfilled_tail: its V rows there are zeroed).
//       CHECK:       attn.online_attention_mma {{.*}} keys(%{{.*}}, %[[NK]]) {{.*}} {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
//       CHECK:       attn.online_attention_mma {{.*}} keys(%{{.*}}, %[[NK]]) {{.*}} {head_dim = 64 : i64, mask = #attn.mask<bounds>, scale = 1.250000e-01 : f32, unfilled_tail}

// The consumer masks with the sequence's Nk.
// WGMMA-LABEL: func.func @page16
//   WGMMA-NOT:   attn.online_attention_mma
//       WGMMA:   nvvm.wgmma.mma_async

// The CUDA-core path refuses paged steps.
// FMA: error: attn-distribute-rows: paged K/V has no lowering here: it lowers to the host (--attn-to-cpu) and the tensor-core path (attn-async-pipeline)
func.func @page16(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                  %v: memref<?x16x2x64xbf16>, %o: memref<2x8x1x64xbf16>,
                  %t: memref<2x?xi32>, %n: memref<2xi32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) paged(%t, %n : memref<2x?xi32>, memref<2xi32>)
  return
}

// -----

// Pages of 256 tokens: a box is a whole BLOCK_N of one page, one table
// entry per block.
// CHECK-LABEL: func.func @page256
//       CHECK:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c64{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16
//       CHECK:   attn.warp_specialize
//       CHECK:         %[[E:.*]] = memref.load %{{.*}} : memref<1x?xi32>
//   CHECK-NOT:         memref.load
//       CHECK:         nvgpu.mbarrier.try_wait.parity
//       CHECK:         nvgpu.tma.async.load
//       CHECK:         nvgpu.tma.async.load
//   CHECK-NOT:         nvgpu.tma.async.load
//       CHECK:     } consumer {
// WGMMA-LABEL: func.func @page256
func.func @page256(%q: memref<1x4x1x64xbf16>, %k: memref<?x256x4x64xbf16>,
                   %o: memref<1x4x1x64xbf16>, %t: memref<1x?xi32>, %n: memref<1xi32>) {
  attn.attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<?x256x4x64xbf16>, memref<?x256x4x64xbf16>)
      outs(%o : memref<1x4x1x64xbf16>) paged(%t, %n : memref<1x?xi32>, memref<1xi32>) {causal}
  return
}

// -----

// A paged cache of static size is not what a causal grid reads (the table
// picks the pages): each head's Q blocks run from the last (Q block
// nQ - 1 - q), head after head, whatever the cache's bytes.
// CHECK-LABEL: func.func @page256_static_cache
//       CHECK:   scf.forall (%[[QP:[a-z0-9]+]], %{{.*}}) in
//       CHECK:     %[[LASTP:.*]] = arith.subi
//  CHECK-NEXT:     arith.subi %[[LASTP]], %[[QP]] : index
// WGMMA-LABEL: func.func @page256_static_cache
func.func @page256_static_cache(%q: memref<1x4x300x64xbf16>, %k: memref<4x256x4x64xbf16>,
                                %o: memref<1x4x300x64xbf16>, %t: memref<1x4xi32>, %n: memref<1xi32>) {
  attn.attention ins(%q, %k, %k : memref<1x4x300x64xbf16>, memref<4x256x4x64xbf16>, memref<4x256x4x64xbf16>)
      outs(%o : memref<1x4x300x64xbf16>) paged(%t, %n : memref<1x4xi32>, memref<1xi32>) {causal}
  return
}

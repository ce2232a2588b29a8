// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-split-kv=splits=4 | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=8" --attn-causal-split --attn-online-softmax | FileCheck %s --check-prefix=HOST

// Paged K/V (attn.attention's paged clause): the caches [num_pages,
// page_size, Hkv, D] are viewed as [num_pages, Hkv, page_size, D] before
// the grid (Hkv = 2 from the caches' dimension 2: 8 / 2 query heads per
// KV head); each CTA reads its sequence's Nk from cache_seqlens, clamped
// to [0, max_pages * page_size], loops over ceil(Nk / BLOCK_N) blocks and
// gives every step the table and Nk with the bounds mask.
// CHECK-LABEL: func.func @decode
//  CHECK-SAME:   (%[[Q:.*]]: memref<2x8x1x64xbf16>, %[[K:.*]]: memref<?x16x2x64xbf16>, %[[V:.*]]: memref<?x16x2x64xbf16>, %[[O:.*]]: memref<2x8x1x64xbf16>, %[[LSE:.*]]: memref<2x8x1xf32>, %[[T:.*]]: memref<2x?xi32>, %[[N:.*]]: memref<2xi32>)
//       CHECK:   %[[KT:.*]] = memref.transpose %[[K]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x16x2x64xbf16> to memref<?x2x16x64xbf16, strided<[2048, 64, 128, 1]>>
//       CHECK:   %[[VT:.*]] = memref.transpose %[[V]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %[[B:.*]]) in (%{{.*}}, %c8, %c2)
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %c4
//       CHECK:     %[[LEN32:.*]] = memref.load %[[N]][%[[B]]] : memref<2xi32>
//       CHECK:     %[[LEN:.*]] = arith.index_cast %[[LEN32]] : i32 to index
//       CHECK:     %[[PAGES:.*]] = memref.dim %[[T]], %c1
//       CHECK:     %[[CAP:.*]] = arith.muli %[[PAGES]], %c16
//       CHECK:     %[[POS:.*]] = arith.maxsi %[[LEN]], %c0
//       CHECK:     %[[NK:.*]] = arith.minsi %[[POS]], %[[CAP]]
//       CHECK:     %[[BLOCKS:.*]] = arith.ceildivui %[[NK]], %c128
//       CHECK:     scf.for %[[KB:.*]] = %{{.*}} to %[[BLOCKS]]
//       CHECK:       attn.online_attention {{.*}} kv(%[[KT]], %[[VT]] : {{.*}}) at[%[[B]], %[[KVH]], %{{.*}}, %{{.*}}] {{.*}} pages(%[[T]] : memref<2x?xi32>) num_keys(%[[NK]]) {block_n = 128 : i64, mask = #attn.mask<bounds>

// attn-split-kv keeps the clause on the partial attention.
// SPLIT-LABEL: func.func @decode
//       SPLIT:   attn.partial_attention ins({{.*}}) outs({{.*}} : memref<4x2x8x1x64xf32>, memref<4x2x8x1xf32>) paged(%{{.*}}, %{{.*}} : memref<2x?xi32>, memref<2xi32>)
//       SPLIT:   attn.decode_combine

// The host lowering: key j of the sequence (clamped to Nk - 1 in a masked
// block) is row j % 16 of page table[b, j / 16].
// HOST-LABEL: func.func @decode
//       HOST:   %[[TABLE:[^:]*]]: memref<2x?xi32>
//       HOST:   scf.forall
//       HOST:     scf.for
//       HOST:       %[[KEY:.*]] = arith.minsi
//       HOST:       %[[SLOT:.*]] = arith.divui %[[KEY]], %c16
//       HOST:       %[[ENTRY:.*]] = memref.load %[[TABLE]][%{{.*}}, %[[SLOT]]] : memref<2x?xi32>
//       HOST:       %[[PAGE:.*]] = arith.index_cast %[[ENTRY]] : i32 to index
//       HOST:       %[[ROW:.*]] = arith.remui %[[KEY]], %c16
//       HOST:       vector.transfer_read %{{.*}}[%[[PAGE]], %{{.*}}, %[[ROW]], %{{.*}}]
func.func @decode(%q: memref<2x8x1x64xbf16>, %k: memref<?x16x2x64xbf16>,
                  %v: memref<?x16x2x64xbf16>, %o: memref<2x8x1x64xbf16>,
                  %lse: memref<2x8x1xf32>, %t: memref<2x?xi32>, %n: memref<2xi32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      outs(%o : memref<2x8x1x64xbf16>) lse(%lse : memref<2x8x1xf32>)
      paged(%t, %n : memref<2x?xi32>, memref<2xi32>)
  return
}

// -----

// GQA packing reads Hkv from the caches' dimension 2 too (G = 8 / 2).
// CHECK-LABEL: func.func @causal
//       CHECK:   scf.forall
//       CHECK:     attn.online_attention {{.*}} rows(%{{.*}}, causal_offset %{{.*}}) {{.*}} pages(%{{.*}}) num_keys(%{{.*}}) {{{.*}}mask = #attn.mask<causal>
// SPLIT-LABEL: func.func @causal
// HOST-LABEL: func.func @causal
func.func @causal(%q: memref<1x8x3x64xf16>, %k: memref<?x256x2x64xf16>,
                  %o: memref<1x8x3x64xf16>, %t: memref<1x4xi32>, %n: memref<1xi32>) {
  attn.attention ins(%q, %k, %k : memref<1x8x3x64xf16>, memref<?x256x2x64xf16>, memref<?x256x2x64xf16>)
      outs(%o : memref<1x8x3x64xf16>) paged(%t, %n : memref<1x4xi32>, memref<1xi32>) {causal}
  return
}

// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128 pack-gqa=true" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-tma-store | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128 pack-gqa=true" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-tma-store --attn-lower-to-wgmma | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=128 pack-gqa=true" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-lower-to-wgmma | FileCheck %s --check-prefix=COPY

// GQA packing on the tensor cores (FlashAttention-3's pack_gqa): the G = 4
// query heads of a KV group share a CTA, whose 64 rows are packed (query,
// head) rows, query-major. TMA reads Q (and writes O) through the
// [B, N, H, D] view, in [1, 64 / G, G, 64] boxes that land query-major;
// the box's coordinates are (column, first head, first query, batch), the
// first query being the packed row / G. The grid's y walks KV heads.
// CHECK-LABEL: func.func @decode
//       CHECK:   %[[QV:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x8x1x128xbf16> to memref<2x1x8x128xbf16, strided<[1024, 128, 128, 1]>>
//       CHECK:   %[[QU:.*]] = memref.cast %[[QV]]
//       CHECK:   %[[QMAP:.*]] = nvgpu.tma.create.descriptor %[[QU]] box[%{{.*}}, %c16{{.*}}, %c4{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x16x4x64xbf16, #gpu.address_space<workgroup>>
//       CHECK:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x128x64xbf16
//       CHECK:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x1x128x64xbf16
//       CHECK:   %[[OV:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   %[[OU:.*]] = memref.cast %[[OV]]
//       CHECK:   %[[OMAP:.*]] = nvgpu.tma.create.descriptor %[[OU]] box[%{{.*}}, %c16{{.*}}, %c4{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x16x4x64xbf16
//       CHECK:   scf.forall (%[[QB:.*]], %[[KVH:.*]], %[[B:.*]]) in
//       CHECK:     %[[ROW:.*]] = arith.muli %[[QB]], %c64
//       CHECK:     %[[HEAD:.*]] = arith.muli %[[KVH]], %c4
//       CHECK:     attn.warp_specialize
//       CHECK:       %[[QUERY:.*]] = arith.divui %[[ROW]], %c4
//       CHECK:       %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]]
//       CHECK:       %[[BOX:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 16, 4, 64]
//       CHECK:       nvgpu.tma.async.load %[[QMAP]][%c0{{.*}}, %[[HEAD]], %[[QUERY]], %[[B]]], %{{.*}}[%{{.*}}] to %[[BOX]]
//       CHECK:     } consumer {
//       CHECK:       attn.online_attention_mma {{.*}} {gqa_pack = 4 : i64
//       CHECK:       attn.epilogue {{.*}} tma_store(%[[OMAP]] : {{.*}}) {gqa_pack = 4 : i64}

// The TMA store of O: the 64 staged rows as a [1, 16, 4, 64] box at
// (column, first head, first query, batch).
// WGMMA-LABEL: func.func @decode
//       WGMMA:   nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
//       WGMMA:   %[[Q0:.*]] = arith.divui %{{.*}}, %c4
//       WGMMA:   %[[SBOX:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [1, 16, 4, 64]
//       WGMMA:   nvgpu.tma.async.store %[[SBOX]] to %{{.*}}[%c0{{.*}}, %{{.*}}, %[[Q0]], %{{.*}}]
// LSE: row r of the tile is query (q_pos + r) / 4 of head
// kv_head * 4 + (q_pos + r) % 4.
//       WGMMA:   %[[HG:.*]] = arith.remui %[[R:.*]], %c4
//       WGMMA:   %[[H:.*]] = arith.addi %{{.*}}, %[[HG]]
//       WGMMA:   %[[QI:.*]] = arith.divui %[[R]], %c4
//       WGMMA:   memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[H]], %[[QI]]] : memref<2x8x1xf32>

// Without tma-store each staged row is stored at its query and head.
// COPY-LABEL: func.func @decode
//       COPY:   scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c128
//       COPY:   %[[HG:.*]] = arith.remui %[[PR:.*]], %c4
//       COPY:   %[[H:.*]] = arith.addi %{{.*}}, %[[HG]]
//       COPY:   %[[QI:.*]] = arith.divui %[[PR]], %c4
//       COPY:   vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[H]], %[[QI]], %{{.*}}] : memref<2x8x1x128xbf16>, vector<8xbf16>
func.func @decode(%q: memref<2x8x1x128xbf16>, %k: memref<2x2x4096x128xbf16>,
                  %v: memref<2x2x4096x128xbf16>, %o: memref<2x8x1x128xbf16>,
                  %lse: memref<2x8x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x8x1x128xbf16>,
                     memref<2x2x4096x128xbf16>, memref<2x2x4096x128xbf16>)
      outs(%o : memref<2x8x1x128xbf16>) lse(%lse : memref<2x8x1xf32>)
  return
}

// -----

// Causal with packing: the mask limit of row r is its query index
// (q_pos + r) / G plus the causal offset, not the packed row.
// WGMMA-LABEL: func.func @causal
//       WGMMA:   %[[QPOS:.*]] = arith.muli %{{.*}}, %c64 : index
//       WGMMA:   %[[PR:.*]] = arith.addi %[[QPOS]], %{{.*}} : index
//       WGMMA:   %[[QRY:.*]] = arith.divui %[[PR]], %c2
//       WGMMA:   arith.addi %[[QRY]], %{{.*}} : index
func.func @causal(%q: memref<1x4x8x64xbf16>, %k: memref<1x2x300x64xbf16>,
                  %o: memref<1x4x8x64xbf16>) {
  attn.attention ins(%q, %k, %k : memref<1x4x8x64xbf16>, memref<1x2x300x64xbf16>,
                     memref<1x2x300x64xbf16>) outs(%o : memref<1x4x8x64xbf16>)
                 {causal}
  return
}

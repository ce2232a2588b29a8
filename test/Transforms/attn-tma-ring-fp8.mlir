// RUN: attn-opt %s --attn-tile="block-m=128 block-n=0" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-tile="block-m=192 block-n=0" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s --check-prefix=BN64
// RUN: attn-opt %s --attn-tile="block-m=128 block-n=192" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-fp8-v-permute | FileCheck %s --check-prefix=BN192

// FP8 (FlashAttention-3 section 3.3) through the TMA + mbarrier pipeline,
// D = 128, the two-warpgroup tile 128 x 128 (BLOCK_M 128 given, BLOCK_N
// 128 by default). An e4m3 row of D is one 128-byte chunk,
// so Q and K are [1, rows, 128] tiles; the FP8 MMA reads B K-major only, so
// V arrives stored as V^T (unit stride along Nk) and is read through its
// transposed [B, H, D, Nk] view in [1, 1, D, 128] boxes: the ring holds
// [1, D, 128] V^T tiles. O (bf16) is staged in a tile of its own (Q's is
// half its size). The descales ride on the step and the epilogue. Blocks
// land on `loaded`; producer warps 1-3 permute the keys inside every
// 16-byte unit of the V^T tile into P's A-register order, fence for the
// async proxy and arrive on `full` (96 arrivals).
// The default FP8 tile at D = 128 (Attn.h tensorCoreTile): 192 x 96, three
// consumer warpgroups at 160 registers and the producer at 32 (its warps
// permute V^T; at 24 ptxas spilled there); a V^T box still holds 128 keys.
// DEFAULT-LABEL: func.func @fp8(
//       DEFAULT:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c192{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x192x128xf8E4M3FN
//       DEFAULT:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c96{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x96x128xf8E4M3FN
//       DEFAULT:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN
//       DEFAULT:   attn.warp_specialize consumers(3) registers(32, 160) producer
// Only the 192 x 96 tile is FP8's three-warpgroup default: a given BLOCK_N
// of 64 keeps 128 rows (and BLOCK_M 128 alone, above, BLOCK_N 128).
// BN64-LABEL: func.func @fp8(
//       BN64:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN
//       BN64:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c64{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x64x128xf8E4M3FN
//       BN64:   attn.warp_specialize consumers(2) registers(24, 240) producer

// CHECK-LABEL: func.func @fp8
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: memref<1x4x?x128xf8E4M3FN{{.*}}>, %[[K:[a-z0-9]+]]: memref<1x2x?x128xf8E4M3FN{{.*}}>, %[[V:[a-z0-9]+]]: memref<1x2x?x128xf8E4M3FN, strided<[?, ?, 1, ?], offset: ?>>
//       CHECK:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
//       CHECK:   nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN
//       CHECK:   %[[VT:.*]] = memref.transpose %[[V]] (d0, d1, d2, d3) -> (d0, d1, d3, d2) : memref<1x2x?x128xf8E4M3FN, strided<[?, ?, 1, ?], offset: ?>> to memref<1x2x128x?xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>
//       CHECK:   %[[VTU:.*]] = memref.cast %[[VT]]
//       CHECK:   %[[VMAP:.*]] = nvgpu.tma.create.descriptor %[[VTU]] box[%{{.*}}, %{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN
//       CHECK:   scf.forall
// Q 16 KiB, four stages of K and V^T (16 KiB each), then O's staging.
//       CHECK:     memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     memref.view %{{.*}}[%c16384{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     %[[VRING:.*]] = memref.view %{{.*}}[%c81920{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     %[[UNITS:.*]] = memref.view %{{.*}}[%c81920{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x1024x4xi32, #gpu.address_space<workgroup>>
//       CHECK:     %[[STAGING:.*]] = memref.view %{{.*}}[%c147456{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:     nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:     %[[LOADED:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:     nvgpu.mbarrier.init %[[FULL]][%c0{{.*}}], %c96
//       CHECK:     nvgpu.mbarrier.init %[[LOADED]][%c0{{.*}}], %c1
//       CHECK:     attn.warp_specialize
// The producer: one expect_tx for K and V^T (32 KiB), K by rows, V^T by
// keys (coordinates innermost first: key, 0, head, batch).
//       CHECK:       nvgpu.mbarrier.arrive.expect_tx %[[LOADED]][%{{.*}}], %c32768
//       CHECK:       %[[KEY:.*]] = arith.muli %{{.*}}, %c128
//       CHECK:       nvgpu.tma.async.load %{{.*}}[%c0{{.*}}, %[[KEY]], %{{.*}}, %{{.*}}]
//       CHECK:       %[[KEY0:.*]] = arith.addi %[[KEY]], %c0
//       CHECK:       %[[VBOX:.*]] = memref.subview %[[VRING]]
//       CHECK:       nvgpu.tma.async.load %[[VMAP]][%[[KEY0]], %c0{{.*}}, %{{.*}}, %{{.*}}], %[[LOADED]][%{{.*}}] to %[[VBOX]]
// The permuters: 1024 units of 16 bytes per V^T tile, 96 threads.
//       CHECK:       %[[TID:.*]] = gpu.thread_id  x
//       CHECK:       arith.cmpi uge, %[[TID]], %c32
//       CHECK:       scf.for
//       CHECK:         nvgpu.mbarrier.try_wait.parity %[[LOADED]]
//       CHECK:         scf.for %[[U:.*]] = %{{.*}} to %c1024{{.*}} step %c96
//       CHECK:           %[[W:.*]] = vector.load %[[UNITS]][%{{.*}}, %[[U]], %c0{{.*}}] : memref<4x1024x4xi32, #gpu.address_space<workgroup>>, vector<4xi32>
//       CHECK:           nvvm.prmt <default> %c21520{{.*}}, %{{.*}}, %{{.*}} : i32
//       CHECK:           nvvm.prmt <default> %c30258{{.*}}, %{{.*}}, %{{.*}} : i32
//       CHECK:           nvvm.prmt <default> %c21520{{.*}}, %{{.*}}, %{{.*}} : i32
//       CHECK:           nvvm.prmt <default> %c30258{{.*}}, %{{.*}}, %{{.*}} : i32
//       CHECK:           vector.store %{{.*}}, %[[UNITS]][%{{.*}}, %[[U]], %c0{{.*}}]
//       CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//       CHECK:         nvgpu.mbarrier.arrive %[[FULL]]
//       CHECK:     } consumer {
//       CHECK:       attn.online_attention_mma q(%{{.*}} : memref<1x128x128xf8E4M3FN{{.*}}>) kv(%{{.*}}, %{{.*}} : memref<1x128x128xf8E4M3FN{{.*}}>, memref<1x128x128xf8E4M3FN{{.*}}>) {{.*}} descale(%{{.*}})
//       CHECK:       attn.epilogue {{.*}} staging(%[[STAGING]] : memref<2x128x64xbf16, #gpu.address_space<workgroup>>) descale(%{{.*}})

// BLOCK_N 192 (FlashAttention-3's FP8 D128 tile with V^T input): V^T rows
// are whole 128-key chunks, so a stage holds two, the second half used;
// its box also brings the next block's first 64 keys (zeros past Nk), and
// expect_tx counts both boxes: K 24 KiB + V^T 32 KiB. Three stages fit.
// BN192-LABEL: func.func @fp8
//       BN192:   memref.view %{{.*}}[%c16384{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x1x192x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       BN192:   %[[VRING:.*]] = memref.view %{{.*}}[%c90112{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x2x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       BN192:   memref.view %{{.*}}[%c90112{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x2048x4xi32, #gpu.address_space<workgroup>>
//       BN192:   nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c57344
//       BN192:   %[[KEY:.*]] = arith.muli %{{.*}}, %c192
//       BN192:   %[[KEY0:.*]] = arith.addi %[[KEY]], %c0
//       BN192:   nvgpu.tma.async.load %{{.*}}[%[[KEY0]], %c0{{.*}}, %{{.*}}, %{{.*}}]
//       BN192:   %[[KEY1:.*]] = arith.addi %[[KEY]], %c128
//       BN192:   nvgpu.tma.async.load %{{.*}}[%[[KEY1]], %c0{{.*}}, %{{.*}}, %{{.*}}]
//       BN192:   scf.for %{{.*}} = %{{.*}} to %c2048{{.*}} step %c96
//       BN192:   attn.online_attention_mma q(%{{.*}} : memref<1x128x128xf8E4M3FN{{.*}}>) kv(%{{.*}}, %{{.*}} : memref<1x192x128xf8E4M3FN{{.*}}>, memref<2x128x128xf8E4M3FN{{.*}}>)
!q = memref<1x4x?x128xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>
!k = memref<1x2x?x128xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>
!v = memref<1x2x?x128xf8E4M3FN, strided<[?, ?, 1, ?], offset: ?>>
!o = memref<1x4x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d = memref<1x2xf32>
func.func @fp8(%q: !q, %k: !k, %v: !v, %o: !o, %qd: !d, %kd: !d, %vd: !d) {
  attn.attention ins(%q, %k, %v : !q, !k, !v) outs(%o : !o)
                 descale(%qd, %kd, %vd : !d, !d, !d) {causal}
  return
}

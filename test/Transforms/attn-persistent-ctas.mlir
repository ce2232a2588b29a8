// attn-persistent-ctas on rings as attn-tma-ring (and attn-fp8-v-permute)
// leave them: 2 x 1 x 1 tiles of a bf16 and an FP8 CTA, 2 K/V blocks each.
// RUN: attn-opt %s --split-input-file --attn-persistent-ctas | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-persistent-ctas=ctas=8 | FileCheck %s --check-prefix=CTAS

// CHECK-LABEL: func.func @ring
//       CHECK: scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in (2, 1, 1)
// A fourth barrier, Q-empty: every consumer thread (128) is done with Q.
//       CHECK:   %[[QBAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       CHECK:   %[[FULL:.*]] = nvgpu.mbarrier.create
//       CHECK:   %[[EMPTY:.*]] = nvgpu.mbarrier.create
//       CHECK:   %[[QEMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       CHECK:   nvgpu.mbarrier.init %[[QBAR]][%c0], %c1,
//       CHECK:   nvgpu.mbarrier.init %[[QEMPTY]][%{{.*}}], %c128{{.*}},
// tiles = nQ * H * B, once the barriers are published.
//       CHECK:   gpu.barrier
//       CHECK:   %[[T1:.*]] = arith.muli %c2{{.*}}, %c1{{.*}} : index
//       CHECK:   %[[TILES:.*]] = arith.muli %[[T1]], %c1{{.*}} : index
//       CHECK:   attn.warp_specialize
// The producer loops over its rounds of tiles, carrying the blocks of its
// earlier tiles; tile t = round * gridDim.x + (x or gridDim.x - 1 - x).
//       CHECK:     %[[X:.*]] = gpu.block_id x
//       CHECK:     %[[G:.*]] = gpu.grid_dim x
//       CHECK:     scf.for %[[ROUND:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[BEFORE:.*]] = %{{.*}}) -> (index) {
//       CHECK:       %[[TILE:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// The per-tile values of the CTA body again, for (Q block, head, batch) of
// tile t, Q block fastest (not causal).
//       CHECK:       %[[QB2:.*]] = arith.remui %[[TILE]], %c2{{.*}} : index
//       CHECK:       %[[ROW:.*]] = arith.muli %[[QB2]], %c64 : index
//       CHECK:       scf.if
// Q of the next tile waits for Q-empty's phase of the last (parity ^ 1).
//       CHECK:         %[[QPAR:.*]] = arith.remui %[[ROUND]], %c2{{.*}} : index
//       CHECK:         %[[QPAR1:.*]] = arith.index_cast %[[QPAR]] : index to i1
//       CHECK:         %[[FREE:.*]] = arith.xori %[[QPAR1]], %true{{.*}} : i1
//       CHECK:         nvgpu.mbarrier.try_wait.parity %[[QEMPTY]][%{{.*}}], %[[FREE]]
//       CHECK:         nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}], %[[QBAR]]
// Ring position = block + blocks of earlier tiles.
//       CHECK:         scf.for %[[KB:.*]] = %c0 to %c2
//       CHECK:           %[[POS:.*]] = arith.addi %[[KB]], %[[BEFORE]] : index
//       CHECK:           %[[SLOT:.*]] = arith.remui %[[POS]], %c2 : index
//       CHECK:           arith.divui %[[POS]], %c2 : index
//       CHECK:           nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[SLOT]]]
//       CHECK:       %[[NEXT:.*]] = arith.addi %[[BEFORE]], %c2 : index
//       CHECK:       scf.yield %[[NEXT]] : index
// The consumers likewise: Q of the tile's phase, ring positions offset,
// and, where O is staged in Q's tile, Q-empty after the epilogue.
//       CHECK:   } consumer {
//       CHECK:     scf.for %[[CROUND:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CBEFORE:.*]] = %{{.*}}) -> (index) {
//       CHECK:       %[[CPAR:.*]] = arith.remui %[[CROUND]], %c2{{.*}} : index
//       CHECK:       %[[CPAR1:.*]] = arith.index_cast %[[CPAR]] : index to i1
//       CHECK:       nvgpu.mbarrier.try_wait.parity %[[QBAR]][%c0], %[[CPAR1]]
//       CHECK:       scf.for %[[CKB:.*]] = %c0 to %c2
//       CHECK:         %[[CPOS:.*]] = arith.addi %[[CKB]], %[[CBEFORE]] : index
//       CHECK:         arith.remui %[[CPOS]], %c2 : index
//       CHECK:       attn.epilogue
//  CHECK-NEXT:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
//  CHECK-NEXT:       nvgpu.mbarrier.arrive %[[QEMPTY]]
//  CHECK-NEXT:       %[[CNEXT:.*]] = arith.addi %[[CBEFORE]], %c2 : index
//  CHECK-NEXT:       scf.yield %[[CNEXT]] : index
//       CHECK: } {attn.persistent_ctas = 132 : i64, mapping
//        CTAS: {attn.persistent_ctas = 8 : i64
func.func @ring(%arg0: memref<1x1x128x64xbf16>, %arg1: memref<1x1x128x64xbf16>, %arg2: memref<1x1x128x64xbf16>, %arg3: memref<1x1x128x64xbf16>) {
  %false = arith.constant false
  %c16384 = arith.constant 16384 : index
  %c10000000 = arith.constant 10000000 : index
  %true = arith.constant true
  %c24576 = arith.constant 24576 : index
  %c8192 = arith.constant 8192 : index
  %cst = arith.constant dense<0.000000e+00> : vector<64x64xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : vector<64xf32>
  %cst_1 = arith.constant dense<0xFF800000> : vector<64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c64 = arith.constant 64 : index
  %cast = memref.cast %arg0 : memref<1x1x128x64xbf16> to memref<*xbf16>
  %0 = nvgpu.tma.create.descriptor %cast box[%c1, %c1, %c64, %c64] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  %cast_2 = memref.cast %arg1 : memref<1x1x128x64xbf16> to memref<*xbf16>
  %1 = nvgpu.tma.create.descriptor %cast_2 box[%c1, %c1, %c64, %c64] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  %cast_3 = memref.cast %arg2 : memref<1x1x128x64xbf16> to memref<*xbf16>
  %2 = nvgpu.tma.create.descriptor %cast_3 box[%c1, %c1, %c64, %c64] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  scf.forall (%arg4, %arg5, %arg6) in (2, 1, 1) {
    %3 = arith.muli %arg4, %c64 : index
    %4 = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %view = memref.view %4[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
    %view_4 = memref.view %4[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>
    %view_5 = memref.view %4[%c24576][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>
    %subview = memref.subview %view[0, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, strided<[4096, 64, 1]>, #gpu.address_space<workgroup>>
    %5 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
    %6 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %7 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %thread_id_x = gpu.thread_id  x
    %8 = arith.cmpi eq, %thread_id_x, %c0 : index
    nvgpu.mbarrier.init %5[%c0], %c1, predicate = %8 : <memorySpace = #gpu.address_space<workgroup>>
    nvgpu.mbarrier.init %6[%c0], %c1, predicate = %8 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %7[%c0], %c128, predicate = %8 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %6[%c1], %c1, predicate = %8 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %7[%c1], %c128, predicate = %8 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvvm.fence.mbarrier.init
    gpu.barrier
    attn.warp_specialize consumers(1) registers(24, 240) producer {
      scf.if %8 {
        nvgpu.mbarrier.arrive.expect_tx %5[%c0], %c8192 : <memorySpace = #gpu.address_space<workgroup>>
        %cast_6 = memref.cast %view : memref<1x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %0[%c0, %3, %c0, %c0], %5[%c0] to %cast_6 : <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
        scf.for %arg7 = %c0 to %c2 step %c1 {
          %9 = arith.remui %arg7, %c2 : index
          %10 = arith.divui %arg7, %c2 : index
          %11 = arith.remui %10, %c2 : index
          %12 = arith.index_cast %11 : index to i1
          %13 = arith.xori %12, %true : i1
          nvgpu.mbarrier.try_wait.parity %7[%9], %13, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          nvgpu.mbarrier.arrive.expect_tx %6[%9], %c16384 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          %14 = arith.muli %arg7, %c64 : index
          %subview_7 = memref.subview %view_4[%9, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %1[%c0, %14, %c0, %c0], %6[%9] to %subview_7 : <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
          %subview_8 = memref.subview %view_5[%9, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %2[%c0, %14, %c0, %c0], %6[%9] to %subview_8 : <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x64x64xbf16, strided<[4096, 4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
        }
      }
    } consumer {
      nvgpu.mbarrier.try_wait.parity %5[%c0], %false, %c10000000 : <memorySpace = #gpu.address_space<workgroup>>
      %9:3 = scf.for %arg7 = %c0 to %c2 step %c1 iter_args(%arg8 = %cst_1, %arg9 = %cst_0, %arg10 = %cst) -> (vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {
        %10 = arith.muli %arg7, %c64 : index
        %11 = arith.remui %arg7, %c2 : index
        %12 = arith.divui %arg7, %c2 : index
        %13 = arith.remui %12, %c2 : index
        %14 = arith.index_cast %13 : index to i1
        nvgpu.mbarrier.try_wait.parity %6[%11], %14, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
        %subview_6 = memref.subview %view_5[%11, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
        %subview_7 = memref.subview %view_4[%11, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
        %new_m, %new_l, %new_acc = attn.online_attention_mma q(%subview : memref<1x64x64xbf16, strided<[4096, 64, 1]>, #gpu.address_space<workgroup>>) kv(%subview_7, %subview_6 : memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>) keys(%10, %c128) rows(%3) state(%arg8, %arg9, %arg10 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
        %15 = nvgpu.mbarrier.arrive %7[%11] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
        scf.yield %new_m, %new_l, %new_acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>
      }
      attn.epilogue state(%9#0, %9#1, %9#2 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %arg3[%c0, %c0, %3, %c0] staging(%subview : memref<1x64x64xbf16, strided<[4096, 64, 1]>, #gpu.address_space<workgroup>>) : memref<1x1x128x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// FP8 stages O in a buffer of its own: Q is free after the K/V loops, so
// the next tile's Q loads while the epilogue runs. The permuters' ring
// positions carry over too.
// CHECK-LABEL: func.func @fp8
//       CHECK: attn.warp_specialize
//       CHECK:   scf.for %{{.*}} iter_args(%[[BEFORE:.*]] = %{{.*}}) -> (index) {
//       CHECK:     scf.if %{{.*}} {
//       CHECK:       scf.for %[[KB:.*]] = %c0 to %c2
//       CHECK:         %[[POS:.*]] = arith.addi %[[KB]], %[[BEFORE]] : index
//       CHECK:         nvgpu.mbarrier.try_wait.parity
//       CHECK:         nvvm.prmt
//       CHECK: } consumer {
//       CHECK:       scf.yield %{{.*}} : vector<64xf32>, vector<64xf32>, vector<64x64xf32>
//  CHECK-NEXT:     }
//  CHECK-NEXT:     nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
//  CHECK-NEXT:     nvgpu.mbarrier.arrive
//  CHECK-NEXT:     attn.epilogue
func.func @fp8(%arg0: memref<1x1x128x64xf8E4M3FN>, %arg1: memref<1x1x256x64xf8E4M3FN>, %arg2: memref<1x1x256x64xf8E4M3FN, strided<[16384, 16384, 1, 256]>>, %arg3: memref<1x1x128x64xbf16>, %arg4: memref<1x1xf32>, %arg5: memref<1x1xf32>, %arg6: memref<1x1xf32>) {
  %false = arith.constant false
  %c24576 = arith.constant 24576 : index
  %c10000000 = arith.constant 10000000 : index
  %true = arith.constant true
  %c57344 = arith.constant 57344 : index
  %c40960 = arith.constant 40960 : index
  %c8192 = arith.constant 8192 : index
  %cst = arith.constant dense<0.000000e+00> : vector<64x64xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : vector<64xf32>
  %cst_1 = arith.constant dense<0xFF800000> : vector<64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c64 = arith.constant 64 : index
  %cast = memref.cast %arg0 : memref<1x1x128x64xf8E4M3FN> to memref<*xf8E4M3FN>
  %0 = nvgpu.tma.create.descriptor %cast box[%c1, %c1, %c64, %c128] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  %cast_2 = memref.cast %arg1 : memref<1x1x256x64xf8E4M3FN> to memref<*xf8E4M3FN>
  %1 = nvgpu.tma.create.descriptor %cast_2 box[%c1, %c1, %c128, %c128] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  %transpose = memref.transpose %arg2 (d0, d1, d2, d3) -> (d0, d1, d3, d2) : memref<1x1x256x64xf8E4M3FN, strided<[16384, 16384, 1, 256]>> to memref<1x1x64x256xf8E4M3FN, strided<[16384, 16384, 256, 1]>>
  %cast_3 = memref.cast %transpose : memref<1x1x64x256xf8E4M3FN, strided<[16384, 16384, 256, 1]>> to memref<*xf8E4M3FN>
  %2 = nvgpu.tma.create.descriptor %cast_3 box[%c1, %c1, %c64, %c128] : memref<*xf8E4M3FN> -> <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
  scf.forall (%arg7, %arg8, %arg9) in (2, 1, 1) {
    %3 = arith.muli %arg7, %c64 : index
    %4 = memref.load %arg4[%c0, %c0] : memref<1x1xf32>
    %5 = memref.load %arg5[%c0, %c0] : memref<1x1xf32>
    %6 = arith.mulf %4, %5 : f32
    %7 = memref.load %arg6[%c0, %c0] : memref<1x1xf32>
    %8 = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %view = memref.view %8[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %view_4 = memref.view %8[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %view_5 = memref.view %8[%c40960][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c40960_6 = arith.constant 40960 : index
    %view_7 = memref.view %8[%c40960_6][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x512x4xi32, #gpu.address_space<workgroup>>
    %subview = memref.subview %view[0, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1]>, #gpu.address_space<workgroup>>
    %view_8 = memref.view %8[%c57344][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, #gpu.address_space<workgroup>>
    %9 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
    %10 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %11 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %12 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %thread_id_x = gpu.thread_id  x
    %13 = arith.cmpi eq, %thread_id_x, %c0 : index
    nvgpu.mbarrier.init %9[%c0], %c1, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>>
    %c96 = arith.constant 96 : index
    nvgpu.mbarrier.init %10[%c0], %c96, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %11[%c0], %c128, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %c1_9 = arith.constant 1 : index
    nvgpu.mbarrier.init %12[%c0], %c1_9, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %c96_10 = arith.constant 96 : index
    nvgpu.mbarrier.init %10[%c1], %c96_10, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %11[%c1], %c128, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %c1_11 = arith.constant 1 : index
    nvgpu.mbarrier.init %12[%c1], %c1_11, predicate = %13 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvvm.fence.mbarrier.init
    gpu.barrier
    attn.warp_specialize consumers(1) registers(40, 240) producer {
      scf.if %13 {
        nvgpu.mbarrier.arrive.expect_tx %9[%c0], %c8192 : <memorySpace = #gpu.address_space<workgroup>>
        %cast_13 = memref.cast %view : memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %0[%c0, %3, %c0, %c0], %9[%c0] to %cast_13 : <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %15 = arith.remui %arg10, %c2 : index
          %16 = arith.divui %arg10, %c2 : index
          %17 = arith.remui %16, %c2 : index
          %18 = arith.index_cast %17 : index to i1
          %19 = arith.xori %18, %true : i1
          nvgpu.mbarrier.try_wait.parity %11[%15], %19, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          nvgpu.mbarrier.arrive.expect_tx %12[%15], %c24576 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          %20 = arith.muli %arg10, %c128 : index
          %subview_14 = memref.subview %view_4[%15, 0, 0, 0] [1, 1, 128, 128] [1, 1, 1, 1] : memref<2x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x128x128xf8E4M3FN, strided<[16384, 16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %1[%c0, %20, %c0, %c0], %12[%15] to %subview_14 : <tensor = memref<1x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x128x128xf8E4M3FN, strided<[16384, 16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          %subview_15 = memref.subview %view_5[%15, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<2x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %2[%20, %c0, %c0, %c0], %12[%15] to %subview_15 : <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        }
      }
      %thread_id_x_12 = gpu.thread_id  x
      %c32 = arith.constant 32 : index
      %14 = arith.cmpi uge, %thread_id_x_12, %c32 : index
      scf.if %14 {
        %c32_13 = arith.constant 32 : index
        %15 = arith.subi %thread_id_x_12, %c32_13 : index
        %c1_14 = arith.constant 1 : index
        scf.for %arg10 = %c0 to %c2 step %c1_14 {
          %c2_15 = arith.constant 2 : index
          %16 = arith.remui %arg10, %c2_15 : index
          %17 = arith.divui %arg10, %c2_15 : index
          %c2_16 = arith.constant 2 : index
          %18 = arith.remui %17, %c2_16 : index
          %19 = arith.index_cast %18 : index to i1
          %c10000000_17 = arith.constant 10000000 : index
          nvgpu.mbarrier.try_wait.parity %12[%16], %19, %c10000000_17 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          %c96_18 = arith.constant 96 : index
          %c512 = arith.constant 512 : index
          scf.for %arg11 = %15 to %c512 step %c96_18 {
            %c0_19 = arith.constant 0 : index
            %21 = vector.load %view_7[%16, %arg11, %c0_19] : memref<2x512x4xi32, #gpu.address_space<workgroup>>, vector<4xi32>
            %22 = vector.extract %21[0] : i32 from vector<4xi32>
            %23 = vector.extract %21[1] : i32 from vector<4xi32>
            %24 = vector.extract %21[2] : i32 from vector<4xi32>
            %25 = vector.extract %21[3] : i32 from vector<4xi32>
            %c21520_i32 = arith.constant 21520 : i32
            %26 = nvvm.prmt <default> %c21520_i32, %22, %24 : i32
            %c30258_i32 = arith.constant 30258 : i32
            %27 = nvvm.prmt <default> %c30258_i32, %22, %24 : i32
            %c21520_i32_20 = arith.constant 21520 : i32
            %28 = nvvm.prmt <default> %c21520_i32_20, %23, %25 : i32
            %c30258_i32_21 = arith.constant 30258 : i32
            %29 = nvvm.prmt <default> %c30258_i32_21, %23, %25 : i32
            %30 = vector.from_elements %26, %27, %28, %29 : vector<4xi32>
            vector.store %30, %view_7[%16, %arg11, %c0_19] : memref<2x512x4xi32, #gpu.address_space<workgroup>>, vector<4xi32>
          }
          nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
          %20 = nvgpu.mbarrier.arrive %10[%16] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
        }
      }
    } consumer {
      nvgpu.mbarrier.try_wait.parity %9[%c0], %false, %c10000000 : <memorySpace = #gpu.address_space<workgroup>>
      %14:3 = scf.for %arg10 = %c0 to %c2 step %c1 iter_args(%arg11 = %cst_1, %arg12 = %cst_0, %arg13 = %cst) -> (vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {
        %15 = arith.muli %arg10, %c128 : index
        %16 = arith.remui %arg10, %c2 : index
        %17 = arith.divui %arg10, %c2 : index
        %18 = arith.remui %17, %c2 : index
        %19 = arith.index_cast %18 : index to i1
        nvgpu.mbarrier.try_wait.parity %10[%16], %19, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
        %subview_12 = memref.subview %view_5[%16, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<2x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        %subview_13 = memref.subview %view_4[%16, 0, 0, 0] [1, 1, 128, 128] [1, 1, 1, 1] : memref<2x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x128x128xf8E4M3FN, strided<[16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        %new_m, %new_l, %new_acc = attn.online_attention_mma q(%subview : memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1]>, #gpu.address_space<workgroup>>) kv(%subview_13, %subview_12 : memref<1x128x128xf8E4M3FN, strided<[16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>) keys(%15, %c256) rows(%3) descale(%6) state(%arg11, %arg12, %arg13 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
        %20 = nvgpu.mbarrier.arrive %11[%16] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
        scf.yield %new_m, %new_l, %new_acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>
      }
      attn.epilogue state(%14#0, %14#1, %14#2 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %arg3[%c0, %c0, %3, %c0] staging(%view_8 : memref<1x64x64xbf16, #gpu.address_space<workgroup>>) descale(%7) : memref<1x1x128x64xbf16>
    } {attn.v_permuted}
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

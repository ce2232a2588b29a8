// Every error attn-persistent-ctas can raise (on the bf16 ring of
// attn-persistent-ctas.mlir, changed as each case says).
// RUN: attn-opt %s --split-input-file --attn-persistent-ctas -verify-diagnostics -o /dev/null
// RUN: not attn-opt %s --attn-persistent-ctas=ctas=0 2>&1 | FileCheck %s --check-prefix=CTAS
// CTAS: attn-opt: error: attn-persistent-ctas: ctas must be a CTA count in [1, 2^31 - 1], but got 0
// Split-KV tiles: test/Transforms/attn-tma-ring-split-kv.mlir (PERS).

// The CTA loop was rebound by attn-cta-order (attn.heaviest_first).
func.func @ordered(%arg0: memref<1x1x128x64xbf16>, %arg1: memref<1x1x128x64xbf16>, %arg2: memref<1x1x128x64xbf16>, %arg3: memref<1x1x128x64xbf16>) {
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
  // expected-error @+1 {{attn-persistent-ctas: the CTA loop is already in heaviest-first launch order (attn-cta-order); persistent CTAs deal their tiles in an order of their own: leave attn-cta-order out}}
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
  } {attn.heaviest_first, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// Not the ring of attn-tma-ring: the consumer does not wait for Q.
func.func @no_q_wait(%arg0: memref<1x1x128x64xbf16>, %arg1: memref<1x1x128x64xbf16>, %arg2: memref<1x1x128x64xbf16>, %arg3: memref<1x1x128x64xbf16>) {
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
    // expected-error @+1 {{attn-persistent-ctas: expected a consumer that waits for Q, runs K/V loops and an attn.epilogue, and a producer thread with a K/V loop; run attn-tma-ring first}}
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

// A value of the CTA body that depends on the tile has a side effect.
func.func @side_effect(%arg0: memref<1x1x128x64xbf16>, %arg1: memref<1x1x128x64xbf16>, %arg2: memref<1x1x128x64xbf16>, %arg3: memref<1x1x128x64xbf16>) {
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
  %log = memref.alloca() : memref<1xindex>
  scf.forall (%arg4, %arg5, %arg6) in (2, 1, 1) {
    // expected-error @+1 {{attn-persistent-ctas: re-creates the per-tile values of the CTA body, which must be free of side effects}}
    memref.store %arg4, %log[%c0] : memref<1xindex>
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

// Every error attn-fp8-v-permute can raise: a ring not of attn-tma-ring's
// form (the FP8 ring of attn-fp8-v-permute.mlir without the consumers' wait
// for Q).
// RUN: attn-opt %s --attn-fp8-v-permute -verify-diagnostics -o /dev/null

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
    %subview = memref.subview %view[0, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1]>, #gpu.address_space<workgroup>>
    %view_6 = memref.view %8[%c57344][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x64x64xbf16, #gpu.address_space<workgroup>>
    %9 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
    %10 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %11 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    %thread_id_x = gpu.thread_id  x
    %12 = arith.cmpi eq, %thread_id_x, %c0 : index
    nvgpu.mbarrier.init %9[%c0], %c1, predicate = %12 : <memorySpace = #gpu.address_space<workgroup>>
    nvgpu.mbarrier.init %10[%c0], %c1, predicate = %12 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %11[%c0], %c128, predicate = %12 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %10[%c1], %c1, predicate = %12 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvgpu.mbarrier.init %11[%c1], %c128, predicate = %12 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    nvvm.fence.mbarrier.init
    gpu.barrier
    // expected-error @+1 {{attn-fp8-v-permute: expected a consumer that waits for Q, runs K/V loops and an attn.epilogue, and a producer thread with a K/V loop; run attn-tma-ring first}}
    attn.warp_specialize consumers(1) registers(40, 240) producer {
      scf.if %12 {
        nvgpu.mbarrier.arrive.expect_tx %9[%c0], %c8192 : <memorySpace = #gpu.address_space<workgroup>>
        %cast_7 = memref.cast %view : memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %0[%c0, %3, %c0, %c0], %9[%c0] to %cast_7 : <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %13 = arith.remui %arg10, %c2 : index
          %14 = arith.divui %arg10, %c2 : index
          %15 = arith.remui %14, %c2 : index
          %16 = arith.index_cast %15 : index to i1
          %17 = arith.xori %16, %true : i1
          nvgpu.mbarrier.try_wait.parity %11[%13], %17, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          nvgpu.mbarrier.arrive.expect_tx %10[%13], %c24576 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
          %18 = arith.muli %arg10, %c128 : index
          %subview_8 = memref.subview %view_4[%13, 0, 0, 0] [1, 1, 128, 128] [1, 1, 1, 1] : memref<2x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x128x128xf8E4M3FN, strided<[16384, 16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %1[%c0, %18, %c0, %c0], %10[%13] to %subview_8 : <tensor = memref<1x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x128x128xf8E4M3FN, strided<[16384, 16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          %subview_9 = memref.subview %view_5[%13, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<2x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
          nvgpu.tma.async.load %2[%18, %c0, %c0, %c0], %10[%13] to %subview_9 : <tensor = memref<1x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> memref<1x1x64x128xf8E4M3FN, strided<[8192, 8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        }
      }
    } consumer {
      %13:3 = scf.for %arg10 = %c0 to %c2 step %c1 iter_args(%arg11 = %cst_1, %arg12 = %cst_0, %arg13 = %cst) -> (vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {
        %14 = arith.muli %arg10, %c128 : index
        %15 = arith.remui %arg10, %c2 : index
        %16 = arith.divui %arg10, %c2 : index
        %17 = arith.remui %16, %c2 : index
        %18 = arith.index_cast %17 : index to i1
        nvgpu.mbarrier.try_wait.parity %10[%15], %18, %c10000000 : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
        %subview_7 = memref.subview %view_5[%15, 0, 0, 0] [1, 1, 64, 128] [1, 1, 1, 1] : memref<2x1x64x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        %subview_8 = memref.subview %view_4[%15, 0, 0, 0] [1, 1, 128, 128] [1, 1, 1, 1] : memref<2x1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x128x128xf8E4M3FN, strided<[16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>
        %new_m, %new_l, %new_acc = attn.online_attention_mma q(%subview : memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1]>, #gpu.address_space<workgroup>>) kv(%subview_8, %subview_7 : memref<1x128x128xf8E4M3FN, strided<[16384, 128, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<1x64x128xf8E4M3FN, strided<[8192, 128, 1], offset: ?>, #gpu.address_space<workgroup>>) keys(%14, %c256) rows(%3) descale(%6) state(%arg11, %arg12, %arg13 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
        %19 = nvgpu.mbarrier.arrive %11[%15] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2> -> !nvgpu.mbarrier.token
        scf.yield %new_m, %new_l, %new_acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>
      }
      attn.epilogue state(%13#0, %13#1, %13#2 : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %arg3[%c0, %c0, %3, %c0] staging(%view_6 : memref<1x64x64xbf16, #gpu.address_space<workgroup>>) descale(%7) : memref<1x1x128x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// REQUIRES: ptxas
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=head --attn-to-cubin="format=none" | FileCheck %s
// RUN: rm -rf %t && attn-opt %s --attn-quantize-fp8="qk-granularity=head hadamard=true" --attn-to-cubin | %python %S/Inputs/gpu-binary-ptx.py %t/had > /dev/null
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=tensor --attn-to-cubin | %python %S/Inputs/gpu-binary-ptx.py %t/plain | FileCheck %s --check-prefix=NAMES
// RUN: FileCheck %s --check-prefix=AMAX < %t/plain/quantized_kernel.ptx
// RUN: FileCheck %s --check-prefix=QUANT < %t/plain/quantized_kernel_0.ptx
// RUN: FileCheck %s --check-prefix=ATTN < %t/plain/quantized_kernel_3.ptx
// RUN: FileCheck %s --check-prefix=TILECOPY < %t/plain/quantized_kernel_2.ptx
// RUN: for k in %t/plain/*.ptx %t/had/*.ptx; do %ptxas -arch=sm_90a -v $k -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS || exit 1; done

// attn-quantize-fp8 then attn-to-cubin: the quantize step is
// GPU kernels launched before the FP8 tensor-core attention, on the same
// stream:
//   amax     one kernel for Q, K and V: CTAs of 256 threads, a group cut
//            over ceil(elements / 16384) CTAs, each storing its max
//            (a tree in shared memory, no atomics) to the partials
//   copy     per operand: the descale from the group's partials (amax > 0 ?
//            amax / 448 : 1), then truncf(x / descale) -> e4m3 (CTAs of 16
//            rows, a thread per column; V into its V^T storage [B, Hkv, D,
//            Nk] through a 128-key tile in shared memory, 16-byte stores)
// B1 Hq4 Hkv2 N256 D128, causal: Q's group is 2 heads x 256 x 128 = 65536
// elements, 4 CTAs per group, 8 in all; K's and V's 32768, 2 per group, 4
// each: 16 amax CTAs. Copies: 16 rows per CTA for Q and K (64 and 32 CTAs),
// 128 keys per CTA for V^T (4 CTAs).
// CHECK-LABEL: func.func @quantized
//       CHECK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x256x128xf8E4M3FN>
//       CHECK:   %[[QD:.*]] = memref.alloc() : memref<1x2xf32>
//       CHECK:   %[[QP:.*]] = memref.alloc() : memref<1x2x4xf32>
//       CHECK:   %[[K8:.*]] = memref.alloc() : memref<1x2x256x128xf8E4M3FN>
//       CHECK:   %[[KD:.*]] = memref.alloc() : memref<1x2xf32>
//       CHECK:   %[[KP:.*]] = memref.alloc() : memref<1x2x2xf32>
// V: the quantize kernel writes the V^T storage (256 keys: rows already
// 16-byte multiples, no padding), which the attention's TMA descriptor of V
// reads.
//       CHECK:   %[[VT:.*]] = memref.alloc() : memref<1x2x128x256xf8E4M3FN>
//       CHECK:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//       CHECK:   %[[VP:.*]] = memref.alloc() : memref<1x2x2xf32>
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel::@quantized_kernel blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args(%arg0 : memref<1x4x256x128xbf16>, %arg1 : memref<1x2x256x128xbf16>, %arg2 : memref<1x2x256x128xbf16>, %[[QP]] : memref<1x2x4xf32>, %[[KP]] : memref<1x2x2xf32>, %[[VP]] : memref<1x2x2xf32>)
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel_0::@quantized_kernel blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%[[QP]] : memref<1x2x4xf32>, %[[QD]] : memref<1x2xf32>, %arg0 : memref<1x4x256x128xbf16>, %[[Q8]] : memref<1x4x256x128xf8E4M3FN>)
//  CHECK-NEXT:   memref.dealloc %[[QP]]
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel_1::@quantized_kernel blocks in (%c32, %c1, %c1) threads in (%c128, %c1, %c1) args(%[[KP]] : memref<1x2x2xf32>, %[[KD]] : memref<1x2xf32>, %arg1 : memref<1x2x256x128xbf16>, %[[K8]] : memref<1x2x256x128xf8E4M3FN>)
//  CHECK-NEXT:   memref.dealloc %[[KP]]
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel_2::@quantized_kernel blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[VP]] : memref<1x2x2xf32>, %[[VD]] : memref<1x2xf32>, %arg2 : memref<1x2x256x128xbf16>, %[[VT]] : memref<1x2x128x256xf8E4M3FN>)
//  CHECK-NEXT:   memref.dealloc %[[VP]]
//       CHECK:   gpu.launch_func @quantized_kernel_3::@quantized_kernel blocks in (%c8, %c1, %c1) threads in (%c384, %c1, %c1) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %[[QD]] : memref<1x2xf32>, %[[KD]] : memref<1x2xf32>, %[[VD]] : memref<1x2xf32>, %arg3 : memref<1x4x256x128xbf16>)
//       CHECK:   memref.dealloc %[[Q8]]
// NAMES-COUNT-4: quantized_kernel
// NAMES-NEXT: quantized_kernel_3
// AMAX: ld.global.v4
// AMAX-NOT: atom.
// AMAX: bar.sync
// AMAX: st.global.b32
// QUANT: fma.rn.f32
// QUANT: cvt.rn.satfinite.e4m3x2.f32
// QUANT: st.global.b8
// TILECOPY: ld.shared.v4.b32
// TILECOPY: st.global.v4.b32
// ATTN: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
!q = memref<1x4x256x128xbf16>
!kv = memref<1x2x256x128xbf16>
func.func @quantized(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) {causal}
  return
}

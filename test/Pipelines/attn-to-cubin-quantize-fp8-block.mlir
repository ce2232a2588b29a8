// REQUIRES: ptxas
// RUN: attn-opt %s --attn-quantize-fp8 --attn-to-cubin="format=none" | FileCheck %s
// RUN: rm -rf %t && attn-opt %s --attn-quantize-fp8 --attn-to-cubin | %python %S/Inputs/gpu-binary-ptx.py %t/plain | FileCheck %s --check-prefix=NAMES
// RUN: attn-opt %s --attn-quantize-fp8=hadamard=true --attn-to-cubin | %python %S/Inputs/gpu-binary-ptx.py %t/had > /dev/null
// RUN: FileCheck %s --check-prefix=BLOCKQ < %t/plain/quantized_kernel.ptx
// RUN: FileCheck %s --check-prefix=ATTN < %t/plain/quantized_kernel_1.ptx
// RUN: for k in %t/plain/*.ptx %t/had/*.ptx; do %ptxas -arch=sm_90a -v $k -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS || exit 1; done

// attn-quantize-fp8 with its defaults (qk-granularity=block: one Q scale per
// 128 rows of a query head, one K scale per 128 keys of a KV head, the FP8
// tiles) then attn-to-cubin. B1 Hq4 Hkv2 N1024 D128. Two quantize
// kernels, no atomics. The first holds every amax: a CTA of 256 threads
// per Q or K scale block (8 x 4 CTAs for Q, 8 x 2 for K) loads its
// 128 x 128 block in 16-byte chunks, reduces the amax in shared memory (two
// levels, barriers between), writes the descale and the e4m3 copy in
// 8-byte stores; V's per-head groups take 8 CTAs each, storing their
// maxima. The second takes V's descales from those and writes V^T. The
// tensor-core attention reads q_descale[b, h, q block] once per CTA and
// k_descale[b, kv head, k block] per K/V block.
// CHECK-LABEL: func.func @quantized
//       CHECK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x1024x128xf8E4M3FN>
//  CHECK-NEXT:   %[[QD:.*]] = memref.alloc() : memref<1x4x8xf32>
//  CHECK-NEXT:   %[[K8:.*]] = memref.alloc() : memref<1x2x1024x128xf8E4M3FN>
//  CHECK-NEXT:   %[[KD:.*]] = memref.alloc() : memref<1x2x8xf32>
//  CHECK-NEXT:   %[[VT:.*]] = memref.alloc() : memref<1x2x128x1024xf8E4M3FN>
//  CHECK-NEXT:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//  CHECK-NEXT:   %[[VP:.*]] = memref.alloc() : memref<1x2x8xf32>
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel::@quantized_kernel blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1) args(%arg0 : memref<1x4x1024x128xbf16>, %arg1 : memref<1x2x1024x128xbf16>, %arg2 : memref<1x2x1024x128xbf16>, %[[QD]] : memref<1x4x8xf32>, %[[Q8]] : memref<1x4x1024x128xf8E4M3FN>, %[[KD]] : memref<1x2x8xf32>, %[[K8]] : memref<1x2x1024x128xf8E4M3FN>, %[[VP]] : memref<1x2x8xf32>)
//  CHECK-NEXT:   gpu.launch_func @quantized_kernel_0::@quantized_kernel blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[VP]] : memref<1x2x8xf32>, %[[VD]] : memref<1x2xf32>, %arg2 : memref<1x2x1024x128xbf16>, %[[VT]] : memref<1x2x128x1024xf8E4M3FN>)
//  CHECK-NEXT:   memref.dealloc %[[VP]]
//       CHECK:   gpu.launch_func @quantized_kernel_1::@quantized_kernel blocks in (%c32, %c1, %c1) threads in (%c384, %c1, %c1) dynamic_shared_memory_size %{{.*}} args({{.*}}%[[VD]] : memref<1x2xf32>, %[[QD]] : memref<1x4x8xf32>, %[[KD]] : memref<1x2x8xf32>
// NAMES-COUNT-2: quantized_kernel
// NAMES-NEXT: quantized_kernel_1
// BLOCKQ: ld.global.v4.b32
// BLOCKQ: st.shared.b32
// BLOCKQ: bar.sync
// BLOCKQ: ld.shared.b32
// BLOCKQ: fma.rn.f32
// BLOCKQ: cvt.rn.satfinite.e4m3x2.f32
// BLOCKQ: st.global.v2.b32
// BLOCKQ-NOT: atom.
// ATTN: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
!q = memref<1x4x1024x128xbf16>
!kv = memref<1x2x1024x128xbf16>
func.func @quantized(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q)
  return
}

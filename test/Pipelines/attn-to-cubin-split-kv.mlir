// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-cubin="format=none splits=16" | FileCheck %s
// RUN: attn-opt %s --attn-to-cubin="format=none splits=16 path=fma" | FileCheck %s --check-prefix=FMA
// RUN: rm -rf %t && attn-opt %s --attn-to-cubin="splits=16" | %python %S/Inputs/gpu-binary-ptx.py %t/s16 | FileCheck %s --check-prefix=NAMES
// RUN: %ptxas -arch=sm_90a -v %t/s16/decode_kernel.ptx -o %t/p.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_90a -v %t/s16/decode_kernel_0.ptx -o %t/c.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t/s16/decode_kernel.ptx
// More splits than K/V blocks (32 blocks of 128 keys, 128 splits: 96 empty).
// RUN: attn-opt %s --attn-to-cubin="splits=128" | %python %S/Inputs/gpu-binary-ptx.py %t/s128 > /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/s128/decode_kernel.ptx -o %t/p128.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s --attn-to-cubin="splits=16 path=fma" | %python %S/Inputs/gpu-binary-ptx.py %t/fma > /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/fma/decode_kernel.ptx -o %t/f.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_90a -v %t/fma/decode_kernel_0.ptx -o %t/fc.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// attn-to-cubin with split-KV (the decode case with a tail: B1 Hq16
// Hkv8 Nq1 Nk4000 D128 bf16, 16 splits): two kernels in order on the host,
// the fp32 workspace (O_s [S, B, Hq, Nq, D], LSE_s [S, B, Hq, Nq]) passed
// from the first to the second. The partial attention is the tensor-core
// forward (TMA descriptors of Q, K, V; one CTA per (Q block, split), head,
// batch: 16 x 16 x 1; BLOCK_M 64 unless given: one consumer warpgroup), the combine the CUDA-core kernel (one thread per row
// and 32-column slice, BLOCK_M 64 x 4 lanes) writing O and LSE.
// CHECK-LABEL: func.func @decode
//       CHECK:   %[[OP:.*]] = memref.alloc() : memref<16x1x16x1x128xf32>
//       CHECK:   %[[LP:.*]] = memref.alloc() : memref<16x1x16x1xf32>
//       CHECK:   gpu.launch_func @decode_kernel::@decode_kernel blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %[[OP]] : memref<16x1x16x1x128xf32>, %[[LP]] : memref<16x1x16x1xf32>)
//  CHECK-NEXT:   gpu.launch_func @decode_kernel_0::@decode_kernel blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[OP]] : memref<16x1x16x1x128xf32>, %[[LP]] : memref<16x1x16x1xf32>, %arg3 : memref<1x16x1x128xbf16>, %arg4 : memref<1x16x1xf32>)
//  CHECK-NEXT:   memref.dealloc %[[OP]]
//  CHECK-NEXT:   memref.dealloc %[[LP]]
// The partial kernel keeps the tensor-core kernel's by-value tensor maps;
// the combine takes memrefs only.
//       CHECK:   gpu.module @decode_kernel
//       CHECK:     llvm.func @decode_kernel(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}
//       CHECK:   gpu.module @decode_kernel_0
//   CHECK-NOT:     nvvm.grid_constant
//       CHECK:     llvm.func @decode_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr,
// FMA-LABEL: func.func @decode
//       FMA:   gpu.launch_func @decode_kernel::@decode_kernel blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1) args(%alloc
//  FMA-NEXT:   gpu.launch_func @decode_kernel_0::@decode_kernel blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args(%alloc
// NAMES: decode_kernel
// NAMES-NEXT: decode_kernel_0
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// The partial kernel: the wgmma forward, fp32 O_s in 8-byte stores.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: cp.async.bulk.tensor.4d
// PTX-DAG: st.global.v2.b32
func.func @decode(%q: memref<1x16x1x128xbf16>, %k: memref<1x8x4000x128xbf16>,
                  %v: memref<1x8x4000x128xbf16>, %o: memref<1x16x1x128xbf16>,
                  %lse: memref<1x16x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x16x1x128xbf16>, memref<1x8x4000x128xbf16>,
                     memref<1x8x4000x128xbf16>) outs(%o : memref<1x16x1x128xbf16>)
                 lse(%lse : memref<1x16x1xf32>) {causal}
  return
}

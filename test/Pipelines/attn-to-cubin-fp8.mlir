// FP8 (e4m3) on sm_90a takes the tensor-core path (FlashAttention-3 section
// 3.3): both GEMMs are e4m3 wgmma k32 (QK^T from shared memory, P V with P
// in registers), P is converted with cvt.rn.satfinite.e4m3x2 and used in
// the accumulator's key order, which the producer warps give V^T with byte
// permutes in shared memory. An FP8 call is
// never silently computed in another precision: the CUDA-core path refuses
// it. The host pipeline lowers it too.
// RUN: attn-opt %s --attn-to-cubin="chip=sm_90a format=isa" | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a path=fma format=none" 2>&1 | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-to-cpu | FileCheck %s --check-prefix=CPU

// The producer's V^T permutation, then the consumers' GEMMs and P.
// PTX: prmt.b32
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1;
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {{{.*}}}, %rd{{[0-9]+}}, 1, 1, 1;
// PTX-NOT: .bf16.bf16
// FMA: error: attn-distribute-rows: FP8 (an f8E4M3FN tile or its descale) has no lowering here
// FP8 data is moved as i8 on the host.
// CPU: llvm.func @fp8
// CPU-NOT: f8E4M3FN
!q = memref<1x4x256x128xf8E4M3FN>
!v = memref<1x2x256x128xf8E4M3FN, strided<[65536, 32768, 1, 256]>>
func.func @fp8(%q: !q, %k: memref<1x2x256x128xf8E4M3FN>, %v: !v, %o: memref<1x4x256x128xbf16>,
               %qd: memref<1x2xf32>, %kd: memref<1x2xf32>, %vd: memref<1x2xf32>) {
  attn.attention ins(%q, %k, %v : !q, memref<1x2x256x128xf8E4M3FN>, !v)
                 outs(%o : memref<1x4x256x128xbf16>)
                 descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>,
                         memref<1x2xf32>) {causal}
  return
}

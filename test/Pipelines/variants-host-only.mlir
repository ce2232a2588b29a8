// Softcapping, ALiBi and sinks lower to the host only so far, key masks to
// the host and the tensor cores: the GPU paths without a lowering and
// attn-compile (whose manifest records no variant yet) refuse them with a
// clear error instead of lowering them wrong (attn-to-cpu runs them:
// unittests/CpuNumericsTest.cpp). attn-compile stops at its first
// kernel's error (softcap, sinks, ALiBi:
// test/Target/bundle-attention-variants.test).
// RUN: not attn-opt %s --split-input-file --attn-to-cubin="format=none" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --split-input-file --attn-to-cubin="format=none path=fma" 2>&1 | FileCheck %s --check-prefix=FMA
// RUN: rm -rf %t && not attn-compile %s -o %t 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-opt %s --split-input-file --attn-to-cpu -o /dev/null

// The tensor-core path lowers key masks (test/Conversion/
// attn-lower-to-wgmma-key-mask.mlir); the CUDA-core path refuses them.
// WGMMA-NOT: key masks
// FMA: error: attn-distribute-rows: key masks (#attn.key_mask: sliding window, chunked, prefix-LM) have no lowering here: they lower to the host (--attn-to-cpu) and the tensor-core path (attn-async-pipeline)
// COMPILE: error: 'attn.attention' op bundle kernels take no 'key_mask' yet: the manifest records no attention variant (they lower with attn-opt: --attn-to-cpu, key masks also --attn-to-cubin)
func.func @window(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      {causal, key_mask = #attn.key_mask<left = 127>}
  return
}

// -----

// WGMMA: error: attn-tma-ring: logit softcapping has no GPU lowering yet: it lowers to the host only (--attn-to-cpu)
// FMA: error: attn-distribute-rows: logit softcapping has no GPU lowering yet
func.func @softcap(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      {softcap = 50.0 : f32}
  return
}

// -----

// WGMMA: error: attn-tma-ring: ALiBi has no GPU lowering yet: it lowers to the host only (--attn-to-cpu)
// FMA: error: attn-distribute-rows: ALiBi has no GPU lowering yet
func.func @alibi(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                 %slopes: memref<4xf32>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      alibi(%slopes : memref<4xf32>)
  return
}

// -----

// WGMMA: error: attn-tma-ring: attention sinks have no GPU lowering yet: they lower to the host only (--attn-to-cpu)
// FMA: error: attn-distribute-rows: attention sinks have no GPU lowering yet
func.func @sinks(%q: memref<1x4x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                 %sinks: memref<4xf32>) {
  attn.attention ins(%q, %q, %q : memref<1x4x256x64xbf16>, memref<1x4x256x64xbf16>,
                     memref<1x4x256x64xbf16>) outs(%o : memref<1x4x256x64xbf16>)
      sinks(%sinks : memref<4xf32>)
  return
}

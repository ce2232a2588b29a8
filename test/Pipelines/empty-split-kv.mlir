// A split-KV lowering of an op with an empty O (a static B or Nq of 0) is the
// unsplit one (nothing to split), on the CPU and the GPU paths alike; it
// used to fail on a generated memref.subview into the empty dimension.
// RUN: attn-opt %s --attn-to-cpu=splits=3 | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-to-cubin="format=none splits=4" | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-to-cubin="format=none splits=4 path=fma" | FileCheck %s --check-prefix=GPU
// CPU: llvm.func @empty_batch
// CPU: llvm.func @empty_queries
// GPU: gpu.launch_func
// GPU-NOT: partial

func.func @empty_batch(%q: memref<0x4x128x64xbf16>, %k: memref<0x4x128x64xbf16>, %v: memref<0x4x128x64xbf16>, %o: memref<0x4x128x64xbf16>, %lse: memref<0x4x128xf32>) {
  attn.attention ins(%q, %k, %v : memref<0x4x128x64xbf16>, memref<0x4x128x64xbf16>, memref<0x4x128x64xbf16>) outs(%o : memref<0x4x128x64xbf16>) lse(%lse : memref<0x4x128xf32>) {causal}
  return
}

func.func @empty_queries(%q: memref<1x4x0x64xbf16>, %k: memref<1x4x128x64xbf16>, %v: memref<1x4x128x64xbf16>, %o: memref<1x4x0x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x0x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) outs(%o : memref<1x4x0x64xbf16>)
  return
}

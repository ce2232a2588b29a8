// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=8 splits=3 pack-gqa=true" | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=8 splits=0 sm-count=16" | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=8" | FileCheck %s --check-prefix=UNSPLIT

// attn-to-cpu with split-KV (attn-split-kv) and GQA packing (attn-tile
// pack-gqa): everything lowers to the LLVM dialect; the fp32 workspace is
// allocated and freed on the host (malloc / free). Numerics:
// unittests/CpuDecodeNumericsTest.cpp.
// CHECK-LABEL: llvm.func @decode
//       CHECK:   llvm.call @malloc
//       CHECK:   llvm.call @free
//   CHECK-NOT:   attn.
// With 16 SMs, splits=0 takes min(ceil(16 / 4), 256 / 256) = 1: unsplit.
// AUTO-LABEL: llvm.func @decode
//   AUTO-NOT:   llvm.call @malloc
// UNSPLIT-LABEL: llvm.func @decode
//   UNSPLIT-NOT:   llvm.call @malloc
func.func @decode(%q: memref<1x4x1x16xbf16>, %k: memref<1x2x256x16xbf16>,
                  %v: memref<1x2x256x16xbf16>, %o: memref<1x4x1x16xbf16>,
                  %lse: memref<1x4x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x1x16xbf16>, memref<1x2x256x16xbf16>,
                     memref<1x2x256x16xbf16>) outs(%o : memref<1x4x1x16xbf16>)
                 lse(%lse : memref<1x4x1xf32>) {causal}
  return
}

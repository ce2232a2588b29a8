// The GPU paths have no f32 attention yet, and the CUDA-core path no GQA
// packing (host first); attn-to-cubin, its passes and
// attn-compile refuse them with a clear error instead of lowering them
// wrong. Split-KV lowers (attn-to-cubin-split-kv.mlir), GQA packing on the
// tensor cores (attn-tma-ring-gqa-pack.mlir); attn-lower-to-nvvm asks
// for its ops tiled.
// RUN: not attn-opt %s --split-input-file --attn-to-cubin="format=none" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --split-input-file --attn-to-cubin="format=none path=fma" 2>&1 | FileCheck %s --check-prefix=FMA
// RUN: not attn-opt %s --split-input-file --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64 pack-gqa=true" --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=PACKFMA
// RUN: rm -rf %t && not attn-compile %s -o %t 2>&1 | FileCheck %s --check-prefix=COMPILE

// WGMMA-NOT: error: 'attn.epilogue'
// FMA-NOT: error: 'attn.epilogue'
// NVVM: error: 'attn.partial_attention' op attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile
func.func @partial(%q: memref<1x4x1x64xbf16>, %k: memref<1x2x256x64xbf16>,
                   %op: memref<2x1x4x1x64xf32>, %lp: memref<2x1x4x1xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<1x2x256x64xbf16>,
                             memref<1x2x256x64xbf16>)
      outs(%op, %lp : memref<2x1x4x1x64xf32>, memref<2x1x4x1xf32>)
  return
}

// -----

// WGMMA-NOT: error: 'attn.combine_step'
// NVVM: error: 'attn.decode_combine' op attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile
func.func @combine(%op: memref<2x1x4x1x64xf32>, %lp: memref<2x1x4x1xf32>,
                   %o: memref<1x4x1x64xbf16>) {
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x64xf32>, memref<2x1x4x1xf32>)
      outs(%o : memref<1x4x1x64xbf16>)
  return
}

// -----

// WGMMA: error: attn-tma-ring: f32 attention has no GPU lowering yet (it lowers to the host only: --attn-to-cpu)
// FMA: error: attn-distribute-rows: f32 attention has no GPU lowering yet
// COMPILE: error: 'attn.attention' op bundle kernels take f16, bf16 or f8E4M3FN operands
func.func @f32(%q: memref<1x4x64x64xf32>, %k: memref<1x4x64x64xf32>,
               %v: memref<1x4x64x64xf32>, %o: memref<1x4x64x64xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf32>, memref<1x4x64x64xf32>,
                     memref<1x4x64x64xf32>) outs(%o : memref<1x4x64x64xf32>)
  return
}

// -----

// PACKFMA: error: attn-distribute-rows: GQA packing has no lowering here: it lowers to the host (--attn-to-cpu) and the tensor-core path (attn-async-pipeline)
func.func @gqa(%q: memref<1x8x64x64xbf16>, %k: memref<1x2x64x64xbf16>,
               %o: memref<1x8x64x64xbf16>) {
  attn.attention ins(%q, %k, %k : memref<1x8x64x64xbf16>, memref<1x2x64x64xbf16>,
                     memref<1x2x64x64xbf16>) outs(%o : memref<1x8x64x64xbf16>)
  return
}

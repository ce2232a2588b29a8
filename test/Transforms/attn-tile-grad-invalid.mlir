// RUN: attn-opt %s --split-input-file --attn-tile-grad="block-m=16 block-n=8" -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-tile-grad="block-m=0 block-n=8" 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --split-input-file --attn-tile-grad="block-m=16 block-n=1024" 2>&1 | FileCheck %s --check-prefix=BIGN
// Block sizes are checked only where there is a backward to tile: the CPU
// pipeline runs attn-tile-grad on forward-only modules too.
// RUN: attn-opt %S/attn-tile.mlir --split-input-file --attn-tile-grad="block-m=0 block-n=0" | FileCheck %s --check-prefix=FWDONLY
// FWDONLY: attn.attention
// RUN: not attn-opt %s --split-input-file --attn-to-cpu="block-m=128 block-n=64" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not attn-opt %s --split-input-file --attn-to-cubin="format=none path=fma" 2>&1 | FileCheck %s --check-prefix=GPU

// Errors of attn-tile-grad (lib/Transforms/AttnTileGrad.cpp) and
// attn-decompose-grad on inputs the attn.attention_grad verifier accepts,
// and the FMA GPU path's refusal of the backward (the tensor-core path,
// attn-grad-async-pipeline, lowers it).

// BLOCKM: error: attn-tile-grad: block-m must be in [1, 1024] and block-n in [1, 256], but got block-m=0 block-n=8
// BIGN: error: attn-tile-grad: block-m must be in [1, 1024] and block-n in [1, 256], but got block-m=16 block-n=1024
// UNROLL: error: attn-decompose-grad unrolls 64 keys over the step's 128 rows, but at most 4096 key-rows per block compile in reasonable time; use smaller tiles (e.g. block-m=64 block-n=64)
// GPU: error: 'attn.attention_grad' op attn-lower-to-nvvm needs it lowered: run attn-grad-async-pipeline and attn-lower-to-wgmma first (or --attn-to-cubin, path=wgmma)

// The verifier accepts a dynamic head dim; the tiles need it static.
func.func @dynamic_head_dim(%q: memref<1x2x8x?xf16>, %k: memref<1x2x8x?xf16>,
                            %lse: memref<1x2x8xf32>,
                            %dq: memref<1x2x8x?xf16>, %dk: memref<1x2x8x?xf16>,
                            %dv: memref<1x2x8x?xf16>) {
  // expected-error @+1 {{attn-tile-grad needs a static head dim D}}
  attn.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<1x2x8x?xf16>,
      memref<1x2x8x?xf16>, memref<1x2x8x?xf16>, memref<1x2x8x?xf16>,
      memref<1x2x8x?xf16>, memref<1x2x8xf32>)
      outs(%dq, %dk, %dv : memref<1x2x8x?xf16>, memref<1x2x8x?xf16>,
           memref<1x2x8x?xf16>)
  return
}

// -----

// Valid: tiled by the first RUN line; too big to unroll at 128 x 64 (UNROLL);
// refused by the GPU pipeline (GPU).
func.func @valid(%q: memref<1x2x8x16xf16>, %k: memref<1x2x8x16xf16>,
                 %lse: memref<1x2x8xf32>,
                 %dq: memref<1x2x8x16xf16>, %dk: memref<1x2x8x16xf16>,
                 %dv: memref<1x2x8x16xf16>) {
  attn.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<1x2x8x16xf16>,
      memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
      memref<1x2x8x16xf16>, memref<1x2x8xf32>)
      outs(%dq, %dk, %dv : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
           memref<1x2x8x16xf16>)
  return
}

// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s --check-prefix=PIPE
// RUN: attn-opt %s --attn-to-cubin="format=none splits=4" | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %s --attn-tile="block-m=64 block-n=16" --attn-causal-split --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-opt %s --attn-to-cubin="path=fma format=none" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-opt %s --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline=tma-store=true 2>&1 | FileCheck %s --check-prefix=TMASTORE
// RUN: not attn-opt %s --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: attn-opt %s --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline | FileCheck %s --check-prefix=TAIL

// Varlen on the GPU: the tensor-core path lowers attn-tile's varlen CTA
// (TMA descriptors of the packed views, K/V copied from the sequence's
// first key on), also in a module compiled with splits (attn-split-kv
// gives the varlen op a workspace: a partial launch, then the combine,
// whose CUDA-core passes leave the lowered CTA alone); the CUDA-core path
// refuses it with an error naming the
// pass, located on the op; so does tma-store (O's rows are cut per
// sequence inside the CTA), and attn-lower-to-nvvm refuses the untiled op.
// TMA bounds the packed buffer, not the sequence: the causal blocks (the
// diagonal, and the key tail) may read the next sequence's rows or the
// padding and are marked unfilled_tail; the blocks below the diagonal end
// before Nk and are not.
// TAIL-LABEL: func.func @varlen
//       TAIL:   attn.online_attention_mma {{.*}} {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 1.250000e-01 : f32}
//       TAIL:   attn.online_attention_mma {{.*}} {head_dim = 64 : i64, mask = #attn.mask<causal>, scale = 1.250000e-01 : f32, unfilled_tail}
// PIPE-LABEL: func.func @varlen
//       PIPE:   nvgpu.tma.create.descriptor
//       PIPE:   gpu.launch_func
// PIPE-LABEL: gpu.module
//       PIPE:   wgmma.mma_async.sync.aligned
// ROWS: varlen-gpu.mlir:[[# @LINE + 7]]:3: error: attn-distribute-rows: variable-length batches (attn.varlen_attention) have no lowering here: they lower to the host (--attn-to-cpu) and the tensor-core path (attn-async-pipeline)
// TMASTORE: varlen-gpu.mlir:[[# @LINE + 6]]:3: error: attn-tma-store: needs O defined outside the CTA loop (its descriptor is built on the host), but a varlen CTA stores into its sequence's rows of O; leave tma-store off
// NVVM: varlen-gpu.mlir:[[# @LINE + 5]]:3: error: 'attn.varlen_attention' op attn-lower-to-nvvm needs it tiled and decomposed
func.func @varlen(%q: memref<?x4x64xbf16>, %k: memref<?x2x64xbf16>, %v: memref<?x2x64xbf16>,
                  %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                  %o: memref<?x4x64xbf16>) {
  // The tensor-core path's tile sizes (BLOCK_M 128) and the FMA path's.
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      outs(%o : memref<?x4x64xbf16>) {causal}
  return
}

// Pass-order robustness: every attn pass either handles
// what it gets or stops with what to run first; `--canonicalize` between
// passes (as docs/passes.md shows) is safe; a lowering never exits 0 with
// attn ops left behind, nor builds a one-thread kernel.

// Canonicalization after every pass: unit dimensions of the CTA loop and
// hoisted constants used to break attn-distribute-rows ("mapping attribute
// size must match op rank", vector type mismatches).
// RUN: attn-opt %s --split-input-file --attn-tile --canonicalize --attn-causal-split --canonicalize --attn-distribute-rows --canonicalize --attn-online-softmax --canonicalize --attn-lower-to-nvvm | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=2" --canonicalize --attn-causal-split --canonicalize --attn-online-softmax --canonicalize --attn-lower-to-cpu | FileCheck %s --check-prefix=CPU
// GPU-LABEL: func.func @gqa_unit_batch
//       GPU:   gpu.launch_func @gqa_unit_batch_kernel::@gqa_unit_batch_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[T:.*]], %{{.*}}, %{{.*}})
//   GPU-NOT: attn.
//       GPU:   gpu.known_block_size = array<i32: 64, 1, 1>
// GPU-LABEL: func.func @one_cta
//       GPU:   gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 1, 1, 1>
//   GPU-NOT: attn.
// CPU-LABEL: llvm.func @gqa_unit_batch(
//   CPU-NOT: attn.
// CPU-LABEL: llvm.func @one_cta(
//   CPU-NOT: attn.

// Lowerings refuse what is not ready for them.
// RUN: not attn-opt %s --split-input-file --attn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-UNTILED
// RUN: not attn-opt %s --split-input-file --attn-tile --attn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-TILED
// RUN: not attn-opt %s --split-input-file --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM-UNTILED
// RUN: not attn-opt %s --split-input-file --attn-tile --attn-distribute-rows --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM-TILED
// RUN: not attn-opt %s --split-input-file --attn-tile --attn-online-softmax --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM-NOTHREADS
// CPU-UNTILED: pass-order.mlir:[[# @LINE + 24]]:3: error: 'attn.attention' op is inside an LLVM function: it was not rewritten before the lowering to LLVM (run attn-tile, attn-causal-split, [attn-distribute-rows,] attn-online-softmax first, or use --attn-to-cpu / --attn-to-cubin)
// CPU-TILED: pass-order.mlir:[[# @LINE + 23]]:3: error: 'attn.load_tile' op is inside an LLVM function
// NVVM-UNTILED: pass-order.mlir:[[# @LINE + 22]]:3: error: 'attn.attention' op attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile, attn-causal-split, then attn-async-pipeline and attn-lower-to-wgmma, or attn-distribute-rows and attn-online-softmax first (or --attn-to-cubin)
// NVVM-TILED: pass-order.mlir:[[# @LINE + 21]]:3: error: attn-lower-to-nvvm needs the tile ops decomposed: run attn-online-softmax (or attn-lower-to-wgmma) first
// The forall of attn-tile alone used to become a kernel of one thread per CTA.
// NVVM-NOTHREADS: pass-order.mlir:[[# @LINE + 19]]:3: error: attn-lower-to-nvvm needs the CTA loop mapped to threads: run attn-distribute-rows before attn-online-softmax

// attn-causal-split after attn-distribute-rows used to produce "operand #0
// does not dominate this use"; per-thread bounds would also let the lanes of
// a row leave their shuffles.
// RUN: not attn-opt %s --split-input-file --attn-tile --attn-distribute-rows --attn-causal-split 2>&1 | FileCheck %s --check-prefix=SPLIT-LATE
// SPLIT-LATE: pass-order.mlir:[[# @LINE + 13]]:3: error: attn-causal-split must run before attn-distribute-rows (the K/V loop must stay the same for every thread of a CTA)

// Passes with nothing of theirs to do leave the IR alone.
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-causal-split --attn-distribute-rows | FileCheck %s --check-prefix=NOOP
// NOOP-LABEL: func.func @gqa_unit_batch
//       NOOP:   attn.attention
// NOOP-LABEL: func.func @one_cta
//       NOOP:   attn.attention

// GQA 2/1, B = 1, Nq = Nk = 6, D = 16, causal, with LSE.
func.func @gqa_unit_batch(%q: memref<1x2x6x16xf16>, %k: memref<1x1x6x16xf16>,
                          %v: memref<1x1x6x16xf16>, %o: memref<1x2x6x16xf16>,
                          %lse: memref<1x2x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x1x6x16xf16>,
                     memref<1x1x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
                 lse(%lse : memref<1x2x6xf32>) {causal}
  return
}

// -----

// One CTA, one K/V block: canonicalization would fold an unmapped CTA loop
// and the K/V loop away entirely.
func.func @one_cta(%q: memref<1x1x6x16xf16>, %k: memref<1x1x6x16xf16>,
                   %v: memref<1x1x6x16xf16>, %o: memref<1x1x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x16xf16>, memref<1x1x6x16xf16>,
                     memref<1x1x6x16xf16>) outs(%o : memref<1x1x6x16xf16>)
  return
}

// -----

// The GPU-only thread mapping leaves gpu.shuffle (D = 64 takes two lanes
// per row): the host lowering refuses it instead of handing it on.
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=4 block-n=2" --attn-causal-split --attn-distribute-rows --attn-online-softmax --attn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-GPU
// CPU-GPU: error: attn-lower-to-cpu: gpu.shuffle is GPU code: attn-lower-to-cpu takes the nest of attn-tile, attn-causal-split and attn-online-softmax, not the sm_90a tensor-core path (attn-async-pipeline, attn-lower-to-wgmma) nor attn-distribute-rows; lower it with attn-lower-to-nvvm
func.func @gpu_mapped(%q: memref<1x1x8x64xf16>, %k: memref<1x1x8x64xf16>,
                      %v: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>, memref<1x1x8x64xf16>)
                 outs(%o : memref<1x1x8x64xf16>)
  return
}

// The tensor-core path is sm_90a code: the CPU lowering refuses it up front
// (it used to fail inside its own pipeline on "warp_specialize expects region
// #0 to have 0 or 1 blocks" or on an unknown location), and the NVVM
// lowering names the pass that is missing.
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline --attn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-TC
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline --attn-lower-to-wgmma --attn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-TC
// RUN: not attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-async-pipeline --attn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM-TC
// CPU-TC: pass-order.mlir:{{[0-9]+}}:3: error: attn-lower-to-cpu: {{.*}} is GPU code: attn-lower-to-cpu takes the nest of attn-tile, attn-causal-split and attn-online-softmax, not the sm_90a tensor-core path (attn-async-pipeline, attn-lower-to-wgmma) nor attn-distribute-rows; lower it with attn-lower-to-nvvm
// CPU-TC-NOT: <unknown>
// NVVM-TC: pass-order.mlir:{{[0-9]+}}:3: error: attn-lower-to-nvvm needs the tensor-core pipeline lowered: run attn-lower-to-wgmma first

//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Lowerings of the decomposed attention loop nest to a target: NVVM (GPU
// kernel) or the LLVM dialect on the host (executed by tests).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// attn-lower-to-nvvm: the steps of the GPU lowering. The pipeline of that
// name (buildLowerToNVVMPipeline) lists them between upstream passes:
//
//   attn-check-nvvm-input{chip features}
//   attn-launch-hopper-ctas, attn-launch-phased-ctas
//   attn-parallel-cta-grids
//   func.func(gpu-map-parallel-loops, convert-parallel-loops-to-gpu),
//   canonicalize, cse
//   attn-sink-into-launch, attn-pass-descriptors-as-pointers
//   gpu-kernel-outlining
//   gpu.module(convert-vector-to-scf{full-unroll}, attn-lower-kernel-vectors,
//              convert-vector-to-scf{full-unroll})
//   attn-lower-row-transfers, gpu.module(attn-number-shared-memory)
//   nvvm-attach-target{chip features O=3}
//   gpu.module(convert-nvgpu-to-nvvm, expand-strided-metadata, lower-affine,
//              convert-vector-to-llvm, convert-scf-to-cf, canonicalize,
//              convert-gpu-to-nvvm{index-bitwidth=64}, convert-nvvm-to-llvm,
//              reconcile-unrealized-casts, canonicalize, cse)
//   attn-finish-hopper-kernels
//===----------------------------------------------------------------------===//

def AttnCheckNVVMInput : Pass<"attn-check-nvvm-input", "ModuleOp"> {
  let summary = "Refuse input and targets the GPU lowering cannot build";
  let description = [{
    The first step of `attn-lower-to-nvvm`; it changes nothing. It stops,
    at the user's op and saying what to run first, when the module still
    holds attn ops (attention ops untiled, tile ops not decomposed by
    `attn-online-softmax` or `attn-lower-to-wgmma`, an
    `attn.warp_specialize` left for `attn-lower-to-wgmma`), or a CTA loop
    (`scf.forall`) neither mapped to threads (`attn-distribute-rows`) nor
    carrying the tensor-core thread count `attn.threads`: such input would
    leave attn ops behind or build a one-thread kernel.

    It then checks the target: `chip` must be one LLVM's NVPTX back end and
    ptxas 13 both accept (sm_80 .. sm_121, with its oldest PTX ISA: 8.0,
    8.6 for sm_100, ...); `features`, when given, must name a PTX ISA
    (`+ptxNN`) at least the chip's and only features the back end knows
    (an unknown one is dropped silently there); a tensor-core CTA
    (warpgroup MMA, setmaxnreg) needs sm_90a.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target SM">,
    Option<"features", "features", "std::string", "\"\"",
           "PTX features (empty: the oldest PTX ISA the chip needs, at "
           "least +ptx80)">
  ];
}

def AttnLaunchHopperCtas : Pass<"attn-launch-hopper-ctas", "ModuleOp"> {
  let summary = "Tensor-core CTA loops -> gpu.launch over a 1-D grid";
  let description = [{
    A CTA loop marked `attn.threads` by `attn-lower-to-wgmma` (3-D, from 0
    by 1: Q block, head, batch) becomes a `gpu.launch` of `attn.threads`
    threads over ceil(Nq / BLOCK_M) * Hq * B blocks on x (x reaches
    2^31 - 1 where y and z stop at 65535), the Q block fastest so that
    CTAs sharing K/V run together; with `attn.persistent_ctas` the grid is
    that many CTAs, which find their tiles themselves. The launch gets as
    many bytes of dynamic shared memory as the views of
    `gpu.dynamic_shared_memory` in the CTA reach. Error: a CTA loop that is
    not 3-D and normalized. Source: FlashAttention-3 (arXiv 2407.08608)
    section 3.1 (one CTA per output tile, warp-specialized).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnLaunchPhasedCtas : Pass<"attn-launch-phased-ctas", "ModuleOp"> {
  let summary = "CTAs of several thread loops -> gpu.launch with barriers";
  let description = [{
    A block-mapped `scf.forall` whose body runs more than one thread loop
    or keeps a workgroup buffer (`attn-quantize-fp8`'s per-block kernel:
    partial amax, tree reduction, quantization) becomes a `gpu.launch` over
    a 1-D grid of its blocks, with as many threads as its widest thread
    loop: each loop runs on threads 0 .. n - 1, a `gpu.barrier` between
    two, the buffers become workgroup attributions. Upstream's
    `convert-parallel-loops-to-gpu` takes one thread loop per CTA only.
    Errors: side effects outside the thread loops (every thread would run
    them), a thread loop that is not 1-D from 0 by 1 to a static bound, a
    CTA loop not from 0 by 1.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnParallelCtaGrids : Pass<"attn-parallel-cta-grids", "ModuleOp"> {
  let summary = "CUDA-core CTA nests -> scf.parallel with a 1-D grid";
  let description = [{
    Makes the nest of `attn-distribute-rows` the form
    `gpu-map-parallel-loops` and `convert-parallel-loops-to-gpu` take:
    every `scf.forall` drops its GPU mapping (it maps (Q block, head,
    batch) to blocks x, y, z and rows to threads x: the order
    `gpu-map-parallel-loops` assigns greedily, while upstream's
    `scf-forall-to-parallel` would carry it as an attribute that pass does
    not read) and becomes an `scf.parallel`; then every outermost
    multi-dimensional one (the CTA loop) is collapsed into one dimension,
    so its blocks run on grid x (up to 2^31 - 1; y and z stop at 65535,
    which B or Hq may exceed). Error: an `scf.forall` with results (not
    bufferized).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnSinkIntoLaunch : Pass<"attn-sink-into-launch", "ModuleOp"> {
  let summary = "Move pure host computations a gpu.launch uses into it";
  let description = [{
    Every side-effect-free single-result op without regions that a
    `gpu.launch` uses from above is cloned into its body, transitively
    down to the function's arguments, so that outlined kernels take only
    attn.attention's memrefs (sizes come from their descriptors) and the
    TMA descriptors: the bundle's parameter list and the runtime's launch
    code depend on it (docs/bundle.md). Unlike upstream's
    sinkOperationsIntoLaunchOp, a chain is sunk even when the body uses
    none of its operands directly (a Hopper kernel reads Q only through
    its TMA descriptor but its sizes through memref.dim). Casts
    (`unrealized_conversion_cast`) stay outside.
  }];
}

def AttnPassDescriptorsAsPointers
    : Pass<"attn-pass-descriptors-as-pointers", "ModuleOp"> {
  let summary = "Pass TMA descriptors to kernels as !llvm.ptr";
  let description = [{
    A kernel cannot take an `!nvgpu.tensormap.descriptor` argument (its
    `gpu.func` fails to legalize): each one a `gpu.launch` uses from above
    is cast to `!llvm.ptr` on the host and back inside the launch
    (`unrealized_conversion_cast` pairs that `reconcile-unrealized-casts`
    removes once both sides are in the LLVM dialect).
    `attn-finish-hopper-kernels` then passes the pointee by value.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnLowerKernelVectors
    : Pass<"attn-lower-kernel-vectors", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the tile vectors of a kernel to 1-D code";
  let description = [{
    Runs on each outlined `gpu.module` after
    `convert-vector-to-scf{full-unroll=true}` has unrolled transfers into
    1-D ones guarded by their row bound (rows past Nq are neither read nor
    written): drops the unit row dimension (one row per thread), then
    lowers reductions, outer products, broadcasts, transposes and shape
    casts to elementwise 1-D code, f32 `math.exp2` / `math.log2` (vectors
    unrolled) to the PTX approximations FlashAttention uses
    (`ex2.approx.ftz.f32`, `lg2.approx.ftz.f32`), and scalar f32 ->
    f8E4M3FN `arith.truncf` to `cvt.rn.satfinite.e4m3x2.f32` (the rounding
    and saturation `attn-lower-to-cpu` reproduces).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnLowerRowTransfers : Pass<"attn-lower-row-transfers", "ModuleOp"> {
  let summary = "1-D transfers -> 16-byte aligned vector loads and stores";
  let description = [{
    Runs after the second `convert-vector-to-scf{full-unroll=true}`: 1-D
    `vector.transfer_read/write` become (guarded) `vector.load/store`, and
    in kernels a load or store of a multiple of 16 bytes is marked 16-byte
    aligned. The runtime contract (docs/ir.md) makes every row of Q, K, V
    and O start on a 16-byte boundary (aligned base, strides multiples of
    8 elements), and thread slices are multiples of 16 bytes wide.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnNumberSharedMemory
    : Pass<"attn-number-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "#gpu.address_space<workgroup> -> address space 3";
  let description = [{
    Replaces the workgroup address space by NVVM's shared address space
    (3) in every type and attribute of a kernel module:
    `convert-vector-to-llvm` and `convert-nvgpu-to-nvvm` have no mapping of
    their own for the GPU memory-space attributes.
    `gpu.dynamic_shared_memory` keeps the attribute space (its verifier
    wants it) and is cast with `memref.memory_space_cast`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnFinishHopperKernels
    : Pass<"attn-finish-hopper-kernels", "ModuleOp"> {
  let summary = "Kernel ABI of tensor-map kernels: byval, grid_constant";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. A kernel that takes TMA descriptors
    (the `!llvm.ptr` operands of its `gpu.launch_func`, at their LLVM
    argument positions: a memref expands to 3 + 2 * rank values) gets them
    by value (`.param .align 64 .b8 [128]`, `llvm.byval` of 16 x i64,
    `llvm.align` 64, `nvvm.grid_constant`: what cuTensorMapEncodeTiled
    maps need) and `nvvm.minctasm` 1 (one CTA per SM). Dynamic shared
    memory becomes an external, 1024-byte aligned array, as 128B-swizzled
    TMA and wgmma tiles require (PTX ISA 8.0, tensor copy and matrix
    descriptors).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AttnLowerToWGMMA : Pass<"attn-lower-to-wgmma", "func::FuncOp"> {
  let summary = "Lower the Hopper tile ops to warpgroup MMA (sm_90a)";
  let description = [{
    Runs after `attn-async-pipeline`, inside each CTA:

    * the online-softmax state, warpgroup fragments (attn-tma-ring types
      it `!attn.wg_fragment`), becomes per-thread registers of the wgmma
      accumulator layout (PTX ISA, wgmma register fragments) by a type conversion carried through
      scf: m, l: !attn.wg_fragment<BLOCK_M x f32> -> vector<2> (a thread
      holds two rows), acc: !attn.wg_fragment<BLOCK_M x D x f32> ->
      vector<D / 2>; `attn.to_wg_fragment` of a splat constant becomes the
      splat in every thread (any other source is an error);
    * `attn.online_attention_mma` becomes, for its warpgroup's 64 rows:
      `nvvm.wgmma.mma_async` m64nBLOCK_Nk16 x ceil(D / 16) for S = Q K^T
      (both operands in shared memory, K-major, 128B swizzle); the mask
      (diagonal and tail blocks only); the exp2-domain online softmax with
      row max/sum across the four threads of a quad (shuffles); P converted
      to bf16/f16 pairs in registers; O rescaled by alpha; O += P V as
      register-A wgmma m64nDk16 x BLOCK_N / 16 (`llvm.inline_asm`; V
      row-major, transposed by the MMA); FP8 (e4m3, k32) can compute one
      in `fp8-poly-exp2` of P's exponentials as a degree-2 polynomial on
      the FMA pipe (FlashAttention-4's exp2 emulation, relative error
      1.7e-3; off by default since the lazy max made MUFU-only faster); with
      `fp8-lazy-max` (default on) every pipelined K/V loop without a mask
      (not the causal diagonal nor the key-length tail), unrolled to two
      blocks per iteration (with one per iteration and a runtime trip count
      ptxas serializes the wgmmas, C7513), computes P against the running
      max m without a new row max and
      redoes a warp's block exactly only when some e4m3 P reached 448 (S c
      more than log2(432) - fp8-p-scale-log2 above m); the first block and
      a redone one set m `fp8-lazy-headroom` log2 units above their row
      max, so the max may rise that much more before a redo. Any m gives
      the same O and LSE while P stays finite (FlashAttention-4's rescale
      only when the max has risen, here without the row max itself);
    * `attn.epilogue` divides by the quad-summed l (rows with l = 0 give 0),
      stages O (bf16/f16) in the swizzled Q tile, syncs its warpgroup on a
      named barrier and writes O with 16-byte coalesced stores; quad leaders
      write LSE = (m + log2 l) ln 2 (-inf for rows without keys);
    * `attn.warp_specialize` becomes a branch on the warpgroup with
      `nvvm.setmaxregister` (decrease in the producer, increase in the
      consumers); the CTA loop is marked `attn.threads`;
    * the backward's consumer (`attn-grad-async-pipeline`): dK, dV,
      !attn.wg_fragment<BLOCK_N x D x f32> (keys as the accumulator's
      rows), become vector<D / 2> as acc does; `attn.grad_dkdv_mma`
      becomes S^T and dP^T (wgmma, shared-memory operands), P^T and dS^T
      on the registers, dV += P^T dO and dK += dS^T Q (register-A wgmma),
      dS staged by `stmatrix` and dQ = dS K added to dQ_acc by one bulk
      reduction per warpgroup; `attn.store_tile` of dK, dV stores each
      thread's register pairs, the first after waiting for the last bulk
      reductions.
    With `overlap` on the `attn.warp_specialize`, each K/V loop (one step, state = the loop's, and the
    release of the block's ring slot after it) is pipelined by one block:
    the first block's S and softmax are peeled; iteration j issues S_j and
    P_{j-1} V_{j-1} as two wgmma groups, waits for S_j only
    (`wgmma.wait_group 1`), runs the mask and softmax of S_j while P V is
    in flight, then waits for P V, releases block j-1's slot and rescales
    O by alpha_j; P (packed bf16/f16 pairs) and V's address are carried to
    the next iteration, and the last block's P V follows the loop. A block
    holds its slot one iteration longer, so the ring wants a stage more.
    Steps not in such a loop are lowered serially.
    The choices made over all steps of a consumer (tree reductions,
    ping-pong turns, which loops are pipelined, which store waits for the
    backward's dQ reductions) are made once and left as attributes before
    one conversion pattern per op lowers them.
    Errors: a step or epilogue outside a consumer region, a CTA outside
    its CTA loop, not one epilogue, BLOCK_M not 64 per consumer
    warpgroup, state that is not !attn.wg_fragment or does not start from
    splat constants, a missing staging tile, per-channel V descales; for
    the backward, a step outside a consumer region, BLOCK_N not 64 per
    consumer warpgroup, dK/dV not starting from splat constants.
    Source: FlashAttention-3 (arXiv 2407.08608) section 3 and appendix B
    (the backward); PTX ISA 8.0 (wgmma, matrix descriptors).
  }];
  let options = [
    Option<"maxMmaN", "max-mma-n", "int64_t", "256",
           "Widest O += P V instruction in columns (64: one per 64-column "
           "chunk of D)">,
    Option<"fp8PScaleLog2", "fp8-p-scale-log2", "int64_t", "8",
           "FP8: P is quantized as P * 2^this (0..8; O and LSE are "
           "unchanged). 8 keeps probabilities down to 2^-17 representable "
           "beside an attention sink">,
    Option<"fp8PolyExp2", "fp8-poly-exp2", "int64_t", "0",
           "FP8: compute one in this many of P's exponentials with a "
           "polynomial on the FMA pipe instead of MUFU (FlashAttention-4's "
           "exp2 emulation; 0: none, the default: with fp8-lazy-max every "
           "exponential on MUFU is fastest on the H200; without it 4 is, "
           "at D = 128; docs/perf-notes.md)">,
    Option<"fp8LazyMax", "fp8-lazy-max", "bool", "true",
           "FP8, pipelined K/V loops without a mask: compute P against the "
           "running max without a new row max or rescale, and redo a warp's "
           "block exactly only when some P reached e4m3's top (a lazy row "
           "max)">,
    Option<"fp8LazyHeadroom", "fp8-lazy-headroom", "int64_t", "3",
           "FP8 with fp8-lazy-max: the first block and a redone one set the "
           "running max this many log2 units above their row max, so later "
           "blocks may rise that much (plus 0.75) before another redo; P's "
           "scale is 2^(fp8-p-scale-log2 - this) right after (0..8)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnLowerToCPU : Pass<"attn-lower-to-cpu", "ModuleOp"> {
  let summary = "Lower the decomposed loop nest to the LLVM dialect for the host";
  let description = [{
    Runs the CTA-level loop nest sequentially (`scf.forall` -> `scf.for`),
    lowers vector transfers, reductions and contractions, and converts
    everything to the LLVM dialect with C interfaces
    (`_mlir_ciface_<name>`), so tests can execute it through MLIR's
    ExecutionEngine and compare with a reference.

    The output needs no CPU feature and no runtime library beyond libm
    (`exp2f`, `log2f`): f16/bf16 <-> f32 conversions become integer
    arithmetic (round to nearest even) and 16-bit floats are moved as `i16`,
    since x86-64 code generation without F16C / AVX-512 BF16 calls libgcc
    for them (`__truncsfbf2` is missing from Debian 12's libgcc). Likewise
    f8E4M3FN <-> f32 (exact extension; truncation rounds to nearest even
    and saturates to +-448, NaN kept, as PTX `cvt.rn.satfinite`), with FP8
    moved as `i8` (LLVM has no FP8 type). Other arithmetic on a type
    narrower than f32 is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD

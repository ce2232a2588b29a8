//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Lowerings of the decomposed attention loop nest to a target: NVVM (GPU
// kernel) or the LLVM dialect on the host (executed by tests).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToNVVM : Pass<"attn-lower-to-nvvm", "ModuleOp"> {
  let summary = "Map the distributed loop nest to a GPU kernel in NVVM";
  let description = [{
    Converts the block/thread-mapped `scf.forall` nest into `gpu.launch`,
    outlines it into a `gpu.module` with a `#nvvm.target`, and lowers the
    kernel to the NVVM/LLVM dialects: vector ops are unrolled, `math.exp2`
    and `math.log2` become the `ex2.approx` / `lg2.approx` PTX
    instructions, index arithmetic is 64-bit (offsets may exceed 2^31).
    Side-effect-free values the launch uses are sunk into it first, so the
    kernel's only arguments are attn.attention's memrefs (what kernel
    bundles and the runtime assume). The host function keeps
    `gpu.launch_func`; `gpu-module-to-binary`
    (in the `attn-to-cubin` pipeline) turns the module into PTX or a cubin.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target SM">,
    Option<"features", "features", "std::string", "\"\"",
           "PTX features (empty: the oldest PTX ISA the chip needs, at "
           "least +ptx80)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::nvgpu::NVGPUDialect"];
}

def AttnLowerToWGMMA : Pass<"attn-lower-to-wgmma", "func::FuncOp"> {
  let summary = "Lower the Hopper tile ops to warpgroup MMA (sm_90a)";
  let description = [{
    Runs after `attn-async-pipeline`, inside each CTA:

    * the online-softmax state becomes per-thread fragments of the wgmma
      accumulator layout (HOPPER.md): m, l: vector<BLOCK_M> -> vector<2>
      (a thread holds two rows), acc: vector<BLOCK_M x D> -> vector<D / 2>;
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
      consumers); the CTA loop is marked `attn.threads`.
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
    Source: FlashAttention-3 (arXiv 2407.08608) section 3; PTX ISA 8.0
    (wgmma, matrix descriptors).
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

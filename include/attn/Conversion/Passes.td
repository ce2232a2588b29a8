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
    Option<"features", "features", "std::string", "\"+ptx80\"",
           "PTX features">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
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
    for them (`__truncsfbf2` is missing from Debian 12's libgcc). Other
    arithmetic on a type narrower than f32 is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD

//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

/// Options of the `attn-lower-to-nvvm` pipeline.
struct LowerToNVVMOptions : PassPipelineOptions<LowerToNVVMOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target SM"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (empty: the oldest PTX ISA the chip "
                     "needs, at least +ptx80)"),
      llvm::cl::init("")};
};

/// Appends `attn-lower-to-nvvm` to `pm` (on builtin.module): the
/// distributed loop nest becomes gpu.launch_func on the host and NVVM/LLVM
/// kernels in gpu.modules with a #nvvm.target, ready for
/// gpu-module-to-binary. The step list is in Passes.td.
void buildLowerToNVVMPipeline(OpPassManager &pm, StringRef chip,
                              StringRef features);
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H

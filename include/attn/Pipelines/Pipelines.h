//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
//
//   attn-to-cpu   : attn-tile, attn-causal-split, attn-online-softmax,
//                   attn-lower-to-cpu (LLVM dialect, run by tests)
//   attn-to-cubin : attn-tile, attn-causal-split, attn-distribute-rows,
//                   attn-online-softmax, attn-lower-to-nvvm,
//                   gpu-module-to-binary (PTX or cubin)
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace attn {

struct CPUPipelineOptions : PassPipelineOptions<CPUPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("BLOCK_M"),
                         llvm::cl::init(16)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("BLOCK_N"),
                         llvm::cl::init(16)};
};

struct CubinPipelineOptions : PassPipelineOptions<CubinPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m",
                         llvm::cl::desc("BLOCK_M (= threads per CTA)"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("BLOCK_N"),
                         llvm::cl::init(16)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("target SM"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  /// An enum, so that an unknown format is a parse error (upstream
  /// gpu-module-to-binary only reports it and lets the run succeed).
  enum class Format { isa, bin, fatbin, none };
  Option<Format> format{
      *this, "format", llvm::cl::desc("What to stop at"),
      llvm::cl::init(Format::isa),
      llvm::cl::values(
          clEnumValN(Format::isa, "isa", "PTX (gpu-module-to-binary)"),
          clEnumValN(Format::bin, "bin", "cubin (runs ptxas)"),
          clEnumValN(Format::fatbin, "fatbin", "fatbinary"),
          clEnumValN(Format::none, "none", "the NVVM kernel, not serialized"))};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit path (ptxas)"),
                              llvm::cl::init("/usr/local/cuda")};
};

void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);
void buildCubinPipeline(OpPassManager &pm,
                        const CubinPipelineOptions &options);

/// Registers the attn passes and pipelines (and every upstream pass, which
/// the lowering pipelines are composed of).
void registerAttnPassesAndPipelines();

/// Dialects and interfaces attn-opt and the tests load.
void registerAttnDialects(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H

//===- CpuJit.h - JIT for the CPU-executed tests ----------------*- C++ -*-===//
//
// The CPU tests run attn-to-cpu output through MLIR's ExecutionEngine. By
// default they compile for a baseline CPU of the host's architecture (on
// x86-64: "x86-64", SSE2 only, no host feature detection) with unoptimized
// code generation: code that needs a CPU feature or a runtime-library symbol
// (a libgcc conversion such as __truncsfbf2) then fails on every machine,
// not only on those that lack the feature.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_CPUJIT_H
#define ATTN_UNITTESTS_CPUJIT_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn::test {

enum class TargetCpu {
  /// The architecture's baseline CPU, -O0 code generation.
  Baseline,
  /// What ExecutionEngine picks by default: the host CPU and its features.
  Host,
};

/// JIT-compiles `module` (already in the LLVM dialect) for `cpu`.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
createEngine(ModuleOp module, TargetCpu cpu = TargetCpu::Baseline);

/// The attn-to-cpu options the tests vary.
struct CpuPipeline {
  int64_t blockM, blockN;
  /// Split-KV splits (attn-split-kv; 1: unsplit).
  int64_t splits = 1;
  /// GQA packing (attn-tile pack-gqa).
  bool packGqa = false;
};

/// Parses `source` (attn IR), lowers it with the attn-to-cpu pipeline
/// configured by `pipeline` and JIT-compiles it for `cpu`; the error quotes
/// the source. Needs the attn passes registered.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
compileOnCpu(llvm::StringRef source, const CpuPipeline &pipeline,
             TargetCpu cpu = TargetCpu::Baseline);

/// compileOnCpu at BLOCK_M x BLOCK_N, unsplit and unpacked.
inline llvm::Expected<std::unique_ptr<ExecutionEngine>>
compileOnCpu(llvm::StringRef source, int64_t blockM, int64_t blockN,
             TargetCpu cpu = TargetCpu::Baseline) {
  return compileOnCpu(source, CpuPipeline{blockM, blockN}, cpu);
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_CPUJIT_H

//===- attn-opt.cpp - mlir-opt for the attn dialect -----------------------===//
//
// Runs attn and upstream passes and pipelines on .mlir input, e.g.
//   attn-opt --attn-to-cubin --mlir-print-ir-after-all in.mlir
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Tools/Diagnostics.h"
#include "attn/Tools/InputChecks.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// The last pass: a pass that reports an error but succeeds (upstream
/// gpu-module-to-binary without a CUDA toolkit did) must not give exit 0
/// and its output.
struct FailOnErrors : PassWrapper<FailOnErrors, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailOnErrors)
  explicit FailOnErrors(std::shared_ptr<const size_t> errors)
      : errors(std::move(errors)) {}
  StringRef getArgument() const override { return "attn-fail-on-errors"; }
  StringRef getName() const override { return "AttnFailOnErrors"; }
  StringRef getDescription() const override {
    return "Fail the run if any error was reported";
  }
  void runOnOperation() override {
    if (*errors)
      signalPassFailure();
  }
  std::shared_ptr<const size_t> errors;
};
} // namespace

/// Diagnostics without a file location print as "attn-opt: error: ..."
/// (not "<unknown>:0:"), and any error fails the run (FailOnErrors). A bad
/// pass-option value is reported by llvm::cl ("for the --block-m option:
/// 'abc' value invalid"); MLIR then adds an empty error, which is dropped.
static MlirOptMainConfig strictDiagnostics(MlirOptMainConfig config) {
  MlirOptMainConfig inner = config;
  config.setPassPipelineSetupFn([inner](PassManager &pm) {
    std::shared_ptr<const size_t> errors = attn::registerToolDiagnostics(
        pm.getContext(), "attn-opt",
        /*printLocationless=*/!inner.shouldVerifyDiagnostics());
    ScopedDiagnosticHandler dropEmpty(pm.getContext(), [](Diagnostic &diag) {
      return success(diag.getSeverity() == DiagnosticSeverity::Error &&
                     diag.str().empty());
    });
    if (failed(inner.setupPassPipeline(pm)))
      return failure();
    pm.addPass(std::make_unique<FailOnErrors>(errors));
    return success();
  });
  return config;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  attn::registerAttnPassesAndPipelines();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "attn optimizer driver: FlashAttention as MLIR passes\n",
      registry);
  MlirOptMainConfig config =
      strictDiagnostics(MlirOptMainConfig::createFromCLOptions());
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      attn::readInputFile(inputFilename, error);
  std::unique_ptr<llvm::ToolOutputFile> output =
      input ? openOutputFile(outputFilename, &error) : nullptr;
  if (!output) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef()),
      llvm::SMLoc());
  if (!attn::checkInput(sourceMgr, id))
    return 1;
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}

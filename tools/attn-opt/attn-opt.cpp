//===- attn-opt.cpp - mlir-opt for the attn dialect -----------------------===//
//
// Runs attn and upstream passes and pipelines on .mlir input, e.g.
//   attn-opt --attn-to-cubin --mlir-print-ir-after-all in.mlir
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Tools/InputChecks.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// A bad pass-option value is reported by llvm::cl ("for the --block-m
/// option: 'abc' value invalid"); MLIR then adds an empty
/// "<unknown>:0: error:" line, which this drops.
static MlirOptMainConfig withoutEmptyPipelineErrors(MlirOptMainConfig config) {
  MlirOptMainConfig inner = config;
  config.setPassPipelineSetupFn([inner](PassManager &pm) {
    ScopedDiagnosticHandler dropEmpty(pm.getContext(), [](Diagnostic &diag) {
      return success(diag.getSeverity() == DiagnosticSeverity::Error &&
                     diag.str().empty());
    });
    return inner.setupPassPipeline(pm);
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
      withoutEmptyPipelineErrors(MlirOptMainConfig::createFromCLOptions());
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  std::unique_ptr<llvm::ToolOutputFile> output =
      input ? openOutputFile(outputFilename, &error) : nullptr;
  if (!output) {
    llvm::errs() << error << "\n";
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

//===- attn-compile.cpp - attention kernels from .mlir --------------------===//
//
// Runs the attn-to-cubin pipeline on an input holding attn.attention ops and
// writes the PTX of each generated kernel module to the output directory
// (<dir>/<module>.ptx). Bundles with a manifest build on this.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<input .mlir>"));
static cl::opt<std::string> outputDir("o", cl::Required,
                                      cl::desc("Output directory"),
                                      cl::value_desc("dir"));
static cl::opt<int64_t> blockM("block-m", cl::init(64),
                               cl::desc("BLOCK_M (query rows per CTA)"));
static cl::opt<int64_t> blockN("block-n", cl::init(16),
                               cl::desc("BLOCK_N (keys per K/V block)"));

/// Writes every gpu.object of every gpu.binary in `module` as PTX.
static LogicalResult writePTX(ModuleOp module, StringRef dir) {
  WalkResult res = module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      SmallString<128> path(dir);
      llvm::sys::path::append(path, binary.getSymName() + ".ptx");
      std::string err;
      auto out = openOutputFile(path, &err);
      if (!out) {
        llvm::errs() << "attn-compile: " << err << "\n";
        return WalkResult::interrupt();
      }
      out->os() << object.getObject().getValue();
      out->keep();
      llvm::outs() << "wrote " << path << " (" << object.getTarget() << ")\n";
    }
    return WalkResult::advance();
  });
  return failure(res.wasInterrupted());
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  attn::registerAttnPassesAndPipelines();
  cl::ParseCommandLineOptions(argc, argv, "attn kernel compiler\n");

  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  std::string err;
  auto file = openInputFile(inputFile, &err);
  if (!file) {
    llvm::errs() << "attn-compile: " << err << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  attn::CubinPipelineOptions options;
  options.blockM = blockM;
  options.blockN = blockN;
  options.format = "isa";
  attn::buildCubinPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  if (auto ec = llvm::sys::fs::create_directories(outputDir)) {
    llvm::errs() << "attn-compile: cannot create " << outputDir << ": "
                 << ec.message() << "\n";
    return 1;
  }
  return failed(writePTX(*module, outputDir)) ? 1 : 0;
}

//===- Pipelines.cpp - attn pass pipelines --------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/HopperConfig.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The prefix both pipelines share: the config of each forward op chosen
/// once (attn-select-config), then the loop nest it tiles.
void addTiling(OpPassManager &pm, const AttnSelectConfigOptions &config,
               bool packGqa, int64_t combineBlockM) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createAttnSelectConfig(config));
  fn.addPass(createAttnTile(AttnTileOptions{/*blockM=*/0, /*blockN=*/0,
                                            packGqa, combineBlockM}));
  fn.addPass(createAttnCausalSplit());
}

/// The backward (attn.attention_grad) has a host lowering only so far.
void addGradTiling(OpPassManager &pm, int64_t blockM, int64_t blockN) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createAttnTileGrad(AttnTileGradOptions{blockM, blockN}));
  fn.addPass(createAttnCausalSplitGrad());
}

void addDecomposition(OpPassManager &pm, bool grad = false) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createAttnOnlineSoftmax());
  if (grad)
    fn.addPass(createAttnDecomposeGrad());
  fn.addPass(createLoopInvariantCodeMotionPass());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}
} // namespace

void mlir::attn::buildAsyncPipeline(OpPassManager &pm,
                                    const AsyncPipelineOptions &options) {
  bool persistent = options.persistentCtas != 0;
  if (!persistent)
    pm.addPass(createAttnCtaOrder());
  pm.addPass(createAttnTmaRing(AttnTmaRingOptions{
      options.stages, options.producerRegisters, options.consumerRegisters,
      options.pingPong, options.overlap}));
  pm.addPass(createAttnFP8VPermute());
  if (options.tmaStore)
    pm.addPass(createAttnTmaStore());
  if (persistent)
    pm.addPass(
        createAttnPersistentCtas(AttnPersistentCtasOptions{options.persistentCtas}));
}

void mlir::attn::buildCPUPipeline(OpPassManager &pm,
                                  const CPUPipelineOptions &options) {
  if (options.splits != 1)
    pm.nest<func::FuncOp>().addPass(
        createAttnSplitKV(AttnSplitKVOptions{options.splits, options.smCount}));
  AttnSelectConfigOptions config;
  config.path = "fma";
  config.blockM = options.blockM;
  config.blockN = options.blockN;
  // The combine's rows: BLOCK_M, as attn-tile's default.
  addTiling(pm, config, options.packGqa, options.blockM);
  addGradTiling(pm, options.blockM, options.blockN);
  addDecomposition(pm, /*grad=*/true);
  pm.addPass(createAttnLowerToCPU());
}

KernelPath mlir::attn::resolvePath(KernelPath path, StringRef chip) {
  if (path != KernelPath::automatic)
    return path;
  return chip == "sm_90a" ? KernelPath::wgmma : KernelPath::fma;
}

int64_t mlir::attn::requestedBlockM(int64_t given, int64_t splits,
                                    KernelPath path) {
  if (given)
    return given;
  return splits != 1 && path == KernelPath::wgmma ? kSplitKVBlockM : 0;
}

void mlir::attn::buildCubinPipeline(OpPassManager &pm,
                                    const CubinPipelineOptions &options) {
  KernelPath path = resolvePath(options.path, options.chip);
  if (options.splits != 1)
    pm.nest<func::FuncOp>().addPass(
        createAttnSplitKV(AttnSplitKVOptions{options.splits, options.smCount}));
  AttnSelectConfigOptions config;
  config.path = path == KernelPath::fma ? "fma" : "wgmma";
  config.blockM = requestedBlockM(options.blockM, options.splits, path);
  config.blockN = options.blockN;
  config.stages = options.stages;
  config.pingPong = options.pingPong;
  config.overlap = options.overlap;
  addTiling(pm, config, options.packGqa, kGpuCombineBlockM);
  if (path == KernelPath::fma) {
    pm.nest<func::FuncOp>().addPass(createAttnDistributeRows());
    addDecomposition(pm);
  } else {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    fn.addPass(createAttnGradAsyncPipeline());
    // attn-tma-ring takes the stages and the schedule from attn.config.
    AsyncPipelineOptions hopper;
    hopper.persistentCtas = options.persistentCtas;
    hopper.tmaStore = options.tmaStore;
    buildAsyncPipeline(fn, hopper);
    fn.addPass(
        createAttnLowerToWGMMA(AttnLowerToWGMMAOptions{
            options.maxMmaN, options.fp8PScaleLog2, options.fp8PolyExp2,
            options.fp8LazyMax, options.fp8LazyHeadroom}));
    // Split-KV's combine (attn.decode_combine's grid, from attn-split-kv
    // or written by hand) has no Q tile for the tensor cores: it takes the
    // CUDA-core path's lowering (no-ops without a combine).
    fn.addPass(createAttnDistributeRows());
    fn.addPass(createAttnOnlineSoftmax());
    fn.addPass(createCanonicalizerPass());
    fn.addPass(createCSEPass());
    fn.addPass(createLoopInvariantCodeMotionPass());
  }
  buildLowerToNVVMPipeline(pm, options.chip, options.features);
  using Format = CubinPipelineOptions::Format;
  if (options.format == Format::none)
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format == Format::isa   ? "isa"
                             : options.format == Format::bin ? "bin"
                                                             : "fatbin";
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

LogicalResult
mlir::attn::checkCubinPipelineOptions(const CubinPipelineOptions &options,
                                      llvm::raw_ostream &error) {
  using Format = CubinPipelineOptions::Format;
  if (options.format == Format::none)
    return success();
  // gpu-module-to-binary links the PTX with the toolkit's libdevice and
  // reports a missing one without failing (its ptxas then comes from PATH).
  StringRef toolkit = options.toolkit;
  SmallString<128> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (toolkit.empty() || !llvm::sys::fs::is_directory(toolkit))
    error << "toolkit=" << toolkit
          << ": no such directory (format=isa, bin and fatbin link the CUDA "
             "toolkit's nvvm/libdevice/libdevice.10.bc; format=none needs no "
             "toolkit)";
  else if (!llvm::sys::fs::is_regular_file(libdevice))
    error << "toolkit=" << toolkit << " is not a CUDA toolkit: " << libdevice
          << " does not exist (format=isa, bin and fatbin link it; "
             "format=none needs no toolkit)";
  else
    return success();
  return failure();
}

namespace {
/// PassPipelineRegistration, strict: options parsed by
/// parseOptionsStrictly, then `check` on their values, so that an option
/// the pipeline cannot honour is refused before it runs.
template <typename Options>
void registerPipeline(StringRef name, StringRef summary,
                      void (*build)(OpPassManager &, const Options &),
                      LogicalResult (*check)(const Options &,
                                             llvm::raw_ostream &)) {
  std::string arg = name.str();
  registerPassPipeline(
      name, summary,
      [=](OpPassManager &pm, StringRef text,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        std::string error;
        llvm::raw_string_ostream os(error);
        auto parse = [&](llvm::raw_ostream &errors) {
          return options.parseFromString(text, errors);
        };
        if (failed(parseOptionsStrictly(text, parse, os)) ||
            failed(check(options, os)))
          return errorHandler(arg + ": " + StringRef(error).trim());
        build(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(Options());
      });
}
} // namespace

void mlir::attn::registerAttnPassesAndPipelines() {
  registerAllPasses();
  registerAttnPasses();
  registerAttnConversionPasses();
  registerPipeline<CPUPipelineOptions>(
      "attn-to-cpu",
      "Lower attn.attention to the LLVM dialect for execution on the host",
      buildCPUPipeline, [](const CPUPipelineOptions &, llvm::raw_ostream &) {
        return success();
      });
  registerPipeline<AsyncPipelineOptions>(
      "attn-async-pipeline",
      "The Hopper forward CTA: attn-cta-order (or attn-persistent-ctas), "
      "attn-tma-ring, attn-fp8-v-permute, [attn-tma-store]",
      buildAsyncPipeline,
      [](const AsyncPipelineOptions &, llvm::raw_ostream &) {
        return success();
      });
  registerPipeline<CubinPipelineOptions>(
      "attn-to-cubin",
      "Lower attn.attention to an NVVM kernel and serialize it (PTX/cubin)",
      buildCubinPipeline, checkCubinPipelineOptions);
  registerPipeline<LowerToNVVMOptions>(
      "attn-lower-to-nvvm",
      "Map the distributed loop nest to GPU kernels in NVVM (Passes.td)",
      buildLowerToNVVMPipeline,
      [](const LowerToNVVMOptions &, llvm::raw_ostream &) {
        return success();
      });
}

void mlir::attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

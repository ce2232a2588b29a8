//===- BundleWriter.cpp - attn.attention functions -> kernel bundle -------===//
//
// Per function: inspect it (KernelInspect.cpp: operand roles and the
// specialization key), run attn-to-cubin (format=isa) on a module holding
// only that function, then read the launch shape and parameter order off
// the gpu.launch_func the pipeline left in the host function
// (LaunchReader.cpp), assemble each kernel (Ptxas.cpp) and write
// manifest.json. Kernel arguments are always attn.attention's memrefs
// (attn-lower-to-nvvm sinks every scalar into the kernel), passed in MLIR's
// expanded memref-descriptor ABI.
//
//===----------------------------------------------------------------------===//

#include "KernelSource.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"
#include "attn/Transforms/StrictOptions.h"

#include "QuantizeFP8.h"
#include "SpillAdvice.h"
#include "StagingDir.h"

#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::writer;

namespace mlir::attn::writer {

LogicalResult pipelineOptions(KernelSource &src, const BundleOptions &opts,
                              StringRef name, StringRef variant,
                              CubinPipelineOptions &pipeline) {
  pipeline.blockM = src.key.blockM;
  pipeline.blockN = src.key.blockN;
  pipeline.path = src.key.path == "wgmma" ? KernelPath::wgmma : KernelPath::fma;
  pipeline.maxMmaN = opts.maxMmaN;
  pipeline.fp8PScaleLog2 = opts.fp8PScaleLog2;
  pipeline.fp8PolyExp2 = opts.fp8PolyExp2;
  pipeline.fp8LazyMax = opts.fp8LazyMax;
  pipeline.fp8LazyHeadroom = opts.fp8LazyHeadroom;
  pipeline.pingPong = opts.pingPong;
  pipeline.overlap = opts.overlap;
  pipeline.stages = opts.stages;
  pipeline.persistentCtas = opts.persistentCtas;
  pipeline.tmaStore = opts.tmaStore;
  pipeline.splits = src.key.splits;
  pipeline.packGqa = src.packGqa;
  pipeline.chip = opts.chip;
  pipeline.features = opts.features;
  if (variant.empty())
    return success();
  pipeline.blockM = src.requestedBlockM;
  pipeline.blockN = src.requestedBlockN;
  std::string error;
  llvm::raw_string_ostream os(error);
  auto parse = [&](llvm::raw_ostream &errors) {
    return pipeline.parseFromString(variant, errors);
  };
  if (failed(parseOptionsStrictly(variant, parse, os)) ||
      pipeline.chip != opts.chip || pipeline.features != opts.features)
    return src.func.emitError("variant \"")
           << variant << "\": "
           << (error.empty() ? "chip and features are the bundle's"
                             : StringRef(error).trim());
  KernelPath path = resolvePath(pipeline.path, pipeline.chip);
  if (!(pipeline.blockM == 0 || isValidBlockM(pipeline.blockM)) ||
      !(pipeline.blockN == 0 || isValidBlockN(pipeline.blockN)))
    return src.func.emitError("variant \"")
           << variant << "\": block-m must be in [1, " << kMaxBlockM
           << "] and block-n in [1, " << kMaxBlockN << "]";
  if (pipeline.splits < 1 || pipeline.splits > kMaxSplits)
    return src.func.emitError("variant \"")
           << variant << "\": splits must be in [1, " << kMaxSplits
           << "] in a bundle (a fixed count)";
  if (pipeline.splits > 1 && isFp8Attention(src.key))
    return src.func.emitError("variant \"")
           << variant << "\": "
           << (src.key.quantizeFp8 ? "quantized (quantize_fp8) kernels have "
                                     "no split-KV"
                                   : "FP8 (e4m3) kernels have no split-KV "
                                     "yet");
  src.key.path = path == KernelPath::wgmma ? "wgmma" : "fma";
  src.key.splits = src.askedSplits = pipeline.splits;
  FailureOr<int64_t> fitted =
      fitSplitsToTile(src, path, pipeline.blockM, pipeline.blockN);
  if (failed(fitted))
    return src.func.emitError("variant \"")
           << variant << "\" (kernel " << name
           << ") does not compile: the error above";
  src.key.splits = pipeline.splits = *fitted;
  pipeline.blockM = src.key.blockM;
  pipeline.blockN = src.key.blockN;
  return success();
}

/// Writes the PTX of `launch`'s kernel module, assembles it into a cubin and
/// records both, the kernel's name, its hash and its resources in `entry`.
LogicalResult emitLaunch(ModuleOp module, gpu::LaunchFuncOp launch,
                         const BundleOptions &opts, StringRef ptxas,
                         bundle::KernelLaunch &entry) {
  entry.name = launch.getKernelName().str();
  StringRef moduleName = launch.getKernelModuleName().getValue();
  auto binary = module.lookupSymbol<gpu::BinaryOp>(moduleName);
  if (!binary || binary.getObjects().size() != 1)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: expected one PTX object for the kernel");
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  entry.ptx = (moduleName + ".ptx").str();
  entry.cubin = (moduleName + ".cubin").str();
  SmallString<128> ptxPath(opts.outputDir), cubinPath(opts.outputDir);
  llvm::sys::path::append(ptxPath, entry.ptx);
  llvm::sys::path::append(cubinPath, entry.cubin);
  if (failed(
          writeFile(launch.getLoc(), ptxPath, object.getObject().getValue())))
    return failure();
  if (failed(assemble(launch.getLoc(), ptxas, opts.chip, ptxPath, cubinPath,
                      entry.resources)))
    return failure();
  FailureOr<std::string> hash = hashCubin(launch.getLoc(), cubinPath);
  if (failed(hash))
    return failure();
  entry.cubinSha256 = *hash;
  return success();
}

/// A backward kernel's BLOCK_M and BLOCK_N: the rows of its q and k tensor
/// maps (attn-grad-async-pipeline's tiles).
LogicalResult bwdBlockSizes(func::FuncOp func, bundle::KernelEntry &entry) {
  for (size_t i = 0; i < entry.numLaunches(); ++i)
    for (const bundle::Param &p : entry.launch(i).params) {
      if (p.field != bundle::Param::Field::TensorMap)
        continue;
      if (p.operand == Operand::Q)
        entry.key.blockM = p.box[1];
      if (p.operand == Operand::K)
        entry.key.blockN = p.box[1];
    }
  if (entry.key.blockM == 0 || entry.key.blockN == 0)
    return func.emitError("the lowered backward reads q or k through no "
                          "tensor map");
  return success();
}
/// The manifest name of an operand's element type ("" for none it has).
StringRef operandDtype(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  return isa<Float8E4M3FNType>(t) ? "e4m3" : "";
}

/// Each tensor operand's element type and static sizes, off the kernel
/// function's argument types: what the runtime's reader holds the key to.
std::vector<bundle::OperandType> operandTypes(const KernelSource &src) {
  std::vector<bundle::OperandType> types;
  func::FuncOp func = src.func;
  for (auto [arg, role] : src.roles) {
    auto type = dyn_cast<MemRefType>(func.getArgument(arg).getType());
    if (!type) // a scalar (max_seqlen_q/k)
      continue;
    bundle::OperandType t;
    t.operand = role;
    t.dtype = operandDtype(type.getElementType()).str();
    for (int64_t d : type.getShape())
      t.shape.push_back(ShapedType::isDynamic(d) ? std::nullopt
                                                 : std::optional<int64_t>(d));
    types.push_back(std::move(t));
  }
  llvm::sort(types,
             [](const bundle::OperandType &a, const bundle::OperandType &b) {
               return a.operand < b.operand;
             });
  return types;
}

/// Compiles `src` (as kernel `name` when given) with the variant's options;
/// `askedSplits` gets the split count asked for (the key's may be less).
FailureOr<bundle::KernelEntry>
compileKernel(KernelSource src, const BundleOptions &opts, StringRef ptxas,
              int64_t &askedSplits, StringRef variant = "",
              StringRef name = "") {
  MLIRContext *ctx = src.func.getContext();
  bundle::KernelEntry entry;
  entry.kind = src.backward ? "bwd" : "fwd";
  entry.key = src.key;
  entry.operands = operandTypes(src);
  // The key is read from q: a length static there and dynamic in another
  // operand (or the reverse) is a kernel no key describes.
  if (llvm::Error err = bundle::checkOperandTypes(entry, "kernel"))
    return src.func.emitError(
               "a length (B, H or N) is static in some operands and dynamic "
               "in others; a bundle kernel has each static in every operand "
               "or dynamic in every one: ")
           << llvm::toString(std::move(err));
  CubinPipelineOptions pipeline;
  if (failed(pipelineOptions(src, opts, name, variant, pipeline)))
    return failure();
  askedSplits = src.askedSplits;
  OwningOpRef<ModuleOp> module = ModuleOp::create(src.func.getLoc());
  auto func = cast<func::FuncOp>(src.func->clone());
  if (!name.empty())
    func.setSymName(name);
  module->push_back(func);
  if (src.key.quantizeFp8 && failed(quantizeFunction(*module, func, src.key)))
    return failure();
  PassManager pm(ctx);
  pipeline.format = CubinPipelineOptions::Format::isa;
  buildCubinPipeline(pm, pipeline);
  if (failed(pm.run(*module))) {
    // The pass's error names the function; say which variant it was.
    if (!variant.empty())
      src.func.emitError("variant \"") << variant << "\" (kernel " << name
                                       << ") does not compile: the error above";
    return failure();
  }

  SmallVector<gpu::LaunchFuncOp> launches;
  func.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
  // Split-KV: the partial attention, then the combine. Backward:
  // preprocess, dQ_acc = 0, dK/dV, dQ. Quantized: the quantize kernels,
  // then the attention (at least two).
  bool backward = src.backward;
  size_t expected = backward ? 4 : src.key.splits > 1 ? 2 : 1;
  if (src.key.quantizeFp8 ? launches.size() < 2 : launches.size() != expected)
    return func.emitError("expected ")
           << (src.key.quantizeFp8 ? "at least 2" : std::to_string(expected))
           << " kernel launch(es) after lowering, got " << launches.size();
  entry.key = src.key; // pipelineOptions settled the variant's key
  entry.variant = variant.str();
  if (src.key.path == "wgmma" && !backward) // the backward's grids are fixed
    entry.persistentCtas = pipeline.persistentCtas;
  FailureOr<WorkspaceMap> workspace = readWorkspace(func, src, launches[0]);
  if (failed(workspace))
    return failure();
  for (auto &[value, buffer] : *workspace)
    entry.workspace.push_back(buffer);
  entry.then.resize(launches.size() - 1);
  for (size_t i = 0; i < launches.size(); ++i) {
    bundle::KernelLaunch &l =
        i == 0 ? static_cast<bundle::KernelLaunch &>(entry) : entry.then[i - 1];
    if (failed(readLaunch(launches[i], src, *workspace, l)) ||
        failed(emitLaunch(*module, launches[i], opts, ptxas, l)))
      return failure();
  }
  if (backward && failed(bwdBlockSizes(func, entry)))
    return failure();
  return entry;
}
} // namespace mlir::attn::writer

LogicalResult mlir::attn::writeBundle(ModuleOp module,
                                      const BundleOptions &opts,
                                      llvm::raw_ostream &log) {
  MLIRContext *ctx = module.getContext();
  // Any error reported, even by a step that then succeeded (upstream
  // serialization), means no bundle.
  size_t errors = 0;
  ScopedDiagnosticHandler countErrors(ctx, [&](Diagnostic &diag) {
    errors += diag.getSeverity() == DiagnosticSeverity::Error;
    return failure(); // printed by the handlers registered before
  });
  std::vector<KernelSource> sources;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool hasAttention = false;
    func.walk([&](Operation *op) { hasAttention |= isKernelRoot(op); });
    if (!hasAttention)
      continue;
    FailureOr<KernelSource> src = inspect(func, opts);
    if (failed(src))
      return failure();
    sources.push_back(*src);
  }
  if (sources.empty()) {
    // The module's location is the input file's line 0: name the file.
    InFlightDiagnostic diag = emitError(UnknownLoc::get(ctx));
    if (auto file = module.getLoc()->findInstanceOf<FileLineColLoc>())
      diag << file.getFilename().getValue() << ": ";
    return diag << "no function holds an attn.attention, "
                   "attn.varlen_attention or attn.attention_grad op";
  }
  if (failed(checkQuantizeRecipes(module, sources)))
    return failure();
  CubinPipelineOptions pipeline;
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(checkCubinPipelineOptions(pipeline, os)))
    return emitError(UnknownLoc::get(ctx)) << error;
  FailureOr<std::string> ptxas = findPtxas(opts, UnknownLoc::get(ctx));
  if (failed(ptxas))
    return failure();
  StagingDir staging;
  if (failed(staging.create(ctx, opts.outputDir)))
    return failure();
  BundleOptions staged = opts;
  staged.outputDir = staging.get().str();

  bundle::Manifest manifest;
  manifest.generator = "attn-compile";
  manifest.chip = opts.chip;
  for (KernelSource &src : sources) {
    // Variants are the forward's schedule options: a backward is compiled
    // once.
    size_t variants = src.backward ? 0 : opts.variants.size();
    for (size_t v = 0; v <= variants; ++v) {
      std::string name =
          v ? llvm::formatv("{0}_v{1}", src.func.getSymName(), v).str() : "";
      int64_t askedSplits;
      FailureOr<bundle::KernelEntry> entry =
          compileKernel(src, staged, *ptxas, askedSplits,
                        v ? StringRef(opts.variants[v - 1]) : "", name);
      if (failed(entry))
        return failure();
      log << "  " << bundle::describe(*entry) << "\n";
      if (askedSplits > entry->key.splits)
        log << llvm::formatv("  note: {0}: {1} splits asked, but seqlen_k {2} "
                             "has {3} K/V block{5} of {4}: compiled with {3} "
                             "(a split without keys would do nothing)\n",
                             entry->name, askedSplits, *entry->key.seqLenK,
                             entry->key.splits, entry->key.blockN,
                             entry->key.splits == 1 ? "" : "s");
      warnSpills(log, *entry);
      manifest.kernels.push_back(std::move(*entry));
    }
  }
  llvm::StringSet<> names;
  for (const bundle::KernelEntry &entry : manifest.kernels)
    if (!names.insert(entry.name).second)
      return emitError(UnknownLoc::get(ctx), "two kernels are named ")
             << entry.name << " (a function named like another's variant?)";
  SmallString<128> path(staging.get());
  llvm::sys::path::append(path, "manifest.json");
  std::string text =
      llvm::formatv("{0:2}\n", llvm::json::Value(bundle::toJSON(manifest)));
  // The runtime's own checks, so that a bundle it would refuse is never
  // written (a writer bug, not a user error).
  if (llvm::Expected<bundle::Manifest> parsed = bundle::parseManifest(text);
      !parsed)
    return emitError(UnknownLoc::get(ctx),
                     "internal error: the manifest fails the runtime's "
                     "checks: ")
           << llvm::toString(parsed.takeError());
  if (errors || failed(writeFile(UnknownLoc::get(ctx), path, text)) ||
      failed(staging.commit(ctx)))
    return failure();
  path = opts.outputDir;
  llvm::sys::path::append(path, "manifest.json");
  log << "wrote " << path << " (" << manifest.kernels.size() << " kernels)\n";
  return success();
}

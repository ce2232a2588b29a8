//===- attn-compile.cpp - attention kernels into a bundle -----------------===//
//
// Generates shape-specialized forward kernels and writes them as a kernel
// bundle (manifest.json + <kernel>.cubin + <kernel>.ptx, docs/bundle.md).
// Kernels come from any mix of:
//   - an input .mlir file: one kernel per function holding attn.attention;
//   - --spec-file=specs.json: a JSON array of kernel specs;
//   - the shape flags (--batch, --heads-q, ... --head-dim): one kernel.
// A length given as "dynamic" (null in JSON) is read from the call.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"
#include "attn/Tools/Diagnostics.h"
#include "attn/Tools/InputChecks.h"
#include "attn/Transforms/StrictOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory inputs("Kernel sources");
static cl::OptionCategory shape("One kernel from flags");
static cl::OptionCategory codegen("Code generation");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[input.mlir]"),
                                      cl::cat(inputs));
static cl::opt<std::string>
    specFile("spec-file", cl::desc("JSON array of kernel specs"),
             cl::value_desc("file"), cl::cat(inputs));
static cl::opt<std::string> outputDir("o",
                                      cl::desc("Bundle directory to write "
                                               "(required with --emit=bundle)"),
                                      cl::value_desc("dir"), cl::cat(inputs));
enum class Emit { bundle, mlir };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::bundle),
    cl::values(clEnumValN(Emit::bundle, "bundle",
                          "compile a kernel bundle into -o (the default)"),
               clEnumValN(Emit::mlir, "mlir",
                          "print the kernel functions (attn.attention) to "
                          "stdout before lowering; compile nothing")),
    cl::cat(inputs));

static cl::opt<std::string> batch("batch", cl::desc("B"),
                                  cl::value_desc("N|dynamic"), cl::cat(shape));
static cl::opt<std::string> headsQ("heads-q", cl::desc("Hq"),
                                   cl::value_desc("N|dynamic"), cl::cat(shape));
static cl::opt<std::string> headsKV("heads-kv",
                                    cl::desc("Hkv (default: Hq)"),
                                    cl::value_desc("N|dynamic"), cl::cat(shape));
static cl::opt<std::string> seqLenQ("seqlen-q", cl::desc("Nq"),
                                    cl::value_desc("N|dynamic"), cl::cat(shape));
static cl::opt<std::string> seqLenK("seqlen-k", cl::desc("Nk (default: Nq)"),
                                    cl::value_desc("N|dynamic"), cl::cat(shape));
static cl::opt<int64_t> headDim("head-dim", cl::desc("D"), cl::init(0),
                                cl::cat(shape));
static cl::opt<std::string> dtype("dtype", cl::desc("f16, bf16 or e4m3 (FP8: V^T storage, bf16 O, descales; default: bf16)"),
                                  cl::init("bf16"), cl::cat(shape));
static cl::opt<bool> causal("causal", cl::desc("Bottom-right causal mask"),
                            cl::cat(shape));
static cl::opt<bool> lse("lse", cl::desc("Write the LSE output (default: true)"),
                         cl::init(true), cl::cat(shape));
static cl::opt<double> scale("scale", cl::desc("Softmax scale (0: 1/sqrt(D))"),
                             cl::init(0), cl::cat(shape));
static cl::opt<std::string>
    layout("layout", cl::desc("strided (any strides, unit on D; the default) or "
                            "contiguous"),
           cl::init("strided"), cl::cat(shape));
static cl::opt<std::string> name("name", cl::desc("Kernel function name"),
                                 cl::cat(shape));
static cl::opt<int64_t> pageSize(
    "page-size", cl::init(0),
    cl::desc("Paged K/V (a spec's \"page_size\"): tokens per page of the "
             "[num_pages, page_size, Hkv, D] caches, read through a block "
             "table [B, max_pages] with per-sequence lengths cache_seqlens "
             "[B]; --seqlen-k is then dynamic. The tensor-core path takes a "
             "multiple of BLOCK_N or a multiple of 8 dividing it (0: "
             "contiguous K/V)"),
    cl::cat(shape));
static cl::opt<bool> varlen(
    "varlen", cl::init(false),
    cl::desc("A variable-length batch (a spec's \"varlen\": true; "
             "attn.varlen_attention, FlashAttention-2's varlen layout): q, o "
             "[total_q, Hq, D], k, v [total_k, Hkv, D], cu_seqlens_q/k "
             "[B + 1], max_seqlen_q/k, lse [Hq, total_q]; --batch, "
             "--seqlen-q and --seqlen-k are then dynamic (wgmma path)"),
    cl::cat(shape));

static cl::opt<bool> backward(
    "backward", cl::init(false),
    cl::desc("The backward (a spec's \"backward\": true; "
             "attn.attention_grad): q, k, v, o, dout, lse in, dq, dk, dv "
             "out; static shapes, f16 or bf16, D 64 or 128 (wgmma path)"),
    cl::cat(shape));

static cl::opt<std::string> quantizeFp8(
    "quantize-fp8", cl::ValueOptional, cl::value_desc("options"),
    cl::desc("Quantized FP8 (a spec's \"quantize_fp8\": true or "
             "\"<options>\"): attn-quantize-fp8 (with these pass options, "
             "e.g. --quantize-fp8=\"qk-granularity=tensor\"; none: its "
             "defaults) before attn-to-cubin: bf16 q, k, v, o, lse in, the "
             "kernel quantizes them to e4m3 workspace copies, then runs the "
             "FP8 attention; static shapes; attn_fwd runs it only for calls "
             "with quantize = ATTN_QUANTIZE_FP8"),
    cl::cat(shape));

static cl::opt<int64_t>
    blockM("block-m", cl::init(0),
           cl::desc("Default BLOCK_M, query rows per CTA (omitted: 192 for "
                    "D <= 64 and for e4m3 at D <= 128 with BLOCK_N 96 or "
                    "none, else 128 for wgmma, "
                    "64 rows per consumer warpgroup; 64 for fma, whose CTA "
                    "runs BLOCK_M x lanes-per-row threads)"),
           cl::cat(codegen));
static cl::opt<int64_t>
    blockN("block-n", cl::init(0),
           cl::desc("Default BLOCK_N, keys per K/V block (omitted: 96 for "
                    "e4m3 with BLOCK_M 192 at 64 < D <= 128, else 128 for "
                    "D <= 128 or e4m3, else 64 for wgmma; 16 for fma)"),
           cl::cat(codegen));
static cl::opt<int64_t>
    splits("splits", cl::init(1),
           cl::desc("Split-KV (flash-decoding): a fixed number of K/V splits "
                    "in [1, 256] per kernel (1: unsplit; a spec's \"splits\" "
                    "or a function's attn.splits wins). A split kernel is two "
                    "launches, the partial attention and the combine, with "
                    "an fp32 workspace the runtime allocates"),
           cl::cat(codegen));
static cl::opt<bool> packGqa(
    "pack-gqa", cl::init(false),
    cl::desc("GQA packing (FlashAttention-3's pack_gqa): the Hq / Hkv query "
             "heads of a KV group share a tile, so each K/V block is read "
             "once per group (wgmma path; static head counts, Hq / Hkv "
             "dividing 64; also a spec's \"pack_gqa\": true or a "
             "function's attn.pack_gqa)"),
    cl::cat(codegen));
static cl::opt<mlir::attn::KernelPath> path(
    "path", cl::desc("Default kernel path (a spec's \"path\" or a "
                     "function's attn.path attribute wins)"),
    cl::init(mlir::attn::KernelPath::automatic),
    cl::values(clEnumValN(mlir::attn::KernelPath::automatic, "auto",
                          "wgmma on sm_90a, fma elsewhere"),
               clEnumValN(mlir::attn::KernelPath::wgmma, "wgmma",
                          "TMA/mbarrier pipeline + warpgroup MMA (sm_90a)"),
               clEnumValN(mlir::attn::KernelPath::fma, "fma",
                          "CUDA-core FMA kernel")),
    cl::cat(codegen));
static cl::opt<int64_t>
    maxMmaN("max-mma-n", cl::init(256),
            cl::desc("Widest O += P V wgmma in columns (64: one per 64-column "
                     "chunk of D)"),
            cl::cat(codegen));
static cl::opt<int64_t> fp8PScaleLog2(
    "fp8-p-scale-log2", cl::init(8),
    cl::desc("FP8 kernels: P is quantized as P * 2^this (0..8); 8 keeps "
             "small probabilities beside an attention sink"),
    cl::cat(codegen));
static cl::opt<int64_t> fp8PolyExp2(
    "fp8-poly-exp2", cl::init(0),
    cl::desc("FP8 kernels: one in this many of P's exponentials by a "
             "polynomial on the FMA pipe instead of MUFU (FlashAttention-4's "
             "exp2 emulation; 0, the default: none; 4 is faster with "
             "--fp8-lazy-max=false at D = 128)"),
    cl::cat(codegen));
static cl::opt<bool> fp8LazyMax(
    "fp8-lazy-max", cl::init(true),
    cl::desc("FP8 kernels, K/V loops without a mask (not the causal "
             "diagonal nor the key-length tail): a lazy row max (P against "
             "the running max; a warp redoes a block exactly only when some "
             "P reaches e4m3's top); default on, --fp8-lazy-max=false to "
             "turn off"),
    cl::cat(codegen));
static cl::opt<int64_t> fp8LazyHeadroom(
    "fp8-lazy-headroom", cl::init(3),
    cl::desc("FP8 kernels with --fp8-lazy-max: the first block and a redone "
             "one set the running max this many log2 units above their row "
             "max (0..8)"),
    cl::cat(codegen));
static cl::opt<bool>
    pingPong("ping-pong", cl::init(true),
             cl::desc("wgmma kernels: the consumer warpgroups take turns "
                      "issuing their GEMMs (FlashAttention-3 ping-pong; "
                      "default on, --ping-pong=false to turn off)"),
             cl::cat(codegen));
static cl::opt<bool>
    overlap("overlap", cl::init(true),
            cl::desc("wgmma kernels: issue S_j = Q K_j^T with P_{j-1} V_{j-1} "
                     "and run the softmax of S_j while P V is in flight "
                     "(FlashAttention-3 intra-warpgroup overlap; default on "
                     "where the ring has 3 or more stages, --overlap=false "
                     "to turn off)"),
            cl::cat(codegen));
static cl::opt<int64_t>
    stages("stages", cl::init(0),
           cl::desc("wgmma kernels: K/V ring stages (0: chosen per D by "
                    "attn-async-pipeline; fewer if shared memory is short)"),
           cl::cat(codegen));
static cl::opt<int64_t> persistentCtas(
    "persistent-ctas", cl::init(0),
    cl::desc("wgmma kernels: a persistent kernel of this many CTAs (132: "
             "one per SM of an H100/H200 SXM) looping over the (Q block, "
             "head, batch) tiles; 0: one CTA per tile"),
    cl::cat(codegen));
static cl::opt<bool>
    tmaStore("tma-store", cl::init(false),
             cl::desc("wgmma kernels: write O with TMA bulk tensor stores "
                      "from shared memory (FlashAttention-3's epilogue) "
                      "instead of 16-byte stores"),
             cl::cat(codegen));
static cl::list<std::string> variants(
    "variant",
    cl::desc("Also compile every kernel with these attn-to-cubin options "
             "(e.g. --variant=\"block-n=192 ping-pong=0\"; repeatable): "
             "kernel k gets variants k_v1, k_v2, ... with the same key, which "
             "the runtime times and picks from when tuned (attn_tune, "
             "attn-run --tune)"),
    cl::cat(codegen));
static cl::opt<std::string> chip("chip", cl::init("sm_90a"),
                                 cl::desc("Target SM"), cl::cat(codegen));
static cl::opt<std::string> ptxas("ptxas", cl::desc("Path to ptxas"),
                                  cl::cat(codegen));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: " << message << "\n";
  return 1;
}

/// "dynamic" or a non-negative integer; `dflt` when the flag is absent.
static LogicalResult length(const cl::opt<std::string> &opt,
                            std::optional<int64_t> dflt,
                            std::optional<int64_t> &out) {
  if (opt.getNumOccurrences() == 0) {
    out = dflt;
    return success();
  }
  if (opt == "dynamic") {
    out = std::nullopt;
    return success();
  }
  int64_t n;
  if (StringRef(opt).getAsInteger(10, n) || n < 0) {
    fail("--" + opt.ArgStr + " must be a length >= 0 or 'dynamic', got '" +
         opt + "'");
    return failure();
  }
  out = n;
  return success();
}

static bool anyShapeFlag() {
  for (const cl::Option *opt : std::initializer_list<const cl::Option *>{
           &batch, &headsQ, &headsKV, &seqLenQ, &seqLenK, &headDim})
    if (opt->getNumOccurrences())
      return true;
  return false;
}

/// The kernel described by the shape flags.
static FailureOr<mlir::attn::KernelSpec> specFromFlags() {
  mlir::attn::KernelSpec spec;
  if (varlen)
    for (const cl::opt<std::string> *opt : {&batch, &seqLenQ, &seqLenK})
      if (opt->getNumOccurrences() && *opt != "dynamic") {
        fail("--" + opt->ArgStr + " must be dynamic or left out with "
             "--varlen (B and the lengths are read from cu_seqlens_q/k)");
        return failure();
      }
  for (const cl::opt<std::string> *opt : {&batch, &headsQ, &seqLenQ})
    if (!opt->getNumOccurrences() && !(varlen && opt != &headsQ)) {
      fail("--" + opt->ArgStr + " is required with the shape flags");
      return failure();
    }
  if (headDim <= 0) {
    fail("--head-dim must be given and > 0");
    return failure();
  }
  if (failed(length(batch, std::nullopt, spec.batch)) ||
      failed(length(headsQ, std::nullopt, spec.numHeadsQ)) ||
      failed(length(seqLenQ, std::nullopt, spec.seqLenQ)))
    return failure();
  if (failed(length(headsKV, spec.numHeadsQ, spec.numHeadsKV)) ||
      failed(length(seqLenK, spec.seqLenQ, spec.seqLenK)))
    return failure();
  if (pageSize > 0 && seqLenK.getNumOccurrences() && seqLenK != "dynamic") {
    fail("--seqlen-k must be dynamic or left out with --page-size (each "
         "sequence's length is read from cache_seqlens)");
    return failure();
  }
  spec.pageSize = pageSize;
  if (pageSize > 0)
    spec.seqLenK = std::nullopt;
  spec.varlen = varlen;
  spec.backward = backward;
  if (quantizeFp8.getNumOccurrences())
    spec.quantizeFp8 = quantizeFp8.getValue();
  if (varlen)
    spec.batch = spec.seqLenQ = spec.seqLenK = std::nullopt;
  if (layout != "strided" && layout != "contiguous") {
    fail("--layout must be strided or contiguous");
    return failure();
  }
  spec.name = name;
  spec.headDim = headDim;
  spec.dtype = dtype;
  spec.causal = causal;
  spec.lse = lse;
  spec.scale = scale;
  spec.strided = layout == "strided";
  spec.splits = splits; // in the name too
  spec.packGqa = packGqa;
  spec.fromFlags = true;
  return spec;
}

static FailureOr<std::vector<mlir::attn::KernelSpec>> readSpecFile() {
  std::string err;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      mlir::attn::readInputFile(specFile, err);
  if (!buffer) {
    fail(err);
    return failure();
  }
  llvm::Expected<std::vector<mlir::attn::KernelSpec>> specs =
      mlir::attn::parseKernelSpecs(buffer->getBuffer());
  if (!specs) {
    fail(specFile + ": " + llvm::toString(specs.takeError()));
    return failure();
  }
  for (auto [i, spec] : llvm::enumerate(*specs))
    spec.origin = llvm::formatv("{0}: specs[{1}]", specFile, i).str();
  return std::move(*specs);
}

/// Builds the module of kernel functions from every source given.
static OwningOpRef<ModuleOp> buildModule(MLIRContext &context,
                                         llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module;
  if (!inputFile.empty()) {
    std::string err;
    std::unique_ptr<llvm::MemoryBuffer> file =
        mlir::attn::readInputFile(inputFile, err);
    if (!file) {
      fail(err);
      return nullptr;
    }
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    if (!mlir::attn::checkInput(sourceMgr, id))
      return nullptr;
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return nullptr;
  } else {
    module = ModuleOp::create(UnknownLoc::get(&context));
  }
  std::vector<mlir::attn::KernelSpec> specs;
  if (!specFile.empty()) {
    FailureOr<std::vector<mlir::attn::KernelSpec>> fromFile = readSpecFile();
    if (failed(fromFile))
      return nullptr;
    specs = std::move(*fromFile);
  }
  if (anyShapeFlag()) {
    FailureOr<mlir::attn::KernelSpec> spec = specFromFlags();
    if (failed(spec))
      return nullptr;
    specs.push_back(*spec);
  }
  for (const mlir::attn::KernelSpec &spec : specs)
    if (failed(mlir::attn::buildKernelFunction(*module, spec)))
      return nullptr;
  return module;
}

/// llvm::cl lets a later occurrence replace an earlier one; for a kernel
/// source or a shape that silently drops what the user asked for.
static bool rejectRepeatedOptions() {
  const cl::Option *own[] = {
      &specFile,   &outputDir,     &emit,        &batch,      &headsQ,
      &headsKV,    &seqLenQ,       &seqLenK,     &headDim,    &dtype,
      &causal,     &lse,           &scale,       &layout,     &name,
      &blockM,     &blockN,        &chip,        &ptxas,      &path,
      &maxMmaN,    &pingPong,      &overlap,     &stages,     &persistentCtas,
      &tmaStore,   &fp8PScaleLog2, &splits,      &packGqa,    &pageSize,
      &varlen,     &backward,      &quantizeFp8, &fp8LazyMax, &fp8LazyHeadroom,
      &fp8PolyExp2};
  for (const cl::Option *opt : own)
    if (opt->getNumOccurrences() > 1) {
      fail((opt->ArgStr.size() == 1 ? "-" : "--") + opt->ArgStr +
           " may be given once" +
           (opt == &specFile ? "; put every spec in one JSON array" : ""));
      return true;
    }
  return false;
}

int main(int argc, char **argv) {
  mlir::attn::noteIgnoredSignals(); // before InitLLVM's handlers
  llvm::InitLLVM init(argc, argv);
  mlir::attn::installSignalHandlers();
  mlir::attn::registerAttnPassesAndPipelines();
  cl::HideUnrelatedOptions({&inputs, &shape, &codegen});
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: attention kernels into a bundle (manifest.json + "
      "cubins)\n\n  attn-compile in.mlir -o bundle/\n"
      "  attn-compile --spec-file=specs.json -o bundle/\n"
      "  attn-compile --batch=1 --heads-q=32 --heads-kv=8 --seqlen-q=dynamic "
      "--head-dim=128 --causal -o bundle/\n");
  if (rejectRepeatedOptions())
    return 1;
  if (emit == Emit::bundle && outputDir.empty())
    return fail("-o <dir> is required: the bundle directory to write (or "
                "--emit=mlir to print the kernel functions)");
  if (emit == Emit::mlir && outputDir.getNumOccurrences())
    return fail("-o is not used with --emit=mlir, which writes to stdout");
  if (inputFile.empty() && specFile.empty() && !anyShapeFlag())
    return fail("no kernels: give an input .mlir, --spec-file or the shape "
                "flags (see --help)");
  // The other shape options describe the kernel the shape flags build; alone
  // they would be silently dropped.
  if (!anyShapeFlag())
    for (const cl::Option *opt : std::initializer_list<const cl::Option *>{
             &dtype, &causal, &lse, &scale, &layout, &name, &pageSize, &varlen,
             &backward, &quantizeFp8})
      if (opt->getNumOccurrences())
        return fail("--" + opt->ArgStr.str() +
                    " describes the kernel of the shape flags (--batch, "
                    "--heads-q, --seqlen-q, --head-dim, ...), which are not "
                    "given; an input .mlir or a spec file says it itself");
  if (splits < 1 || splits > 256)
    return fail(llvm::formatv("--splits must be in [1, 256] (1: unsplit), "
                              "got {0}",
                              splits.getValue()));
  // Left out, they leave the choice to each kernel's path; given, they must
  // be valid (0 is no way to ask for the default).
  if ((blockM.getNumOccurrences() && !mlir::attn::isValidBlockM(blockM)) ||
      (blockN.getNumOccurrences() && !mlir::attn::isValidBlockN(blockN)))
    return fail(llvm::formatv("--block-m must be in [1, {0}] and --block-n in "
                              "[1, {1}], got {2} and {3}",
                              mlir::attn::kMaxBlockM, mlir::attn::kMaxBlockN,
                              blockM.getValue(), blockN.getValue())
                    .str());

  llvm::StringSet<> seenVariants;
  for (const std::string &variant : variants) {
    // The same options twice (or none) would compile one kernel twice
    // under two names.
    if (StringRef(variant).trim().empty())
      return fail("--variant=\"" + variant +
                  "\" gives no attn-to-cubin option (each kernel would be "
                  "compiled again, unchanged)");
    if (!seenVariants.insert(StringRef(variant).trim()).second)
      return fail("--variant=\"" + variant + "\" is given twice");
    // What the whole bundle shares, or what writing a bundle fixes.
    if (std::optional<std::string> option = mlir::attn::findOption(
            variant, {"chip", "features", "toolkit", "format"}))
      return fail("--variant=\"" + variant + "\": " + *option +
                  " is the bundle's, not a variant's (a variant sets schedule "
                  "options: block-m, block-n, stages, splits, path, ...)");
    mlir::attn::CubinPipelineOptions parsed;
    std::string error;
    llvm::raw_string_ostream os(error);
    auto parse = [&](llvm::raw_ostream &errors) {
      return parsed.parseFromString(variant, errors);
    };
    if (failed(mlir::attn::parseOptionsStrictly(variant, parse, os)))
      return fail("--variant=\"" + variant + "\": " + error +
                  " (attn-to-cubin options, e.g. \"block-n=192 ping-pong=0\")");
  }

  DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::attn::ToolDiagnosticHandler toolDiagnostics(&context, "attn-compile",
                                                    llvm::errs());
  OwningOpRef<ModuleOp> module = buildModule(context, sourceMgr);
  if (!module || toolDiagnostics.errors())
    return 1;
  if (emit == Emit::mlir) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  mlir::attn::BundleOptions options;
  options.outputDir = outputDir;
  options.blockM = blockM;
  options.blockN = blockN;
  options.path = path;
  options.maxMmaN = maxMmaN;
  options.fp8PScaleLog2 = fp8PScaleLog2;
  options.fp8PolyExp2 = fp8PolyExp2;
  options.fp8LazyMax = fp8LazyMax;
  options.fp8LazyHeadroom = fp8LazyHeadroom;
  options.pingPong = pingPong;
  options.overlap = overlap;
  options.stages = stages;
  options.persistentCtas = persistentCtas;
  options.tmaStore = tmaStore;
  options.splits = splits;
  options.packGqa = packGqa;
  options.variants.assign(variants.begin(), variants.end());
  options.chip = chip;
  options.ptxas = ptxas;
  return failed(mlir::attn::writeBundle(*module, options, llvm::outs())) ||
                 toolDiagnostics.errors()
             ? 1
             : 0;
}

//===- attn-fuzz.cpp - mutation fuzzing of attn-opt/attn-compile input ----===//
//
// Feeds mutants of a seed corpus to the code paths attn-opt and attn-compile
// run, in process, for a bounded time:
//   --target=ir    .mlir: parse + verify, then attn-to-cpu, attn-to-cubin
//                  (format=none) or a random order of the attn passes (with
//                  split-KV, GQA-packing and attn-quantize-fp8 options) with
//                  --canonicalize between them, with random block sizes;
//   --target=spec  spec JSON: parseKernelSpecs, buildKernelFunction, then
//                  attn-to-cubin (format=none) with the spec's block sizes;
//   --target=manifest  manifest.json: the runtime's parseManifest.
// Errors are expected (most mutants are invalid); what fails the run is a
// crash, a sanitizer report, an input that takes longer than
// --timeout-per-input, a transform pass that succeeds with IR that does not
// verify, a lowering that succeeds with attn ops left in the IR, a step
// that succeeds after reporting an error (a tool would print it and exit
// 0), or a parsed op whose output is one of its inputs (the verifiers
// refuse that). The input that failed is printed to stderr and written to
// --crash-file. Mutations are deterministic per --seed (Mutator.h).
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"
#include "attn/Tools/InputChecks.h"

#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <unistd.h>

using namespace mlir;
using ::attn::fuzz::Mutator;
namespace cl = llvm::cl;

static cl::opt<std::string> target("target",
                                   cl::desc("ir, spec or manifest"),
                                   cl::init("ir"));
static cl::list<std::string> corpusPaths(cl::Positional, cl::OneOrMore,
                                         cl::desc("<corpus dir or file>..."));
static cl::opt<double> seconds("seconds", cl::desc("Time budget"),
                               cl::init(30));
static cl::opt<uint64_t> maxRuns("runs", cl::desc("Stop after N inputs"),
                                 cl::init(0));
static cl::opt<uint64_t> seed("seed", cl::desc("Mutation seed"),
                              cl::init(20261129));
static cl::opt<unsigned> timeoutPerInput(
    "timeout-per-input", cl::init(60),
    cl::desc("Seconds one input may take before it counts as a hang"));
static cl::opt<std::string>
    crashFile("crash-file", cl::init("attn-fuzz-failure.txt"),
              cl::desc("Where the failing input is written"));

//===----------------------------------------------------------------------===//
// Reporting the input that failed
//===----------------------------------------------------------------------===//

/// The input being run, for the crash and timeout handlers.
static std::string current;
static std::string currentAction;
/// Error diagnostics so far (the context's handler counts them).
static uint64_t errorCount = 0;

static void dumpCurrent() {
  llvm::errs() << "\nattn-fuzz: failing input (" << currentAction
               << ", written to " << crashFile << "):\n"
               << current << "\n";
  std::error_code ec;
  llvm::raw_fd_ostream out(crashFile, ec);
  if (!ec)
    out << current;
}

static void onCrash(void *) { dumpCurrent(); }

static void onTimeout(int) {
  llvm::errs() << "\nattn-fuzz: an input ran longer than " << timeoutPerInput
               << " s\n";
  dumpCurrent();
  _exit(3);
}

[[noreturn]] static void fail(const llvm::Twine &why) {
  llvm::errs() << "attn-fuzz: " << why << "\n";
  dumpCurrent();
  _exit(2);
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

namespace {

struct Stats {
  uint64_t runs = 0, parsed = 0, succeeded = 0;
};

/// Mostly block sizes that compile fast; sometimes invalid ones, which the
/// passes must reject without trying.
int64_t pickBlock(Mutator &m) {
  static const int64_t sizes[] = {1, 2, 4, 8, 16, 16, 8, 4};
  static const int64_t odd[] = {0, -1, 3, 257, 1025, int64_t(1) << 40};
  return m.below(16) == 0 ? odd[m.below(std::size(odd))]
                          : sizes[m.below(std::size(sizes))];
}

/// Split-KV options (attn-split-kv, attn-to-cpu): mostly few splits or the
/// heuristic, sometimes more splits than K/V blocks or out of range.
std::string pickSplits(Mutator &m) {
  static const int64_t splits[] = {0, 1, 2, 3, 7, 64, -1, 257};
  static const int64_t sms[] = {132, 1, 16, 0};
  return llvm::formatv("splits={0} sm-count={1}",
                       splits[m.below(std::size(splits))],
                       sms[m.below(4) == 0 ? m.below(std::size(sms)) : 0])
      .str();
}

/// attn-quantize-fp8 options: any granularities and rotation, `blocks`.
std::string pickQuantize(Mutator &m, StringRef blocks) {
  static const char *const qk[] = {"tensor", "head", "block"};
  return llvm::formatv("qk-granularity={0} v-granularity={1} hadamard={2} {3}",
                       qk[m.below(std::size(qk))],
                       m.below(2) ? "head" : "channel",
                       m.below(2) ? "true" : "false", blocks)
      .str();
}

/// Passes to run on the module (`attn-opt --pass-pipeline=builtin.module(
/// ...)`): attn transforms (each one's output verified), then a lowering
/// (or none), and whether the lowering is complete.
struct Pipeline {
  std::string transforms, lowering;
  bool lowers = false;
};

Pipeline pickPipeline(Mutator &m) {
  std::string blocks =
      llvm::formatv("block-m={0} block-n={1}", pickBlock(m), pickBlock(m))
          .str();
  std::string pack = m.below(2) ? " pack-gqa=true" : "";
  // A toolkit without libdevice: upstream serialization reports it and
  // succeeds; attn-to-cubin must refuse it first. (The CUDA-core path takes
  // the small block sizes picked above.)
  static const char *const toolkits[] = {"/nonexistent", "/tmp", "/usr"};
  std::string serialize = m.below(16) == 0
                              ? std::string(" path=fma format=isa toolkit=") +
                                    toolkits[m.below(std::size(toolkits))]
                              : " format=none";
  switch (m.below(4)) {
  case 0:
    return {"", "attn-to-cpu{" + blocks + pack + " " + pickSplits(m) + "}",
            true};
  case 1:
    return {"", "attn-to-cubin{" + blocks + serialize + "}", true};
  default:
    break;
  }
  // A random order of the attn passes, canonicalize between some of them.
  static const char *const fnPasses[] = {
      "attn-tile",           "attn-causal-split",      "attn-distribute-rows",
      "attn-online-softmax", "canonicalize",           "cse",
      "attn-tile-grad",      "attn-causal-split-grad", "attn-decompose-grad",
      "attn-split-kv",       "attn-quantize-fp8"};
  std::string pipeline;
  for (size_t n = 1 + m.below(6); n > 0; --n) {
    std::string pass = fnPasses[m.below(std::size(fnPasses))];
    if (pass == "attn-tile")
      pass += "{" + blocks + pack + "}";
    else if (pass == "attn-tile-grad")
      pass += "{" + blocks + "}";
    else if (pass == "attn-split-kv")
      pass += "{" + pickSplits(m) + "}";
    else if (pass == "attn-quantize-fp8")
      pass += "{" + pickQuantize(m, blocks) + "}";
    pipeline += "func.func(" + pass + "),";
  }
  pipeline.pop_back();
  if (!m.below(2))
    return {pipeline, "", false};
  return {pipeline, m.below(2) ? "attn-lower-to-cpu" : "attn-lower-to-nvvm",
          true};
}

/// A successful lowering leaves no attn op behind.
void checkLowered(ModuleOp module, StringRef pipeline) {
  module.walk([&](Operation *op) {
    if (isa<mlir::attn::AttnDialect>(op->getDialect()))
      fail("'" + pipeline + "' succeeded but left " +
           op->getName().getStringRef() + " in the IR");
  });
}

/// Verifies the IR after every pass (the pass manager's verifier would turn
/// a pass's invalid output into a plain failure): a transform may refuse
/// its input, never leave IR that does not verify.
struct VerifyEachPass : PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      fail("pass '" + pass->getArgument() +
           "' succeeded but left IR that does not verify");
  }
};

/// Runs `pipeline` on `module`; false when a pass refuses it. Transforms
/// are verified after each pass; lowerings by the pass manager's verifier
/// (an attn op left inside an LLVM function is refused by its verifier).
bool runPasses(ModuleOp module, StringRef pipeline, bool transforms) {
  if (pipeline.empty())
    return true;
  currentAction = pipeline.str();
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  if (transforms) {
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyEachPass>());
  }
  std::string error;
  llvm::raw_string_ostream os(error);
  // An invalid option value is rejected, as it should be.
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return false;
  uint64_t before = errorCount;
  if (failed(pm.run(module)))
    return false;
  if (errorCount != before)
    fail("'" + pipeline + "' succeeded but reported an error");
  return true;
}

/// The operands an attn op writes; the rest it reads.
SmallVector<Value> outputsOf(Operation *op) {
  using namespace mlir::attn;
  if (auto a = dyn_cast<AttentionOp>(op))
    return {a.getO(), a.getLse()};
  if (auto v = dyn_cast<VarlenAttentionOp>(op))
    return {v.getO(), v.getLse(), v.getOPartial(), v.getLsePartial()};
  if (auto p = dyn_cast<PartialAttentionOp>(op))
    return {p.getOPartial(), p.getLsePartial()};
  if (auto c = dyn_cast<DecodeCombineOp>(op))
    return {c.getO(), c.getLse()};
  if (auto g = dyn_cast<AttentionGradOp>(op))
    return {g.getDQ(), g.getDK(), g.getDV()};
  return {};
}

/// The verifiers refuse an op with ins and outs whose output is another of
/// its operands: one that parsed must have none.
void checkNoAliasing(ModuleOp module) {
  module.walk([&](Operation *op) {
    for (Value out : outputsOf(op))
      if (out && llvm::count(op->getOperands(), out) > 1)
        fail("'" + op->getName().getStringRef() +
             "' verified with an output that is another of its operands");
  });
}

void runPipeline(ModuleOp module, const Pipeline &pipeline, Stats &stats) {
  if (!runPasses(module, pipeline.transforms, /*transforms=*/true) ||
      !runPasses(module, pipeline.lowering, /*transforms=*/false))
    return;
  ++stats.succeeded;
  std::string all = pipeline.transforms;
  if (!pipeline.lowering.empty())
    all += (all.empty() ? "" : ",") + pipeline.lowering;
  if (failed(verify(module)))
    fail("'" + all + "' succeeded but the IR does not verify");
  if (pipeline.lowers)
    checkLowered(module, all);
}

void runIR(MLIRContext &context, StringRef text, Mutator &m, Stats &stats) {
  currentAction = "parse";
  llvm::SourceMgr sourceMgr;
  sourceMgr.setDiagHandler([](const llvm::SMDiagnostic &, void *) {});
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "input", false), llvm::SMLoc());
  if (!mlir::attn::checkInput(sourceMgr, id)) // as the tools do
    return;
  uint64_t before = errorCount;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return;
  if (errorCount != before)
    fail("the parser reported an error and returned a module");
  ++stats.parsed;
  checkNoAliasing(*module);
  runPipeline(*module, pickPipeline(m), stats);
}

void runSpec(MLIRContext &context, StringRef text, Mutator &m, Stats &stats) {
  currentAction = "parseKernelSpecs";
  llvm::Expected<std::vector<mlir::attn::KernelSpec>> specs =
      mlir::attn::parseKernelSpecs(text);
  if (!specs) {
    llvm::consumeError(specs.takeError());
    return;
  }
  ++stats.parsed;
  currentAction = "buildKernelFunction";
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  for (const mlir::attn::KernelSpec &spec : *specs)
    if (failed(mlir::attn::buildKernelFunction(*module, spec)))
      return;
  // One kernel, lowered as attn-compile would (without ptxas).
  const mlir::attn::KernelSpec &spec = (*specs)[m.below(specs->size())];
  std::string pipeline = llvm::formatv(
      "attn-to-cubin{{block-m={0} block-n={1} path={2} format=none}",
      spec.blockM, spec.blockN, spec.path.empty() ? "auto" : spec.path);
  std::string name = spec.name.empty() ? spec.defaultName() : spec.name;
  OwningOpRef<ModuleOp> one = ModuleOp::create(UnknownLoc::get(&context));
  one->push_back(module->lookupSymbol(name)->clone());
  // A quantized spec: attn-quantize-fp8 first, as attn-compile runs it.
  if (spec.quantizeFp8) {
    currentAction = "attn-quantize-fp8{" + *spec.quantizeFp8 + "}";
    auto pm = PassManager::on<ModuleOp>(&context);
    llvm::raw_null_ostream errors;
    if (failed(mlir::attn::addQuantizeFP8Pass(pm, *spec.quantizeFp8,
                                              spec.blockM, spec.blockN, nullptr,
                                              errors)) ||
        failed(pm.run(*one)))
      return;
  }
  runPipeline(*one, Pipeline{"", pipeline, /*lowers=*/true}, stats);
}

/// The runtime's manifest reader (what attn_bundle_load parses).
void runManifest(StringRef text, Stats &stats) {
  currentAction = "parseManifest";
  llvm::Expected<::attn::bundle::Manifest> manifest =
      ::attn::bundle::parseManifest(text);
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return;
  }
  ++stats.parsed;
  for (const ::attn::bundle::KernelEntry &kernel : manifest->kernels)
    (void)::attn::bundle::describe(kernel);
}

std::vector<std::string> readCorpus() {
  std::vector<std::string> corpus;
  auto add = [&](StringRef path) {
    if (auto buffer = llvm::MemoryBuffer::getFile(path))
      corpus.push_back((*buffer)->getBuffer().str());
  };
  for (const std::string &path : corpusPaths) {
    if (!llvm::sys::fs::is_directory(path)) {
      add(path);
      continue;
    }
    std::error_code ec;
    std::vector<std::string> files;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      files.push_back(it->path());
    llvm::sort(files); // the same order on every machine
    for (const std::string &file : files)
      add(file);
  }
  return corpus;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::registerAttnPassesAndPipelines();
  cl::ParseCommandLineOptions(argc, argv, "attn-fuzz: mutation fuzzing\n");
  if (target != "ir" && target != "spec" && target != "manifest") {
    llvm::errs() << "attn-fuzz: --target must be ir, spec or manifest\n";
    return 1;
  }
  std::vector<std::string> corpus = readCorpus();
  if (corpus.empty()) {
    llvm::errs() << "attn-fuzz: empty corpus\n";
    return 1;
  }
  llvm::sys::AddSignalHandler(onCrash, nullptr);
  std::signal(SIGALRM, onTimeout);

  DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are the expected outcome of most inputs: count, not print.
  uint64_t diagnostics = 0;
  ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &diag) {
    ++diagnostics;
    errorCount += diag.getSeverity() == DiagnosticSeverity::Error;
    return success();
  });

  Mutator mutator(seed, corpus);
  Stats stats;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  while (elapsed() < seconds && (!maxRuns || stats.runs < maxRuns)) {
    // Each seed once as it is, then mutants.
    current = stats.runs < corpus.size()
                  ? corpus[stats.runs]
                  : mutator.mutate(mutator.below(corpus.size()));
    alarm(timeoutPerInput);
    if (target == "ir")
      runIR(context, current, mutator, stats);
    else if (target == "spec")
      runSpec(context, current, mutator, stats);
    else
      runManifest(current, stats);
    alarm(0);
    ++stats.runs;
  }
  llvm::outs() << llvm::formatv(
      "attn-fuzz --target={0} --seed={1}: {2} inputs in {3:f1} s ({4} "
      "parsed, {5} pipelines succeeded, {6} diagnostics): no crash, hang or "
      "half-lowered output\n",
      target, seed.getValue(), stats.runs, elapsed(), stats.parsed,
      stats.succeeded, diagnostics);
  return 0;
}

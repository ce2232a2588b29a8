//===- attn-fuzz-runtime.cpp - mutation fuzzing of the runtime ------------===//
//
// attn-fuzz's counterpart for the runtime (no MLIR: it links the runtime
// alone), seeded with manifests (fuzz/corpus/manifest):
//   --target=bundle  writes a bundle directory from a mutant manifest (its
//                    cubins fake ELF files whose hashes it names), turns
//                    some of its files (manifest.json, cubins, tuning.json)
//                    into a symlink to /dev/zero, a FIFO, a directory, a
//                    dangling or looping symlink, an empty or an oversized
//                    file, and loads it with attn_bundle_load;
//   --target=calls   loads one bundle of every seed's kernels and makes
//                    attn_fwd_select / attn_bwd_select calls drawn for them
//                    with random shapes, strides and pointers
//                    (RuntimeCalls.h).
// What fails the run: a crash, a sanitizer report, an input slower than
// --timeout-per-input (a load blocked on a FIFO or reading /dev/zero), a
// load that succeeds with a file it must refuse or runs out of memory, and
// a call accepted with an output that overlaps itself or another operand.
// The failing input is printed and written to --crash-file; runs are
// deterministic per --seed.
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"
#include "RuntimeCalls.h"
#include "attn/manifest/BundleFiles.h"
#include "attn/manifest/Manifest.h"
#include "attn/runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using attn::fuzz::Mutator;
using attn::fuzz::RuntimeCall;
namespace bundle = attn::bundle;
namespace cl = llvm::cl;

static cl::opt<std::string> target("target", cl::desc("bundle or calls"),
                                   cl::init("bundle"));
static cl::list<std::string>
    corpusPaths(cl::Positional, cl::OneOrMore,
                cl::desc("<manifest corpus dir or file>..."));
static cl::opt<double> seconds("seconds", cl::desc("Time budget"),
                               cl::init(30));
static cl::opt<uint64_t> maxRuns("runs", cl::desc("Stop after N inputs"),
                                 cl::init(0));
static cl::opt<uint64_t> seed("seed", cl::desc("Mutation seed"),
                              cl::init(20261207));
static cl::opt<unsigned> timeoutPerInput(
    "timeout-per-input", cl::init(10),
    cl::desc("Seconds one input may take before it counts as a hang"));
static cl::opt<std::string>
    crashFile("crash-file", cl::init("attn-fuzz-runtime-failure.txt"),
              cl::desc("Where the failing input is written"));

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

/// The input being run, for the failure and timeout reports.
static std::string current;

static void dumpCurrent() {
  llvm::errs() << "\nattn-fuzz-runtime: failing input (written to " << crashFile
               << "):\n"
               << current << "\n";
  std::error_code ec;
  llvm::raw_fd_ostream out(crashFile, ec);
  if (!ec)
    out << current;
}

static void onTimeout(int) {
  llvm::errs() << "\nattn-fuzz-runtime: an input ran longer than "
               << timeoutPerInput << " s\n";
  dumpCurrent();
  _exit(3);
}

[[noreturn]] static void fail(const llvm::Twine &why) {
  llvm::errs() << "attn-fuzz-runtime: " << why << "\n";
  dumpCurrent();
  _exit(2);
}

namespace {

struct Stats {
  uint64_t runs = 0, accepted = 0, refused = 0;
};

/// The fake cubin every written bundle holds: ELF magic, 64 bytes.
std::string fakeCubin() {
  std::string cubin = "\x7f"
                      "ELF\x02\x01\x01 attn-fuzz-runtime";
  cubin.resize(64, '\0');
  return cubin;
}

/// `manifest` with every launch naming the fake cubin's hash.
void useFakeCubins(bundle::Manifest &manifest) {
  std::string hash = bundle::sha256Hex(fakeCubin());
  for (bundle::KernelEntry &k : manifest.kernels) {
    k.cubinSha256 = hash;
    for (bundle::KernelLaunch &l : k.then)
      l.cubinSha256 = hash;
  }
}

bool writeFile(const std::string &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << text;
  return !ec;
}

//===----------------------------------------------------------------------===//
// --target=bundle
//===----------------------------------------------------------------------===//

/// What a file of the bundle was turned into.
enum class Oddity {
  None,
  DevZero,
  Fifo,
  Directory,
  Dangling,
  Loop,
  Empty,
  Oversized
};

const char *oddityName(Oddity o) {
  static const char *const names[] = {
      "a regular file",  "/dev/zero",      "a FIFO", "a directory",
      "a dangling link", "a symlink loop", "empty",  "oversized"};
  return names[static_cast<int>(o)];
}

/// Makes `path` (a file of kind `kind`, written already) odd.
void makeOdd(const std::string &path, Oddity o, bundle::BundleFile kind) {
  ::unlink(path.c_str());
  switch (o) {
  case Oddity::None:
  case Oddity::Empty:
    writeFile(path, "");
    break;
  case Oddity::DevZero:
    (void)::symlink("/dev/zero", path.c_str());
    break;
  case Oddity::Fifo:
    (void)::mkfifo(path.c_str(), 0600);
    break;
  case Oddity::Directory:
    (void)::mkdir(path.c_str(), 0700);
    break;
  case Oddity::Dangling:
    (void)::symlink("no-such-file", path.c_str());
    break;
  case Oddity::Loop:
    (void)::symlink(llvm::sys::path::filename(path).str().c_str(),
                    path.c_str());
    break;
  case Oddity::Oversized: {
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0600);
    if (fd >= 0) {
      (void)::ftruncate(fd, off_t(bundle::maxFileBytes(kind) + 1));
      ::close(fd);
    }
    break;
  }
  }
}

/// Removes `dir` and what a run put in it (no link is followed).
void clear(const std::string &dir) {
  std::error_code ec;
  std::vector<std::string> entries;
  for (llvm::sys::fs::directory_iterator it(dir, ec, /*follow=*/false), end;
       it != end && !ec; it.increment(ec))
    entries.push_back(it->path());
  for (const std::string &e : entries)
    if (::unlink(e.c_str()) != 0)
      ::rmdir(e.c_str());
}

/// A tuning.json naming the bundle's first kernel, mutated sometimes.
std::string tuningText(const bundle::Manifest &m, Mutator &mut) {
  std::string name = m.kernels.empty() ? "k" : m.kernels[0].name;
  std::string text = "{\"version\": 1, \"choices\": [{\"shape\": \"bf16 D=128 "
                     "B=1\", \"kernel\": \"" +
                     name + "\", \"ms\": 0.5, \"device\": \"fuzz\"}]}";
  if (mut.below(4) == 0)
    text.insert(mut.below(text.size()), mut.below(2) ? "[" : "\"x\": 1, ");
  return text;
}

void runBundle(const std::string &dir, const std::string &text, Mutator &m,
               Stats &stats) {
  clear(dir);
  llvm::Expected<bundle::Manifest> parsed = bundle::parseManifest(text);
  std::string manifestText = text;
  // The files the loader reads, with their kinds.
  std::vector<std::pair<std::string, bundle::BundleFile>> files = {
      {"manifest.json", bundle::BundleFile::Manifest}};
  bundle::Manifest manifest;
  if (parsed) {
    manifest = std::move(*parsed);
    useFakeCubins(manifest);
    manifestText = llvm::formatv("{0:2}", bundle::toJSON(manifest)).str();
    for (const bundle::KernelEntry &k : manifest.kernels)
      for (size_t i = 0; i < k.numLaunches(); ++i)
        files.push_back({k.launch(i).cubin, bundle::BundleFile::Cubin});
  } else {
    llvm::consumeError(parsed.takeError());
  }
  writeFile(dir + "/manifest.json", manifestText);
  for (size_t i = 1; i < files.size(); ++i)
    writeFile(dir + "/" + files[i].first, fakeCubin());
  if (m.below(2)) {
    writeFile(dir + "/tuning.json", tuningText(manifest, m));
    files.push_back({"tuning.json", bundle::BundleFile::Tuning});
  }
  // Some files odd (each kernel's cubin may be another's): each with
  // probability 1/3. The loader reads every one of them, and none of them
  // is a file it may accept, but for a dangling tuning.json: no choices.
  llvm::sort(files);
  files.erase(std::unique(files.begin(), files.end()), files.end());
  std::string oddities;
  bool refuse = false;
  for (auto &[name, kind] : files) {
    if (m.below(3))
      continue;
    auto o = static_cast<Oddity>(1 + m.below(7));
    makeOdd(dir + "/" + name, o, kind);
    oddities += "\n" + name + " is " + oddityName(o);
    refuse |= kind != bundle::BundleFile::Tuning || o != Oddity::Dangling;
  }
  current = manifestText + "\n-- files:" + oddities;
  attn_bundle *loaded = nullptr;
  attn_status status = attn_bundle_load(dir.c_str(), &loaded);
  std::string message = attn_last_error();
  if (message.find("out of host memory") != std::string::npos)
    fail("attn_bundle_load ran out of memory: " + message);
  if (status == ATTN_SUCCESS && refuse)
    fail("attn_bundle_load succeeded with a file it must refuse");
  if (status == ATTN_SUCCESS)
    ++stats.accepted;
  else
    ++stats.refused;
  attn_bundle_destroy(loaded);
}

//===----------------------------------------------------------------------===//
// --target=calls
//===----------------------------------------------------------------------===//

/// One bundle of every seed's kernels (renamed k0, k1, ...), loaded.
attn_bundle *loadCorpusBundle(const std::string &dir,
                              const std::vector<std::string> &corpus,
                              bundle::Manifest &all) {
  all.chip = "sm_90a";
  all.generator = "attn-fuzz-runtime";
  for (const std::string &text : corpus) {
    llvm::Expected<bundle::Manifest> m = bundle::parseManifest(text);
    if (!m) {
      llvm::consumeError(m.takeError());
      continue;
    }
    all.version = std::max(all.version, m->version);
    for (bundle::KernelEntry &k : m->kernels) {
      k.name = "k" + std::to_string(all.kernels.size());
      all.kernels.push_back(std::move(k));
    }
  }
  useFakeCubins(all);
  writeFile(dir + "/manifest.json",
            llvm::formatv("{0:2}", bundle::toJSON(all)).str());
  for (const bundle::KernelEntry &k : all.kernels)
    for (size_t i = 0; i < k.numLaunches(); ++i)
      writeFile(dir + "/" + k.launch(i).cubin, fakeCubin());
  attn_bundle *loaded = nullptr;
  if (all.kernels.empty() ||
      attn_bundle_load(dir.c_str(), &loaded) != ATTN_SUCCESS) {
    llvm::errs() << "attn-fuzz-runtime: the corpus gives no loadable bundle: "
                 << attn_last_error() << "\n";
    return nullptr;
  }
  return loaded;
}

void runCall(attn_bundle *loaded, const bundle::Manifest &manifest, Mutator &m,
             Stats &stats) {
  const bundle::KernelEntry &kernel =
      manifest.kernels[m.below(manifest.kernels.size())];
  RuntimeCall call = attn::fuzz::drawCall(kernel, m);
  current = "drawn for " + bundle::describeKey(kernel) + "\n" +
            attn::fuzz::describe(call);
  int64_t index = -1;
  attn_status status = call.backward
                           ? attn_bwd_select(loaded, &call.bwd, &index)
                           : attn_fwd_select(loaded, &call.fwd, &index);
  if (status != ATTN_SUCCESS) {
    ++stats.refused;
    return;
  }
  ++stats.accepted;
  std::string wrong = attn::fuzz::checkAccepted(call);
  if (!wrong.empty())
    fail("a call was accepted, but " + wrong);
}

std::vector<std::string> readCorpus() {
  std::vector<std::string> corpus;
  auto add = [&](llvm::StringRef path) {
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
  cl::ParseCommandLineOptions(argc, argv,
                              "attn-fuzz-runtime: mutation fuzzing of the "
                              "runtime's loader and call checks\n");
  if (target != "bundle" && target != "calls") {
    llvm::errs() << "attn-fuzz-runtime: --target must be bundle or calls\n";
    return 1;
  }
  std::vector<std::string> corpus = readCorpus();
  if (corpus.empty()) {
    llvm::errs() << "attn-fuzz-runtime: empty corpus\n";
    return 1;
  }
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-fuzz-runtime", dir)) {
    llvm::errs() << "attn-fuzz-runtime: " << ec.message() << "\n";
    return 1;
  }
  std::string bundleDir = dir.str().str();
  std::signal(SIGALRM, onTimeout);
  Mutator mutator(seed, corpus);
  Stats stats;
  bundle::Manifest manifest;
  attn_bundle *loaded = nullptr;
  if (target == "calls" &&
      !(loaded = loadCorpusBundle(bundleDir, corpus, manifest)))
    return 1;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  while (elapsed() < seconds && (!maxRuns || stats.runs < maxRuns)) {
    alarm(timeoutPerInput);
    if (target == "bundle") {
      // Half the seeds as they are: odd files in a bundle that would load.
      size_t which = mutator.below(corpus.size());
      std::string text = stats.runs < corpus.size() ? corpus[stats.runs]
                         : mutator.below(2)         ? corpus[which]
                                                    : mutator.mutate(which);
      runBundle(bundleDir, text, mutator, stats);
    } else {
      runCall(loaded, manifest, mutator, stats);
    }
    alarm(0);
    ++stats.runs;
  }
  attn_bundle_destroy(loaded);
  clear(bundleDir);
  ::rmdir(bundleDir.c_str());
  llvm::outs() << llvm::formatv(
      "attn-fuzz-runtime --target={0} --seed={1}: {2} inputs in {3:f1} s "
      "({4} accepted, {5} refused): no crash, hang, odd file accepted or "
      "accepted call with overlapping outputs\n",
      target, seed.getValue(), stats.runs, elapsed(), stats.accepted,
      stats.refused);
  return 0;
}

//===- StagingDir.cpp - a bundle written whole or not at all --------------===//

#include "StagingDir.h"

#include "attn/Target/Bundle.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace mlir;
using namespace mlir::attn;
namespace fs = llvm::sys::fs;

namespace {

//===----------------------------------------------------------------------===//
// Signals: what the handlers read is set before they are installed.
//===----------------------------------------------------------------------===//

/// Every signal whose default action ends the process and that a user, a
/// limit or another process sends (a terminal closed or Ctrl-\\, a timer,
/// a kill, a closed pipe, `ulimit -t`, I/O and power events, the real-time
/// signals) but SIGUSR1, LLVM's "print info" signal. LLVM would treat
/// SIGQUIT and SIGXCPU as crashes ("PLEASE submit a bug report"); the real
/// crash signals (SEGV, ILL, ABRT, FPE, BUS, TRAP, SYS) still go through
/// its crash handlers and onCrash.
const std::vector<int> &handledSignals() {
  static const std::vector<int> signals = [] {
    std::vector<int> out = {SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM,
                            SIGALRM, SIGUSR2, SIGPIPE,   SIGVTALRM,
                            SIGPROF, SIGXCPU, SIGIO,     SIGPWR,
                            SIGSTKFLT};
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig)
      out.push_back(sig);
    return out;
  }();
  return signals;
}
/// The signals the process inherited as ignored (a background job's
/// SIGINT), noted before LLVM installed its handlers over them.
std::vector<bool> inheritedIgnored;
std::atomic<const char *> stagingPath{nullptr};
std::atomic<pid_t> runningChild{0};
std::atomic<bool> committing{false};
std::atomic<int> deferredSignal{0};
/// The files registered with LLVM, unregistered once committed or removed.
std::vector<std::string> stagedFiles;

/// Async-signal-safe: kill, waitpid, unlink (LLVM's list), rmdir, sigaction.
void onSignal(int sig) {
  if (committing) { // the swap is a few renames: let it finish
    deferredSignal = sig;
    return;
  }
  if (pid_t child = runningChild.exchange(0)) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  // The files go first: the directory can go only once they are gone.
  llvm::sys::RunInterruptHandlers();
  if (const char *dir = stagingPath.exchange(nullptr))
    rmdir(dir);
  // The signal, blocked while this runs, then ends the process as it would
  // have without any handler.
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
  raise(sig);
}

void onCrash(void *) {
  if (const char *dir = stagingPath.exchange(nullptr))
    rmdir(dir); // after LLVM removed the files
}

void forgetStagedFiles() {
  stagingPath = nullptr;
  for (const std::string &file : stagedFiles)
    llvm::sys::DontRemoveFileOnSignal(file);
  stagedFiles.clear();
}

/// Only a directory that holds nothing but bundle files may be replaced:
/// `-o .` must not swap away a source tree.
bool isReplaceable(StringRef dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (it->type() != fs::file_type::regular_file ||
        !(name == "manifest.json" || name == "tuning.json" ||
          name.ends_with(".cubin") || name.ends_with(".ptx")))
      return false;
  }
  return !ec;
}

/// The staging directories of `target` whose process is gone (killed by
/// SIGKILL, which no handler sees): `<target>.partial-<pid>-XXXXXX` holding
/// only bundle files, with no process `pid`.
void removeAbandoned(StringRef target) {
  StringRef parent = llvm::sys::path::parent_path(target);
  std::string prefix = (llvm::sys::path::filename(target) + ".partial-").str();
  std::error_code ec;
  std::vector<std::string> abandoned;
  for (fs::directory_iterator it(parent, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    unsigned long long pid;
    if (!name.consume_front(prefix) ||
        name.consumeInteger(10, pid) || !name.consume_front("-") ||
        pid == 0 || pid > INT32_MAX)
      continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
        it->type() == fs::file_type::directory_file &&
        isReplaceable(it->path()))
      abandoned.push_back(it->path());
  }
  for (const std::string &dir : abandoned)
    fs::remove_directories(dir);
}

/// mkdir(1): a new directory with 0777 less the umask (LLVM's default,
/// owner_all | group_all, would give 0750 under a 022 umask).
std::error_code createUniqueDirectory(const llvm::Twine &model,
                                      SmallVectorImpl<char> &result) {
  std::error_code ec;
  for (int tries = 0; tries < 128; ++tries) {
    fs::createUniquePath(model, result, /*MakeAbsolute=*/false);
    ec = fs::create_directory(result, /*IgnoreExisting=*/false, fs::all_all);
    if (ec != std::errc::file_exists)
      break;
  }
  return ec;
}

} // namespace

void mlir::attn::noteIgnoredSignals() {
  inheritedIgnored.clear();
  for (int sig : handledSignals()) {
    struct sigaction current;
    inheritedIgnored.push_back(sigaction(sig, nullptr, &current) == 0 &&
                               current.sa_handler == SIG_IGN);
  }
}

void mlir::attn::installSignalHandlers() {
  llvm::sys::AddSignalHandler(onCrash, nullptr);
  struct sigaction action = {};
  sigemptyset(&action.sa_mask);
  const std::vector<int> &signals = handledSignals();
  for (size_t i = 0; i < signals.size(); ++i) {
    bool ignored = i < inheritedIgnored.size() && inheritedIgnored[i];
    action.sa_handler = ignored ? SIG_IGN : onSignal;
    sigaction(signals[i], &action, nullptr);
  }
  // Past `ulimit -f` a write fails with EFBIG, reported as an error.
  action.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &action, nullptr);
}

void mlir::attn::stageFile(StringRef file) {
  llvm::sys::RemoveFileOnSignal(file);
  stagedFiles.push_back(file.str());
}

int mlir::attn::runStagingChild(StringRef program, ArrayRef<StringRef> args,
                                ArrayRef<std::optional<StringRef>> redirects,
                                std::string *error) {
  bool failed = false;
  llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(
      program, args, std::nullopt, redirects, 0, error, &failed);
  if (failed)
    return -1;
  runningChild = child.Pid;
  child = llvm::sys::Wait(child, std::nullopt, error);
  runningChild = 0;
  return child.ReturnCode;
}

StagingDir::~StagingDir() {
  if (path.empty())
    return;
  fs::remove_directories(path); // the handlers cover it until it is gone
  forgetStagedFiles();
}

LogicalResult StagingDir::create(MLIRContext *ctx, StringRef dir) {
  Location loc = UnknownLoc::get(ctx);
  target = dir;
  if (std::error_code ec = fs::make_absolute(target))
    return emitError(loc) << "-o " << dir << ": " << ec.message();
  llvm::sys::path::remove_dots(target, /*remove_dot_dot=*/true);
  if (fs::exists(target) &&
      (!fs::is_directory(target) || !isReplaceable(target)))
    return emitError(loc) << "-o " << dir
                          << " exists and is not a bundle directory (only "
                             "manifest.json, tuning.json, *.cubin and "
                             "*.ptx); refusing to replace it";
  SmallString<128> staged;
  std::error_code ec =
      fs::create_directories(llvm::sys::path::parent_path(target),
                             /*IgnoreExisting=*/true, fs::all_all);
  removeAbandoned(target);
  if (!ec)
    ec = createUniqueDirectory(
        target + ".partial-" + llvm::Twine(getpid()) + "-%%%%%%", staged);
  if (ec)
    return emitError(loc) << "-o " << dir
                          << ": cannot create a directory beside it: "
                          << ec.message();
  path = staged.str().str();
  stagingPath = path.c_str();
  return success();
}

LogicalResult StagingDir::commit(MLIRContext *ctx) {
  committing = true;
  SmallString<128> old;
  std::error_code ec;
  if (fs::exists(target)) {
    fs::createUniquePath(target + ".old-%%%%%%", old, /*MakeAbsolute=*/false);
    ec = fs::rename(target, old);
  }
  if (!ec && (ec = fs::rename(path, target)) && !old.empty())
    fs::rename(old, target); // put the old bundle back
  if (!ec) {
    forgetStagedFiles();
    path.clear();
    if (!old.empty())
      fs::remove_directories(old);
  }
  committing = false;
  if (int sig = deferredSignal.exchange(0))
    onSignal(sig);
  if (ec)
    return emitError(UnknownLoc::get(ctx))
           << "-o " << target
           << ": cannot move the new bundle there: " << ec.message();
  return success();
}

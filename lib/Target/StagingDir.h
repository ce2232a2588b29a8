//===- StagingDir.h - a bundle written whole or not at all ------*- C++ -*-===//
//
// A bundle is written into a fresh directory beside the target
// (`<dir>.partial-<pid>-XXXXXX`) and swapped in whole at the end, so a failed
// run leaves the old bundle (or nothing), never a mix of old and new files.
// The directory goes unless committed: on an error, on a signal that ends
// the process (see installSignalHandlers: the running ptxas is killed, the
// files and the directory removed, then the signal takes its course; one
// inherited as ignored stays ignored) and on a crash. A signal that arrives
// during the swap waits until it is done. What SIGKILL leaves, the next run
// for the same target removes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_STAGINGDIR_H
#define ATTN_LIB_TARGET_STAGINGDIR_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallString.h"

#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
namespace attn {

/// One at a time per process (the signal handlers know one directory).
class StagingDir {
public:
  StagingDir() = default;
  StagingDir(const StagingDir &) = delete;
  StagingDir &operator=(const StagingDir &) = delete;
  ~StagingDir();

  /// Creates the directory beside `target` (the -o of attn-compile), with
  /// mkdir(1)'s permissions: 0777 less the umask.
  LogicalResult create(MLIRContext *ctx, StringRef target);
  StringRef get() const { return path; }
  /// Swaps the directory in for `target`.
  LogicalResult commit(MLIRContext *ctx);

private:
  llvm::SmallString<128> target;
  std::string path;
};

/// Registers `file`, about to be written into the staging directory, for
/// removal on a signal.
void stageFile(StringRef file);

/// llvm::sys::ExecuteAndWait for the tools the writer runs (ptxas): the
/// child is killed before the staging directory goes on a signal.
int runStagingChild(StringRef program, ArrayRef<StringRef> args,
                    ArrayRef<std::optional<StringRef>> redirects,
                    std::string *error);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TARGET_STAGINGDIR_H

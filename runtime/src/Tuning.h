//===- Tuning.h - the variant chosen per call shape (tuning.json) -*- C++ -*-=//
//
// A kernel compiled in several variants (attn-compile --variant) has one
// entry per variant with the same key. Which one runs for a call shape is a
// measured choice: Bundle::tune times them and records the fastest here;
// the table lives in <bundle>/tuning.json so later processes start tuned.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TUNING_H
#define ATTN_RUNTIME_TUNING_H

#include "attn/runtime.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace attn::runtime {

struct Status;

/// Version of tuning.json this code reads and writes.
constexpr int64_t kTuningVersion = 1;

class TuningTable {
public:
  /// One measured choice: the fastest variant for a call shape.
  struct Choice {
    std::string kernel; // its symbol
    double ms = 0;      // its time per launch when measured
    std::string device; // the GPU it was measured on
  };

  /// Reads `dir`/tuning.json when it exists. Every choice must name one of
  /// `kernels`; a malformed file is ATTN_ERROR_BUNDLE_CORRUPT.
  Status load(llvm::StringRef dir, const llvm::StringSet<> &kernels);
  /// No choice recorded (the common case: no shape string to build per call).
  bool empty() const;
  /// The choice for `shape` (FwdCall::describe()), if any.
  std::optional<Choice> lookup(llvm::StringRef shape) const;
  /// Records `choice` for `shape` and rewrites tuning.json (a temporary file
  /// renamed over it). The choice holds for this process even when the
  /// write fails (ATTN_ERROR_BUNDLE_NOT_FOUND, naming the file).
  Status record(llvm::StringRef shape, const Choice &choice);

private:
  std::string path;
  mutable std::mutex mutex;
  std::map<std::string, Choice> choices; // by shape
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_TUNING_H

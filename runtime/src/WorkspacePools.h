//===- WorkspacePools.h - memory pools for kernel workspace -----*- C++ -*-===//
//
// Kernels with a workspace (split-KV's partial O and LSE, the quantized FP8
// copies and descales, the backward's Delta and dQ_acc) get it from a
// stream-ordered memory pool that the bundle owns, one per device.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_WORKSPACEPOOLS_H
#define ATTN_RUNTIME_WORKSPACEPOOLS_H

#include "Driver.h"

#include "llvm/ADT/SmallVector.h"

#include <atomic>
#include <mutex>
#include <utility>

namespace attn::runtime {

/// Stream-ordered memory pools for kernel workspace, one per device,
/// created on first use and destroyed with the bundle.
///
/// The device's default pool (cuMemAllocAsync) has a release threshold of
/// zero: each synchronization returns its free memory to the system, and
/// the next call maps it again (20-30 us of a quantized Llama-3-8B prefill
/// call, 30-40 us of a non-causal N16384 one on an H100,
/// docs/perf-notes.md). These pools keep what they hold
/// (release threshold UINT64_MAX): the most workspace in flight at once
/// stays reserved until the bundle is destroyed.
class WorkspacePools {
public:
  WorkspacePools() = default;
  WorkspacePools(const WorkspacePools &) = delete;
  WorkspacePools &operator=(const WorkspacePools &) = delete;
  ~WorkspacePools();

  /// Allocates `bytes` on `stream` from `device`'s pool, or from the
  /// default pool where the driver lacks the pool API. On failure returns
  /// the error and sets `what` to the driver call that failed.
  CUresult allocate(const DriverApi &driver, CUdevice device, size_t bytes,
                    CUstream stream, CUdeviceptr &ptr, const char *&what);

private:
  /// `device`'s pool, created with its release threshold on first use.
  CUresult poolOf(const DriverApi &driver, CUdevice device, CUmemoryPool &pool,
                  const char *&what);

  std::mutex mutex;
  llvm::SmallVector<std::pair<CUdevice, CUmemoryPool>, 1> pools;
  /// The driver that created `pools` (another one allocates from the
  /// default pool).
  std::atomic<const DriverApi *> owner{nullptr};
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_WORKSPACEPOOLS_H

//===- ReferenceCheck.h - attn-reference-check's shared pieces -*- C++ -*-===//
//
// What the forward checks (ReferenceCheck.cpp) and the backward checks
// (ReferenceCheckBwd.cpp) of attn-reference-check both use.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_REFERENCECHECK_H
#define ATTN_RUN_REFERENCECHECK_H

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace attn::run {

/// True iff `r` is CUDA_SUCCESS; prints `what` and the code otherwise.
inline bool ok(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS)
    std::fprintf(stderr, "attn-reference-check: %s: CUresult %d\n", what,
                 int(r));
  return r == CUDA_SUCCESS;
}

/// A device buffer freed at scope exit.
struct Buffer {
  CUdeviceptr ptr = 0;
  explicit Buffer(size_t bytes) {
    cuMemAlloc(&ptr, std::max<size_t>(bytes, 256));
  }
  ~Buffer() { cuMemFree(ptr); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

/// Checks the backward reference kernels (reference_bwd_dq_*,
/// reference_bwd_dkdv_*) of `module` against an fp64 host backward and
/// prints a table; returns the number of failed cases, -1 on a CUDA error.
int checkBackward(CUmodule module);

} // namespace attn::run

#endif // ATTN_RUN_REFERENCECHECK_H

//===- AttnRun.h - what attn-run's files share ------------------*- C++ -*-===//
//
// The CUDA driver helpers (checked calls as llvm::Error, owned handles,
// allocation and download) and the reference module's functions
// (Reference.cu), used by the forward checks (attn-run.cpp) and the
// backward checks (Backward.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_ATTNRUN_H
#define ATTN_RUN_ATTNRUN_H

#include "attn/runtime.h"
#include "attn/runtime.hpp"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace attn::run {

inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Success, or an error naming the failed call and the driver's error.
inline llvm::Error check(CUresult result, const llvm::Twine &what) {
  if (result == CUDA_SUCCESS)
    return llvm::Error::success();
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      cuGetErrorString(result, &text) != CUDA_SUCCESS)
    return makeError(what + ": CUresult " + llvm::Twine(int(result)));
  return makeError(what + ": " + name + " (" + text + ")");
}

/// Owns a driver handle and destroys it at scope exit.
template <typename T, CUresult (*Destroy)(T)> class Owned {
public:
  Owned() = default;
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() {
    if (handle)
      Destroy(handle);
  }
  T get() const { return handle; }
  T *init() { return &handle; }

private:
  T handle{};
};
using DeviceBuffer = Owned<CUdeviceptr, cuMemFree>;
using Stream = Owned<CUstream, cuStreamDestroy>;
using Event = Owned<CUevent, cuEventDestroy>;
using Module = Owned<CUmodule, cuModuleUnload>;

inline llvm::Error allocate(DeviceBuffer &buffer, size_t bytes) {
  // A zero-byte request is an error in the driver; empty tensors still
  // need a valid, aligned pointer.
  return check(cuMemAlloc(buffer.init(), std::max<size_t>(bytes, 256)),
               llvm::Twine("cuMemAlloc(") + llvm::Twine(bytes) + ")");
}

template <typename T>
llvm::Error download(std::vector<T> &host, const DeviceBuffer &buffer,
                     int64_t count) {
  host.resize(count);
  if (count == 0)
    return llvm::Error::success();
  return check(cuMemcpyDtoH(host.data(), buffer.get(), count * sizeof(T)),
               "cuMemcpyDtoH");
}

/// Average milliseconds of `iters` calls of `launch` on `stream` after one
/// warm-up. A call that fails returns its status with `ms` left NaN (the
/// stream synchronized); a driver failure is the Error.
llvm::Error timeLaunches(CUstream stream, unsigned iters,
                         llvm::function_ref<attn_status()> launch,
                         attn_status &status, double &ms);

/// Threads of a reference_fwd_* and reference_bwd_* CTA.
constexpr unsigned kReferenceThreads = 128;

/// The functions of Reference.cu's cubin (loadReference in attn-run.cpp).
struct Reference {
  Module module;
  CUfunction fill[2] = {};          // f16, bf16
  CUfunction forward[2] = {};       // f16, bf16
  CUfunction forwardF32 = {};       // FP8 calls: dequantized inputs
  CUfunction widen[2] = {};         // f16, bf16 -> f32
  CUfunction forwardPaged[2] = {};  // f16, bf16: K/V through a block table
  CUfunction poisonPages[2] = {};   // f16, bf16: garbage in unused rows
  CUfunction forwardVarlen[2] = {}; // f16, bf16: one sequence's views
  CUfunction narrow[2] = {};        // f32 -> f16, bf16: a backward's O
  CUfunction backwardDq[2] = {};    // f16, bf16: reference_bwd_dq_*
  CUfunction backwardDkDv[2] = {};  // f16, bf16: reference_bwd_dkdv_*
  int64_t maxDynamicShared = 0;
};

/// A row-major view of `buffer` of `sizes` (attn::makeTensor).
inline attn_tensor tensor(const DeviceBuffer &buffer, attn_dtype dtype,
                          std::initializer_list<int64_t> sizes) {
  return attn::makeTensor(reinterpret_cast<void *>(buffer.get()), dtype, sizes);
}

} // namespace attn::run

#endif // ATTN_RUN_ATTNRUN_H

//===- attn/runtime.hpp - C++ wrapper of the attn runtime -------*- C++ -*-===//
//
// Header-only, over the C API of attn/runtime.h only: a Status with the
// message, a move-only Bundle that destroys its handle, and helpers to build
// attn_tensor views.
//
//   attn::Bundle bundle;
//   if (attn::Status s = bundle.load("bundles/llama3"); !s.ok())
//     fail(s.message);
//   attn_fwd_args args = {};
//   args.q = attn::makeTensor(q, ATTN_DTYPE_BF16, {1, 32, 8192, 128});
//   ...
//   attn::Status s = bundle.fwd(args, stream);
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HPP
#define ATTN_RUNTIME_HPP

#include "attn/runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace attn {

/// A status code and, on failure, the runtime's message.
struct Status {
  attn_status code = ATTN_SUCCESS;
  std::string message;

  bool ok() const { return code == ATTN_SUCCESS; }
  const char *name() const { return attn_status_name(code); }

  /// `code` with the calling thread's attn_last_error().
  static Status fromLast(attn_status code) {
    return {code, code == ATTN_SUCCESS ? std::string() : attn_last_error()};
  }
};

/// Owns an attn_bundle handle.
class Bundle {
public:
  Bundle() = default;
  ~Bundle() { attn_bundle_destroy(handle); }
  Bundle(Bundle &&other) noexcept
      : handle(std::exchange(other.handle, nullptr)) {}
  Bundle &operator=(Bundle &&other) noexcept {
    if (this != &other) {
      attn_bundle_destroy(handle);
      handle = std::exchange(other.handle, nullptr);
    }
    return *this;
  }
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;

  /// Loads `dir`, replacing the bundle held so far; on failure none is held.
  Status load(const std::string &dir) {
    attn_bundle_destroy(std::exchange(handle, nullptr));
    return Status::fromLast(attn_bundle_load(dir.c_str(), &handle));
  }

  /// Validates `args` and launches on `stream` (attn_fwd).
  Status fwd(const attn_fwd_args &args, CUstream stream = nullptr) {
    return Status::fromLast(attn_fwd(handle, &args, stream));
  }

  /// Times the variants for `args`, keeps the fastest (attn_tune).
  Status tune(const attn_fwd_args &args, CUstream stream = nullptr,
              int64_t *kernelIndex = nullptr) {
    return Status::fromLast(attn_tune(handle, &args, stream, kernelIndex));
  }

  /// fwd() tunes the first call of each untuned shape
  /// (attn_bundle_set_auto_tune).
  Status setAutoTune(bool enabled) {
    return Status::fromLast(attn_bundle_set_auto_tune(handle, enabled));
  }

  /// fwd() of an FP8 call checks the descale values (one stream
  /// synchronization; on by default; attn_bundle_set_check_values).
  Status setCheckValues(bool enabled) {
    return Status::fromLast(attn_bundle_set_check_values(handle, enabled));
  }

  /// The index of the kernel fwd() would launch (attn_fwd_select).
  Status select(const attn_fwd_args &args, int64_t &kernelIndex) const {
    return Status::fromLast(attn_fwd_select(handle, &args, &kernelIndex));
  }

  /// Validates a backward call and launches on `stream` (attn_bwd).
  Status bwd(const attn_bwd_args &args, CUstream stream = nullptr) {
    return Status::fromLast(attn_bwd(handle, &args, stream));
  }

  /// The index of the kernel bwd() would launch (attn_bwd_select).
  Status selectBwd(const attn_bwd_args &args, int64_t &kernelIndex) const {
    return Status::fromLast(attn_bwd_select(handle, &args, &kernelIndex));
  }

  int64_t numKernels() const { return attn_bundle_num_kernels(handle); }

  /// The description of kernel `index`; empty when out of range.
  std::string kernelInfo(int64_t index) const {
    const char *info = attn_bundle_kernel_info(handle, index);
    return info ? info : "";
  }

  explicit operator bool() const { return handle != nullptr; }
  attn_bundle *get() const { return handle; }

private:
  attn_bundle *handle = nullptr;
};

/// Row-major strides of `sizes` (at most 4 of them, the rest 0).
inline std::array<int64_t, 4>
contiguousStrides(std::initializer_list<int64_t> sizes) {
  std::array<int64_t, 4> strides = {};
  size_t rank = sizes.size() < 4 ? sizes.size() : 4;
  uint64_t stride = 1; // unsigned: absurd sizes wrap (and are then rejected)
  for (size_t i = rank; i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(sizes.begin()[i]);
  }
  return strides;
}

/// A view of `data` with `sizes` and `strides` (row-major when `strides` is
/// empty). More than 4 sizes give a rank the runtime rejects.
inline attn_tensor makeTensor(void *data, attn_dtype dtype,
                              std::initializer_list<int64_t> sizes,
                              std::initializer_list<int64_t> strides = {}) {
  attn_tensor t = {};
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(sizes.size());
  std::array<int64_t, 4> rowMajor = contiguousStrides(sizes);
  for (size_t i = 0; i < sizes.size() && i < 4; ++i) {
    t.sizes[i] = sizes.begin()[i];
    t.strides[i] = i < strides.size() ? strides.begin()[i] : rowMajor[i];
  }
  return t;
}

} // namespace attn

#endif // ATTN_RUNTIME_HPP

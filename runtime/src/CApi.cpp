//===- CApi.cpp - the C API of attn/runtime.h over Bundle ----------------===//
//
// Each function returning a status records the calling thread's message
// (empty on success) and converts any C++ exception into a status: nothing
// escapes into C callers, nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "attn/runtime.h"

#include <cstring>
#include <new>
#include <type_traits>

using attn::runtime::Bundle;
using attn::runtime::Status;

struct attn_bundle {
  std::unique_ptr<Bundle> impl;
};

static thread_local std::string lastError;

/// Records `status` as the thread's last error and returns its code.
static attn_status finish(Status status) {
  lastError = std::move(status.message);
  return status.code;
}

/// Records a failure without letting an exception out.
static attn_status fail(attn_status code, const char *message) noexcept {
  try {
    lastError = message;
  } catch (...) {
    lastError.clear();
  }
  return code;
}

/// Runs `body` (returning a Status); exceptions become `fallback` statuses.
template <typename Fn>
static attn_status guarded(attn_status fallback, Fn &&body) noexcept {
  try {
    return finish(body());
  } catch (const std::bad_alloc &) {
    return fail(fallback, "out of host memory");
  } catch (const std::exception &e) {
    return fail(fallback, e.what());
  } catch (...) {
    return fail(fallback, "unknown C++ exception in the attn runtime");
  }
}

static Status nullArgument(const char *what) {
  return {ATTN_ERROR_INVALID_ARGUMENT, std::string(what) + " is null"};
}

extern "C" {

attn_status attn_bundle_load(const char *dir, attn_bundle **out) {
  return guarded(ATTN_ERROR_BUNDLE_CORRUPT, [&]() -> Status {
    if (!out)
      return nullArgument("out");
    *out = nullptr;
    if (!dir)
      return nullArgument("dir");
    auto bundle = std::make_unique<attn_bundle>();
    if (Status s = Bundle::load(dir, bundle->impl); !s.ok())
      return s;
    *out = bundle.release();
    return Status::success();
  });
}

void attn_bundle_destroy(attn_bundle *bundle) { delete bundle; }

int64_t attn_bundle_num_kernels(const attn_bundle *bundle) {
  return bundle ? static_cast<int64_t>(bundle->impl->numKernels()) : 0;
}

const char *attn_bundle_kernel_info(const attn_bundle *bundle, int64_t index) {
  if (!bundle || index < 0 ||
      static_cast<uint64_t>(index) >= bundle->impl->numKernels())
    return nullptr;
  return bundle->impl->kernelInfo(index).c_str();
}

attn_status attn_fwd_select(const attn_bundle *bundle,
                            const attn_fwd_args *args, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_INVALID_ARGUMENT, [&]() -> Status {
    if (!bundle)
      return nullArgument("bundle");
    if (!args)
      return nullArgument("args");
    if (!kernel_index)
      return nullArgument("kernel_index");
    return bundle->impl->select(*args, *kernel_index);
  });
}

attn_status attn_fwd(attn_bundle *bundle, const attn_fwd_args *args,
                     CUstream stream) {
  return guarded(ATTN_ERROR_CUDA, [&]() -> Status {
    if (!bundle)
      return nullArgument("bundle");
    if (!args)
      return nullArgument("args");
    return bundle->impl->launch(*args, stream);
  });
}

attn_status attn_bwd_select(const attn_bundle *bundle,
                            const attn_bwd_args *args, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_INVALID_ARGUMENT, [&]() -> Status {
    if (!bundle)
      return nullArgument("bundle");
    if (!args)
      return nullArgument("args");
    if (!kernel_index)
      return nullArgument("kernel_index");
    return bundle->impl->selectBwd(*args, *kernel_index);
  });
}

attn_status attn_bwd(attn_bundle *bundle, const attn_bwd_args *args,
                     CUstream stream) {
  return guarded(ATTN_ERROR_CUDA, [&]() -> Status {
    if (!bundle)
      return nullArgument("bundle");
    if (!args)
      return nullArgument("args");
    return bundle->impl->launchBwd(*args, stream);
  });
}

attn_status attn_tune(attn_bundle *bundle, const attn_fwd_args *args,
                      CUstream stream, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_CUDA, [&]() -> Status {
    if (!bundle)
      return nullArgument("bundle");
    if (!args)
      return nullArgument("args");
    int64_t chosen = -1;
    Status s = bundle->impl->tune(*args, stream, chosen);
    if (kernel_index)
      *kernel_index = chosen;
    return s;
  });
}

attn_status attn_bundle_set_auto_tune(attn_bundle *bundle, int enabled) {
  if (!bundle)
    return finish(nullArgument("bundle"));
  bundle->impl->setAutoTune(enabled != 0);
  return finish(Status::success());
}

attn_status attn_bundle_set_check_values(attn_bundle *bundle, int enabled) {
  if (!bundle)
    return finish(nullArgument("bundle"));
  bundle->impl->setCheckValues(enabled != 0);
  return finish(Status::success());
}

const char *attn_last_error(void) { return lastError.c_str(); }

const char *attn_status_name(attn_status status) {
  // Switch on the integer: a C caller may pass any value.
  std::underlying_type_t<attn_status> value;
  std::memcpy(&value, &status, sizeof(value));
  switch (value) {
  case ATTN_SUCCESS:
    return "ATTN_SUCCESS";
  case ATTN_ERROR_INVALID_ARGUMENT:
    return "ATTN_ERROR_INVALID_ARGUMENT";
  case ATTN_ERROR_NO_MATCHING_KERNEL:
    return "ATTN_ERROR_NO_MATCHING_KERNEL";
  case ATTN_ERROR_BUNDLE_NOT_FOUND:
    return "ATTN_ERROR_BUNDLE_NOT_FOUND";
  case ATTN_ERROR_BUNDLE_CORRUPT:
    return "ATTN_ERROR_BUNDLE_CORRUPT";
  case ATTN_ERROR_CUDA:
    return "ATTN_ERROR_CUDA";
  }
  return "ATTN_ERROR_UNKNOWN";
}

} // extern "C"

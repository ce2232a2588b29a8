//===- CApi.cpp - the C API of attn/runtime.h over Bundle -----------------===//
//
// Each function returning a status records the calling thread's message
// (empty on success) and converts any C++ exception into a status: nothing
// escapes into C callers, nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "CallChecks.h"
#include "attn/runtime.h"

#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <type_traits>
#include <unordered_set>

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

namespace {

/// The bundles attn_bundle_load handed out that attn_bundle_destroy has not
/// freed. Every function looks a handle up here before using it, so that a
/// destroyed or stray pointer is refused (and a second destroy ignored)
/// instead of read after it was freed.
class LiveBundles {
public:
  void add(const attn_bundle *bundle) {
    std::unique_lock<std::shared_mutex> lock(mutex);
    bundles.insert(bundle);
  }
  /// False when `bundle` was not live.
  bool remove(const attn_bundle *bundle) {
    std::unique_lock<std::shared_mutex> lock(mutex);
    return bundles.erase(bundle) != 0;
  }
  bool contains(const attn_bundle *bundle) const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    return bundles.count(bundle) != 0;
  }

private:
  mutable std::shared_mutex mutex;
  std::unordered_set<const attn_bundle *> bundles;
};

/// Never destroyed: bundles may be destroyed by other static destructors.
LiveBundles &liveBundles() {
  static LiveBundles *live = new LiveBundles;
  return *live;
}

bool isLive(const attn_bundle *bundle) {
  return bundle && liveBundles().contains(bundle);
}

/// Null, or not a bundle attn_bundle_load returned (or one destroyed since).
Status checkBundle(const attn_bundle *bundle) {
  if (!bundle)
    return nullArgument("bundle");
  if (!liveBundles().contains(bundle))
    return {ATTN_ERROR_INVALID_ARGUMENT,
            "bundle " +
                attn::runtime::pointerText(static_cast<const void *>(bundle)) +
                " is not a loaded bundle (attn_bundle_destroy freed it, or "
                "attn_bundle_load never returned it)"};
  return Status::success();
}

} // namespace

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
    liveBundles().add(bundle.get());
    *out = bundle.release();
    return Status::success();
  });
}

void attn_bundle_destroy(attn_bundle *bundle) {
  if (bundle && liveBundles().remove(bundle))
    delete bundle;
}

int64_t attn_bundle_num_kernels(const attn_bundle *bundle) {
  return isLive(bundle) ? static_cast<int64_t>(bundle->impl->numKernels()) : 0;
}

const char *attn_bundle_kernel_info(const attn_bundle *bundle, int64_t index) {
  if (!isLive(bundle) || index < 0 ||
      static_cast<uint64_t>(index) >= bundle->impl->numKernels())
    return nullptr;
  return bundle->impl->kernelInfo(index).c_str();
}

static attn_dtype dtypeOfKey(const std::string &dtype) {
  return dtype == "bf16"   ? ATTN_DTYPE_BF16
         : dtype == "e4m3" ? ATTN_DTYPE_E4M3
                           : ATTN_DTYPE_F16; // the reader admits no other
}

/// The manifest's key of `kernel` as the C API states it; the strings point
/// into the manifest the bundle keeps.
static attn_kernel_key keyOf(const attn::bundle::KernelEntry &kernel) {
  const attn::bundle::FwdKey &k = kernel.key;
  auto length = [](const std::optional<int64_t> &n) { return n ? *n : -1; };
  attn_kernel_key key{};
  key.kind = kernel.isBackward() ? ATTN_KERNEL_BWD : ATTN_KERNEL_FWD;
  key.dtype = dtypeOfKey(k.dtype);
  key.quantize = k.quantizeFp8 ? ATTN_QUANTIZE_FP8 : ATTN_QUANTIZE_NONE;
  key.causal = k.causal;
  key.has_lse = k.hasLse;
  key.strided = k.strided;
  key.varlen = k.varlen;
  key.tensor_cores = k.path == "wgmma";
  key.head_dim = k.headDim;
  key.batch = length(k.batch);
  key.num_heads_q = length(k.numHeadsQ);
  key.num_heads_kv = length(k.numHeadsKV);
  key.seqlen_q = length(k.seqLenQ);
  key.seqlen_k = length(k.seqLenK);
  key.page_size = k.pageSize;
  key.splits = k.splits;
  key.block_m = k.blockM;
  key.block_n = k.blockN;
  key.scale = k.scale;
  key.name = kernel.name.c_str();
  key.variant = kernel.variant.c_str();
  key.quantize_options = k.quantizeFp8 ? k.quantizeFp8->c_str() : "";
  return key;
}

attn_status attn_bundle_kernel_key(const attn_bundle *bundle, int64_t index,
                                   attn_kernel_key *key) {
  return guarded(ATTN_ERROR_INVALID_ARGUMENT, [&]() -> Status {
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
    if (!key)
      return nullArgument("key");
    int64_t count = static_cast<int64_t>(bundle->impl->numKernels());
    if (index < 0 || index >= count)
      return {ATTN_ERROR_INVALID_ARGUMENT,
              "kernel index " + std::to_string(index) +
                  " is out of range: the bundle has " + std::to_string(count) +
                  " kernels"};
    *key = keyOf(bundle->impl->kernel(static_cast<size_t>(index)));
    return Status::success();
  });
}

attn_status attn_fwd_select(const attn_bundle *bundle,
                            const attn_fwd_args *args, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_INVALID_ARGUMENT, [&]() -> Status {
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
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
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
    if (!args)
      return nullArgument("args");
    return bundle->impl->launch(*args, stream);
  });
}

attn_status attn_bwd_select(const attn_bundle *bundle,
                            const attn_bwd_args *args, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_INVALID_ARGUMENT, [&]() -> Status {
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
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
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
    if (!args)
      return nullArgument("args");
    return bundle->impl->launchBwd(*args, stream);
  });
}

attn_status attn_tune(attn_bundle *bundle, const attn_fwd_args *args,
                      CUstream stream, int64_t *kernel_index) {
  return guarded(ATTN_ERROR_CUDA, [&]() -> Status {
    if (Status s = checkBundle(bundle); !s.ok())
      return s;
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
  if (Status s = checkBundle(bundle); !s.ok())
    return finish(s);
  bundle->impl->setAutoTune(enabled != 0);
  return finish(Status::success());
}

attn_status attn_bundle_set_check_values(attn_bundle *bundle, int enabled) {
  if (Status s = checkBundle(bundle); !s.ok())
    return finish(s);
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

const char *attn_dtype_name(attn_dtype dtype) {
  // The integer, as attn_status_name: a C caller may pass any value.
  std::underlying_type_t<attn_dtype> value;
  std::memcpy(&value, &dtype, sizeof(value));
  return attn::runtime::dtypeName(static_cast<int>(value));
}

} // extern "C"

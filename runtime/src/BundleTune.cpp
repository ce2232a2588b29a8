//===- Tune.cpp - timing variants, tuning choices -------------------------===//

#include "Bundle.h"
#include "CallChecks.h"

#include "llvm/ADT/ScopeExit.h"

using namespace attn::runtime;

namespace attn::runtime {

Status Bundle::timeIndex(const DriverApi &driver, CUdevice device, size_t index,
                         const attn_fwd_args &args, CUstream stream,
                         double &ms) {
  if (!driver.eventCreate || !driver.eventRecord || !driver.eventSynchronize ||
      !driver.eventElapsedTime || !driver.eventDestroy)
    return makeError(ATTN_ERROR_CUDA, "tuning needs the driver's cuEvent "
                                      "functions, which libcuda.so.1 lacks");
  CUevent events[2] = {nullptr, nullptr};
  llvm::scope_exit destroy([&] {
    for (CUevent e : events)
      if (e)
        driver.eventDestroy(e);
  });
  for (CUevent &e : events)
    if (CUresult r = driver.eventCreate(&e, 0); r != CUDA_SUCCESS)
      return cudaError(driver, r, "cuEventCreate");
  if (Status s = launchIndex(driver, device, index, args, stream); !s.ok())
    return s; // warm-up: loads the kernel
  if (CUresult r = driver.eventRecord(events[0], stream); r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuEventRecord");
  for (int i = 0; i < kTuningLaunches; ++i)
    if (Status s = launchIndex(driver, device, index, args, stream); !s.ok())
      return s;
  float elapsed = 0;
  if (CUresult r = driver.eventRecord(events[1], stream); r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuEventRecord");
  if (CUresult r = driver.eventSynchronize(events[1]); r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuEventSynchronize");
  if (CUresult r = driver.eventElapsedTime(&elapsed, events[0], events[1]);
      r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuEventElapsedTime");
  ms = elapsed / kTuningLaunches;
  return Status::success();
}

/// The name of `device`, for the record of where a choice was measured.
static std::string deviceName(const DriverApi &driver, CUdevice device) {
  char name[256] = {};
  if (!driver.deviceGetName ||
      driver.deviceGetName(name, sizeof(name) - 1, device) != CUDA_SUCCESS)
    return "unknown";
  return name;
}

Status Bundle::tune(const attn_fwd_args &args, CUstream stream,
                    int64_t &chosen) {
  FwdCall call;
  const DriverApi *driver = nullptr;
  CUdevice device = 0;
  int64_t index = 0;
  if (Status s = prepareChecked(args, stream, call, index, driver, device);
      !s.ok() || call.empty())
    return s;
  Status s = tuneVariants(call, args, stream, *driver, device, index);
  // The fastest ran unless a launch failed (an unwritable cache does not
  // undo the choice).
  if (s.ok() || s.code == ATTN_ERROR_BUNDLE_NOT_FOUND)
    chosen = index;
  return s;
}

Status Bundle::tuneVariants(const FwdCall &call, const attn_fwd_args &args,
                            CUstream stream, const DriverApi &driver,
                            CUdevice device, int64_t &index) {
  std::vector<size_t> variants = variantsOf(call, index);
  if (variants.size() == 1)
    return launchIndex(driver, device, index, args, stream);
  TuningTable::Choice best;
  for (size_t v : variants) {
    if (Status s = checkGrid(kernel(v), args); !s.ok())
      continue; // this variant cannot take the call
    double ms = 0;
    if (Status s = timeIndex(driver, device, v, args, stream, ms); !s.ok())
      return s;
    if (best.kernel.empty() || ms < best.ms) {
      best = {kernel(v).name, ms, ""};
      index = static_cast<int64_t>(v);
    }
  }
  best.device = deviceName(driver, device);
  if (Status s = launchIndex(driver, device, index, args, stream); !s.ok())
    return s;
  return tuning.record(call.describe(), best);
}

} // namespace attn::runtime

//===- Driver.cpp - open libcuda.so.1 with dlopen -------------------------===//

#include "Driver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <atomic>
#include <dlfcn.h>
#include <mutex>

namespace attn::runtime {

namespace {
/// The real driver, loaded once.
struct RealDriver {
  DriverApi api{};
  std::string error; // empty when `api` is usable
};
} // namespace

static std::atomic<const DriverApi *> testingDriver{nullptr};

/// Looks up `name` in `lib` into `fn`; returns false (and names the symbol in
/// `missing`) when it is absent.
template <typename Fn>
static bool lookup(void *lib, const char *name, Fn &fn, std::string &missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && missing.empty())
    missing = name;
  return fn != nullptr;
}

static void loadRealDriver(RealDriver &driver) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *reason = dlerror();
    driver.error = std::string("CUDA driver unavailable: ") +
                   (reason ? reason : "cannot open libcuda.so.1");
    return;
  }
  DriverApi &api = driver.api;
  CUresult (*init)(unsigned) = nullptr;
  std::string missing;
  lookup(lib, "cuInit", init, missing);
  lookup(lib, "cuGetErrorName", api.getErrorName, missing);
  lookup(lib, "cuGetErrorString", api.getErrorString, missing);
  lookup(lib, "cuCtxGetCurrent", api.ctxGetCurrent, missing);
  lookup(lib, "cuCtxGetDevice", api.ctxGetDevice, missing);
  lookup(lib, "cuPointerGetAttribute", api.pointerGetAttribute, missing);
  lookup(lib, "cuLibraryLoadData", api.libraryLoadData, missing);
  lookup(lib, "cuLibraryUnload", api.libraryUnload, missing);
  lookup(lib, "cuLibraryGetKernel", api.libraryGetKernel, missing);
  lookup(lib, "cuKernelSetAttribute", api.kernelSetAttribute, missing);
  lookup(lib, "cuLaunchKernel", api.launchKernel, missing);
  std::string optional;
  lookup(lib, "cuLaunchKernelEx", api.launchKernelEx, optional);
  lookup(lib, "cuTensorMapEncodeTiled", api.tensorMapEncodeTiled, optional);
  lookup(lib, "cuEventCreate", api.eventCreate, optional);
  lookup(lib, "cuEventRecord", api.eventRecord, optional);
  lookup(lib, "cuEventSynchronize", api.eventSynchronize, optional);
  lookup(lib, "cuEventElapsedTime", api.eventElapsedTime, optional);
  lookup(lib, "cuEventDestroy_v2", api.eventDestroy, optional);
  lookup(lib, "cuDeviceGetName", api.deviceGetName, optional);
  lookup(lib, "cuDeviceGetAttribute", api.deviceGetAttribute, optional);
  lookup(lib, "cuMemcpyDtoHAsync_v2", api.memcpyDtoHAsync, optional);
  lookup(lib, "cuStreamSynchronize", api.streamSynchronize, optional);
  lookup(lib, "cuMemAllocAsync", api.memAllocAsync, optional);
  lookup(lib, "cuMemFreeAsync", api.memFreeAsync, optional);
  lookup(lib, "cuMemPoolCreate", api.memPoolCreate, optional);
  lookup(lib, "cuMemPoolDestroy", api.memPoolDestroy, optional);
  lookup(lib, "cuMemPoolSetAttribute", api.memPoolSetAttribute, optional);
  lookup(lib, "cuMemAllocFromPoolAsync", api.memAllocFromPoolAsync, optional);
  if (!missing.empty()) {
    driver.error = "CUDA driver unavailable: libcuda.so.1 lacks " + missing +
                   " (the runtime needs a CUDA 12 or newer driver)";
    return;
  }
  if (CUresult result = init(0); result != CUDA_SUCCESS)
    driver.error =
        "CUDA driver unavailable: " + formatCudaError(api, result, "cuInit");
  // The library stays open for the life of the process.
}

const DriverApi *getDriver(std::string &error) {
  if (const DriverApi *fake = testingDriver.load())
    return fake;
  static RealDriver driver;
  static std::once_flag once;
  std::call_once(once, loadRealDriver, driver);
  if (!driver.error.empty()) {
    error = driver.error;
    return nullptr;
  }
  return &driver.api;
}

void setDriverForTesting(const DriverApi *driver) { testingDriver = driver; }

std::string formatCudaError(const DriverApi &driver, CUresult result,
                            const char *call) {
  const char *name = nullptr, *text = nullptr;
  if (!driver.getErrorName ||
      driver.getErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!driver.getErrorString ||
      driver.getErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string nameText =
      name ? std::string(name)
           : llvm::formatv("CUDA error {0}", static_cast<int>(result)).str();
  return llvm::formatv("{0}: {1} (in {2})", nameText,
                       text ? text : "unknown error", call)
      .str();
}

/// SMs of `device`; 0 where the driver cannot tell.
int deviceSMs(const DriverApi &driver, CUdevice device) {
  int sms = 0;
  if (!driver.deviceGetAttribute ||
      driver.deviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                device) != CUDA_SUCCESS)
    return 0;
  return std::max(sms, 0);
}

} // namespace attn::runtime

//===- CudaDriver.cpp - attn-run's CUDA driver calls, opened at run time --===//
//
// attn-run calls the driver API (cuInit, cuMemAlloc, cuLaunchKernel, ...) but
// does not link libcuda: each entry point it uses is defined here and
// forwards to libcuda.so.1, opened with dlopen on the first call, as the
// runtime library does (runtime/src/Driver.cpp). Without a driver,
// `attn-run --help` and loading a bundle still work, and the first CUDA call
// fails with a message that says why.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <dlfcn.h>
#include <string>

namespace {

/// libcuda.so.1, opened once; `error` says why when it could not be.
struct Library {
  void *handle = nullptr;
  std::string error;
};

const Library &library() {
  static const Library lib = [] {
    Library l;
    l.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!l.handle) {
      const char *reason = dlerror();
      l.error = std::string("CUDA driver unavailable: ") +
                (reason ? reason : "cannot open libcuda.so.1");
    }
    return l;
  }();
  return lib;
}

void *symbol(const char *name) {
  const Library &lib = library();
  return lib.handle ? dlsym(lib.handle, name) : nullptr;
}

} // namespace

// cuda.h renames versioned entry points (cuMemAlloc -> cuMemAlloc_v2): the
// definitions below get the same names, and the symbol looked up is the
// expanded one.
#define ATTN_STR2(x) #x
#define ATTN_STR(x) ATTN_STR2(x)
#define ATTN_FORWARD(name, params, args)                                       \
  extern "C" CUresult CUDAAPI name params {                                    \
    static const auto fn =                                                     \
        reinterpret_cast<decltype(&name)>(symbol(ATTN_STR(name)));             \
    return fn ? fn args : CUDA_ERROR_NOT_INITIALIZED;                          \
  }

ATTN_FORWARD(cuInit, (unsigned flags), (flags))
ATTN_FORWARD(cuDeviceGet, (CUdevice * device, int ordinal), (device, ordinal))
ATTN_FORWARD(cuDeviceGetAttribute,
             (int *value, CUdevice_attribute attribute, CUdevice device),
             (value, attribute, device))
ATTN_FORWARD(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice device),
             (ctx, device))
ATTN_FORWARD(cuDevicePrimaryCtxRelease, (CUdevice device), (device))
ATTN_FORWARD(cuCtxSetCurrent, (CUcontext ctx), (ctx))
ATTN_FORWARD(cuMemAlloc, (CUdeviceptr * ptr, size_t bytes), (ptr, bytes))
ATTN_FORWARD(cuMemFree, (CUdeviceptr ptr), (ptr))
ATTN_FORWARD(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes),
             (dst, src, bytes))
ATTN_FORWARD(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes),
             (dst, src, bytes))
ATTN_FORWARD(cuMemsetD16Async,
             (CUdeviceptr dst, unsigned short value, size_t n, CUstream stream),
             (dst, value, n, stream))
ATTN_FORWARD(cuMemsetD32Async,
             (CUdeviceptr dst, unsigned int value, size_t n, CUstream stream),
             (dst, value, n, stream))
ATTN_FORWARD(cuStreamCreate, (CUstream * stream, unsigned flags),
             (stream, flags))
ATTN_FORWARD(cuStreamDestroy, (CUstream stream), (stream))
ATTN_FORWARD(cuStreamSynchronize, (CUstream stream), (stream))
ATTN_FORWARD(cuEventCreate, (CUevent * event, unsigned flags), (event, flags))
ATTN_FORWARD(cuEventDestroy, (CUevent event), (event))
ATTN_FORWARD(cuEventRecord, (CUevent event, CUstream stream), (event, stream))
ATTN_FORWARD(cuEventSynchronize, (CUevent event), (event))
ATTN_FORWARD(cuEventElapsedTime, (float *ms, CUevent start, CUevent end),
             (ms, start, end))
ATTN_FORWARD(cuModuleLoadData, (CUmodule * module, const void *image),
             (module, image))
ATTN_FORWARD(cuModuleGetFunction,
             (CUfunction * function, CUmodule module, const char *name),
             (function, module, name))
ATTN_FORWARD(cuModuleUnload, (CUmodule module), (module))
ATTN_FORWARD(cuFuncGetAttribute,
             (int *value, CUfunction_attribute attribute, CUfunction function),
             (value, attribute, function))
ATTN_FORWARD(cuFuncSetAttribute,
             (CUfunction function, CUfunction_attribute attribute, int value),
             (function, attribute, value))
ATTN_FORWARD(cuLaunchKernel,
             (CUfunction f, unsigned gridX, unsigned gridY, unsigned gridZ,
              unsigned blockX, unsigned blockY, unsigned blockZ,
              unsigned sharedBytes, CUstream stream, void **params,
              void **extra),
             (f, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes,
              stream, params, extra))

// Without a driver, the error name and text say why.
extern "C" CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str) {
  static const auto fn =
      reinterpret_cast<decltype(&cuGetErrorName)>(symbol("cuGetErrorName"));
  if (fn)
    return fn(error, str);
  *str = "CUDA_ERROR_NOT_INITIALIZED";
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str) {
  static const auto fn =
      reinterpret_cast<decltype(&cuGetErrorString)>(symbol("cuGetErrorString"));
  if (fn)
    return fn(error, str);
  *str = library().error.c_str();
  return CUDA_SUCCESS;
}

//===- Driver.h - the CUDA driver API, opened at run time -------*- C++ -*-===//
//
// The runtime never links libcuda: it opens libcuda.so.1 with dlopen on the
// first launch, so the library loads (and select/validation work) on machines
// without a GPU. DriverApi holds the few entry points the runtime uses; tests
// replace it with a fake through setDriverForTesting.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DRIVER_H
#define ATTN_RUNTIME_DRIVER_H

#include <cuda.h>

#include <string>

namespace attn::runtime {

/// The driver entry points the runtime calls. launchKernelEx and
/// tensorMapEncodeTiled may be null (only kernels with a cluster shape or
/// tensor maps need them).
struct DriverApi {
  CUresult (*getErrorName)(CUresult error, const char **str);
  CUresult (*getErrorString)(CUresult error, const char **str);
  CUresult (*ctxGetCurrent)(CUcontext *ctx);
  CUresult (*ctxGetDevice)(CUdevice *device);
  CUresult (*pointerGetAttribute)(void *data, CUpointer_attribute attribute,
                                  CUdeviceptr ptr);
  CUresult (*libraryLoadData)(CUlibrary *library, const void *code,
                              CUjit_option *jitOptions, void **jitOptionValues,
                              unsigned numJitOptions,
                              CUlibraryOption *libraryOptions,
                              void **libraryOptionValues,
                              unsigned numLibraryOptions);
  CUresult (*libraryUnload)(CUlibrary library);
  CUresult (*libraryGetKernel)(CUkernel *kernel, CUlibrary library,
                               const char *name);
  CUresult (*kernelSetAttribute)(CUfunction_attribute attribute, int value,
                                 CUkernel kernel, CUdevice device);
  CUresult (*launchKernel)(CUfunction f, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
  CUresult (*launchKernelEx)(const CUlaunchConfig *config, CUfunction f,
                             void **params, void **extra);
  /// Needed only by kernels that take tensor maps (the wgmma path).
  CUresult (*tensorMapEncodeTiled)(
      CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
      void *address, const cuuint64_t *dims, const cuuint64_t *strides,
      const cuuint32_t *box, const cuuint32_t *elementStrides,
      CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
      CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);
  /// Needed only to tune (time the variants of a kernel).
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventSynchronize)(CUevent event);
  CUresult (*eventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*deviceGetName)(char *name, int length, CUdevice device);
  /// Caps the grid of persistent kernels at the SM count.
  CUresult (*deviceGetAttribute)(int *value, CUdevice_attribute attribute,
                                 CUdevice device);
  /// Read an FP8 call's descales back to check their values.
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  /// Kernels' workspace, allocated and freed on the call's stream (the
  /// default pool's allocation is the fallback of WorkspacePools).
  CUresult (*memAllocAsync)(CUdeviceptr *ptr, size_t bytes, CUstream stream);
  CUresult (*memFreeAsync)(CUdeviceptr ptr, CUstream stream);
  /// The runtime's own workspace pool per device (WorkspacePools); without
  /// them the workspace comes from the device's default pool.
  CUresult (*memPoolCreate)(CUmemoryPool *pool, const CUmemPoolProps *props);
  CUresult (*memPoolDestroy)(CUmemoryPool pool);
  CUresult (*memPoolSetAttribute)(CUmemoryPool pool, CUmemPool_attribute attr,
                                  void *value);
  CUresult (*memAllocFromPoolAsync)(CUdeviceptr *ptr, size_t bytes,
                                    CUmemoryPool pool, CUstream stream);
};

/// The driver: the testing override if one is set, otherwise libcuda.so.1,
/// opened and initialized (cuInit) once per process. Returns null and sets
/// `error` when the driver cannot be loaded or initialized.
const DriverApi *getDriver(std::string &error);

/// Makes getDriver return `driver`; null restores the real driver.
void setDriverForTesting(const DriverApi *driver);

/// "CUDA_ERROR_X: <description> (in <call>)".
/// SMs of `device`; 0 where the driver cannot tell.
int deviceSMs(const DriverApi &driver, CUdevice device);

std::string formatCudaError(const DriverApi &driver, CUresult result,
                            const char *call);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_DRIVER_H

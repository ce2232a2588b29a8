//===- WorkspacePools.cpp - the runtime's memory pools for workspace ------===//

#include "WorkspacePools.h"

#include <cstdint>

namespace attn::runtime {

WorkspacePools::~WorkspacePools() {
  // A pool with frees still queued is released once they complete.
  for (const auto &[device, pool] : pools)
    owner.load()->memPoolDestroy(pool);
}

CUresult WorkspacePools::poolOf(const DriverApi &driver, CUdevice device,
                                CUmemoryPool &pool, const char *&what) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &[known, existing] : pools)
    if (known == device) {
      pool = existing;
      return CUDA_SUCCESS;
    }
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  what = "cuMemPoolCreate";
  if (CUresult r = driver.memPoolCreate(&pool, &props); r != CUDA_SUCCESS)
    return r;
  cuuint64_t keepAll = UINT64_MAX;
  what = "cuMemPoolSetAttribute";
  if (CUresult r = driver.memPoolSetAttribute(
          pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll);
      r != CUDA_SUCCESS) {
    driver.memPoolDestroy(pool);
    return r;
  }
  owner = &driver;
  pools.emplace_back(device, pool);
  return CUDA_SUCCESS;
}

CUresult WorkspacePools::allocate(const DriverApi &driver, CUdevice device,
                                  size_t bytes, CUstream stream,
                                  CUdeviceptr &ptr, const char *&what) {
  const DriverApi *creator = owner.load();
  if (!driver.memPoolCreate || !driver.memPoolDestroy ||
      !driver.memPoolSetAttribute || !driver.memAllocFromPoolAsync ||
      (creator && creator != &driver)) {
    what = "cuMemAllocAsync";
    return driver.memAllocAsync(&ptr, bytes, stream);
  }
  CUmemoryPool pool = nullptr;
  if (CUresult r = poolOf(driver, device, pool, what); r != CUDA_SUCCESS)
    return r;
  what = "cuMemAllocFromPoolAsync";
  return driver.memAllocFromPoolAsync(&ptr, bytes, pool, stream);
}

} // namespace attn::runtime

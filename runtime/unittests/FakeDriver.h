//===- FakeDriver.h - calls and a fake CUDA driver for the runtime tests -===//
//
// Shared by RuntimeTest and VarlenComboTest: builders of attn_fwd calls on
// fake device addresses, EXPECT_STATUS, and a fake CUDA driver
// (setDriverForTesting) that records loads, launches, tensor-map encodes,
// workspace allocations and device-to-host copies, with the FakeLaunch
// fixture that installs it. No GPU is needed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_UNITTESTS_FAKEDRIVER_H
#define ATTN_RUNTIME_UNITTESTS_FAKEDRIVER_H

#include "Driver.h"
#include "TestBundles.h"
#include "attn/runtime.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

namespace attn::testing {

using attn::runtime::DriverApi;

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

/// Fake device addresses, 1 MiB apart and 16-byte aligned.
inline void *fakeAddress(int i) {
  // 256 GiB apart: the views of one call never overlap.
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000) +
                                  (uintptr_t(i) << 38));
}

/// A contiguous bf16 call; lse (f32) when `lse`.
inline attn_fwd_args makeArgs(int64_t b, int64_t hq, int64_t hkv, int64_t nq,
                              int64_t nk, int64_t d = 128, bool lse = false,
                              attn_dtype dtype = ATTN_DTYPE_BF16) {
  attn_fwd_args args = {};
  args.q = attn::makeTensor(fakeAddress(0), dtype, {b, hq, nq, d});
  args.k = attn::makeTensor(fakeAddress(1), dtype, {b, hkv, nk, d});
  args.v = attn::makeTensor(fakeAddress(2), dtype, {b, hkv, nk, d});
  args.o = attn::makeTensor(fakeAddress(3), dtype, {b, hq, nq, d});
  if (lse)
    args.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {b, hq, nq});
  return args;
}

/// An FP8 call: e4m3 q and k, e4m3 v stored as V^T (a [B, Hkv, D, Nk']
/// buffer, Nk' = Nk padded to a multiple of 16, viewed as [B, Hkv, Nk, D]),
/// bf16 o, contiguous f32 [B, Hkv] descales at fakeAddress(5), (6), (7).
inline attn_fwd_args makeFp8Args(int64_t b, int64_t hq, int64_t hkv, int64_t nq,
                                 int64_t nk, int64_t d = 128) {
  attn_fwd_args args = {};
  int64_t nkPadded = (nk + 15) / 16 * 16;
  args.q = attn::makeTensor(fakeAddress(0), ATTN_DTYPE_E4M3, {b, hq, nq, d});
  args.k = attn::makeTensor(fakeAddress(1), ATTN_DTYPE_E4M3, {b, hkv, nk, d});
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_E4M3, {b, hkv, nk, d},
                            {hkv * d * nkPadded, d * nkPadded, 1, nkPadded});
  args.o = attn::makeTensor(fakeAddress(3), ATTN_DTYPE_BF16, {b, hq, nq, d});
  args.q_descale = attn::makeTensor(fakeAddress(5), ATTN_DTYPE_F32, {b, hkv});
  args.k_descale = attn::makeTensor(fakeAddress(6), ATTN_DTYPE_F32, {b, hkv});
  args.v_descale = attn::makeTensor(fakeAddress(7), ATTN_DTYPE_F32, {b, hkv});
  return args;
}

/// A paged bf16 call: q [B, Hq, Nq, D], k and v caches [num_pages,
/// page_size, Hkv, D] at fakeAddress(1), (2), o, block_table i32 [B,
/// max_pages] at fakeAddress(8), cache_seqlens i32 [B] at fakeAddress(9).
inline attn_fwd_args makePagedArgs(int64_t b, int64_t hq, int64_t hkv,
                                   int64_t nq, int64_t numPages,
                                   int64_t pageSize, int64_t maxPages,
                                   int64_t d = 128) {
  attn_fwd_args args = makeArgs(b, hq, hkv, nq, 1, d);
  args.k = attn::makeTensor(fakeAddress(1), ATTN_DTYPE_BF16,
                            {numPages, pageSize, hkv, d});
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_BF16,
                            {numPages, pageSize, hkv, d});
  args.block_table =
      attn::makeTensor(fakeAddress(8), ATTN_DTYPE_I32, {b, maxPages});
  args.cache_seqlens = attn::makeTensor(fakeAddress(9), ATTN_DTYPE_I32, {b});
  return args;
}

/// A varlen bf16 call (FlashAttention-2's layout): q, o [total_q, Hq, D]
/// at fakeAddress(0), (3), k, v [total_k, Hkv, D] at (1), (2), lse f32
/// [Hq, total_q] at (4) when `lse`, cu_seqlens_q / cu_seqlens_k i32
/// [B + 1] at (8), (9).
inline attn_fwd_args makeVarlenArgs(int64_t b, int64_t hq, int64_t hkv,
                                    int64_t totalQ, int64_t totalK,
                                    int64_t maxQ, int64_t maxK, int64_t d = 128,
                                    bool lse = true) {
  attn_fwd_args args = {};
  args.q = attn::makeTensor(fakeAddress(0), ATTN_DTYPE_BF16, {totalQ, hq, d});
  args.k = attn::makeTensor(fakeAddress(1), ATTN_DTYPE_BF16, {totalK, hkv, d});
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_BF16, {totalK, hkv, d});
  args.o = attn::makeTensor(fakeAddress(3), ATTN_DTYPE_BF16, {totalQ, hq, d});
  if (lse)
    args.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {hq, totalQ});
  args.cu_seqlens_q = attn::makeTensor(fakeAddress(8), ATTN_DTYPE_I32, {b + 1});
  args.cu_seqlens_k = attn::makeTensor(fakeAddress(9), ATTN_DTYPE_I32, {b + 1});
  args.max_seqlen_q = maxQ;
  args.max_seqlen_k = maxK;
  return args;
}

/// A varlen paged bf16 call (flash_attn_varlen_func with block_table):
/// makeVarlenArgs' q, o, lse and cu_seqlens, k and v caches [num_pages,
/// page_size, Hkv, D] at fakeAddress(1), (2), block_table i32 [B,
/// max_pages] at fakeAddress(10); no cache_seqlens.
inline attn_fwd_args makeVarlenPagedArgs(int64_t b, int64_t hq, int64_t hkv,
                                         int64_t totalQ, int64_t maxQ,
                                         int64_t maxK, int64_t numPages,
                                         int64_t pageSize, int64_t maxPages,
                                         int64_t d = 128) {
  attn_fwd_args args = makeVarlenArgs(b, hq, hkv, totalQ, 1, maxQ, maxK, d);
  args.k = attn::makeTensor(fakeAddress(1), ATTN_DTYPE_BF16,
                            {numPages, pageSize, hkv, d});
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_BF16,
                            {numPages, pageSize, hkv, d});
  args.block_table =
      attn::makeTensor(fakeAddress(10), ATTN_DTYPE_I32, {b, maxPages});
  return args;
}

/// bwdKernel's call: contiguous bf16 q, o, dout, dq [1, 2, 200, 128] and
/// k, v, dk, dv [1, 1, 300, 128], lse f32 [1, 2, 200], causal, at fake
/// addresses 0 (q), 1 (k), 2 (v), 3 (o), 4 (lse), 5 (dout), 6 (dq),
/// 7 (dk), 8 (dv).
inline attn_bwd_args makeBwdArgs(int64_t b = 1, int64_t hq = 2, int64_t hkv = 1,
                                 int64_t nq = 200, int64_t nk = 300,
                                 int64_t d = 128) {
  attn_bwd_args a = {};
  attn_dtype t = ATTN_DTYPE_BF16;
  a.q = attn::makeTensor(fakeAddress(0), t, {b, hq, nq, d});
  a.k = attn::makeTensor(fakeAddress(1), t, {b, hkv, nk, d});
  a.v = attn::makeTensor(fakeAddress(2), t, {b, hkv, nk, d});
  a.o = attn::makeTensor(fakeAddress(3), t, {b, hq, nq, d});
  a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {b, hq, nq});
  a.dout = attn::makeTensor(fakeAddress(5), t, {b, hq, nq, d});
  a.dq = attn::makeTensor(fakeAddress(6), t, {b, hq, nq, d});
  a.dk = attn::makeTensor(fakeAddress(7), t, {b, hkv, nk, d});
  a.dv = attn::makeTensor(fakeAddress(8), t, {b, hkv, nk, d});
  a.causal = 1;
  return a;
}

/// The FlashAttention layout: a contiguous [B, N, H, D] buffer seen as
/// [B, H, N, D].
inline attn_tensor bnhdView(void *data, int64_t b, int64_t h, int64_t n,
                            int64_t d) {
  return attn::makeTensor(data, ATTN_DTYPE_BF16, {b, h, n, d},
                          {n * h * d, d, h * d, 1});
}

/// Loads the bundle written to `dir`; fails the test on error.
inline attn_bundle *loadBundle(const TempDir &dir, const Manifest &manifest) {
  writeBundle(dir, manifest);
  attn_bundle *bundle = nullptr;
  attn_status s = attn_bundle_load(dir.path().c_str(), &bundle);
  EXPECT_EQ(s, ATTN_SUCCESS) << attn_last_error();
  return bundle;
}

struct BundleOwner {
  attn_bundle *bundle;
  ~BundleOwner() { attn_bundle_destroy(bundle); }
};

#define EXPECT_STATUS(call, code, part)                                        \
  do {                                                                         \
    attn_status s_ = (call);                                                   \
    EXPECT_EQ(s_, code) << attn_status_name(s_) << ": " << attn_last_error();  \
    EXPECT_NE(std::string(attn_last_error()).find(part), std::string::npos)    \
        << "message: " << attn_last_error();                                   \
  } while (false)

inline constexpr attn_status kInvalid = ATTN_ERROR_INVALID_ARGUMENT;

inline int64_t addressOf(int i) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(fakeAddress(i)));
}

//===----------------------------------------------------------------------===//
// Launches against a fake driver
//===----------------------------------------------------------------------===//

struct Allocation {
  uintptr_t start;
  size_t size;
  int device;
  unsigned memoryType;
};

struct Launch {
  std::array<unsigned, 3> grid, block, cluster;
  unsigned sharedBytes;
  CUstream stream;
  CUfunction function;
  std::vector<int64_t> params;
};

/// What the fake driver does and saw. Guarded by `mutex`.
struct FakeState {
  std::mutex mutex;
  bool hasContext = true;
  CUdevice device = 0;
  std::vector<Allocation> allocations;
  CUresult loadResult = CUDA_SUCCESS, launchResult = CUDA_SUCCESS;
  size_t paramsPerLaunch = 0; // how many params to read back
  /// When given: params to read back per launch, by launch ordinal.
  std::vector<size_t> paramsByLaunch;
  /// cuMemAllocAsync / cuMemFreeAsync: results, and what they were asked
  /// (address, bytes, stream; frees: address, stream, launches before).
  CUresult allocResult = CUDA_SUCCESS;
  std::vector<std::tuple<CUdeviceptr, size_t, CUstream>> allocs;
  std::vector<std::tuple<CUdeviceptr, CUstream, size_t>> frees;
  /// Memory pools: the result of cuMemPoolCreate, the pools created (by
  /// the device of their location; destroyed ones marked), the release
  /// thresholds set, and the pool of each allocation (null: the default
  /// pool, cuMemAllocAsync).
  CUresult poolCreateResult = CUDA_SUCCESS;
  struct Pool {
    int device;
    CUmemAllocationType allocType;
    uint64_t releaseThreshold = 0;
    bool destroyed = false;
  };
  std::vector<Pool> pools;
  std::vector<CUmemoryPool> allocPools;
  int loads = 0, kernelLookups = 0;
  std::vector<CUlibrary> loaded;
  std::multiset<CUlibrary> unloaded;
  std::vector<std::tuple<int, int, CUkernel, CUdevice>> attributes;
  std::vector<Launch> launches;
  /// cuTensorMapEncodeTiled: its result and what it was asked.
  CUresult encodeResult = CUDA_SUCCESS;
  struct Encode {
    CUtensorMapDataType type;
    void *address;
    std::array<cuuint64_t, 4> dims;
    std::array<cuuint64_t, 3> strides;
    std::array<cuuint32_t, 4> box;
    CUtensorMapSwizzle swizzle;
  };
  std::vector<Encode> encodes;
  /// Events: the launch count when recorded. A launch of the kernel in the
  /// i-th loaded library takes msByLoad[i - 1] (1 ms when not given).
  std::map<CUevent, size_t> events;
  std::vector<double> msByLoad;
  int eventsLive = 0;
  int multiprocessors = 0; // cuDeviceGetAttribute's answer; 0: it fails
  /// Device floats by address (the descales cuMemcpyDtoHAsync reads), and
  /// the copies and stream synchronizations asked for.
  std::map<uintptr_t, std::vector<float>> floats;
  /// Device i32 by address (a paged call's tables).
  std::map<uintptr_t, std::vector<int32_t>> ints;
  int copies = 0;
  std::vector<CUstream> syncs;
};
inline FakeState *fake = nullptr;

inline CUresult fakeErrorName(CUresult error, const char **str) {
  switch (error) {
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    *str = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    *str = "CUDA_ERROR_NO_BINARY_FOR_GPU";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

inline CUresult fakeErrorString(CUresult, const char **str) {
  *str = "fake driver error";
  return CUDA_SUCCESS;
}

inline CUresult fakeCtxGetCurrent(CUcontext *ctx) {
  *ctx = fake->hasContext ? reinterpret_cast<CUcontext>(0xc0) : nullptr;
  return CUDA_SUCCESS;
}

inline CUresult fakeCtxGetDevice(CUdevice *device) {
  *device = fake->device;
  return CUDA_SUCCESS;
}

inline CUresult fakePointerGetAttribute(void *data,
                                        CUpointer_attribute attribute,
                                        CUdeviceptr ptr) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  for (const Allocation &a : fake->allocations) {
    if (ptr < a.start || ptr >= a.start + a.size)
      continue;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int *>(data) = a.device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned *>(data) = a.memoryType;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr *>(data) = a.start;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t *>(data) = a.size;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

inline CUresult fakeLibraryLoadData(CUlibrary *library, const void *code,
                                    CUjit_option *, void **, unsigned,
                                    CUlibraryOption *, void **, unsigned) {
  // Slow, so that concurrent first launches overlap.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::lock_guard<std::mutex> lock(fake->mutex);
  ++fake->loads;
  if (fake->loadResult != CUDA_SUCCESS)
    return fake->loadResult;
  EXPECT_EQ(std::memcmp(code,
                        "\x7f"
                        "ELF",
                        4),
            0);
  *library = reinterpret_cast<CUlibrary>(uintptr_t(0x1000 + fake->loads));
  fake->loaded.push_back(*library);
  return CUDA_SUCCESS;
}

inline CUresult fakeLibraryUnload(CUlibrary library) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->unloaded.insert(library);
  return CUDA_SUCCESS;
}

inline CUresult fakeLibraryGetKernel(CUkernel *kernel, CUlibrary library,
                                     const char *) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  ++fake->kernelLookups;
  *kernel = reinterpret_cast<CUkernel>(reinterpret_cast<uintptr_t>(library) +
                                       0x100000);
  return CUDA_SUCCESS;
}

inline CUresult fakeKernelSetAttribute(CUfunction_attribute attribute,
                                       int value, CUkernel kernel,
                                       CUdevice device) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->attributes.emplace_back(attribute, value, kernel, device);
  return CUDA_SUCCESS;
}

inline void record(Launch launch, void **params) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  size_t count = fake->paramsByLaunch.empty()
                     ? fake->paramsPerLaunch
                     : fake->paramsByLaunch[fake->launches.size() %
                                            fake->paramsByLaunch.size()];
  for (size_t i = 0; i < count; ++i)
    launch.params.push_back(*static_cast<int64_t *>(params[i]));
  fake->launches.push_back(std::move(launch));
}

inline CUresult fakeLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                 unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned sharedBytes,
                                 CUstream stream, void **params, void **extra) {
  EXPECT_EQ(extra, nullptr);
  if (fake->launchResult != CUDA_SUCCESS)
    return fake->launchResult;
  record({{gx, gy, gz}, {bx, by, bz}, {1, 1, 1}, sharedBytes, stream, f, {}},
         params);
  return CUDA_SUCCESS;
}

inline CUresult fakeLaunchKernelEx(const CUlaunchConfig *c, CUfunction f,
                                   void **params, void **) {
  EXPECT_EQ(c->numAttrs, 1u);
  EXPECT_EQ(c->attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  const auto &cluster = c->attrs[0].value.clusterDim;
  record({{c->gridDimX, c->gridDimY, c->gridDimZ},
          {c->blockDimX, c->blockDimY, c->blockDimZ},
          {cluster.x, cluster.y, cluster.z},
          c->sharedMemBytes,
          c->hStream,
          f,
          {}},
         params);
  return CUDA_SUCCESS;
}

/// Records the request and writes the tensor's address into the map's
/// first 8 bytes, so that a launch's parameters show which map went where.
inline CUresult fakeTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
    CUtensorMapFloatOOBfill oobFill) {
  EXPECT_EQ(rank, 4u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(map) % 64, 0u);
  EXPECT_EQ(oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); // zeros
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(elementStrides[i], 1u);
  std::lock_guard<std::mutex> lock(fake->mutex);
  if (fake->encodeResult != CUDA_SUCCESS)
    return fake->encodeResult;
  fake->encodes.push_back({type,
                           address,
                           {dims[0], dims[1], dims[2], dims[3]},
                           {strides[0], strides[1], strides[2]},
                           {box[0], box[1], box[2], box[3]},
                           swizzle});
  std::memset(map, 0, sizeof(*map));
  std::memcpy(map, &address, sizeof(address));
  return CUDA_SUCCESS;
}

inline CUresult fakeEventCreate(CUevent *event, unsigned) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  static uintptr_t next = 0xe0;
  *event = reinterpret_cast<CUevent>(next++);
  fake->events[*event] = 0;
  ++fake->eventsLive;
  return CUDA_SUCCESS;
}

inline CUresult fakeEventRecord(CUevent event, CUstream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->events[event] = fake->launches.size();
  return CUDA_SUCCESS;
}

inline CUresult fakeEventSynchronize(CUevent) { return CUDA_SUCCESS; }

/// The time of the launches between the two records.
inline CUresult fakeEventElapsedTime(float *ms, CUevent start, CUevent end) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  double total = 0;
  for (size_t i = fake->events[start]; i < fake->events[end]; ++i) {
    size_t load = reinterpret_cast<uintptr_t>(fake->launches[i].function) -
                  0x100000 - 0x1000;
    total += load <= fake->msByLoad.size() ? fake->msByLoad[load - 1] : 1.0;
  }
  *ms = float(total);
  return CUDA_SUCCESS;
}

inline CUresult fakeEventDestroy(CUevent event) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->events.erase(event);
  --fake->eventsLive;
  return CUDA_SUCCESS;
}

inline CUresult fakeDeviceGetName(char *name, int length, CUdevice) {
  std::snprintf(name, length, "Fake GPU");
  return CUDA_SUCCESS;
}

inline CUresult fakeDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                       CUdevice) {
  EXPECT_EQ(attribute, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  *value = fake->multiprocessors;
  return fake->multiprocessors > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/// Copies from `floats` or `ints`; CUDA_ERROR_INVALID_VALUE outside them.
inline CUresult fakeMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                                    CUstream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  ++fake->copies;
  auto copy = [&](const auto &map) {
    for (const auto &[start, values] : map)
      if (src >= start && src + bytes <= start + values.size() * 4) {
        std::memcpy(
            dst, reinterpret_cast<const char *>(values.data()) + (src - start),
            bytes);
        return true;
      }
    return false;
  };
  return copy(fake->floats) || copy(fake->ints) ? CUDA_SUCCESS
                                                : CUDA_ERROR_INVALID_VALUE;
}

inline CUresult fakeStreamSynchronize(CUstream stream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->syncs.push_back(stream);
  return CUDA_SUCCESS;
}

/// Hands out addresses from 0xa0000000 on, 1 MiB apart.
inline CUresult fakeMemAllocAsync(CUdeviceptr *ptr, size_t bytes,
                                  CUstream stream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  if (fake->allocResult != CUDA_SUCCESS)
    return fake->allocResult;
  *ptr = 0xa0000000 + (fake->allocs.size() << 20);
  fake->allocs.emplace_back(*ptr, bytes, stream);
  fake->allocPools.push_back(nullptr);
  return CUDA_SUCCESS;
}

/// Fake pools are 1-based indices into FakeState::pools.
inline FakeState::Pool &fakePool(CUmemoryPool pool) {
  return fake->pools.at(reinterpret_cast<uintptr_t>(pool) - 1);
}

inline CUresult fakeMemPoolCreate(CUmemoryPool *pool,
                                  const CUmemPoolProps *props) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  if (fake->poolCreateResult != CUDA_SUCCESS)
    return fake->poolCreateResult;
  if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  fake->pools.push_back({props->location.id, props->allocType});
  *pool = reinterpret_cast<CUmemoryPool>(uintptr_t(fake->pools.size()));
  return CUDA_SUCCESS;
}

inline CUresult fakeMemPoolDestroy(CUmemoryPool pool) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fakePool(pool).destroyed = true;
  return CUDA_SUCCESS;
}

inline CUresult fakeMemPoolSetAttribute(CUmemoryPool pool,
                                        CUmemPool_attribute attr,
                                        void *value) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  if (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    return CUDA_ERROR_INVALID_VALUE;
  fakePool(pool).releaseThreshold = *static_cast<cuuint64_t *>(value);
  return CUDA_SUCCESS;
}

inline CUresult fakeMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes,
                                          CUmemoryPool pool, CUstream stream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  if (fake->allocResult != CUDA_SUCCESS)
    return fake->allocResult;
  if (fakePool(pool).destroyed)
    return CUDA_ERROR_INVALID_VALUE;
  *ptr = 0xa0000000 + (fake->allocs.size() << 20);
  fake->allocs.emplace_back(*ptr, bytes, stream);
  fake->allocPools.push_back(pool);
  return CUDA_SUCCESS;
}

inline CUresult fakeMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  std::lock_guard<std::mutex> lock(fake->mutex);
  fake->frees.emplace_back(ptr, stream, fake->launches.size());
  return CUDA_SUCCESS;
}

inline const DriverApi fakeApi = {
    fakeErrorName,          fakeErrorString,         fakeCtxGetCurrent,
    fakeCtxGetDevice,       fakePointerGetAttribute, fakeLibraryLoadData,
    fakeLibraryUnload,      fakeLibraryGetKernel,    fakeKernelSetAttribute,
    fakeLaunchKernel,       fakeLaunchKernelEx,      fakeTensorMapEncodeTiled,
    fakeEventCreate,        fakeEventRecord,         fakeEventSynchronize,
    fakeEventElapsedTime,   fakeEventDestroy,        fakeDeviceGetName,
    fakeDeviceGetAttribute, fakeMemcpyDtoHAsync,     fakeStreamSynchronize,
    fakeMemAllocAsync,      fakeMemFreeAsync,        fakeMemPoolCreate,
    fakeMemPoolDestroy,     fakeMemPoolSetAttribute, fakeMemAllocFromPoolAsync};

/// A call's workspace is one allocation: the offsets of buffers of `bytes`
/// in it (in order, each 256-byte aligned), then the allocation's size.
inline std::vector<uint64_t> workspaceLayout(std::vector<uint64_t> bytes) {
  std::vector<uint64_t> at = {0};
  for (uint64_t n : bytes)
    at.push_back((at.back() + n + 255) / 256 * 256);
  return at;
}

class FakeLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    fake = &state;
    attn::runtime::setDriverForTesting(&fakeApi);
    // q, k, v, o, lse, q_descale, k_descale, v_descale: 1 MiB of device
    // memory each on device 0.
    for (int i = 0; i < 8; ++i)
      state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                   1 << 20, 0, CU_MEMORYTYPE_DEVICE});
  }
  void TearDown() override {
    attn_bundle_destroy(bundle);
    attn::runtime::setDriverForTesting(nullptr);
    fake = nullptr;
  }
  void load(std::vector<KernelEntry> kernels) {
    bundle = loadBundle(dir, manifestOf(std::move(kernels)));
    ASSERT_NE(bundle, nullptr);
  }
  /// Loads a split-KV kernel of 4 splits; its call (smallArgs with LSE).
  attn_fwd_args loadSplitKV() {
    load({splitKernel("k", 4)});
    state.paramsByLaunch = {3 * 11 + 13 + 11, 13 + 11 + 11 + 9};
    return smallArgs(/*lse=*/true);
  }
  /// A call that fits the 1 MiB allocations: 128 x 64 bf16 per head.
  attn_fwd_args smallArgs(bool lse = false) {
    attn_fwd_args args = makeArgs(1, 4, 2, 100, 128, 128, lse);
    return args;
  }

  FakeState state;
  TempDir dir;
  attn_bundle *bundle = nullptr;
  CUstream stream = reinterpret_cast<CUstream>(0x5eed);
};

} // namespace attn::testing

#endif // ATTN_RUNTIME_UNITTESTS_FAKEDRIVER_H

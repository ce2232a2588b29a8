//===- Launch.cpp - kernel parameters, tensor maps, launches --------------===//

#include "Bundle.h"
#include "CallChecks.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace attn::runtime;
using attn::bundle::GridDim;
using attn::bundle::KernelEntry;
using attn::bundle::Operand;
using attn::bundle::Param;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

Status cudaError(const DriverApi &driver, CUresult result, const char *call) {
  return makeError(ATTN_ERROR_CUDA, formatCudaError(driver, result, call));
}

/// `t` is device memory of `device` and its view lies inside its allocation.
Status checkPointer(const DriverApi &driver, const attn_tensor &t,
                    StringRef name, uint64_t bytes, CUdevice device) {
  auto ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(t.data));
  int ordinal = -1;
  if (driver.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 ptr) != CUDA_SUCCESS)
    return invalid(formatv("{0}: {1} is not CUDA device memory", name,
                           pointerText(t.data)));
  unsigned memoryType = 0;
  if (driver.pointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 ptr) == CUDA_SUCCESS &&
      memoryType == CU_MEMORYTYPE_HOST)
    return invalid(formatv("{0}: {1} is host memory, not device memory", name,
                           pointerText(t.data)));
  if (ordinal != device)
    return invalid(formatv("{0}: on device {1}, but the current context is "
                           "on device {2}",
                           name, ordinal, device));
  CUdeviceptr start = 0;
  size_t size = 0;
  if (driver.pointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 ptr) != CUDA_SUCCESS ||
      driver.pointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) !=
          CUDA_SUCCESS)
    return Status::success();
  if (ptr < start || bytes > size || ptr - start > size - bytes)
    return invalid(formatv("{0}: view extends past its allocation ({1} bytes "
                           "from {2}; the allocation is {3} bytes from {4})",
                           name, bytes, pointerText(t.data), size,
                           pointerText(reinterpret_cast<void *>(start))));
  return Status::success();
}

/// The manifest's swizzle span (bytes) as the driver names it.
static CUtensorMapSwizzle swizzleOf(int64_t bytes) {
  return bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}

/// A CUtensorMap as the kernel takes it (by value, 64-byte aligned).
struct alignas(64) TensorMap {
  CUtensorMap map;
};

/// Encodes `t` as the rank-4 tensor (D, N, H, B), or (N, D, H, B) for a
/// transposed map (FP8 V^T storage), or (D, H, N, B) for a heads_inner map
/// (GQA packing; a paged [num_pages, page_size, Hkv, D] cache comes out as
/// (D, page_size, Hkv, num_pages)), in boxes of `param.box` (the recorded
/// swizzle, out-of-bounds elements zero). e4m3 maps are UINT8: TMA copies
/// bytes. A dimension of size 1 has no meaningful stride: it gets the
/// packed one, so that any stride a caller left there is never put into the
/// map. Empty dimensions encode as 1: the kernel never copies from them.
static Status encodeTensorMap(const DriverApi &driver, const Param &param,
                              const CallOperands &args, TensorMap &out) {
  StringRef name = bundle::operandName(param.operand);
  if (!driver.tensorMapEncodeTiled)
    return makeError(ATTN_ERROR_CUDA, "the CUDA driver lacks "
                                      "cuTensorMapEncodeTiled (needs CUDA 12)");
  const attn_tensor &given = args.tensor(param.operand);
  // A packed map (varlen) reads the [total, H, D] operand through its
  // [1, H, total, D] view, as the compiler's transpose(expand_shape) does.
  attn_tensor view = given;
  if (param.packed) {
    view.rank = 4;
    view.sizes[0] = 1;
    view.strides[0] = 0; // size 1: never used
    view.sizes[1] = given.sizes[1];
    view.strides[1] = given.strides[1];
    view.sizes[2] = given.sizes[0];
    view.strides[2] = given.strides[0];
    view.sizes[3] = given.sizes[2];
    view.strides[3] = given.strides[2];
  }
  const attn_tensor &t = view;
  auto elt = static_cast<int64_t>(elementBytes(dtypeOf(t)));
  // The memref dimension of each TMA dimension, innermost first.
  const int order[4] = {param.transposed ? 2 : 3,
                        param.transposed   ? 3
                        : param.headsInner ? 1
                                           : 2,
                        param.headsInner ? 2 : 1, 0};
  cuuint64_t dims[4], strides[3];
  for (int i = 0; i < 4; ++i)
    dims[i] = static_cast<cuuint64_t>(std::max<int64_t>(t.sizes[order[i]], 1));
  uint64_t packed = dims[0] * elt;
  for (int i = 0; i < 3; ++i) {
    int d = order[i + 1]; // memref dimension of TMA dimension i + 1
    strides[i] =
        t.sizes[d] > 1 ? static_cast<cuuint64_t>(t.strides[d] * elt) : packed;
    packed = strides[i] * dims[i + 1];
    if (strides[i] >= (uint64_t(1) << 40) || strides[i] % 16 != 0)
      return invalid(formatv("{0}: stride[{1}] = {2} bytes cannot be a TMA "
                             "stride (a multiple of 16 below 2^40)",
                             name, d, strides[i]));
    if (packed >= (uint64_t(1) << 40))
      packed = strides[i];
  }
  cuuint32_t box[4], ones[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; ++i)
    box[i] = static_cast<cuuint32_t>(param.box[i]);
  CUtensorMapDataType type =
      dtypeOf(t) == ATTN_DTYPE_BF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : dtypeOf(t) == ATTN_DTYPE_E4M3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                      : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CUresult r = driver.tensorMapEncodeTiled(
      &out.map, type, 4, t.data, dims, strides, box, ones,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzleOf(param.swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return invalid(
        formatv("{0}: the view cannot be described to TMA "
                "(sizes {1}, strides {2}): {3}",
                name, sizesText(t), listText(t.strides, 4),
                formatCudaError(driver, r, "cuTensorMapEncodeTiled")));
  return Status::success();
}

/// A kernel's workspace for one call: each buffer's device address and
/// extents (contiguous, of the manifest's dtype).
struct WorkspaceBuffers {
  CUdeviceptr base = 0; // the one allocation (0: none)
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::vector<int64_t>> shapes;
};

/// Encodes the view a workspace tensor map states (a quantized kernel's
/// e4m3 copy: dims, strides and swizzle from the manifest, which checked
/// that the view lies inside the buffer) over the buffer allocated for
/// this call.
static Status encodeWorkspaceMap(const DriverApi &driver, const Param &param,
                                 const bundle::Workspace &buffer,
                                 CUdeviceptr ptr, TensorMap &out) {
  if (!driver.tensorMapEncodeTiled)
    return makeError(ATTN_ERROR_CUDA, "the CUDA driver lacks "
                                      "cuTensorMapEncodeTiled (needs CUDA 12)");
  int64_t elt = bundle::workspaceElementBytes(buffer.dtype);
  cuuint64_t dims[4], strides[3];
  cuuint32_t box[4], ones[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<cuuint64_t>(param.dims[i]);
    box[i] = static_cast<cuuint32_t>(param.box[i]);
  }
  for (int i = 0; i < 3; ++i)
    strides[i] = static_cast<cuuint64_t>(param.strides[i] * elt);
  CUtensorMapDataType type =
      buffer.dtype == "e4m3"  ? CU_TENSOR_MAP_DATA_TYPE_UINT8
      : buffer.dtype == "i32" ? CU_TENSOR_MAP_DATA_TYPE_INT32
                              : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUresult r = driver.tensorMapEncodeTiled(
      &out.map, type, 4, reinterpret_cast<void *>(ptr), dims, strides, box,
      ones, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzleOf(param.swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return makeError(
        ATTN_ERROR_CUDA,
        formatv("workspace {0}: {1}", buffer.name,
                formatCudaError(driver, r, "cuTensorMapEncodeTiled")));
  return Status::success();
}

static int64_t workspaceValue(const Param &param, const WorkspaceBuffers &ws) {
  const std::vector<int64_t> &shape = ws.shapes[param.workspace];
  switch (param.field) {
  case Param::Field::AllocatedPtr:
  case Param::Field::AlignedPtr:
    return static_cast<int64_t>(ws.ptrs[param.workspace]);
  case Param::Field::Size:
    return shape[param.index];
  case Param::Field::Stride: {
    int64_t stride = 1;
    for (size_t d = param.index + 1; d < shape.size(); ++d)
      stride *= shape[d];
    return stride;
  }
  default:
    return 0;
  }
}

static int64_t paramValue(const Param &param, const CallOperands &args,
                          const WorkspaceBuffers &ws) {
  if (param.workspace >= 0)
    return workspaceValue(param, ws);
  const attn_tensor &t = args.tensor(param.operand);
  switch (param.field) {
  case Param::Field::AllocatedPtr:
  case Param::Field::AlignedPtr:
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data));
  case Param::Field::Offset:
    return 0;
  case Param::Field::Size:
    return t.sizes[param.index];
  case Param::Field::Stride:
    return t.strides[param.index];
  case Param::Field::TensorMap:
    break;
  case Param::Field::Value:
    return args.scalar(param.operand);
  }
  return 0;
}

/// The kernel's parameter values: 64-bit scalars, and tensor maps by value.
struct LaunchParams {
  llvm::SmallVector<int64_t, 64> values;
  std::vector<TensorMap> maps;
  llvm::SmallVector<void *, 64> pointers;
};

static Status buildParams(const DriverApi &driver, const KernelEntry &entry,
                          const bundle::KernelLaunch &kernel,
                          const CallOperands &args, const WorkspaceBuffers &ws,
                          LaunchParams &p) {
  // Reserve first: `pointers` holds addresses into both vectors.
  p.values.reserve(kernel.params.size());
  p.maps.reserve(kernel.params.size());
  for (const Param &param : kernel.params) {
    if (param.field == Param::Field::TensorMap) {
      p.maps.emplace_back();
      Status s = param.workspace >= 0
                     ? encodeWorkspaceMap(
                           driver, param, entry.workspace[param.workspace],
                           ws.ptrs[param.workspace], p.maps.back())
                     : encodeTensorMap(driver, param, args, p.maps.back());
      if (!s.ok())
        return s;
      p.pointers.push_back(&p.maps.back().map);
      continue;
    }
    p.values.push_back(paramValue(param, args, ws));
    p.pointers.push_back(&p.values.back());
  }
  return Status::success();
}

/// A persistent kernel's attention launch (`which`) runs at most one CTA
/// per SM of `device` (it needs a whole SM's shared memory): more would wait
/// for a second wave.
static void capPersistentGrid(const DriverApi &driver,
                              const KernelEntry &kernel, size_t which,
                              CUdevice device, std::array<int64_t, 3> &grid) {
  if (kernel.persistentCtas <= 0 || which != kernel.persistentLaunch())
    return;
  if (int sms = deviceSMs(driver, device); sms > 0)
    grid[0] = std::min<int64_t>(grid[0], sms);
}

static CUresult enqueue(const DriverApi &driver, const KernelEntry &entry,
                        size_t which, CUkernel handle, const CallOperands &args,
                        CUdevice device, CUstream stream, LaunchParams &params,
                        const char *&call) {
  llvm::SmallVector<void *, 64> &pointers = params.pointers;
  const bundle::KernelLaunch &kernel = entry.launch(which);
  std::array<int64_t, 3> grid = gridOf(kernel, args);
  capPersistentGrid(driver, entry, which, device, grid);
  auto function = reinterpret_cast<CUfunction>(handle);
  const auto &threads = kernel.threads;
  const auto &cluster = kernel.cluster;
  if (cluster[0] * cluster[1] * cluster[2] == 1) {
    call = "cuLaunchKernel";
    return driver.launchKernel(
        function, grid[0], grid[1], grid[2], threads[0], threads[1], threads[2],
        kernel.dynamicSharedBytes, stream, pointers.data(), nullptr);
  }
  call = "cuLaunchKernelEx";
  if (!driver.launchKernelEx)
    return CUDA_ERROR_NOT_SUPPORTED;
  CUlaunchAttribute attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = cluster[0];
  attribute.value.clusterDim.y = cluster[1];
  attribute.value.clusterDim.z = cluster[2];
  CUlaunchConfig config = {};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = threads[0];
  config.blockDimY = threads[1];
  config.blockDimZ = threads[2];
  config.sharedMemBytes = kernel.dynamicSharedBytes;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return driver.launchKernelEx(&config, function, pointers.data(), nullptr);
}

Status currentDevice(const DriverApi *&driver, CUdevice &device) {
  std::string error;
  driver = getDriver(error);
  if (!driver)
    return makeError(ATTN_ERROR_CUDA, error);
  CUcontext context = nullptr;
  if (CUresult r = driver->ctxGetCurrent(&context); r != CUDA_SUCCESS)
    return cudaError(*driver, r, "cuCtxGetCurrent");
  if (!context)
    return makeError(ATTN_ERROR_CUDA, "no current CUDA context on this thread");
  if (CUresult r = driver->ctxGetDevice(&device); r != CUDA_SUCCESS)
    return cudaError(*driver, r, "cuCtxGetDevice");
  return Status::success();
}

Status Bundle::prepare(const attn_fwd_args &args, FwdCall &call, int64_t &index,
                       const DriverApi *&driver, CUdevice &device) const {
  if (Status s = validateFwd(args, call); !s.ok())
    return s;
  if (call.empty()) // nothing to compute: no kernel, no GPU needed
    return Status::success();
  if (Status s = pickKernel(call, args, index); !s.ok())
    return s;
  if (Status s = currentDevice(driver, device); !s.ok())
    return s;
  for (Operand op : kFwdTensorOperands) {
    uint64_t bytes = call.extentBytes[static_cast<size_t>(op)];
    if (bytes == 0) // empty view, no LSE, or no descales
      continue;
    if (Status s = checkPointer(*driver, operandTensor(args, op),
                                bundle::operandName(op), bytes, device);
        !s.ok())
      return s;
  }
  return Status::success();
}

/// Alignment of each workspace buffer inside the call's one allocation
/// (cuMemAlloc's; tensor maps need 16 bytes).
constexpr uint64_t kWorkspaceAlign = 256;

/// Allocates the kernel's workspace for `args` on `stream` from the
/// bundle's pool for `device` (stream-ordered: no call synchronizes, and
/// the memory stays in the pool between calls): one allocation, each
/// buffer at an aligned offset.
static Status allocWorkspace(const DriverApi &driver, WorkspacePools &pools,
                             CUdevice device, const KernelEntry &entry,
                             const CallOperands &args, CUstream stream,
                             WorkspaceBuffers &ws) {
  if (entry.workspace.empty())
    return Status::success();
  if (!driver.memAllocAsync || !driver.memFreeAsync)
    return makeError(ATTN_ERROR_CUDA,
                     formatv("kernel {0} needs a workspace, allocated with "
                             "cuMemAllocAsync and cuMemFreeAsync, which the "
                             "CUDA driver lacks",
                             entry.name));
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  std::string names;
  for (const bundle::Workspace &buffer : entry.workspace) {
    std::vector<int64_t> shape;
    uint64_t bytes = bundle::workspaceElementBytes(buffer.dtype);
    bool overflow = false;
    for (const GridDim &dim : buffer.shape) {
      shape.push_back(gridDim(dim, args));
      overflow |=
          __builtin_mul_overflow(bytes, uint64_t(shape.back()), &bytes) ||
          shape.back() == INT64_MAX;
    }
    offsets.push_back(total);
    overflow |= __builtin_add_overflow(total, bytes, &total) ||
                total > UINT64_MAX - kWorkspaceAlign;
    if (overflow)
      return invalid(formatv("kernel {0}: workspace {1} for this call "
                             "overflows 64 bits",
                             entry.name, buffer.name));
    total = llvm::alignTo(total, kWorkspaceAlign);
    names += (names.empty() ? "" : ", ") + buffer.name;
    ws.shapes.push_back(std::move(shape));
  }
  const char *what = "";
  total = std::max(total, kWorkspaceAlign); // never a 0-byte allocation
  if (CUresult r = pools.allocate(driver, device, total, stream, ws.base, what);
      r != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     formatv("kernel {0}: workspace ({1}; {2} bytes): {3}",
                             entry.name, names, total,
                             formatCudaError(driver, r, what)));
  for (uint64_t offset : offsets)
    ws.ptrs.push_back(ws.base + offset);
  return Status::success();
}

/// Frees the workspace on `stream`, after the launches queued there.
static Status freeWorkspace(const DriverApi &driver, const WorkspaceBuffers &ws,
                            CUstream stream) {
  if (!ws.base)
    return Status::success();
  if (CUresult r = driver.memFreeAsync(ws.base, stream); r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuMemFreeAsync");
  return Status::success();
}

Status Bundle::launchOne(const DriverApi &driver, CUdevice device, size_t index,
                         size_t which, const CallOperands &args,
                         const WorkspaceBuffers &ws, CUstream stream) {
  CUkernel handle = nullptr;
  if (Status s = ensureLoaded(driver, index, which, device, handle); !s.ok())
    return s;
  const bundle::KernelLaunch &launch = kernel(index).launch(which);
  LaunchParams params;
  if (Status s = buildParams(driver, kernel(index), launch, args, ws, params);
      !s.ok())
    return s;
  const char *what = "cuLaunchKernel";
  if (CUresult r = enqueue(driver, kernel(index), which, handle, args, device,
                           stream, params, what);
      r != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     formatv("launching {0}: {1}", launch.name,
                             formatCudaError(driver, r, what)));
  return Status::success();
}

Status Bundle::launchIndex(const DriverApi &driver, CUdevice device,
                           size_t index, const CallOperands &args,
                           CUstream stream) {
  WorkspaceBuffers ws;
  Status status = allocWorkspace(driver, workspacePools, device, kernel(index),
                                 args, stream, ws);
  for (size_t i = 0; status.ok() && i < kernel(index).numLaunches(); ++i)
    status = launchOne(driver, device, index, i, args, ws, stream);
  // Freed even after a failed launch: stream order keeps it after the
  // launches that were queued.
  Status freed = freeWorkspace(driver, ws, stream);
  return status.ok() ? freed : status;
}

Status Bundle::prepareChecked(const attn_fwd_args &args, CUstream stream,
                              FwdCall &call, int64_t &index,
                              const DriverApi *&driver,
                              CUdevice &device) const {
  if (Status s = prepare(args, call, index, driver, device);
      !s.ok() || call.empty())
    return s;
  if (checkValues)
    return checkCallValues(*driver, args, call, stream);
  return Status::success();
}

Status Bundle::launch(const attn_fwd_args &args, CUstream stream) {
  FwdCall call;
  const DriverApi *driver = nullptr;
  CUdevice device = 0;
  int64_t index = 0;
  if (Status s = prepareChecked(args, stream, call, index, driver, device);
      !s.ok() || call.empty())
    return s;
  if (autoTune && variantsOf(call, index).size() > 1 &&
      !tuning.lookup(call.describe()))
    return tuneVariants(call, args, stream, *driver, device, index);
  return launchIndex(*driver, device, index, args, stream);
}

} // namespace attn::runtime

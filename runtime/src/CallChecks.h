//===- CallChecks.h - host checks of a call's tensors ------------*- C++ -*-===//
//
// The checks and texts attn_fwd and attn_bwd share (Bundle.cpp defines
// them, OutputChecks.cpp those of the outputs): a tensor's rank, sizes,
// strides and alignment, the bytes its view spans, the outputs' addresses,
// and a launch's grid for the call's sizes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CALLCHECKS_H
#define ATTN_RUNTIME_CALLCHECKS_H

#include "Bundle.h"

namespace attn::runtime {

/// ATTN_ERROR_INVALID_ARGUMENT with `message`.
Status invalid(const llvm::Twine &message);

/// The dtype as the integer a C caller stored.
int dtypeOf(const attn_tensor &t);
/// "f16", "bf16", "f32", "e4m3", "i32", or null for another value.
const char *dtypeName(int dtype);
uint64_t elementBytes(int dtype);
std::string dtypeText(int dtype);
std::string listText(const int64_t *values, int32_t rank);
std::string sizesText(const attn_tensor &t);
std::string pointerText(const void *ptr);

/// Every tensor operand of an attn_fwd call (max_seqlen_q/k are scalars;
/// do, dq, dk and dv are the backward's).
inline constexpr bundle::Operand kFwdTensorOperands[] = {
    bundle::Operand::Q,          bundle::Operand::K,
    bundle::Operand::V,          bundle::Operand::O,
    bundle::Operand::LSE,        bundle::Operand::QDescale,
    bundle::Operand::KDescale,   bundle::Operand::VDescale,
    bundle::Operand::BlockTable, bundle::Operand::CacheSeqlens,
    bundle::Operand::CuSeqlensQ, bundle::Operand::CuSeqlensK};
static_assert(std::size(kFwdTensorOperands) + 6 == bundle::kNumOperands);

/// Some dimension has size 0.
bool isEmpty(const attn_tensor &t);
/// The one rule for optional tensors (lse, descales, block_table,
/// cache_seqlens, cu_seqlens): absent exactly when zero-initialized (rank 0
/// and data NULL). Anything else is given and checked like any tensor.
bool isGiven(const attn_tensor &t);
/// Given (a zero-initialized tensor is "`name` is required"), rank,
/// non-negative sizes and strides, and a data pointer unless the view has
/// no element.
Status checkShape(const attn_tensor &t, llvm::StringRef name, int32_t rank,
                  llvm::StringRef dims);
/// Unit stride on D (for `vt`, on Nk: FP8 V^T storage), the other strides
/// multiples of 16 bytes, 16-byte aligned data.
Status checkLayout(const attn_tensor &t, llvm::StringRef name, bool vt = false);
/// Given, f32 of sizes `expected` (`dims` names them), any strides, 4-byte
/// aligned.
Status checkLse(const attn_tensor &lse, llvm::ArrayRef<int64_t> expected,
                llvm::StringRef dims);
/// Bytes from the first element of a view to the end of its last one (0 for
/// an empty view). False when that overflows.
bool viewBytes(const attn_tensor &t, uint64_t &bytes);
/// Row-major with no gaps; strides of unit dimensions do not matter.
bool isContiguous(const attn_tensor &t);
/// Equal sizes over a's rank.
bool sameSizes(const attn_tensor &a, const attn_tensor &b);
/// Hq a multiple of Hkv (GQA) and D a multiple of 8 in [8, 256].
Status checkHeads(int64_t hq, int64_t hkv, int64_t d);
/// A softmax scale is finite and >= 0 (0: 1/sqrt(D)).
Status checkScale(float scale);
/// Softmax scales equal within 1e-6 relative.
bool sameScale(double a, double b);

/// `t` gives each element an address of its own: sorted by stride, every
/// dimension of size > 1 strides past the span of those with smaller
/// strides (dimensions of size 1 are never stepped, so their stride does
/// not matter). Sufficient, and for the nested layouts callers use also
/// necessary; ATTN_ERROR_INVALID_ARGUMENT naming `name` and the dimension
/// otherwise.
Status checkDistinctElements(const attn_tensor &t, llvm::StringRef name);

/// What every call form checks of the tensors it writes (OutputChecks.cpp):
/// each of `outputs` present in `ops` (extentBytes, by bundle::Operand,
/// above 0) gives each element its own address (checkDistinctElements) and
/// shares no byte with any of `operands` other than itself: the kernels
/// read the inputs while other CTAs write the outputs.
Status checkOutputs(const CallOperands &ops,
                    llvm::ArrayRef<bundle::Operand> outputs,
                    llvm::ArrayRef<bundle::Operand> operands,
                    llvm::ArrayRef<uint64_t> extentBytes);

/// `t` is device memory of `device` and its `bytes` lie inside its
/// allocation.
Status checkPointer(const DriverApi &driver, const attn_tensor &t,
                    llvm::StringRef name, uint64_t bytes, CUdevice device);

/// The driver, and the device of the calling thread's current context.
Status currentDevice(const DriverApi *&driver, CUdevice &device);

/// constant * prod ceil(size / divisor) of the call's sizes, saturated at
/// INT64_MAX.
int64_t gridDim(const bundle::GridDim &dim, const CallOperands &args);
std::array<int64_t, 3> gridOf(const bundle::KernelLaunch &kernel,
                              const CallOperands &args);
/// The launch's grid for the call is within CUDA's limits.
Status checkGrid(const bundle::KernelLaunch &kernel, const CallOperands &args);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_CALLCHECKS_H

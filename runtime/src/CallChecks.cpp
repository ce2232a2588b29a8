//===- CallChecks.cpp - errors, call texts, tensor checks -----------------===//

#include "CallChecks.h"
#include "Bundle.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <type_traits>

using namespace attn::runtime;
using attn::bundle::Operand;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

Status makeError(attn_status code, const llvm::Twine &message) {
  return {code, message.str()};
}

Status invalid(const llvm::Twine &message) {
  return makeError(ATTN_ERROR_INVALID_ARGUMENT, message);
}

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

/// The dtype as the integer a C caller stored: reading an out-of-range value
/// through the enum type would be undefined in C++.
int dtypeOf(const attn_tensor &t) {
  std::underlying_type_t<attn_dtype> value;
  std::memcpy(&value, &t.dtype, sizeof(value));
  return static_cast<int>(value);
}

const char *dtypeName(int dtype) {
  switch (dtype) {
  case ATTN_DTYPE_F16:
    return "f16";
  case ATTN_DTYPE_BF16:
    return "bf16";
  case ATTN_DTYPE_F32:
    return "f32";
  case ATTN_DTYPE_E4M3:
    return "e4m3";
  case ATTN_DTYPE_I32:
    return "i32";
  }
  return nullptr;
}

uint64_t elementBytes(int dtype) {
  return dtype == ATTN_DTYPE_F32 || dtype == ATTN_DTYPE_I32 ? 4
         : dtype == ATTN_DTYPE_E4M3                         ? 1
                                                            : 2;
}

std::string dtypeText(int dtype) {
  const char *name = dtypeName(dtype);
  return name ? name : formatv("<dtype {0}>", dtype).str();
}

std::string listText(const int64_t *values, int32_t rank) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string sizesText(const attn_tensor &t) {
  return listText(t.sizes, t.rank);
}

std::string pointerText(const void *ptr) {
  return formatv("{0:x}", reinterpret_cast<uintptr_t>(ptr)).str();
}

std::string scaleText(double scale) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.7g", scale);
  return text;
}

std::string FwdCall::describe() const {
  return formatv("{0} D={1}{2}{3} B={4} Hq={5} Hkv={6} Nq={7} Nk={8}{11} "
                 "scale={9} {10}{12}{13}",
                 dtype, headDim, causal ? " causal" : "", hasLse ? " +lse" : "",
                 batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK,
                 scaleText(scale), contiguous ? "contiguous" : "strided",
                 paged ? " page_size=" + std::to_string(pageSize)
                       : std::string(),
                 varlen ? " varlen" : "", quantizeFp8 ? " quantize=fp8" : "")
      .str();
}

//===----------------------------------------------------------------------===//
// Host validation
//===----------------------------------------------------------------------===//

const attn_tensor &operandTensor(const attn_fwd_args &args, Operand operand) {
  switch (operand) {
  case Operand::Q:
    return args.q;
  case Operand::K:
    return args.k;
  case Operand::V:
    return args.v;
  case Operand::O:
    return args.o;
  case Operand::LSE:
    return args.lse;
  case Operand::QDescale:
    return args.q_descale;
  case Operand::KDescale:
    return args.k_descale;
  case Operand::VDescale:
    return args.v_descale;
  case Operand::BlockTable:
    return args.block_table;
  case Operand::CacheSeqlens:
    return args.cache_seqlens;
  case Operand::CuSeqlensQ:
    return args.cu_seqlens_q;
  case Operand::CuSeqlensK:
    return args.cu_seqlens_k;
  case Operand::MaxSeqlenQ:
  case Operand::MaxSeqlenK:
    break; // scalars: CallOperands::scalar()
  case Operand::DO:
  case Operand::DQ:
  case Operand::DK:
  case Operand::DV:
    break; // the backward's (attn_bwd_args)
  }
  static const attn_tensor none = {};
  return none;
}

CallOperands::CallOperands(const attn_fwd_args &args)
    : maxSeqlenQ(args.max_seqlen_q), maxSeqlenK(args.max_seqlen_k) {
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i] = &operandTensor(args, static_cast<Operand>(i));
}

const attn_tensor &CallOperands::tensor(Operand op) const {
  static const attn_tensor none = {};
  const attn_tensor *t = tensors[static_cast<size_t>(op)];
  return t ? *t : none;
}

int64_t CallOperands::scalar(Operand op) const {
  return op == Operand::MaxSeqlenQ   ? maxSeqlenQ
         : op == Operand::MaxSeqlenK ? maxSeqlenK
                                     : 0;
}

bool isEmpty(const attn_tensor &t) {
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.sizes[i] == 0)
      return true;
  return false;
}

/// Rank, non-negative sizes and strides, and a data pointer unless the view
/// has no element.
Status checkShape(const attn_tensor &t, StringRef name, int32_t rank,
                  StringRef dims) {
  if (!isGiven(t))
    return invalid(formatv("{0} is required: {1}, got a zero-initialized "
                           "tensor (rank 0, data NULL)",
                           name, dims));
  if (t.rank != rank)
    return invalid(formatv("{0}: rank must be {1} ({2}), got {3}", name, rank,
                           dims, t.rank));
  for (int32_t i = 0; i < rank; ++i)
    if (t.sizes[i] < 0)
      return invalid(
          formatv("{0}: sizes {1} must be >= 0", name, sizesText(t)));
  for (int32_t i = 0; i < rank; ++i)
    if (t.strides[i] < 0)
      return invalid(formatv("{0}: strides {1} must be >= 0", name,
                             listText(t.strides, rank)));
  if (!t.data && !isEmpty(t))
    return invalid(name + ": data pointer is null");
  return Status::success();
}

/// Unit stride on D (the last dimension; for `vt`, on Nk: FP8 V^T
/// storage), the other strides multiples of 16 bytes, 16-byte aligned data
/// (docs/ir.md). For q, k, v, o of rank 4, or rank 3 in a varlen call.
Status checkLayout(const attn_tensor &t, StringRef name, bool vt) {
  int unitDim = vt ? 2 : t.rank - 1;
  if (t.sizes[unitDim] > 1 && t.strides[unitDim] != 1)
    return invalid(
        vt ? formatv("{0}: stride along Nk must be 1 (FP8 V is stored as "
                     "V^T: a [B, Hkv, D, Nk] buffer viewed as [B, Hkv, Nk, "
                     "D]), got {1}",
                     name, t.strides[2])
           : formatv("{0}: stride along D must be 1, got {1}", name,
                     t.strides[unitDim]));
  int64_t multiple = 16 / static_cast<int64_t>(elementBytes(dtypeOf(t)));
  for (int i = 0; i < t.rank; ++i)
    if (i != unitDim && t.sizes[i] > 1 && t.strides[i] % multiple != 0)
      return invalid(formatv("{0}: stride[{1}] = {2} must be a multiple of {3} "
                             "elements (16 bytes)",
                             name, i, t.strides[i], multiple));
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return invalid(formatv("{0}: data pointer {1} is not 16-byte aligned", name,
                           pointerText(t.data)));
  return Status::success();
}

/// Bytes from the first element of a view to the end of its last one (0 for
/// an empty view). False when that overflows.
bool viewBytes(const attn_tensor &t, uint64_t &bytes) {
  bytes = 0;
  if (isEmpty(t))
    return true;
  uint64_t last = 0;
  for (int32_t i = 0; i < t.rank; ++i) {
    uint64_t term;
    if (__builtin_mul_overflow(static_cast<uint64_t>(t.sizes[i] - 1),
                               static_cast<uint64_t>(t.strides[i]), &term) ||
        __builtin_add_overflow(last, term, &last))
      return false;
  }
  return !__builtin_add_overflow(last, 1, &last) &&
         !__builtin_mul_overflow(last, elementBytes(dtypeOf(t)), &bytes) &&
         bytes <= static_cast<uint64_t>(INT64_MAX);
}

/// Row-major with no gaps; strides of unit dimensions do not matter.
bool isContiguous(const attn_tensor &t) {
  if (isEmpty(t))
    return true;
  int64_t expected = 1;
  for (int32_t i = t.rank - 1; i >= 0; --i) {
    if (t.sizes[i] != 1 && t.strides[i] != expected)
      return false;
    if (__builtin_mul_overflow(expected, t.sizes[i], &expected))
      return false;
  }
  return true;
}

/// Equal sizes over a's rank (a caller may leave anything past it).
bool sameSizes(const attn_tensor &a, const attn_tensor &b) {
  return a.rank == b.rank && std::equal(a.sizes, a.sizes + a.rank, b.sizes);
}

/// f32 of sizes `expected` (`dims` names them: [B, Hq, Nq], or [Hq,
/// total_q] in a varlen call), any strides, 4-byte aligned.
Status checkLse(const attn_tensor &lse, llvm::ArrayRef<int64_t> expected,
                StringRef dims) {
  auto rank = static_cast<int32_t>(expected.size());
  if (!isGiven(lse)) // the backward's input
    return invalid(formatv("lse is required: f32 {0} = {1}, got a "
                           "zero-initialized tensor (rank 0, data NULL)",
                           dims, listText(expected.data(), rank)));
  if (dtypeOf(lse) != ATTN_DTYPE_F32)
    return invalid("lse: dtype must be f32, got " + dtypeText(dtypeOf(lse)));
  if (Status s = checkShape(lse, "lse", rank, dims); !s.ok())
    return s;
  if (!std::equal(expected.begin(), expected.end(), lse.sizes))
    return invalid(formatv("lse: sizes must be {0} = {1}, got {2}", dims,
                           listText(expected.data(), rank), sizesText(lse)));
  if (reinterpret_cast<uintptr_t>(lse.data) % 4 != 0)
    return invalid(formatv("lse: data pointer {0} is not 4-byte aligned",
                           pointerText(lse.data)));
  return Status::success();
}

bool isGiven(const attn_tensor &t) { return t.rank != 0 || t.data; }

/// FP8 calls: f32 [B, Hkv] descales, any strides; other calls: none.

} // namespace attn::runtime

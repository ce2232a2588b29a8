//===- Bundle.cpp - bundle loading, call checks, dispatch and launch -----===//

#include "Bundle.h"
#include "BundleFiles.h"
#include "CallChecks.h"
#include "KernelMatch.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

using namespace attn::runtime;
using attn::bundle::GridDim;
using attn::bundle::KernelEntry;
using attn::bundle::Operand;
using attn::bundle::Param;
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
         : dtype == ATTN_DTYPE_E4M3                          ? 1
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

/// The operands a call passes: q, k, v, o, lse if requested, the descales
/// if FP8, the block table if paged, the cache lengths if paged and not
/// varlen (cu_seqlens_k gives a varlen call's key counts), cu_seqlens if
/// varlen.
static bool isPresent(const FwdCall &call, Operand op) {
  if (op == Operand::LSE)
    return call.hasLse;
  if (op == Operand::CacheSeqlens)
    return call.paged && !call.varlen;
  if (op == Operand::BlockTable)
    return call.paged;
  if (bundle::isVarlenOperand(op))
    return call.varlen;
  return !bundle::isDescale(op) || call.fp8;
}

static constexpr Operand kAllOperands[] = {
    Operand::Q,        Operand::K,        Operand::V,
    Operand::O,        Operand::LSE,      Operand::QDescale,
    Operand::KDescale, Operand::VDescale, Operand::BlockTable,
    Operand::CacheSeqlens, Operand::CuSeqlensQ, Operand::CuSeqlensK};
// Every tensor operand of an attn_fwd call (max_seqlen_q/k are scalars; do,
// dq, dk and dv are the backward's).
static_assert(std::size(kAllOperands) + 6 == bundle::kNumOperands);

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
static Status checkDescales(const attn_fwd_args &args, bool fp8) {
  const std::pair<StringRef, const attn_tensor *> descales[] = {
      {"q_descale", &args.q_descale},
      {"k_descale", &args.k_descale},
      {"v_descale", &args.v_descale}};
  int64_t expected[2] = {args.q.sizes[0], args.k.sizes[1]};
  for (const auto &[name, t] : descales) {
    if (!fp8) {
      if (isGiven(*t))
        return invalid(formatv("{0}: only FP8 (e4m3) calls take descales; a "
                               "{1} call leaves it zero-initialized (rank 0, "
                               "data NULL), got rank {2} and data {3}",
                               name, dtypeText(dtypeOf(args.q)), t->rank,
                               pointerText(t->data)));
      continue;
    }
    if (!isGiven(*t))
      return invalid(formatv("{0}: an FP8 (e4m3) call needs it: f32 [B, "
                             "Hkv] = {1}",
                             name, listText(expected, 2)));
    if (dtypeOf(*t) != ATTN_DTYPE_F32)
      return invalid(name + ": dtype must be f32, got " +
                     dtypeText(dtypeOf(*t)));
    if (Status s = checkShape(*t, name, 2, "[B, Hkv]"); !s.ok())
      return s;
    if (!std::equal(t->sizes, t->sizes + 2, expected))
      return invalid(formatv("{0}: sizes must be [B, Hkv] = {1}, got {2}",
                             name, listText(expected, 2), sizesText(*t)));
    if (reinterpret_cast<uintptr_t>(t->data) % 4 != 0)
      return invalid(formatv("{0}: data pointer {1} is not 4-byte aligned",
                             name, pointerText(t->data)));
  }
  return Status::success();
}

/// A paged call: block_table given (data or rank). cache_seqlens must come
/// with it, and neither without the other.
static Status checkPagedPresence(const attn_fwd_args &args, bool &paged) {
  paged = isGiven(args.block_table);
  bool lengths = isGiven(args.cache_seqlens);
  if (paged && !lengths)
    return invalid(formatv("cache_seqlens: a paged call (block_table given) "
                           "needs it: i32 [B] = [{0}], each sequence's "
                           "number of cached keys",
                           args.q.sizes[0]));
  if (lengths && !paged)
    return invalid("block_table: cache_seqlens is given but block_table is "
                   "not; a paged call passes both (i32 [B, max_pages] and "
                   "i32 [B]), a contiguous one neither (zero-initialized)");
  if (paged && dtypeOf(args.q) == ATTN_DTYPE_E4M3)
    return invalid("block_table: FP8 (e4m3) calls take no paged K/V cache");
  return Status::success();
}

/// An i32 table of a paged call: rank, sizes `expected`, 4-byte aligned,
/// any strides.
static Status checkI32(const attn_tensor &t, StringRef name,
                       llvm::ArrayRef<int64_t> expected, StringRef dims) {
  if (dtypeOf(t) != ATTN_DTYPE_I32)
    return invalid(name + ": dtype must be i32, got " + dtypeText(dtypeOf(t)));
  auto rank = static_cast<int32_t>(expected.size());
  if (Status s = checkShape(t, name, rank, dims); !s.ok())
    return s;
  if (!std::equal(expected.begin(), expected.end(), t.sizes))
    return invalid(formatv("{0}: sizes must be {1} = {2}, got {3}", name, dims,
                           listText(expected.data(), rank), sizesText(t)));
  if (reinterpret_cast<uintptr_t>(t.data) % 4 != 0)
    return invalid(formatv("{0}: data pointer {1} is not 4-byte aligned", name,
                           pointerText(t.data)));
  return Status::success();
}

/// Paged K/V caches (batched or varlen): k [num_pages, page_size, Hkv, D]
/// with q's D `d`, page_size >= 1 (v = k in size: checked by the caller).
static Status checkCaches(const attn_fwd_args &args, int64_t d) {
  const attn_tensor &k = args.k;
  if (k.sizes[3] != d)
    return invalid(formatv("k: sizes {0} ([num_pages, page_size, Hkv, D]) "
                           "must have q's D = {1}",
                           sizesText(k), d));
  if (k.sizes[1] < 1)
    return invalid(formatv("k: page_size (dim 1 of [num_pages, page_size, "
                           "Hkv, D] = {0}) must be >= 1",
                           sizesText(k)));
  return Status::success();
}

/// A paged call's block table (batched or varlen): i32 [B, max_pages] for
/// the call's B sequences, a capacity max_pages * page_size that fits 64
/// bits.
static Status checkBlockTable(const attn_fwd_args &args, int64_t b) {
  // Only B is fixed: max_pages is the table's own.
  int64_t maxPages = args.block_table.sizes[1];
  const int64_t table[2] = {b, maxPages};
  if (Status s = checkI32(args.block_table, "block_table", table,
                          "[B, max_pages]");
      !s.ok())
    return s;
  int64_t capacity;
  if (__builtin_mul_overflow(maxPages, args.k.sizes[1], &capacity))
    return invalid(formatv("block_table: max_pages * page_size = {0} * {1} "
                           "overflows 64 bits",
                           maxPages, args.k.sizes[1]));
  return Status::success();
}

/// Batched paged K/V: the caches, block_table i32 [B, max_pages] and
/// cache_seqlens i32 [B] with q's B.
static Status checkPagedSizes(const attn_fwd_args &args) {
  int64_t b = args.q.sizes[0];
  if (Status s = checkCaches(args, args.q.sizes[3]); !s.ok())
    return s;
  if (Status s = checkBlockTable(args, b); !s.ok())
    return s;
  return checkI32(args.cache_seqlens, "cache_seqlens", {b}, "[B]");
}

/// Contiguous K/V: k, v [B, Hkv, Nk, D] with q's B and D.
static Status checkContiguousSizes(const attn_fwd_args &args) {
  const attn_tensor &q = args.q, &k = args.k;
  if (k.sizes[0] != q.sizes[0] || k.sizes[3] != q.sizes[3])
    return invalid(formatv("k: sizes {0} must have q's B = {1} and D = {2}",
                           sizesText(k), q.sizes[0], q.sizes[3]));
  return Status::success();
}

/// The rank and dimension names an operand must have.
struct OperandForm {
  int32_t rank;
  StringRef dims;
};

/// K and V of a paged call; the reason matters where the caller meant a
/// contiguous (or varlen packed) K/V and passed a block table too.
static constexpr StringRef kPagedCacheDims =
    "[num_pages, page_size, Hkv, D]: paged K/V caches, since block_table is "
    "given";

/// q, k, v and o with their names.
static std::array<std::pair<StringRef, const attn_tensor *>, 4>
qkvo(const attn_fwd_args &args) {
  return {{{"q", &args.q}, {"k", &args.k}, {"v", &args.v}, {"o", &args.o}}};
}

/// q, k, v, o: q and o of form `qo`, k and v of form `kv`, one dtype (an
/// e4m3 call's o bf16), k = v and o = q in size.
static Status checkQKVO(const attn_fwd_args &args, OperandForm qo,
                        OperandForm kv, bool fp8) {
  const attn_tensor &q = args.q, &k = args.k, &v = args.v, &o = args.o;
  int dtype = dtypeOf(q);
  for (const auto &[name, t] : qkvo(args)) {
    OperandForm form = t == &k || t == &v ? kv : qo;
    if (Status s = checkShape(*t, name, form.rank, form.dims); !s.ok())
      return s;
    if (fp8 && t == &o && dtypeOf(o) != ATTN_DTYPE_BF16)
      return invalid("o: dtype must be bf16 for an e4m3 call, got " +
                     dtypeText(dtypeOf(o)));
    if (dtypeOf(*t) != dtype && !(fp8 && t == &o))
      return invalid(formatv("{0}: dtype {1} does not match q's {2}", name,
                             dtypeText(dtypeOf(*t)), dtypeText(dtype)));
  }
  if (!sameSizes(v, k))
    return invalid(
        formatv("v: sizes {0} must equal k's {1}", sizesText(v), sizesText(k)));
  if (!sameSizes(o, q))
    return invalid(
        formatv("o: sizes {0} must equal q's {1}", sizesText(o), sizesText(q)));
  return Status::success();
}

/// A varlen call's q, k, v, o: one dtype, q and o [total_q, Hq, D], k and
/// v [total_k, Hkv, D] or, when `paged`, the caches [num_pages, page_size,
/// Hkv, D] of checkCaches; k = v and o = q in size, q's D in k, Hq a
/// multiple of Hkv, D a multiple of 8 in [8, 256], checkLayout's strides.
static Status checkVarlenTensors(const attn_fwd_args &args, bool paged) {
  const attn_tensor &q = args.q, &k = args.k;
  if (Status s = checkQKVO(args, {3, "[total_q, Hq, D]"},
                           paged ? OperandForm{4, kPagedCacheDims}
                                 : OperandForm{3, "[total_k, Hkv, D]"},
                           /*fp8=*/false);
      !s.ok())
    return s;
  int64_t hq = q.sizes[1], hkv = k.sizes[paged ? 2 : 1], d = q.sizes[2];
  if (paged) {
    if (Status s = checkCaches(args, d); !s.ok())
      return s;
  } else if (k.sizes[2] != d) {
    return invalid(formatv("k: sizes {0} ([total_k, Hkv, D]) must have q's "
                           "D = {1}",
                           sizesText(k), d));
  }
  if (Status s = checkHeads(hq, hkv, d); !s.ok())
    return s;
  for (const auto &[name, t] : qkvo(args))
    if (Status s = checkLayout(*t, name); !s.ok())
      return s;
  return Status::success();
}

/// cu_seqlens_q and cu_seqlens_k: i32 [B + 1] of one B >= 0, any stride,
/// 4-byte aligned.
static Status checkCuSeqlens(const attn_fwd_args &args) {
  const attn_tensor &cuQ = args.cu_seqlens_q;
  if (Status s = checkShape(cuQ, "cu_seqlens_q", 1, "[B + 1]"); !s.ok())
    return s;
  if (cuQ.sizes[0] < 1)
    return invalid("cu_seqlens_q: sizes [0] must be [B + 1] with B >= 0 (at "
                   "least the leading 0)");
  if (Status s = checkI32(cuQ, "cu_seqlens_q", {cuQ.sizes[0]}, "[B + 1]");
      !s.ok())
    return s;
  return checkI32(args.cu_seqlens_k, "cu_seqlens_k", {cuQ.sizes[0]},
                  "[B + 1] (cu_seqlens_q's B)");
}

/// A varlen call (cu_seqlens_q given), FlashAttention-2's
/// flash_attn_varlen_func: f16 or bf16 tensors (checkVarlenTensors), lse
/// f32 [Hq, total_q], cu_seqlens (checkCuSeqlens), max_seqlen_q/k >= 0, no
/// descales. With block_table given it reads paged K/V caches through the
/// table (i32 [B, max_pages]); cache_seqlens is never given: sequence b
/// has cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys.
static Status checkVarlenOperands(const attn_fwd_args &args) {
  int dtype = dtypeOf(args.q);
  if (dtype != ATTN_DTYPE_F16 && dtype != ATTN_DTYPE_BF16)
    return invalid("q: dtype must be f16 or bf16 in a varlen call, got " +
                   dtypeText(dtype));
  if (!isGiven(args.cu_seqlens_q) || !isGiven(args.cu_seqlens_k))
    return invalid(isGiven(args.cu_seqlens_q)
                       ? "cu_seqlens_k: a varlen call (cu_seqlens_q given) "
                         "needs it: i32 [B + 1], each sequence's first key"
                       : "cu_seqlens_q: cu_seqlens_k is given but "
                         "cu_seqlens_q is not; a varlen call passes both "
                         "(i32 [B + 1]), a batched one neither "
                         "(zero-initialized)");
  if (isGiven(args.cache_seqlens))
    return invalid("cache_seqlens: a varlen call takes none (zero-initialized): "
                   "sequence b has cu_seqlens_k[b + 1] - cu_seqlens_k[b] "
                   "keys, read through block_table when the K/V caches are "
                   "paged");
  bool paged = isGiven(args.block_table);
  if (Status s = checkVarlenTensors(args, paged); !s.ok())
    return s;
  if (isGiven(args.lse))
    if (Status s = checkLse(args.lse, {args.q.sizes[1], args.q.sizes[0]},
                            "[Hq, total_q]");
        !s.ok())
      return s;
  if (Status s = checkCuSeqlens(args); !s.ok())
    return s;
  if (paged)
    if (Status s = checkBlockTable(args, args.cu_seqlens_q.sizes[0] - 1);
        !s.ok())
      return s;
  if (args.max_seqlen_q < 0 || args.max_seqlen_k < 0)
    return invalid(formatv("max_seqlen_q = {0} and max_seqlen_k = {1} must "
                           "be >= 0",
                           args.max_seqlen_q, args.max_seqlen_k));
  return checkDescales(args, /*fp8=*/false);
}

static Status checkOperands(const attn_fwd_args &args) {
  if (isGiven(args.cu_seqlens_q) || isGiven(args.cu_seqlens_k))
    return checkVarlenOperands(args);
  if (args.max_seqlen_q != 0 || args.max_seqlen_k != 0)
    return invalid(formatv("max_seqlen_q = {0}, max_seqlen_k = {1}: only a "
                           "varlen call (cu_seqlens_q given) takes them; a "
                           "batched call leaves them 0",
                           args.max_seqlen_q, args.max_seqlen_k));
  const attn_tensor &q = args.q, &k = args.k;
  int dtype = dtypeOf(q);
  bool fp8 = dtype == ATTN_DTYPE_E4M3;
  if (dtype != ATTN_DTYPE_F16 && dtype != ATTN_DTYPE_BF16 && !fp8)
    return invalid("q: dtype must be f16, bf16 or e4m3, got " +
                   dtypeText(dtype));
  bool paged = false;
  if (Status s = checkPagedPresence(args, paged); !s.ok())
    return s;
  if (Status s = checkQKVO(args, {4, "[B, Hq, Nq, D]"},
                           paged ? OperandForm{4, kPagedCacheDims}
                                 : OperandForm{4, "[B, Hkv, Nk, D]"},
                           fp8);
      !s.ok())
    return s;
  if (Status s = paged ? checkPagedSizes(args) : checkContiguousSizes(args);
      !s.ok())
    return s;
  int64_t hq = q.sizes[1], hkv = k.sizes[paged ? 2 : 1], d = q.sizes[3];
  if (hkv == 0 ? hq != 0 : hq % hkv != 0)
    return invalid(formatv("Hq = {0} is not a multiple of Hkv = {1}", hq, hkv));
  if (fp8 && (d % 16 != 0 || d < 16 || d > 256))
    return invalid(formatv("q: head dim D = {0} must be a multiple of 16 in "
                           "[16, 256] for e4m3",
                           d));
  if (d % 8 != 0 || d < 8 || d > 256)
    return invalid(formatv("q: head dim D = {0} must be a multiple of 8 in "
                           "[8, 256]",
                           d));
  for (const auto &[name, t] : qkvo(args))
    if (Status s = checkLayout(*t, name, fp8 && t == &args.v); !s.ok())
      return s;
  if (isGiven(args.lse))
    if (Status s = checkLse(args.lse, {q.sizes[0], q.sizes[1], q.sizes[2]},
                            "[B, Hq, Nq]");
        !s.ok())
      return s;
  return checkDescales(args, fp8);
}

/// O and LSE: an address per element, and no byte of another operand
/// (other CTAs read the K/V blocks and Q tiles an aliased output would
/// overwrite).
static Status checkOutputsDoNotAlias(const attn_fwd_args &args,
                                     const FwdCall &call) {
  return checkOutputs(args, {Operand::O, Operand::LSE}, kAllOperands,
                      call.extentBytes);
}

/// The call's dispatch lengths. A paged call (batched or varlen) has the
/// caches' page size, pages and Hkv (dim 2), and the capacity max_pages *
/// page_size (checkBlockTable: no overflow). A varlen call's lengths are on
/// the device: B comes from cu_seqlens_q, Nq and Nk are the bounds
/// max_seqlen_q and max_seqlen_k (paged too: the value checks hold every
/// sequence to both bounds). A batched paged call's Nk is its capacity.
static void setLengths(const attn_fwd_args &args, FwdCall &call) {
  if (call.paged) {
    call.pageSize = args.k.sizes[1];
    call.numPages = args.k.sizes[0];
    call.capacity = args.block_table.sizes[1] * call.pageSize;
  }
  int64_t kvHeadsDim = call.paged ? 2 : 1;
  if (call.varlen) {
    call.batch = args.cu_seqlens_q.sizes[0] - 1;
    call.numHeadsQ = args.q.sizes[1];
    call.numHeadsKV = args.k.sizes[kvHeadsDim];
    call.headDim = args.q.sizes[2];
    call.seqLenQ = args.max_seqlen_q;
    call.seqLenK = args.max_seqlen_k;
    return;
  }
  call.batch = args.q.sizes[0];
  call.numHeadsQ = args.q.sizes[1];
  call.numHeadsKV = args.k.sizes[kvHeadsDim];
  call.seqLenQ = args.q.sizes[2];
  call.headDim = args.q.sizes[3];
  call.seqLenK = call.paged ? call.capacity : args.k.sizes[2];
}

Status checkHeads(int64_t hq, int64_t hkv, int64_t d) {
  if (hkv == 0 ? hq != 0 : hq % hkv != 0)
    return invalid(formatv("Hq = {0} is not a multiple of Hkv = {1}", hq, hkv));
  if (d % 8 != 0 || d < 8 || d > 256)
    return invalid(formatv("q: head dim D = {0} must be a multiple of 8 in "
                           "[8, 256]",
                           d));
  return Status::success();
}

Status checkScale(float scale) {
  if (!std::isfinite(scale) || scale < 0)
    return invalid(formatv("softmax_scale must be positive and finite (or 0 "
                           "for 1/sqrt(D)), got {0}",
                           scaleText(scale)));
  return Status::success();
}

/// attn_fwd_args::quantize: ATTN_QUANTIZE_NONE, or ATTN_QUANTIZE_FP8 for a
/// batched bf16 call on contiguous K/V.
static Status checkQuantize(const attn_fwd_args &args) {
  if (args.quantize == ATTN_QUANTIZE_NONE)
    return Status::success();
  if (args.quantize != ATTN_QUANTIZE_FP8)
    return invalid(formatv("quantize = {0}: expected ATTN_QUANTIZE_NONE (0) "
                           "or ATTN_QUANTIZE_FP8 (1)",
                           args.quantize));
  if (dtypeOf(args.q) != ATTN_DTYPE_BF16)
    return invalid("quantize = ATTN_QUANTIZE_FP8 takes bf16 q, k, v (the "
                   "kernel quantizes them), got q " +
                   dtypeText(dtypeOf(args.q)));
  if (isGiven(args.block_table) || isGiven(args.cu_seqlens_q))
    return invalid("quantize = ATTN_QUANTIZE_FP8 takes batched calls on "
                   "contiguous K/V (no block_table, no cu_seqlens_q)");
  return Status::success();
}

Status validateFwd(const attn_fwd_args &args, FwdCall &call) {
  if (Status s = checkOperands(args); !s.ok())
    return s;
  if (Status s = checkQuantize(args); !s.ok())
    return s;
  if (Status s = checkScale(args.softmax_scale); !s.ok())
    return s;
  call.hasLse = isGiven(args.lse);
  call.fp8 = dtypeOf(args.q) == ATTN_DTYPE_E4M3;
  call.paged = isGiven(args.block_table);
  call.varlen = isGiven(args.cu_seqlens_q);
  call.quantizeFp8 = args.quantize == ATTN_QUANTIZE_FP8;
  call.contiguous = true;
  for (Operand op : kAllOperands) {
    if (!isPresent(call, op))
      continue;
    const attn_tensor &t = operandTensor(args, op);
    uint64_t &bytes = call.extentBytes[static_cast<size_t>(op)];
    if (!viewBytes(t, bytes))
      return invalid(bundle::operandName(op) +
                     ": the view spans more than 2^63 bytes");
    // Any strides: no layout key of their own.
    if (!bundle::isDescale(op) && !bundle::isPagedOperand(op) &&
        !bundle::isVarlenOperand(op))
      call.contiguous &= isContiguous(t);
  }
  if (Status s = checkOutputsDoNotAlias(args, call); !s.ok())
    return s;
  call.dtype = dtypeName(dtypeOf(args.q));
  call.causal = args.causal != 0;
  setLengths(args, call);
  float scale = args.softmax_scale;
  call.scale = scale != 0 ? scale : 1.0 / std::sqrt(double(call.headDim));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

bool sameScale(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

static bool matches(const KernelEntry &kernel, const FwdCall &call) {
  return mismatches(kernel, call) == 0;
}

/// More static lengths first, then contiguous over strided, then the
/// tensor-core path over the FMA one.
static bool moreSpecialized(const KernelEntry &a, const KernelEntry &b) {
  int sa = a.key.numStaticLengths(), sb = b.key.numStaticLengths();
  if (sa != sb)
    return sa > sb;
  if (a.key.strided != b.key.strided)
    return !a.key.strided;
  return a.key.path == "wgmma" && b.key.path != "wgmma";
}

/// constant * prod ceil(size / divisor), saturated at INT64_MAX (checkGrid
/// then refuses it).
int64_t gridDim(const GridDim &dim, const CallOperands &args) {
  int64_t extent = dim.constant;
  for (const bundle::GridTerm &t : dim.terms) {
    int64_t size = bundle::isScalarOperand(t.operand)
                       ? args.scalar(t.operand)
                       : args.tensor(t.operand).sizes[t.dim];
    size = std::max<int64_t>(size + t.offset, 0); // offset: 0 or -1
    auto factor = static_cast<int64_t>(llvm::divideCeil(size, t.divisor));
    if (__builtin_mul_overflow(extent, factor, &extent))
      return INT64_MAX;
  }
  return extent;
}

std::array<int64_t, 3> gridOf(const bundle::KernelLaunch &kernel,
                              const CallOperands &args) {
  return {gridDim(kernel.grid[0], args), gridDim(kernel.grid[1], args),
          gridDim(kernel.grid[2], args)};
}

Status checkGrid(const bundle::KernelLaunch &kernel,
                 const CallOperands &args) {
  std::array<int64_t, 3> grid = gridOf(kernel, args);
  if (grid[0] < 1 || grid[0] > INT32_MAX || grid[1] < 1 || grid[1] > 65535 ||
      grid[2] < 1 || grid[2] > 65535)
    return invalid(formatv("kernel {0}: grid {1} for this call is outside the "
                           "CUDA limits (x in [1, 2^31-1], y and z in [1, "
                           "65535])",
                           kernel.name, listText(grid.data(), 3)));
  return Status::success();
}

/// SMs of `device`; 0 where the driver cannot tell.
static int deviceSMs(const DriverApi &driver, CUdevice device) {
  int sms = 0;
  if (!driver.deviceGetAttribute ||
      driver.deviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                device) != CUDA_SUCCESS)
    return 0;
  return std::max(sms, 0);
}

/// SMs of the current context's device; 0 without a driver or context.
static int currentDeviceSMs() {
  std::string error;
  const DriverApi *driver = getDriver(error);
  CUcontext context = nullptr;
  CUdevice device = 0;
  if (!driver || driver->ctxGetCurrent(&context) != CUDA_SUCCESS || !context ||
      driver->ctxGetDevice(&device) != CUDA_SUCCESS)
    return 0;
  return deviceSMs(*driver, device);
}

/// CTAs of `launch` an SM holds at once, by dynamic shared memory (228 KiB
/// per SM, 1 KiB of it reserved per CTA) and threads (2048 per SM).
static int64_t ctasPerSM(const bundle::KernelLaunch &launch) {
  int64_t threads =
      std::max<int64_t>(1, launch.threads[0] * launch.threads[1] *
                               launch.threads[2]);
  int64_t bySmem = launch.dynamicSharedBytes > 0
                       ? 228 * 1024 / (launch.dynamicSharedBytes + 1024)
                       : 32;
  return std::max<int64_t>(1, std::min({bySmem, 2048 / threads, int64_t(32)}));
}

/// Split-KV's split count per call, FlashAttention-2's num_splits
/// heuristic: a bundle built with several split counts of one kernel
/// (attn-compile --variant="splits=S") holds them as variants. For each
/// count (its first variant), the partial launch fills waves = CTAs / (SMs
/// * CTAs per SM) of the device, with efficiency waves / ceil(waves); the
/// fewest splits within 85% of the best efficiency win, since every split
/// adds a workspace round trip and combine work. Counts above the K/V
/// blocks (splits left empty) are skipped. The lengths are on the device
/// for paged and varlen calls, so the blocks count from FwdCall::seqLenK,
/// as FlashAttention does: a batched paged call's capacity max_pages *
/// page_size, a varlen call's (paged or not) max_seqlen_k; a varlen call's
/// partial grid is in its terms too, ceil(max_seqlen_q / BLOCK_M) * S by
/// heads by B sequences. A tuned choice (attn_tune) wins over this.
size_t Bundle::chooseSplits(const FwdCall &call, const attn_fwd_args &args,
                            size_t best) const {
  std::map<int64_t, size_t> bySplits; // split count -> first variant
  for (size_t v : variantsOf(call, best))
    bySplits.try_emplace(kernel(v).key.splits, v);
  if (bySplits.size() < 2)
    return best;
  int sms = currentDeviceSMs();
  if (sms <= 0)
    return best;
  int64_t blocks =
      std::max<int64_t>(1, llvm::divideCeil(call.seqLenK,
                                            std::max<int64_t>(
                                                1, kernel(best).key.blockN)));
  std::vector<std::pair<double, size_t>> efficiency; // by split count
  double top = 0;
  for (auto [splits, v] : bySplits) {
    if (splits > blocks && splits != bySplits.begin()->first)
      continue;
    std::array<int64_t, 3> grid = gridOf(kernel(v).launch(0), args);
    double waves = double(grid[0]) * double(grid[1]) * double(grid[2]) /
                   double(sms * ctasPerSM(kernel(v).launch(0)));
    double e = waves / std::ceil(waves);
    efficiency.emplace_back(e, v);
    top = std::max(top, e);
  }
  for (auto [e, v] : efficiency)
    if (e >= 0.85 * top)
      return v;
  return best;
}

Status Bundle::pickKernel(const FwdCall &call, const attn_fwd_args &args,
                          int64_t &index) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < numKernels(); ++i)
    if (matches(kernel(i), call) &&
        (!best || moreSpecialized(kernel(i), kernel(*best))))
      best = i;
  if (!best) {
    std::string message = formatv("no kernel in bundle {0} matches the call "
                                  "({1}); ",
                                  dir, call.describe())
                              .str();
    if (numKernels() == 0)
      message += "it has no kernels";
    else
      message += formatv("its {0} kernel(s): ", numKernels()).str();
    for (size_t i = 0; i < std::min<size_t>(numKernels(), 4); ++i)
      message += (i ? "; " : "") + bundle::describeKey(kernel(i));
    if (numKernels() > 4)
      message += formatv("; and {0} more", numKernels() - 4).str();
    message += closestKernel(manifest.kernels, call);
    return makeError(ATTN_ERROR_NO_MATCHING_KERNEL, message);
  }
  // Most bundles have no choices: no shape string, no variant scan per call.
  bool tuned = false;
  if (!tuning.empty())
    if (auto choice = tuning.lookup(call.describe()))
      for (size_t v : variantsOf(call, *best))
        if (kernel(v).name == choice->kernel) {
          best = v;
          tuned = true;
        }
  if (splitKV && !tuned && !call.empty())
    best = chooseSplits(call, args, *best);
  if (!call.empty())
    for (size_t i = 0; i < kernel(*best).numLaunches(); ++i)
      if (Status s = checkGrid(kernel(*best).launch(i), args); !s.ok())
        return s;
  index = static_cast<int64_t>(*best);
  return Status::success();
}

std::vector<size_t> Bundle::variantsOf(const FwdCall &call, size_t best) const {
  std::vector<size_t> variants;
  for (size_t i = 0; i < numKernels(); ++i)
    if (i == best || (matches(kernel(i), call) &&
                      !moreSpecialized(kernel(best), kernel(i)) &&
                      !moreSpecialized(kernel(i), kernel(best))))
      variants.push_back(i);
  return variants;
}

Status Bundle::select(const attn_fwd_args &args, int64_t &index) const {
  FwdCall call;
  if (Status s = validateFwd(args, call); !s.ok())
    return s;
  return pickKernel(call, args, index);
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// Driver state of one kernel. `kernel` is published once loaded, so
/// launches after the first take no lock.
struct Bundle::Loaded {
  std::mutex mutex;
  std::atomic<CUkernel> kernel{nullptr};
  CUlibrary library = nullptr;
  const DriverApi *driver = nullptr; // the driver that loaded `library`
  std::string error;                 // a failed load, reported every time
  /// Devices (ordinals below 64) whose dynamic shared memory limit is set.
  std::atomic<uint64_t> sharedLimitSet{0};
};

Bundle::Bundle() = default;

Bundle::~Bundle() {
  for (const auto &launches : loaded)
    for (const std::unique_ptr<Loaded> &l : launches)
      if (l->library)
        l->driver->libraryUnload(l->library);
}

static Status notFound(const llvm::Twine &message) {
  return makeError(ATTN_ERROR_BUNDLE_NOT_FOUND, message);
}

/// Reads `path` as a file of `kind` (BundleFiles.h): a missing or
/// unreadable file is BUNDLE_NOT_FOUND, one that cannot be a file of the
/// bundle (not regular, too large) BUNDLE_CORRUPT.
static Status readFile(StringRef path, bundle::BundleFile kind,
                       std::unique_ptr<llvm::MemoryBuffer> &out) {
  if (auto error = bundle::readBundleFile(path, kind, out))
    return makeError(error->kind == bundle::FileError::NotAFile
                         ? ATTN_ERROR_BUNDLE_CORRUPT
                         : ATTN_ERROR_BUNDLE_NOT_FOUND,
                     error->message);
  return Status::success();
}

/// Reads the cubin of `launch` unless an earlier launch named it (kernels
/// may share one): an ELF file whose SHA-256 is the manifest's. A cubin
/// that is not the one the manifest was written with (a rebuilt or mixed
/// bundle) could launch the wrong kernel.
static Status
readCubin(StringRef dir, const bundle::KernelLaunch &launch,
          llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> &cubins,
          llvm::StringMap<std::string> &hashes) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, launch.cubin);
  if (!cubins.count(launch.cubin)) {
    std::unique_ptr<llvm::MemoryBuffer> cubin;
    if (Status s = readFile(path, bundle::BundleFile::Cubin, cubin); !s.ok())
      return s;
    // An ELF64 header alone is 64 bytes.
    if (cubin->getBufferSize() < 64 || !cubin->getBuffer().starts_with("\x7f"
                                                                       "ELF"))
      return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                       formatv("cubin {0} of kernel {1} is not an ELF file",
                               path, launch.name));
    hashes[launch.cubin] = bundle::sha256Hex(cubin->getBuffer());
    cubins[launch.cubin] = std::move(cubin);
  }
  if (hashes[launch.cubin] != launch.cubinSha256)
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     formatv("cubin {0} of kernel {1} does not match the "
                             "SHA-256 in {2}/manifest.json",
                             launch.cubin, launch.name, dir));
  return Status::success();
}

Status Bundle::load(StringRef dir, std::unique_ptr<Bundle> &out) {
  if (!llvm::sys::fs::exists(dir))
    return notFound("bundle directory " + dir + " not found");
  if (!llvm::sys::fs::is_directory(dir))
    return notFound("bundle " + dir + " is not a directory");
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::unique_ptr<llvm::MemoryBuffer> text;
  if (Status s = readFile(path, bundle::BundleFile::Manifest, text); !s.ok())
    return s;
  llvm::Expected<bundle::Manifest> manifest =
      bundle::parseManifest(text->getBuffer());
  if (!manifest)
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     "bundle " + dir + ": " +
                         llvm::toString(manifest.takeError()));
  std::unique_ptr<Bundle> bundle(new Bundle());
  bundle->dir = dir.str();
  bundle->manifest = std::move(*manifest);
  llvm::StringMap<std::string> hashes; // of each cubin, hashed once
  for (const KernelEntry &entry : bundle->manifest.kernels) {
    bundle->infos.push_back(bundle::describe(entry));
    bundle->loaded.emplace_back();
    for (size_t i = 0; i < entry.numLaunches(); ++i) {
      bundle->loaded.back().push_back(std::make_unique<Loaded>());
      if (Status s = readCubin(dir, entry.launch(i), bundle->cubins, hashes);
          !s.ok())
        return s;
    }
  }
  llvm::StringSet<> names;
  for (const KernelEntry &kernel : bundle->manifest.kernels) {
    names.insert(kernel.name);
    bundle->splitKV |= kernel.key.splits > 1;
  }
  if (Status s = bundle->tuning.load(dir, names); !s.ok())
    return s;
  out = std::move(bundle);
  return Status::success();
}

Status Bundle::ensureLoaded(const DriverApi &driver, size_t index,
                            size_t which, CUdevice device, CUkernel &handle) {
  Loaded &l = *loaded[index][which];
  const bundle::KernelLaunch &entry = kernel(index).launch(which);
  bool raiseLimit = entry.dynamicSharedBytes > 48 * 1024;
  uint64_t bit = device >= 0 && device < 64 ? uint64_t(1) << device : 0;
  handle = l.kernel.load(std::memory_order_acquire);
  if (handle && (!raiseLimit || (l.sharedLimitSet.load() & bit)))
    return Status::success();

  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.kernel.load() && l.error.empty()) {
    const llvm::MemoryBuffer &cubin = *cubins.find(entry.cubin)->second;
    CUlibrary library = nullptr;
    CUkernel loadedKernel = nullptr;
    CUresult result =
        driver.libraryLoadData(&library, cubin.getBufferStart(), nullptr,
                               nullptr, 0, nullptr, nullptr, 0);
    if (result != CUDA_SUCCESS) {
      l.error = formatCudaError(driver, result, "cuLibraryLoadData");
    } else if ((result = driver.libraryGetKernel(&loadedKernel, library,
                                                 entry.name.c_str())) !=
               CUDA_SUCCESS) {
      l.error = formatCudaError(driver, result, "cuLibraryGetKernel");
      driver.libraryUnload(library);
    } else {
      l.library = library;
      l.driver = &driver;
      l.kernel.store(loadedKernel, std::memory_order_release);
    }
    if (!l.error.empty())
      l.error = formatv("cannot load kernel {0} from {1}: {2}", entry.name,
                        entry.cubin, l.error)
                    .str();
  }
  if (!l.error.empty())
    return makeError(ATTN_ERROR_CUDA, l.error);
  handle = l.kernel.load();
  if (raiseLimit && !(l.sharedLimitSet.load() & bit)) {
    CUresult result = driver.kernelSetAttribute(
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(entry.dynamicSharedBytes), handle, device);
    if (result != CUDA_SUCCESS)
      return makeError(
          ATTN_ERROR_CUDA,
          formatv("kernel {0} needs {1} B of dynamic shared "
                  "memory: {2}",
                  entry.name, entry.dynamicSharedBytes,
                  formatCudaError(driver, result, "cuKernelSetAttribute")));
    l.sharedLimitSet.fetch_or(bit);
  }
  return Status::success();
}

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

/// A CUtensorMap as the kernel takes it (by value, 64-byte aligned).
struct alignas(64) TensorMap {
  CUtensorMap map;
};

/// Encodes `t` as the rank-4 tensor (D, N, H, B), or (N, D, H, B) for a
/// transposed map (FP8 V^T storage), or (D, H, N, B) for a heads_inner map
/// (GQA packing; a paged [num_pages, page_size, Hkv, D] cache comes out as
/// (D, page_size, Hkv, num_pages)), in boxes of `param.box` (128-byte
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
  const int order[4] = {
      param.transposed ? 2 : 3,
      param.transposed ? 3 : param.headsInner ? 1 : 2,
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
  CUtensorMapDataType type = dtypeOf(t) == ATTN_DTYPE_BF16
                                 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                             : dtypeOf(t) == ATTN_DTYPE_E4M3
                                 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CUresult r = driver.tensorMapEncodeTiled(
      &out.map, type, 4, t.data, dims, strides, box, ones,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
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

static CUtensorMapSwizzle swizzleOf(int64_t bytes) {
  return bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}

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
                        size_t which, CUkernel handle,
                        const CallOperands &args, CUdevice device,
                        CUstream stream, LaunchParams &params,
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
  for (Operand op : kAllOperands) {
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
      overflow |= __builtin_mul_overflow(bytes, uint64_t(shape.back()),
                                         &bytes) ||
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

Status Bundle::launch(const attn_fwd_args &args, CUstream stream) {
  FwdCall call;
  const DriverApi *driver = nullptr;
  CUdevice device = 0;
  int64_t index = 0;
  if (Status s = prepare(args, call, index, driver, device);
      !s.ok() || call.empty())
    return s;
  if (checkValues)
    if (Status s = checkCallValues(*driver, args, call, stream); !s.ok())
      return s;
  if (autoTune && variantsOf(call, index).size() > 1 &&
      !tuning.lookup(call.describe()))
    return tuneVariants(call, args, stream, *driver, device, index);
  return launchIndex(*driver, device, index, args, stream);
}

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
  if (Status s = prepare(args, call, index, driver, device);
      !s.ok() || call.empty())
    return s;
  if (checkValues)
    if (Status s = checkCallValues(*driver, args, call, stream); !s.ok())
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

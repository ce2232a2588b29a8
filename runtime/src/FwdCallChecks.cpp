//===- FwdCallChecks.cpp - host checks of an attn_fwd call ----------------===//

#include "Bundle.h"
#include "CallChecks.h"
#include "KernelMatch.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace attn::runtime;
using attn::bundle::Operand;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

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
      return invalid(formatv("{0}: sizes must be [B, Hkv] = {1}, got {2}", name,
                             listText(expected, 2), sizesText(*t)));
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
  if (Status s =
          checkI32(args.block_table, "block_table", table, "[B, max_pages]");
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
    return invalid(
        "cache_seqlens: a varlen call takes none (zero-initialized): "
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
  return checkOutputs(args, {Operand::O, Operand::LSE}, kFwdTensorOperands,
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
  for (Operand op : kFwdTensorOperands) {
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

} // namespace attn::runtime

//===- KernelMatch.cpp - which kernels can take a call, and why not -------===//

#include "KernelMatch.h"
#include "CallChecks.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

using attn::bundle::KernelEntry;
using llvm::formatv;

namespace attn::runtime {

namespace {

/// The key fields, in the order messages list them.
enum Field : unsigned {
  Dtype,
  HeadDim,
  Causal,
  Lse,
  Scale,
  Batch,
  NumHeadsQ,
  NumHeadsKV,
  SeqLenQ,
  SeqLenK,
  Layout,
  PageSize,
  Varlen,
  Quantize,
  NumFields
};

/// What dispatch compares of a forward or backward call.
struct CallKey {
  bool backward = false;
  std::string dtype;
  int64_t headDim = 0;
  bool causal = false, hasLse = false;
  double scale = 0;
  int64_t lengths[5] = {}; // B, Hq, Hkv, Nq, Nk
  bool contiguous = false;
  int64_t pageSize = 0;
  bool varlen = false, quantizeFp8 = false;
};

CallKey keyOf(const FwdCall &c) {
  return {false,
          c.dtype,
          c.headDim,
          c.causal,
          c.hasLse,
          c.scale,
          {c.batch, c.numHeadsQ, c.numHeadsKV, c.seqLenQ, c.seqLenK},
          c.contiguous,
          c.pageSize,
          c.varlen,
          c.quantizeFp8};
}

/// A backward call passes the forward's LSE; its kernels have no page
/// size, varlen or quantization.
CallKey keyOf(const BwdCall &c) {
  return {true,
          c.dtype,
          c.headDim,
          c.causal,
          true,
          c.scale,
          {c.batch, c.numHeadsQ, c.numHeadsKV, c.seqLenQ, c.seqLenK},
          c.contiguous};
}

std::array<std::optional<int64_t>, 5> lengthsOf(const bundle::FwdKey &k) {
  return {k.batch, k.numHeadsQ, k.numHeadsKV, k.seqLenQ, k.seqLenK};
}

/// The fields in which `kernel` cannot take `call`, of a kernel of the
/// call's kind.
Mismatch compare(const KernelEntry &kernel, const CallKey &call) {
  const bundle::FwdKey &k = kernel.key;
  Mismatch m = 0;
  auto differ = [&](bool different, Field f) {
    if (different)
      m |= Mismatch(1) << f;
  };
  differ(k.dtype != call.dtype, Dtype);
  differ(k.headDim != call.headDim, HeadDim);
  differ(k.causal != call.causal, Causal);
  differ(k.hasLse != call.hasLse, Lse);
  differ(!sameScale(k.scale, call.scale), Scale);
  auto lengths = lengthsOf(k);
  for (unsigned i = 0; i < 5; ++i)
    differ(lengths[i] && *lengths[i] != call.lengths[i], Field(Batch + i));
  differ(!k.strided && !call.contiguous, Layout);
  differ(k.pageSize != call.pageSize, PageSize);
  differ(k.varlen != call.varlen, Varlen);
  differ(k.quantizeFp8.has_value() != call.quantizeFp8, Quantize);
  return m;
}

bool sameKind(const KernelEntry &kernel, const CallKey &call) {
  return call.backward ? kernel.isBackward() : kernel.kind == "fwd";
}

const char *boolText(bool b) { return b ? "true" : "false"; }

std::string lengthText(const std::optional<int64_t> &len) {
  return len ? std::to_string(*len) : std::string("dynamic");
}

/// A page size as the call and the kernel have it: 0 is contiguous K/V.
std::string pageText(int64_t pageSize, bool call) {
  if (pageSize == 0)
    return call ? "0: contiguous K/V, no block_table" : "0: contiguous K/V";
  return call
             ? formatv("{0}: block_table given, so the call is paged", pageSize)
                   .str()
             : std::to_string(pageSize);
}

/// "head_dim (call 96, kernel 128)".
std::string fieldText(Field f, const KernelEntry &kernel, const CallKey &c) {
  static const char *const lengthNames[] = {
      "batch", "num_heads_q", "num_heads_kv", "seqlen_q", "seqlen_k"};
  const bundle::FwdKey &k = kernel.key;
  auto both = [](const char *name, const llvm::Twine &call,
                 const llvm::Twine &kern) {
    return (llvm::Twine(name) + " (call " + call + ", kernel " + kern + ")")
        .str();
  };
  switch (f) {
  case Dtype:
    return both("dtype", c.dtype, k.dtype);
  case HeadDim:
    return both("head_dim", llvm::Twine(c.headDim), llvm::Twine(k.headDim));
  case Causal:
    return both("causal", boolText(c.causal), boolText(k.causal));
  case Lse:
    return both("lse", c.hasLse ? "given" : "not given",
                k.hasLse ? "writes it" : "writes none");
  case Scale:
    return both("scale", scaleText(c.scale), scaleText(k.scale));
  case Layout:
    return both("layout", c.contiguous ? "contiguous" : "strided",
                k.strided ? "strided" : "contiguous only");
  case PageSize:
    return both("page_size", pageText(c.pageSize, true),
                pageText(k.pageSize, false));
  case Varlen:
    return both("varlen", boolText(c.varlen), boolText(k.varlen));
  case Quantize:
    return both("quantize", c.quantizeFp8 ? "ATTN_QUANTIZE_FP8" : "none",
                k.quantizeFp8 ? "fp8 (" + *k.quantizeFp8 + ")" : "none");
  default: {
    unsigned i = f - Batch;
    return both(lengthNames[i], llvm::Twine(c.lengths[i]),
                lengthText(lengthsOf(k)[i]));
  }
  }
}

std::string closest(llvm::ArrayRef<KernelEntry> kernels, const CallKey &call) {
  const KernelEntry *best = nullptr;
  Mismatch bestMismatch = 0;
  for (const KernelEntry &kernel : kernels) {
    if (!sameKind(kernel, call))
      continue;
    Mismatch m = compare(kernel, call);
    if (!best || llvm::popcount(m) < llvm::popcount(bestMismatch)) {
      best = &kernel;
      bestMismatch = m;
    }
  }
  if (!best)
    return "";
  std::string fields;
  for (unsigned f = 0; f < NumFields; ++f)
    if (bestMismatch & (Mismatch(1) << f))
      fields += (fields.empty() ? "" : ", ") + fieldText(Field(f), *best, call);
  return formatv("; closest: kernel '{0}' differs in: {1}", best->name, fields)
      .str();
}

} // namespace

Mismatch mismatches(const KernelEntry &kernel, const FwdCall &call) {
  CallKey key = keyOf(call);
  return sameKind(kernel, key) ? compare(kernel, key) : ~Mismatch(0);
}

Mismatch mismatches(const KernelEntry &kernel, const BwdCall &call) {
  CallKey key = keyOf(call);
  return sameKind(kernel, key) ? compare(kernel, key) : ~Mismatch(0);
}

std::string closestKernel(llvm::ArrayRef<KernelEntry> kernels,
                          const FwdCall &call) {
  return closest(kernels, keyOf(call));
}

std::string closestKernel(llvm::ArrayRef<KernelEntry> kernels,
                          const BwdCall &call) {
  return closest(kernels, keyOf(call));
}

} // namespace attn::runtime

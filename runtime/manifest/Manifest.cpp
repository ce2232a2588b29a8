//===- Manifest.cpp - operand names, ranks, key description ---------------===//

#include "attn/manifest/Manifest.h"
#include "ManifestChecks.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SHA256.h"

#include <cmath>

using namespace attn::bundle;
namespace json = llvm::json;
using llvm::StringRef;

namespace attn::bundle {

StringRef operandName(Operand operand) {
  switch (operand) {
  case Operand::Q:
    return "q";
  case Operand::K:
    return "k";
  case Operand::V:
    return "v";
  case Operand::O:
    return "o";
  case Operand::LSE:
    return "lse";
  case Operand::QDescale:
    return "q_descale";
  case Operand::KDescale:
    return "k_descale";
  case Operand::VDescale:
    return "v_descale";
  case Operand::BlockTable:
    return "block_table";
  case Operand::CacheSeqlens:
    return "cache_seqlens";
  case Operand::CuSeqlensQ:
    return "cu_seqlens_q";
  case Operand::CuSeqlensK:
    return "cu_seqlens_k";
  case Operand::MaxSeqlenQ:
    return "max_seqlen_q";
  case Operand::MaxSeqlenK:
    return "max_seqlen_k";
  case Operand::DO:
    return "dout";
  case Operand::DQ:
    return "dq";
  case Operand::DK:
    return "dk";
  case Operand::DV:
    return "dv";
  }
  return "?";
}

std::optional<Operand> parseOperand(StringRef name) {
  return llvm::StringSwitch<std::optional<Operand>>(name)
      .Case("q", Operand::Q)
      .Case("k", Operand::K)
      .Case("v", Operand::V)
      .Case("o", Operand::O)
      .Case("lse", Operand::LSE)
      .Case("q_descale", Operand::QDescale)
      .Case("k_descale", Operand::KDescale)
      .Case("v_descale", Operand::VDescale)
      .Case("block_table", Operand::BlockTable)
      .Case("cache_seqlens", Operand::CacheSeqlens)
      .Case("cu_seqlens_q", Operand::CuSeqlensQ)
      .Case("cu_seqlens_k", Operand::CuSeqlensK)
      .Case("max_seqlen_q", Operand::MaxSeqlenQ)
      .Case("max_seqlen_k", Operand::MaxSeqlenK)
      .Case("dout", Operand::DO)
      .Case("dq", Operand::DQ)
      .Case("dk", Operand::DK)
      .Case("dv", Operand::DV)
      .Default(std::nullopt);
}

bool isDescale(Operand operand) {
  return operand == Operand::QDescale || operand == Operand::KDescale ||
         operand == Operand::VDescale;
}

bool isPagedOperand(Operand operand) {
  return operand == Operand::BlockTable || operand == Operand::CacheSeqlens;
}

bool isVarlenOperand(Operand operand) {
  return operand == Operand::CuSeqlensQ || operand == Operand::CuSeqlensK ||
         isScalarOperand(operand);
}

bool isScalarOperand(Operand operand) {
  return operand == Operand::MaxSeqlenQ || operand == Operand::MaxSeqlenK;
}

bool isGradOperand(Operand operand) {
  return operand == Operand::DO || operand == Operand::DQ ||
         operand == Operand::DK || operand == Operand::DV;
}

int64_t operandRank(Operand operand, bool varlen, bool paged) {
  switch (operand) {
  case Operand::K:
  case Operand::V:
    return varlen && !paged ? 3 : 4;
  case Operand::LSE:
    return varlen ? 2 : 3;
  case Operand::BlockTable:
    return 2;
  case Operand::CacheSeqlens:
  case Operand::CuSeqlensQ:
  case Operand::CuSeqlensK:
    return 1;
  case Operand::MaxSeqlenQ:
  case Operand::MaxSeqlenK:
    return 0;
  default:
    return isDescale(operand) ? 2 : varlen ? 3 : 4;
  }
}

StringRef fieldName(Param::Field field) {
  switch (field) {
  case Param::Field::AllocatedPtr:
    return "allocated_ptr";
  case Param::Field::AlignedPtr:
    return "aligned_ptr";
  case Param::Field::Offset:
    return "offset";
  case Param::Field::Size:
    return "size";
  case Param::Field::Stride:
    return "stride";
  case Param::Field::TensorMap:
    return "tensor_map";
  case Param::Field::Value:
    return "value";
  }
  return "?";
}

int64_t evaluate(const GridDim &dim,
                 llvm::function_ref<int64_t(Operand, int64_t)> size) {
  int64_t extent = dim.constant;
  for (const GridTerm &t : dim.terms) {
    int64_t n = std::max<int64_t>(size(t.operand, t.dim) + t.offset, 0);
    auto factor = static_cast<int64_t>(llvm::divideCeil(n, t.divisor));
    if (__builtin_mul_overflow(extent, factor, &extent))
      return INT64_MAX;
  }
  return extent;
}

int64_t workspaceElementBytes(StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases({"f32", "i32"}, 4)
      .Case("e4m3", 1)
      .Default(0);
}

int64_t dtypeBytes(StringRef dtype) {
  return dtype == "f16" || dtype == "bf16" ? 2 : workspaceElementBytes(dtype);
}

int64_t operandRank(Operand operand, const FwdKey &key) {
  return operandRank(operand, key.varlen, key.pageSize > 0);
}

int FwdKey::numStaticLengths() const {
  int n = 0;
  for (const auto &len : {batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK})
    n += len.has_value();
  return n;
}

//===----------------------------------------------------------------------===//
// Description
//===----------------------------------------------------------------------===//

static std::string lengthText(const std::optional<int64_t> &len) {
  return len ? std::to_string(*len) : std::string("?");
}

/// "bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=? Nk=? scale=0.08838835
/// strided".
/// A paged kernel adds " page_size=16" after the lengths, a quantized one
/// " quantize_fp8(<options>)" at the end.
static std::string keyText(const FwdKey &k) {
  return llvm::formatv("{0} D={1}{2}{3} B={4} Hq={5} Hkv={6} Nq={7} Nk={8}"
                       "{11} scale={9} {10}{12}{13}",
                       k.dtype, k.headDim, k.causal ? " causal" : "",
                       k.hasLse ? " +lse" : "", lengthText(k.batch),
                       lengthText(k.numHeadsQ), lengthText(k.numHeadsKV),
                       lengthText(k.seqLenQ), lengthText(k.seqLenK),
                       llvm::format("%.7g", k.scale),
                       k.strided ? "strided" : "contiguous",
                       k.pageSize ? " page_size=" + std::to_string(k.pageSize)
                                  : std::string(),
                       k.varlen ? " varlen" : "",
                       k.quantizeFp8 ? " quantize_fp8(" + *k.quantizeFp8 + ")"
                                     : std::string())
      .str();
}

std::string describeKey(const KernelEntry &kernel) {
  return kernel.name + ": " + keyText(kernel.key);
}

/// The later launches: "k_0 (256 threads, 58 registers, 0/0 B spilled)".
static std::string describeThen(const KernelEntry &kernel) {
  std::string out;
  for (const KernelLaunch &l : kernel.then) {
    const Resources &r = l.resources;
    out += llvm::formatv("{0}{1}/{2} ({3} threads, {4} registers, {5}/{6} B "
                         "spilled)",
                         out.empty() ? "" : ", ", l.cubin, l.name,
                         l.threads[0] * l.threads[1] * l.threads[2],
                         r.registers, r.spillStoreBytes, r.spillLoadBytes)
               .str();
  }
  return out;
}

std::string describe(const KernelEntry &kernel) {
  const Resources &r = kernel.resources;
  return kernel.name + ": " + kernel.kind + " " + keyText(kernel.key) +
         llvm::formatv(
             " {8} BLOCK_M={0} BLOCK_N={1} | {2} threads, {3} "
             "registers, {4} B smem, {5} B stack, {6}/{7} B spilled",
             kernel.key.blockM, kernel.key.blockN,
             kernel.threads[0] * kernel.threads[1] * kernel.threads[2],
             r.registers, r.sharedBytes + kernel.dynamicSharedBytes,
             r.stackBytes, r.spillStoreBytes, r.spillLoadBytes, kernel.key.path)
             .str() +
         (kernel.key.splits > 1
              ? llvm::formatv(" | splits {0}, then {1}", kernel.key.splits,
                              describeThen(kernel))
                    .str()
          : kernel.isBackward() || kernel.isQuantized()
              ? " | then " + describeThen(kernel)
              : "") +
         (kernel.variant.empty() ? "" : " | variant " + kernel.variant);
}

} // namespace attn::bundle

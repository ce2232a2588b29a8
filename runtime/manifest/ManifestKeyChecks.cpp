//===- ManifestKeyChecks.cpp - keys, launch shapes, resources -------------===//

#include "ManifestChecks.h"
#include "attn/manifest/Manifest.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"

#include <cmath>
#include <limits>

using namespace attn::bundle;
namespace json = llvm::json;
using llvm::StringRef;

namespace attn::bundle {

//===----------------------------------------------------------------------===//
// Invariants
//===----------------------------------------------------------------------===//

llvm::Error corrupt(const llvm::Twine &where, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 where + ": " + what);
}

/// Paged K/V (page_size > 0): the wgmma path, not e4m3, a page of 1 to
/// 2^20 tokens, and a dynamic seqlen_k (each sequence's length is read from
/// cache_seqlens).
static llvm::Error checkPagedKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.pageSize == 0)
    return llvm::Error::success();
  if (key.pageSize < 0 || key.pageSize > kMaxPageSize)
    return corrupt(at + ".key.page_size",
                   llvm::formatv("must be in [1, {0}] (absent for "
                                 "contiguous K/V), got {1}",
                                 kMaxPageSize, key.pageSize));
  if (key.path != "wgmma")
    return corrupt(at + ".key.path",
                   "paged K/V (page_size) kernels are \"wgmma\" kernels");
  if (key.dtype == "e4m3")
    return corrupt(at + ".key.dtype",
                   "paged K/V (page_size) kernels are not e4m3");
  if (key.seqLenK)
    return corrupt(at + ".key.seqlen_k",
                   "must be null in a paged K/V (page_size) kernel: each "
                   "sequence's length comes from cache_seqlens (varlen: "
                   "cu_seqlens_k)");
  return llvm::Error::success();
}

/// Varlen (attn.varlen_attention): the wgmma path, f16 or bf16, strided,
/// and null batch, seqlen_q and seqlen_k (B and the lengths come from
/// cu_seqlens on the device). It may read paged K/V caches (page_size:
/// checkPagedKey) and be split (splits: checkLaunches).
static llvm::Error checkVarlenKey(const FwdKey &key, const llvm::Twine &at) {
  if (!key.varlen)
    return llvm::Error::success();
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "varlen kernels are \"wgmma\" kernels");
  if (key.dtype == "e4m3")
    return corrupt(at + ".key.dtype", "varlen kernels are not e4m3");
  if (!key.strided)
    return corrupt(at + ".key.layout", "varlen kernels are \"strided\"");
  if (key.batch || key.seqLenQ || key.seqLenK)
    return corrupt(at + ".key",
                   "batch, seqlen_q and seqlen_k must be null in a varlen "
                   "kernel: they come from cu_seqlens_q/k");
  return llvm::Error::success();
}

/// A quantized kernel (quantize_fp8): bf16 operands, the wgmma path, every
/// length static (attn-quantize-fp8 needs static shapes), neither paged,
/// varlen nor split.
static llvm::Error checkQuantizeKey(const FwdKey &key, const llvm::Twine &at) {
  if (!key.quantizeFp8)
    return llvm::Error::success();
  if (key.dtype != "bf16")
    return corrupt(at + ".key.dtype", "quantized (quantize_fp8) kernels take "
                                      "\"bf16\" operands");
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "quantized (quantize_fp8) kernels are "
                                     "\"wgmma\" kernels");
  if (key.numStaticLengths() != 5)
    return corrupt(at + ".key", "quantized (quantize_fp8) kernels have static "
                                "batch, num_heads_q, num_heads_kv, seqlen_q "
                                "and seqlen_k");
  if (key.pageSize != 0 || key.varlen || key.splits != 1)
    return corrupt(at + ".key", "quantized (quantize_fp8) kernels have no "
                                "page_size, varlen or splits");
  return checkQuantizeOptions(*key.quantizeFp8, at + ".key.quantize_fp8");
}

llvm::Error checkKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.dtype != "f16" && key.dtype != "bf16" && key.dtype != "e4m3")
    return corrupt(at + ".key.dtype", "expected \"f16\", \"bf16\" or "
                                      "\"e4m3\", got \"" +
                                          key.dtype + "\"");
  bool fp8 = key.dtype == "e4m3";
  if (fp8 && (key.headDim < 16 || key.headDim > 256 || key.headDim % 16 != 0))
    return corrupt(at + ".key.head_dim",
                   "must be a multiple of 16 in [16, 256] for e4m3");
  if (key.headDim <= 0 || key.headDim > 256 || key.headDim % 8 != 0)
    return corrupt(at + ".key.head_dim", "must be a multiple of 8 in [8, 256]");
  if (fp8 && !key.strided)
    return corrupt(at + ".key.layout",
                   "e4m3 kernels are \"strided\" (V is stored as V^T)");
  if (fp8 && key.path != "wgmma")
    return corrupt(at + ".key.path", "e4m3 kernels are \"wgmma\" kernels");
  if (key.blockM <= 0 || key.blockN <= 0)
    return corrupt(at + ".key", "block_m and block_n must be > 0");
  // The compiler's rule: the kernels scale in f32 with .ftz arithmetic.
  auto scale = static_cast<float>(key.scale);
  if (!std::isfinite(scale) || scale < std::numeric_limits<float>::min())
    return corrupt(at + ".key.scale", "must be a positive normal f32");
  // attn-compile refuses static lengths of 0 (they are dynamic instead).
  for (const auto &len :
       {key.batch, key.numHeadsQ, key.numHeadsKV, key.seqLenQ, key.seqLenK})
    if (len && *len < 1)
      return corrupt(at + ".key", "static lengths must be >= 1 (or null)");
  if (key.numHeadsQ && key.numHeadsKV &&
      (*key.numHeadsKV == 0 || *key.numHeadsQ % *key.numHeadsKV != 0))
    return corrupt(at + ".key", "num_heads_q must be a multiple of "
                                "num_heads_kv");
  if (llvm::Error err = checkPagedKey(key, at))
    return err;
  if (llvm::Error err = checkQuantizeKey(key, at))
    return err;
  return checkVarlenKey(key, at);
}

/// Why a kernel of `key` has no operand `op` ("in a kernel without LSE"),
/// or nothing when it has it: lse with LSE, the descales in e4m3 kernels,
/// the block table in paged kernels, cache_seqlens in paged kernels that
/// are not varlen (a varlen paged kernel counts each sequence's keys from
/// cu_seqlens_k), cu_seqlens and max_seqlen in varlen kernels, do, dq, dk
/// and dv exactly in backward kernels.
std::optional<std::string> whyAbsent(const KernelEntry &kernel, Operand op) {
  const FwdKey &key = kernel.key;
  if (isGradOperand(op) && !kernel.isBackward())
    return "in a kernel that is not backward (bwd)";
  if (op == Operand::LSE && !key.hasLse)
    return "in a kernel without LSE";
  if (isDescale(op) && key.dtype != "e4m3")
    return "in a kernel that is not e4m3";
  if (isPagedOperand(op) && key.pageSize == 0)
    return "in a kernel without page_size (paged K/V)";
  if (op == Operand::CacheSeqlens && key.varlen)
    return "in a varlen paged kernel (sequence b has cu_seqlens_k[b + 1] - "
           "cu_seqlens_k[b] keys)";
  if (isVarlenOperand(op) && !key.varlen)
    return "in a kernel that is not varlen";
  return std::nullopt;
}

/// A grid or workspace term: an operand the kernel has (whyAbsent), a
/// dimension of its rank (none for a scalar), divisor >= 1, offset 0 or -1
/// (-1 only in a varlen kernel, on cu_seqlens: B = dim - 1).
llvm::Error checkGridTerm(const KernelEntry &kernel, const GridTerm &t,
                          const llvm::Twine &at) {
  const FwdKey &key = kernel.key;
  if (auto why = whyAbsent(kernel, t.operand))
    return corrupt(at, "refers to " + operandName(t.operand) + " " + *why);
  int64_t rank = operandRank(t.operand, key);
  if (t.divisor < 1 || t.dim < 0 || (rank > 0 && t.dim >= rank))
    return corrupt(at, "needs 0 <= dim < rank(operand) and divisor >= 1");
  if (t.offset != 0 && (t.offset != -1 || !key.varlen))
    return corrupt(at, "offset must be 0, or -1 in a varlen kernel (B = "
                       "size(cu_seqlens_q, 0) - 1)");
  return llvm::Error::success();
}

llvm::Error checkLaunch(const KernelEntry &kernel, const llvm::Twine &at) {
  for (size_t i = 0; i < kernel.grid.size(); ++i) {
    const GridDim &dim = kernel.grid[i];
    if (dim.constant < 1 || dim.constant > INT32_MAX)
      return corrupt(at + ".launch.grid", "constants must be in [1, 2^31)");
    if (i > 0 && dim.constant > 65535)
      return corrupt(at + ".launch.grid", "grid y and z constants must be "
                                          "at most 65535");
    if (dim.terms.size() > 4)
      return corrupt(at + ".launch.grid", "at most 4 terms per dimension");
    for (const GridTerm &t : dim.terms) {
      if (llvm::Error err = checkGridTerm(kernel, t, at + ".launch.grid"))
        return err;
    }
  }
  // Bounds per entry first, so that the products cannot overflow.
  int64_t threads = 1, cluster = 1;
  for (int64_t t : kernel.threads) {
    if (t < 1 || t > 1024)
      return corrupt(at + ".launch.threads", "entries must be in [1, 1024]");
    threads *= t;
  }
  if (threads > 1024)
    return corrupt(at + ".launch.threads", "more than 1024 threads per CTA");
  for (int64_t c : kernel.cluster) {
    if (c < 1 || c > 16)
      return corrupt(at + ".launch.cluster", "entries must be in [1, 16]");
    cluster *= c;
  }
  if (cluster > 16)
    return corrupt(at + ".launch.cluster", "more than 16 CTAs per cluster");
  if (kernel.dynamicSharedBytes < 0 ||
      kernel.dynamicSharedBytes > kMaxDynamicSharedBytes)
    return corrupt(
        at + ".launch.dynamic_shared_bytes",
        llvm::formatv("must be in [0, {0}]", kMaxDynamicSharedBytes));
  return llvm::Error::success();
}

llvm::Error checkResources(const Resources &r, const llvm::Twine &at) {
  if (r.registers < 0 || r.registers > 255 || r.sharedBytes < 0 ||
      r.stackBytes < 0 || r.spillStoreBytes < 0 || r.spillLoadBytes < 0)
    return corrupt(at + ".resources", "registers must be in [0, 255] and "
                                      "byte counts >= 0");
  return llvm::Error::success();
}

/// A backward kernel (attn.attention_grad lowered by
/// attn-grad-async-pipeline): f16 or bf16, every length static, LSE (an
/// input), the wgmma path, contiguous K/V, not varlen, not split. (Which
/// head dims it compiles for is attn-compile's business: the operand types
/// and tensor maps it records say what the kernel takes.)
llvm::Error checkBwdKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.dtype != "f16" && key.dtype != "bf16")
    return corrupt(at + ".key.dtype", "backward kernels are f16 or bf16");
  if (key.numStaticLengths() != 5)
    return corrupt(at + ".key", "backward kernels have static batch, "
                                "num_heads_q, num_heads_kv, seqlen_q and "
                                "seqlen_k");
  if (!key.hasLse)
    return corrupt(at + ".key.lse", "must be true in a backward kernel (LSE "
                                    "is its input)");
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "backward kernels are \"wgmma\" "
                                     "kernels");
  if (key.splits != 1 || key.pageSize != 0 || key.varlen)
    return corrupt(at + ".key", "backward kernels have no splits, page_size "
                                "or varlen");
  return llvm::Error::success();
}

} // namespace attn::bundle

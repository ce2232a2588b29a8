//===- ManifestParamChecks.cpp - kernel parameters, tensor maps -----------===//

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

using namespace attn::bundle;
namespace json = llvm::json;
using llvm::StringRef;

namespace attn::bundle {

/// Rows of one page a paged kernel's K/V box holds: min(page_size,
/// block_n).
static int64_t pagedBoxRows(const FwdKey &key) {
  return std::min(key.pageSize, key.blockN);
}

/// The K or V map of a paged kernel (never e4m3): heads_inner, viewing the
/// [num_pages, page_size, Hkv, D] cache as (D, page_size, Hkv, num_pages)
/// innermost first, in boxes of min(page_size, block_n) rows of one page of
/// one KV head.
static llvm::Error checkPagedMap(const KernelEntry &kernel, const Param &p,
                                 const llvm::Twine &at) {
  StringRef name = operandName(p.operand);
  if (!p.headsInner)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " in a paged K/V kernel must be heads_inner (the "
                       "[num_pages, page_size, Hkv, D] cache as (D, "
                       "page_size, Hkv, num_pages))");
  int64_t rows = pagedBoxRows(kernel.key);
  if (p.box != std::array<int64_t, 4>{64, rows, 1, 1})
    return corrupt(at + ".params",
                   llvm::formatv("the tensor map box of {0} in a paged K/V "
                                 "kernel must be [64, min(page_size, block_n) "
                                 "= {1}, 1, 1], got [{2}, {3}, {4}, {5}]",
                                 name, rows, p.box[0], p.box[1], p.box[2],
                                 p.box[3]));
  return llvm::Error::success();
}
/// A tensor map of a backward kernel: q or dout (dO) in boxes [64, block_m, 1,
/// 1], k or v in boxes [64, block_n, 1, 1] (one 128-byte swizzle span of D by
/// the tile's rows), plain (D, N, H, B) views.
static llvm::Error checkBwdTensorMap(const KernelEntry &kernel, const Param &p,
                                     const llvm::Twine &at) {
  bool qdo = p.operand == Operand::Q || p.operand == Operand::DO;
  bool kv = p.operand == Operand::K || p.operand == Operand::V;
  if (!qdo && !kv)
    return corrupt(at + ".params", "tensor maps of a backward kernel are for "
                                   "q, k, v and dout");
  if (p.transposed || p.headsInner || p.packed)
    return corrupt(at + ".params", "tensor maps of a backward kernel are "
                                   "plain (D, N, H, B) views");
  int64_t rows = qdo ? kernel.key.blockM : kernel.key.blockN;
  if (p.box != std::array<int64_t, 4>{64, rows, 1, 1})
    return corrupt(at + ".params",
                   llvm::formatv("the tensor map box of {0} in a backward "
                                 "kernel must be [64, {1}, 1, 1] ({2}), got "
                                 "[{3}, {4}, {5}, {6}]",
                                 operandName(p.operand), rows,
                                 qdo ? "block_m" : "block_n", p.box[0],
                                 p.box[1], p.box[2], p.box[3]));
  return llvm::Error::success();
}

/// A tensor map of a wgmma kernel: q, k, v or o; a box of one 128-byte
/// swizzle span innermost (64 f16/bf16 or 128 e4m3 elements), at most 256
/// rows, 1 head, 1 batch; transposed exactly for the V of an e4m3 kernel
/// (V^T storage: the span runs along Nk); heads_inner only for q and o (GQA
/// packing: G >= 2 heads of rows / G queries, at most 256 rows), and for k
/// and v exactly in a paged kernel (checkPagedMap).
static llvm::Error checkTensorMap(const KernelEntry &kernel, const Param &p,
                                  const llvm::Twine &at) {
  if (kernel.isBackward())
    return checkBwdTensorMap(kernel, p, at);
  if (kernel.key.path != "wgmma" ||
      !(p.operand == Operand::Q || p.operand == Operand::K ||
        p.operand == Operand::V || p.operand == Operand::O))
    return corrupt(at + ".params", "tensor maps are for q, k, v and o "
                                   "of wgmma kernels");
  bool fp8 = kernel.key.dtype == "e4m3";
  StringRef name = operandName(p.operand);
  bool kv = p.operand == Operand::K || p.operand == Operand::V;
  // A varlen paged kernel reads K and V from the caches like any paged one.
  bool pagedKV = kernel.key.pageSize > 0 && kv;
  if (p.packed != (kernel.key.varlen && !pagedKV))
    return corrupt(at + ".params",
                   p.packed && pagedKV
                       ? "the tensor map of " + name +
                             " in a paged K/V kernel reads the [num_pages, "
                             "page_size, Hkv, D] cache: heads_inner, not "
                             "packed (varlen or not)"
                   : kernel.key.varlen
                       ? "the tensor map of " + name +
                             " in a varlen kernel must be packed (the "
                             "[total, H, D] operand as (D, total, H, 1))"
                       : "the tensor map of " + name +
                             " is packed, but only varlen kernels take "
                             "packed [total, H, D] operands");
  if (p.transposed && p.operand != Operand::V)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " is transposed; only v's may be (e4m3 V^T storage)");
  if (p.operand == Operand::V && p.transposed != fp8)
    return corrupt(at + ".params",
                   fp8 ? "the tensor map of v in an e4m3 kernel must be "
                         "transposed (V^T storage, unit stride along Nk)"
                       : "the tensor map of v is transposed, but only e4m3 "
                         "kernels take V^T storage");
  if (pagedKV)
    return checkPagedMap(kernel, p, at);
  if (p.headsInner && p.operand != Operand::Q && p.operand != Operand::O)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " has heads_inner; only q's and o's may (GQA "
                       "packing), and k's and v's in a paged K/V kernel");
  // O is bf16 in an e4m3 kernel.
  int64_t elementBytes = fp8 && p.operand != Operand::O ? 1 : 2;
  int64_t span = 128 / elementBytes;
  if (p.headsInner) {
    if (p.box[0] != span || p.box[1] < 2 || p.box[2] < 1 ||
        p.box[1] * p.box[2] > 256 || p.box[3] != 1)
      return corrupt(at + ".params",
                     llvm::formatv("a heads_inner tensor map box must be "
                                   "[{0}, G >= 2, rows / G, 1] with at most "
                                   "256 rows for {1}, got [{2}, {3}, {4}, {5}]",
                                   span, name, p.box[0], p.box[1], p.box[2],
                                   p.box[3]));
    return llvm::Error::success();
  }
  if (p.box[0] != span || p.box[1] < 1 || p.box[1] > 256 || p.box[2] != 1 ||
      p.box[3] != 1)
    return corrupt(at + ".params",
                   llvm::formatv("tensor map box must be [{0}, 1..256, 1, 1] "
                                 "for {1} ({0} elements: one 128-byte swizzle "
                                 "span{2}), got [{3}, {4}, {5}, {6}]",
                                 span, name, p.transposed ? " of Nk" : "",
                                 p.box[0], p.box[1], p.box[2], p.box[3]));
  return llvm::Error::success();
}

/// Bit of a memref-descriptor field: pointers, offset, sizes, strides.
static int64_t descriptorBit(const Param &p, int64_t rank) {
  using Field = Param::Field;
  return p.field == Field::AllocatedPtr ? 0
         : p.field == Field::AlignedPtr ? 1
         : p.field == Field::Offset     ? 2
         : p.field == Field::Size       ? 3 + p.index
                                        : 3 + rank + p.index;
}

/// The operand parameters of one launch: operands the kernel has, tensor
/// maps with the boxes the kernels use, whole memref descriptors. Marks
/// in `hasPointer` the operands that reach the launch.
static llvm::Error
checkLaunchParams(const KernelEntry &kernel, const KernelLaunch &launch,
                  const llvm::Twine &at,
                  std::array<bool, kNumOperands> &hasPointer) {
  using Field = Param::Field;
  // Per operand: which descriptor fields appear (3 + 2 * rank bits).
  std::array<llvm::SmallBitVector, kNumOperands> seen;
  for (const Param &p : launch.params) {
    if (p.workspace >= 0)
      continue;
    if (auto why = whyAbsent(kernel, p.operand))
      return corrupt(at + ".params",
                     (p.operand == Operand::LSE ? "an " : "a ") +
                         operandName(p.operand) + " parameter " + *why);
    size_t op = static_cast<size_t>(p.operand);
    // A scalar is one value parameter; only scalars are.
    if (isScalarOperand(p.operand) != (p.field == Field::Value))
      return corrupt(at + ".params",
                     isScalarOperand(p.operand)
                         ? operandName(p.operand) +
                               " is a scalar: its one parameter is a value"
                         : "a value parameter of " + operandName(p.operand) +
                               ", which is not a scalar (max_seqlen_q/k)");
    if (p.field == Field::Value) {
      hasPointer[op] = true;
      continue;
    }
    int64_t rank = operandRank(p.operand, kernel.key);
    if (p.index < 0 || p.index >= rank)
      return corrupt(at + ".params", "index out of the operand's rank");
    if (p.field == Field::TensorMap) {
      if (llvm::Error err = checkTensorMap(kernel, p, at))
        return err;
      hasPointer[op] = true;
      continue;
    }
    seen[op].resize(3 + 2 * rank);
    seen[op].set(descriptorBit(p, rank));
    hasPointer[op] |= p.field == Field::AlignedPtr;
  }
  for (size_t op = 0; op < seen.size(); ++op)
    if (!seen[op].empty() && !seen[op].all())
      return corrupt(at + ".params",
                     llvm::formatv("operand {0}'s memref descriptor is "
                                   "incomplete: it needs allocated_ptr, "
                                   "aligned_ptr, offset and every size and "
                                   "stride",
                                   operandName(static_cast<Operand>(op))));
  return llvm::Error::success();
}

/// The elements of a workspace buffer with static extents (0: dynamic or
/// over 2^62).
static int64_t staticElements(const Workspace &buffer) {
  int64_t n = 1;
  for (const GridDim &dim : buffer.shape)
    if (!dim.terms.empty() || __builtin_mul_overflow(n, dim.constant, &n) ||
        n > (int64_t(1) << 62))
      return 0;
  return n;
}

/// A tensor map over a workspace buffer (a quantized kernel's e4m3 copy):
/// swizzle 0, 32, 64 or 128 bytes; a box of 1 to 256 per dimension whose
/// inner extent is a multiple of 16 bytes within the swizzle span; dims in
/// [1, 2^32], strides multiples of 16 bytes below 2^40; and the view inside
/// the buffer: sum((dims[i] - 1) * stride[i]) < its elements.
static llvm::Error checkWorkspaceMap(const Workspace &buffer, const Param &p,
                                     const llvm::Twine &at) {
  if (!buffer.copyOf)
    return corrupt(at, "tensor maps of workspace buffers are of the e4m3 "
                       "copies (copy_of) of a quantized kernel");
  int64_t elt = workspaceElementBytes(buffer.dtype);
  bool swizzleOk =
      p.swizzle == 0 || p.swizzle == 32 || p.swizzle == 64 || p.swizzle == 128;
  if (!swizzleOk ||
      llvm::any_of(p.box, [](int64_t b) { return b < 1 || b > 256; }) ||
      (p.box[0] * elt) % 16 != 0 ||
      (p.swizzle > 0 && p.box[0] * elt > p.swizzle))
    return corrupt(at, "a workspace tensor map needs swizzle 0, 32, 64 or "
                       "128 and box entries in [1, 256], the innermost a "
                       "multiple of 16 bytes within the swizzle span");
  int64_t last = 0; // offset of the view's last element
  for (int i = 0; i < 4; ++i) {
    int64_t stride = i == 0 ? 1 : p.strides[i - 1];
    if (p.dims[i] < 1 || p.dims[i] > (int64_t(1) << 32) || stride < 1 ||
        (i > 0 && ((stride * elt) % 16 != 0 || stride >= (int64_t(1) << 40))))
      return corrupt(at, "a workspace tensor map needs dims in [1, 2^32] and "
                         "strides that are multiples of 16 bytes below 2^40");
    int64_t span;
    if (__builtin_mul_overflow(p.dims[i] - 1, stride, &span) ||
        __builtin_add_overflow(last, span, &last))
      return corrupt(at, "a workspace tensor map's view overflows 64 bits");
  }
  int64_t elements = staticElements(buffer);
  if (elements == 0 || last >= elements)
    return corrupt(at, llvm::formatv("the tensor map view of workspace {0} "
                                     "reaches element {1}, past its {2} "
                                     "(static) elements",
                                     buffer.name, last, elements));
  return llvm::Error::success();
}

/// Parameters of one launch (`launch` of `kernel`) that describe workspace
/// buffers: an existing buffer, whole memref descriptors, tensor maps only
/// of a quantized kernel's e4m3 copies (checkWorkspaceMap).
static llvm::Error checkWorkspaceParams(const KernelEntry &kernel,
                                        const KernelLaunch &launch,
                                        const llvm::Twine &at) {
  std::vector<llvm::SmallBitVector> seen(kernel.workspace.size());
  for (const Param &p : launch.params) {
    if (p.workspace < 0)
      continue;
    if (p.workspace >= int64_t(kernel.workspace.size()))
      return corrupt(at + ".params", "names a workspace buffer the kernel "
                                     "does not have");
    const Workspace &buffer = kernel.workspace[p.workspace];
    if (p.field == Param::Field::TensorMap) {
      if (llvm::Error err = checkWorkspaceMap(buffer, p, at + ".params"))
        return err;
      continue;
    }
    int64_t rank = buffer.shape.size();
    if (p.field == Param::Field::Value || p.index < 0 || p.index >= rank)
      return corrupt(at + ".params", "a workspace buffer is passed as a "
                                     "memref descriptor of its rank");
    seen[p.workspace].resize(3 + 2 * rank);
    seen[p.workspace].set(descriptorBit(p, rank));
  }
  for (const llvm::SmallBitVector &bits : seen)
    if (!bits.empty() && !bits.all())
      return corrupt(at + ".params", "a workspace buffer's memref descriptor "
                                     "is incomplete");
  return llvm::Error::success();
}

/// Every parameter names an operand the kernel has; a tensor map has a box
/// the kernels use; an operand passed as a memref descriptor passes all of
/// it (pointers, offset, every size and stride); q, k, v, o (and lse, and
/// for e4m3 the three descales) reach one of its launches;
/// workspace buffers are passed whole.
llvm::Error checkParams(const KernelEntry &kernel, const llvm::Twine &at) {
  bool fp8 = kernel.key.dtype == "e4m3";
  std::array<bool, kNumOperands> hasPointer = {};
  for (size_t i = 0; i < kernel.numLaunches(); ++i) {
    std::string where =
        i == 0 ? at.str() : (at + ".then[" + llvm::Twine(i - 1) + "]").str();
    if (llvm::Error err =
            checkLaunchParams(kernel, kernel.launch(i), where, hasPointer))
      return err;
    if (llvm::Error err = checkWorkspaceParams(kernel, kernel.launch(i), where))
      return err;
  }
  // Every operand the kernel computes with must reach one of its launches.
  for (Operand op : {Operand::Q, Operand::K, Operand::V, Operand::O})
    if (!hasPointer[static_cast<size_t>(op)])
      return corrupt(at + ".params", "no aligned_ptr or tensor_map of "
                                     "operand " +
                                         operandName(op));
  if (kernel.key.hasLse && !hasPointer[static_cast<size_t>(Operand::LSE)])
    return corrupt(at + ".params", "no aligned_ptr of operand lse");
  if (kernel.isBackward())
    for (Operand op : {Operand::DO, Operand::DQ, Operand::DK, Operand::DV})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params", "no aligned_ptr or tensor_map of "
                                       "operand " +
                                           operandName(op) +
                                           " in a backward kernel");
  if (fp8)
    for (Operand op : {Operand::QDescale, Operand::KDescale, Operand::VDescale})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params", "no aligned_ptr of operand " +
                                           operandName(op) +
                                           " in an e4m3 kernel");
  if (kernel.key.pageSize > 0)
    for (Operand op : {Operand::BlockTable, Operand::CacheSeqlens})
      if (!whyAbsent(kernel, op) && !hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params",
                       "no memref descriptor of operand " + operandName(op) +
                           " in a paged K/V (page_size) kernel");
  if (kernel.key.varlen)
    for (Operand op : {Operand::CuSeqlensQ, Operand::CuSeqlensK})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params", "no memref descriptor of operand " +
                                           operandName(op) +
                                           " in a varlen kernel");
  return llvm::Error::success();
}

} // namespace attn::bundle

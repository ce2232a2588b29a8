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

/// What TMA (cuTensorMapEncodeTiled) takes of any tensor map's box and
/// swizzle, as the compiler recorded them: a swizzle span of 0, 32, 64 or
/// 128 bytes; box entries in [1, 256]; the innermost box extent a multiple
/// of 16 bytes and, when swizzled, within the span. `at` names the
/// parameter ("kernels[0].params[3]").
static llvm::Error checkMapBox(const Param &p, int64_t elementBytes,
                               const std::string &at) {
  if (p.swizzle != 0 && p.swizzle != 32 && p.swizzle != 64 && p.swizzle != 128)
    return corrupt(
        at + ".swizzle",
        llvm::formatv("must be 0, 32, 64 or 128 (bytes), got {0}", p.swizzle));
  if (llvm::any_of(p.box, [](int64_t b) { return b < 1 || b > 256; }))
    return corrupt(at + ".box",
                   llvm::formatv("entries must be in [1, 256] (TMA's box "
                                 "limit), got [{0}, {1}, {2}, {3}]",
                                 p.box[0], p.box[1], p.box[2], p.box[3]));
  int64_t innerBytes = p.box[0] * elementBytes;
  if (innerBytes % 16 != 0 || (p.swizzle > 0 && innerBytes > p.swizzle))
    return corrupt(at + ".box",
                   llvm::formatv("the innermost extent {0} ({1} bytes of "
                                 "{2}-byte elements) must be a multiple of "
                                 "16 bytes{3}",
                                 p.box[0], innerBytes, elementBytes,
                                 p.swizzle > 0
                                     ? llvm::formatv(" within the swizzle "
                                                     "span of {0}",
                                                     p.swizzle)
                                           .str()
                                     : std::string()));
  return llvm::Error::success();
}

/// The view a tensor map of an operand takes of the call's tensor, held to
/// the key: packed exactly in a varlen kernel (but for a paged kernel's k
/// and v, which read the caches); transposed exactly for the v of an e4m3
/// kernel (V^T storage); heads_inner only for q and o (GQA packing, G heads
/// per box where the key's static head counts give G = Hq / Hkv) and
/// exactly for a paged kernel's k and v, whose boxes stay inside one page;
/// the plain (D, N, H, B) view in a backward kernel, of q, k, v and dout.
static llvm::Error checkMapView(const KernelEntry &kernel, const Param &p,
                                const llvm::Twine &at) {
  const FwdKey &key = kernel.key;
  StringRef name = operandName(p.operand);
  bool kv = p.operand == Operand::K || p.operand == Operand::V;
  if (kernel.isBackward()) {
    if (!kv && p.operand != Operand::Q && p.operand != Operand::DO)
      return corrupt(at + ".params", "tensor maps of a backward kernel are "
                                     "for q, k, v and dout");
    if (p.transposed || p.headsInner || p.packed)
      return corrupt(at + ".params", "tensor maps of a backward kernel are "
                                     "plain (D, N, H, B) views");
    return llvm::Error::success();
  }
  if (key.path != "wgmma" ||
      !(kv || p.operand == Operand::Q || p.operand == Operand::O))
    return corrupt(at + ".params", "tensor maps are for q, k, v and o "
                                   "of wgmma kernels");
  bool fp8 = key.dtype == "e4m3";
  // A varlen paged kernel reads K and V from the caches like any paged one.
  bool pagedKV = key.pageSize > 0 && kv;
  if (p.packed != (key.varlen && !pagedKV))
    return corrupt(at + ".params",
                   p.packed && pagedKV
                       ? "the tensor map of " + name +
                             " in a paged K/V kernel reads the [num_pages, "
                             "page_size, Hkv, D] cache: heads_inner, not "
                             "packed (varlen or not)"
                   : key.varlen
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
  if (pagedKV) {
    if (!p.headsInner)
      return corrupt(at + ".params",
                     "the tensor map of " + name +
                         " in a paged K/V kernel must be heads_inner (the "
                         "[num_pages, page_size, Hkv, D] cache as (D, "
                         "page_size, Hkv, num_pages))");
    if (p.box[1] > key.pageSize || p.box[2] != 1 || p.box[3] != 1)
      return corrupt(at + ".params",
                     llvm::formatv("the tensor map box of {0} in a paged K/V "
                                   "kernel holds rows of one page of one KV "
                                   "head: [*, rows <= page_size = {1}, 1, 1], "
                                   "got [{2}, {3}, {4}, {5}]",
                                   name, key.pageSize, p.box[0], p.box[1],
                                   p.box[2], p.box[3]));
    return llvm::Error::success();
  }
  if (p.headsInner && p.operand != Operand::Q && p.operand != Operand::O)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " has heads_inner; only q's and o's may (GQA "
                       "packing), and k's and v's in a paged K/V kernel");
  if (p.headsInner && (!key.numHeadsQ || !key.numHeadsKV ||
                       p.box[1] * *key.numHeadsKV != *key.numHeadsQ))
    return corrupt(at + ".params",
                   llvm::formatv("the heads_inner tensor map of {0} packs "
                                 "{1} heads; GQA packing needs static "
                                 "num_heads_q = {1} * num_heads_kv",
                                 name, p.box[1]));
  return llvm::Error::success();
}

/// A tensor map of an operand: its view (checkMapView), then its box and
/// swizzle (checkMapBox) in the operand's element type.
static llvm::Error checkTensorMap(const KernelEntry &kernel, const Param &p,
                                  const llvm::Twine &at, size_t index) {
  if (llvm::Error err = checkMapView(kernel, p, at))
    return err;
  int64_t bytes = dtypeBytes(expectedDtype(p.operand, kernel.key));
  return checkMapBox(p, bytes,
                     llvm::formatv("{0}.params[{1}]", at, index).str());
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
  for (const auto &[i, p] : llvm::enumerate(launch.params)) {
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
      if (llvm::Error err = checkTensorMap(kernel, p, at, i))
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
/// its box and swizzle (checkMapBox); dims in [1, 2^32], strides multiples
/// of 16 bytes below 2^40; and the view inside the buffer:
/// sum((dims[i] - 1) * stride[i]) < its elements.
static llvm::Error checkWorkspaceMap(const Workspace &buffer, const Param &p,
                                     const llvm::Twine &at, size_t index) {
  if (!buffer.copyOf)
    return corrupt(at, "tensor maps of workspace buffers are of the e4m3 "
                       "copies (copy_of) of a quantized kernel");
  if (p.headsInner || p.packed)
    return corrupt(at, "a workspace tensor map states its view (dims, "
                       "strides): it is not heads_inner or packed");
  int64_t elt = workspaceElementBytes(buffer.dtype);
  if (llvm::Error err =
          checkMapBox(p, elt, llvm::formatv("{0}[{1}]", at, index).str()))
    return err;
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
  for (const auto &[i, p] : llvm::enumerate(launch.params)) {
    if (p.workspace < 0)
      continue;
    if (p.workspace >= int64_t(kernel.workspace.size()))
      return corrupt(at + ".params", "names a workspace buffer the kernel "
                                     "does not have");
    const Workspace &buffer = kernel.workspace[p.workspace];
    if (p.field == Param::Field::TensorMap) {
      if (llvm::Error err = checkWorkspaceMap(buffer, p, at + ".params", i))
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

/// Every parameter names an operand the kernel has; a tensor map has a view
/// of the operand the key gives it and a box TMA takes; an operand passed as a
/// memref descriptor passes all of it (pointers, offset, every size and
/// stride); q, k, v, o (and lse, and for e4m3 the three descales) reach one of
/// its launches; workspace buffers are passed whole.
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

//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Verifiers name the offending operand and state what was expected; they
// never assert on user input. The contract is docs/ir.md.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "ClauseOrder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

namespace {

/// Prints a shape as "[1, 8, ?, 128]".
std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      ", ");
  os << "]";
  return s;
}

bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Checks that dimension `idx` of `type` (operand `name`) equals `expected`
/// taken from operand `refName`.
LogicalResult checkDim(Operation *op, MemRefType type, StringRef name,
                       unsigned idx, StringRef what, int64_t expected,
                       StringRef refName) {
  int64_t got = type.getDimSize(idx);
  if (dimsDiffer(got, expected))
    return op->emitOpError()
           << "operand '" << name << "' " << what << " must equal " << refName
           << "'s (" << dimStr(expected) << "), but got " << dimStr(got);
  return success();
}

/// The largest static length (B, H or N) of an operand: the kernels put one
/// CTA per BLOCK_M query rows on CUDA's grid (at most 2^31 - 1 in x) and keep
/// lengths in 32-bit registers where they can.
constexpr int64_t kMaxLength = INT32_MAX;

/// What every memref of the attn ops must be: a strided view (MLIR's memref
/// descriptor: offset, sizes, strides) of global memory, with unit stride
/// along D (the last dimension of a rank-4 operand) where it is static, or
/// with `vt` (an FP8 V, stored V^T) along D or Nk.
LogicalResult checkMemRef(Operation *op, MemRefType type, StringRef name,
                          bool vt = false) {
  if (Attribute space = type.getMemorySpace())
    return op->emitOpError()
           << "operand '" << name
           << "' must be in the default (global) memory space, but got "
              "memory space "
           << space;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return op->emitOpError()
           << "operand '" << name
           << "' must have a strided layout (identity or strided<[...]>), "
              "but got "
           << type.getLayout();
  auto notUnit = [](int64_t s) { return !ShapedType::isDynamic(s) && s != 1; };
  if (type.getRank() == 4 && vt && notUnit(strides[3]) && notUnit(strides[2]))
    return op->emitOpError() << "operand '" << name
                             << "' must have unit stride along D (or, for "
                                "FP8, along Nk: V^T storage), but got "
                                "strides ["
                             << strides[2] << ", " << strides[3] << "]";
  if (type.getRank() == 4 && !vt && notUnit(strides[3]))
    return op->emitOpError() << "operand '" << name
                             << "' must have unit stride along D, but got "
                                "stride "
                             << strides[3];
  return success();
}

/// Static lengths a launch can cover, and a static size in bytes that 64-bit
/// offsets can address.
LogicalResult checkExtent(Operation *op, MemRefType type, StringRef name) {
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(d) && d > kMaxLength)
      return op->emitOpError()
             << "operand '" << name << "' dimension " << i << " is " << d
             << ", but static lengths must be at most 2^31 - 1 (make it "
                "dynamic or split the call)";
  if (!type.hasStaticShape())
    return success();
  // Other element types are rejected later; count them as one byte here.
  Type elt = type.getElementType();
  std::optional<int64_t> bytes =
      elt.isIntOrFloat() ? std::max<int64_t>(elt.getIntOrFloatBitWidth() / 8, 1)
                         : 1;
  for (int64_t d : type.getShape())
    if (bytes)
      bytes = llvm::checkedMul<int64_t>(*bytes, d);
  if (!bytes)
    return op->emitOpError()
           << "operand '" << name << "' spans more than 2^63 - 1 bytes";
  return success();
}

/// Checks the rank, layout, memory space and static extent of a memref
/// operand and returns its type.
FailureOr<MemRefType> checkRank(Operation *op, Value v, StringRef name,
                                int64_t rank, StringRef layout,
                                bool vt = false) {
  auto type = cast<MemRefType>(v.getType());
  if (type.getRank() != rank)
    return op->emitOpError()
           << "operand '" << name << "' must be a rank-" << rank << " memref "
           << layout << ", but got rank " << type.getRank();
  if (failed(checkMemRef(op, type, name, vt)) ||
      failed(checkExtent(op, type, name)))
    return failure();
  return type;
}

/// A named operand; null when an optional one is absent.
using NamedValue = std::pair<StringRef, Value>;

/// Outputs are written while the inputs are still read: an output may not
/// be an input or another output (the same SSA value; aliasing views are
/// the caller's to avoid). The rule of every op with ins and outs.
LogicalResult checkNoAliasing(Operation *op, ArrayRef<NamedValue> inputs,
                              ArrayRef<NamedValue> outputs) {
  for (auto [i, out] : llvm::enumerate(outputs)) {
    if (!out.second)
      continue;
    SmallVector<NamedValue> others(inputs);
    llvm::append_range(others, outputs.take_front(i));
    for (const NamedValue &other : others)
      if (other.second == out.second)
        return op->emitOpError()
               << "operand '" << out.first
               << "' must not be the same buffer as operand '" << other.first
               << "' (outputs are written while the inputs are read)";
  }
  return success();
}

/// attn ops work on memrefs in func-level code. One inside an LLVM function
/// means a lowering to LLVM ran before the attn passes rewrote it: it would
/// be left behind, half-lowered (the legality check of both lowerings).
LogicalResult checkNotLowered(Operation *op) {
  if (!op->getParentOfType<LLVM::LLVMFuncOp>())
    return success();
  if (isa<AttentionGradOp, LoadRowsOp, StoreRowsOp, StoreTileOp, GradDeltaOp,
          GradDKDVOp, GradDQOp>(op))
    return op->emitOpError(
        "is inside an LLVM function: it was not rewritten before the lowering "
        "to LLVM (run attn-tile-grad and attn-decompose-grad first, or use "
        "--attn-to-cpu)");
  return op->emitOpError(
      "is inside an LLVM function: it was not rewritten before the lowering "
      "to LLVM (run attn-tile, attn-causal-split, [attn-distribute-rows,] "
      "attn-online-softmax first, or use --attn-to-cpu / --attn-to-cubin)");
}

/// A tile of `tile` columns does not fit a dimension of `dim`.
bool tileExceeds(int64_t tile, int64_t dim) {
  return !ShapedType::isDynamic(dim) && tile > dim;
}

bool isFP8(Type t) { return isa<Float8E4M3FNType>(t); }
bool isSupportedInput(Type t) { return t.isF16() || t.isBF16() || isFP8(t); }

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getHeadDim() {
  return cast<MemRefType>(getQ().getType()).getDimSize(3);
}

float AttentionOp::getScaleOrDefault() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

bool AttentionOp::isFP8() {
  return ::isFP8(cast<MemRefType>(getQ().getType()).getElementType());
}

namespace {
/// Q, K and V of a forward op (`attn.attention`, `attn.partial_attention`):
/// ranks, element types (FP8 only where `allowFP8`), batch, D, V = K's
/// shape, GQA head counts and D's range. `paged`: K and V are caches
/// [num_pages, page_size, Hkv, D]. Returns the types of Q and K.
FailureOr<std::pair<MemRefType, MemRefType>>
checkQKV(Operation *op, Value qv, Value kv, Value vv, bool allowFP8,
         bool paged = false) {
  StringRef kvLayout =
      paged ? "[num_pages, page_size, Hkv, D]" : "[B, Hkv, Nk, D]";
  FailureOr<MemRefType> q, k, v;
  if (failed(q = checkRank(op, qv, "q", 4, "[B, Hq, Nq, D]")) ||
      failed(k = checkRank(op, kv, "k", 4, kvLayout)) ||
      failed(v = checkRank(op, vv, "v", 4, kvLayout,
                           allowFP8 && isFP8(cast<MemRefType>(vv.getType())
                                                 .getElementType()))))
    return failure();
  Type qElt = q->getElementType();
  if (!(qElt.isF32() ||
        (allowFP8 ? isSupportedInput(qElt) : qElt.isF16() || qElt.isBF16())))
    return op->emitOpError() << "operand 'q' element type must be f16, bf16"
                             << (allowFP8 ? ", f32 or f8E4M3FN" : " or f32")
                             << ", but got " << qElt;
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"k", *k},
                            std::pair<StringRef, MemRefType>{"v", *v}})
    if (type.getElementType() != qElt)
      return op->emitOpError()
             << "operand '" << name << "' element type must match 'q' (" << qElt
             << "), but got " << type.getElementType();
  ArrayRef<int64_t> qs = q->getShape(), ks = k->getShape();
  if ((!paged && failed(checkDim(op, *k, "k", 0, "batch B", qs[0], "q"))) ||
      failed(checkDim(op, *k, "k", 3, "head dim D", qs[3], "q")))
    return failure();
  if (paged && ks[1] == 0)
    return op->emitOpError() << "operand 'k' page_size (dimension 1) must be "
                                "at least 1, but got 0";
  for (unsigned i = 0; i < 4; ++i)
    if (dimsDiffer(v->getDimSize(i), ks[i]))
      return op->emitOpError()
             << "operand 'v' shape must equal 'k' shape " << shapeStr(ks)
             << ", but got " << shapeStr(v->getShape());
  int64_t hq = qs[1], hkv = ks[paged ? 2 : 1];
  if (hkv == 0 || (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
                   hq % hkv != 0))
    return op->emitOpError() << "operand 'q' head count Hq (" << dimStr(hq)
                             << ") must be a positive multiple of operand 'k' "
                                "head count Hkv ("
                             << dimStr(hkv) << ") for GQA/MQA";
  int64_t d = qs[3];
  if (!ShapedType::isDynamic(d) && (d <= 0 || d > 256 || d % 8 != 0))
    return op->emitOpError() << "operand 'q' head dim D must be a multiple of "
                                "8 in [8, 256], but got "
                             << d;
  return std::make_pair(*q, *k);
}

/// An i32 operand of rank 1 or 2 whose dimension 0 is the batch B.
LogicalResult checkBatchI32(Operation *op, Value v, StringRef name,
                            int64_t rank, StringRef layout, int64_t batch) {
  FailureOr<MemRefType> t = checkRank(op, v, name, rank, layout);
  if (failed(t))
    return failure();
  if (!t->getElementType().isInteger(32))
    return op->emitOpError()
           << "operand '" << name << "' element type must be i32, but got "
           << t->getElementType();
  return checkDim(op, *t, name, 0, "batch B", batch, "q");
}

/// The `paged` clause: block_table i32 [B, max_pages] and cache_seqlens
/// i32 [B], given together, with f16/bf16/f32 operands.
LogicalResult checkPaged(Operation *op, Value blockTable, Value cacheSeqlens,
                         MemRefType q) {
  if (!blockTable && !cacheSeqlens)
    return success();
  if (!blockTable || !cacheSeqlens)
    return op->emitOpError() << "operands 'block_table' and 'cache_seqlens' "
                                "must be given together (paged K/V)";
  if (isFP8(q.getElementType()))
    return op->emitOpError() << "paged K/V takes f16, bf16 or f32 operands, "
                                "but 'q' is "
                             << q.getElementType();
  int64_t batch = q.getDimSize(0);
  if (failed(checkBatchI32(op, blockTable, "block_table", 2,
                           "[B, max_pages]", batch)))
    return failure();
  return checkBatchI32(op, cacheSeqlens, "cache_seqlens", 1, "[B]", batch);
}

LogicalResult checkScaleAttr(Operation *op, FloatAttr scale) {
  if (!scale)
    return success();
  double s = scale.getValueAsDouble();
  if (!(s > 0.0) || !std::isfinite(s))
    return op->emitOpError() << "attribute 'scale' must be a positive finite "
                                "number, but got "
                             << s;
  return success();
}

/// An fp32 memref of `rank` (`layout` names its dimensions) whose shape
/// after the leading split dimension S (static, >= 1) is `rows` where
/// static. Returns S.
FailureOr<int64_t> checkSplitBuffer(Operation *op, Value v, StringRef name,
                                    int64_t rank, StringRef layout,
                                    ArrayRef<int64_t> rows) {
  FailureOr<MemRefType> t = checkRank(op, v, name, rank, layout);
  if (failed(t))
    return failure();
  if (!t->getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name << "' element type must be f32, but got "
           << t->getElementType();
  int64_t splits = t->getDimSize(0);
  if (ShapedType::isDynamic(splits) || splits < 1)
    return op->emitOpError() << "operand '" << name
                             << "' split count S (dimension 0) must be static "
                                "and at least 1, but got "
                             << dimStr(splits);
  SmallVector<int64_t> expected = {splits};
  llvm::append_range(expected, rows);
  for (auto [got, want] : llvm::zip_equal(t->getShape(), expected))
    if (dimsDiffer(got, want))
      return op->emitOpError()
             << "operand '" << name << "' shape must be " << layout << " = "
             << shapeStr(expected) << ", but got " << shapeStr(t->getShape());
  return splits;
}

/// The split-KV workspace: o_partial fp32 [S, B, Hq, Nq, D] and lse_partial
/// fp32 [S, B, Hq, Nq] with the same S; `rows` is [B, Hq, Nq, D].
LogicalResult checkWorkspace(Operation *op, Value oPartial, Value lsePartial,
                             ArrayRef<int64_t> rows) {
  FailureOr<int64_t> splits =
      checkSplitBuffer(op, oPartial, "o_partial", 5, "[S, B, Hq, Nq, D]", rows);
  if (failed(splits))
    return failure();
  auto lse = cast<MemRefType>(lsePartial.getType());
  if (lse.getRank() == 4 && dimsDiffer(lse.getDimSize(0), *splits))
    return op->emitOpError()
           << "operand 'lse_partial' split count S must equal 'o_partial''s ("
           << *splits << "), but got " << dimStr(lse.getDimSize(0));
  return checkSplitBuffer(op, lsePartial, "lse_partial", 4, "[S, B, Hq, Nq]",
                          rows.drop_back());
}
} // namespace

namespace {
/// The rank-3 form of a descale operand: [B, heads, n] with n = ceil(len /
/// block) (per-block Q or K, `blockAttr` the attribute that gives the
/// block) or n = len (per-channel V, no attribute).
struct FineDescale {
  StringRef blockAttr, layout;
  int64_t heads, len;
  std::optional<int64_t> block;
};

/// An FP8 descale: fp32 [B, Hkv] (`perHead`), or the rank-3 form `fine`.
LogicalResult checkDescale(Operation *op, Value v, StringRef name,
                           ArrayRef<int64_t> perHead, const FineDescale &fine) {
  auto type = cast<MemRefType>(v.getType());
  int64_t rank = type.getRank();
  if (rank != 2 && rank != 3)
    return op->emitOpError()
           << "operand '" << name
           << "' must be a rank-2 memref [B, Hkv] or a rank-3 memref "
           << fine.layout << ", but got rank " << rank;
  if (failed(checkRank(op, v, name, rank, "")))
    return failure();
  if (!type.getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name << "' element type must be f32, but got "
           << type.getElementType();
  bool blocked = !fine.blockAttr.empty();
  if (blocked && rank == 2 && fine.block)
    return op->emitOpError()
           << "attribute '" << fine.blockAttr << "' needs a per-block '" << name
           << "' " << fine.layout << ", but '" << name << "' is [B, Hkv]";
  if (blocked && rank == 3 && !fine.block)
    return op->emitOpError()
           << "operand '" << name << "' is per block " << fine.layout
           << " and needs attribute '" << fine.blockAttr << "'";
  if (blocked && rank == 3 && *fine.block < 1)
    return op->emitOpError() << "attribute '" << fine.blockAttr
                             << "' must be at least 1, but got " << *fine.block;
  SmallVector<int64_t> expected(perHead);
  StringRef layout = "[B, Hkv]";
  if (rank == 3) {
    int64_t n = fine.len;
    if (blocked && !ShapedType::isDynamic(n))
      n = llvm::divideCeil(n, *fine.block);
    expected = {perHead[0], fine.heads, n};
    layout = fine.layout;
  }
  for (auto [got, want] : llvm::zip_equal(type.getShape(), expected))
    if (dimsDiffer(got, want))
      return op->emitOpError()
             << "operand '" << name << "' shape must be " << layout << " = "
             << shapeStr(expected) << ", but got " << shapeStr(type.getShape());
  return success();
}
} // namespace

bool AttentionOp::hasPerHeadDescales() {
  return isFP8() &&
         llvm::all_of(ValueRange{getQDescale(), getKDescale(), getVDescale()},
                      [](Value v) {
                        return cast<MemRefType>(v.getType()).getRank() == 2;
                      });
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)) ||
      failed(checkNoAliasing(op,
                             {{"q", getQ()},
                              {"k", getK()},
                              {"v", getV()},
                              {"q_descale", getQDescale()},
                              {"k_descale", getKDescale()},
                              {"v_descale", getVDescale()},
                              {"block_table", getBlockTable()},
                              {"cache_seqlens", getCacheSeqlens()}},
                             {{"o", getO()}, {"lse", getLse()}})))
    return failure();
  auto qk = checkQKV(op, getQ(), getK(), getV(), /*allowFP8=*/true,
                     /*paged=*/bool(getBlockTable()));
  if (failed(qk) ||
      failed(checkPaged(op, getBlockTable(), getCacheSeqlens(), qk->first)))
    return failure();
  FailureOr<MemRefType> o = checkRank(op, getO(), "o", 4, "[B, Hq, Nq, D]");
  if (failed(o))
    return failure();
  Type qElt = qk->first.getElementType();
  ArrayRef<int64_t> qs = qk->first.getShape();
  int64_t hkv = qk->second.getDimSize(1);
  Type oElt = ::isFP8(qElt) ? Type(BFloat16Type::get(getContext())) : qElt;
  if (o->getElementType() != oElt)
    return emitOpError() << "operand 'o' element type must be " << oElt
                         << (::isFP8(qElt) ? " for FP8 inputs"
                                           : " (the element type of 'q')")
                         << ", but got " << o->getElementType();
  for (unsigned i = 0; i < 4; ++i)
    if (dimsDiffer(o->getDimSize(i), qs[i]))
      return emitOpError() << "operand 'o' shape must equal 'q' shape "
                           << shapeStr(qs) << ", but got "
                           << shapeStr(o->getShape());

  // LSE.
  if (Value lse = getLse()) {
    auto lt = checkRank(op, lse, "lse", 3, "[B, Hq, Nq]");
    if (failed(lt))
      return failure();
    if (!lt->getElementType().isF32())
      return emitOpError() << "operand 'lse' element type must be f32, but got "
                           << lt->getElementType();
    SmallVector<int64_t> expected = {qs[0], qs[1], qs[2]};
    for (unsigned i = 0; i < 3; ++i)
      if (dimsDiffer(lt->getDimSize(i), expected[i]))
        return emitOpError() << "operand 'lse' shape must be [B, Hq, Nq] = "
                             << shapeStr(expected) << ", but got "
                             << shapeStr(lt->getShape());
  }

  if (failed(checkScaleAttr(op, getScaleAttr())))
    return failure();

  // FP8 descales.
  bool hasDescale = getQDescale() || getKDescale() || getVDescale();
  if (hasDescale && !(getQDescale() && getKDescale() && getVDescale()))
    return emitOpError() << "descale operands q_descale, k_descale and "
                            "v_descale must be given together";
  if (::isFP8(qElt) && !hasDescale)
    return emitOpError() << "FP8 (f8E4M3FN) operands 'q', 'k', 'v' require "
                            "descale operands (q_descale, k_descale, "
                            "v_descale), but none were given";
  if (!::isFP8(qElt) && hasDescale)
    return emitOpError() << "descale operands are only valid with FP8 "
                            "(f8E4M3FN) inputs, but 'q' is "
                         << qElt;
  if (!hasDescale && (getQDescaleBlock() || getKDescaleBlock()))
    return emitOpError() << "attributes 'q_descale_block' and "
                            "'k_descale_block' are only valid with FP8 "
                            "descales";
  if (!hasDescale)
    return success();
  int64_t nq = qs[2], nk = qk->second.getDimSize(2), d = qs[3];
  if (failed(checkDescale(op, getQDescale(), "q_descale", {qs[0], hkv},
                          {"q_descale_block", "[B, Hq, ceil(Nq / bm)]", qs[1],
                           nq, getQDescaleBlock()})) ||
      failed(checkDescale(op, getKDescale(), "k_descale", {qs[0], hkv},
                          {"k_descale_block", "[B, Hkv, ceil(Nk / bn)]", hkv,
                           nk, getKDescaleBlock()})))
    return failure();
  return checkDescale(op, getVDescale(), "v_descale", {qs[0], hkv},
                      {"", "[B, Hkv, D]", hkv, d, std::nullopt});
}

//===----------------------------------------------------------------------===//
// Split-KV: PartialAttentionOp, DecodeCombineOp
//===----------------------------------------------------------------------===//

int64_t PartialAttentionOp::getHeadDim() {
  return cast<MemRefType>(getQ().getType()).getDimSize(3);
}

float PartialAttentionOp::getScaleOrDefault() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

int64_t PartialAttentionOp::getNumSplits() {
  return cast<MemRefType>(getOPartial().getType()).getDimSize(0);
}

LogicalResult PartialAttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)) ||
      failed(checkNoAliasing(
          op,
          {{"q", getQ()},
           {"k", getK()},
           {"v", getV()},
           {"block_table", getBlockTable()},
           {"cache_seqlens", getCacheSeqlens()}},
          {{"o_partial", getOPartial()}, {"lse_partial", getLsePartial()}})))
    return failure();
  auto qk = checkQKV(op, getQ(), getK(), getV(), /*allowFP8=*/false,
                     /*paged=*/bool(getBlockTable()));
  if (failed(qk) ||
      failed(checkPaged(op, getBlockTable(), getCacheSeqlens(), qk->first)) ||
      failed(checkWorkspace(op, getOPartial(), getLsePartial(),
                            qk->first.getShape())))
    return failure();
  return checkScaleAttr(op, getScaleAttr());
}

LogicalResult DecodeCombineOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)) ||
      failed(checkNoAliasing(
          op, {{"o_partial", getOPartial()}, {"lse_partial", getLsePartial()}},
          {{"o", getO()}, {"lse", getLse()}})))
    return failure();
  FailureOr<MemRefType> o = checkRank(op, getO(), "o", 4, "[B, Hq, Nq, D]");
  if (failed(o))
    return failure();
  Type oElt = o->getElementType();
  if (!oElt.isF16() && !oElt.isBF16() && !oElt.isF32())
    return emitOpError() << "operand 'o' element type must be f16, bf16 or "
                            "f32, but got "
                         << oElt;
  ArrayRef<int64_t> os = o->getShape();
  if (failed(checkWorkspace(op, getOPartial(), getLsePartial(), os)))
    return failure();
  Value lse = getLse();
  if (!lse)
    return success();
  FailureOr<MemRefType> lt = checkRank(op, lse, "lse", 3, "[B, Hq, Nq]");
  if (failed(lt))
    return failure();
  if (!lt->getElementType().isF32())
    return emitOpError() << "operand 'lse' element type must be f32, but got "
                         << lt->getElementType();
  for (unsigned i = 0; i < 3; ++i)
    if (dimsDiffer(lt->getDimSize(i), os[i]))
      return emitOpError() << "operand 'lse' shape must be [B, Hq, Nq] = "
                           << shapeStr(os.drop_back()) << ", but got "
                           << shapeStr(lt->getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

int64_t AttentionGradOp::getHeadDim() {
  return cast<MemRefType>(getQ().getType()).getDimSize(3);
}

float AttentionGradOp::getScaleOrDefault() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

namespace {
/// Checks that every dimension of operand `name` equals `expected` (the
/// shape of operand `refName`) where both are static.
LogicalResult checkSameShape(Operation *op, MemRefType type, StringRef name,
                             ArrayRef<int64_t> expected, StringRef refName) {
  for (auto [got, want] : llvm::zip_equal(type.getShape(), expected))
    if (dimsDiffer(got, want))
      return op->emitOpError() << "operand '" << name << "' shape must equal '"
                               << refName << "' shape " << shapeStr(expected)
                               << ", but got " << shapeStr(type.getShape());
  return success();
}

bool isGradElement(Type t) { return t.isF16() || t.isBF16() || t.isF32(); }

/// Hq a positive multiple of Hkv (GQA/MQA), D a multiple of 8 in [8, 256],
/// where static.
LogicalResult checkHeadsAndDim(Operation *op, int64_t hq, int64_t hkv,
                               int64_t d) {
  if (hkv == 0 || (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
                   hq % hkv != 0))
    return op->emitOpError()
           << "operand 'q' head count Hq (" << dimStr(hq)
           << ") must be a positive multiple of operand 'k' head count Hkv ("
           << dimStr(hkv) << ") for GQA/MQA";
  if (!ShapedType::isDynamic(d) && (d <= 0 || d > 256 || d % 8 != 0))
    return op->emitOpError() << "operand 'q' head dim D must be a multiple "
                                "of 8 in [8, 256], but got "
                             << d;
  return success();
}
} // namespace

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)))
    return failure();
  // Rank, memory space, layout, D stride and extent, in operand order.
  StringRef qLayout = "[B, Hq, Nq, D]", kLayout = "[B, Hkv, Nk, D]";
  SmallVector<std::tuple<StringRef, Value, StringRef>> tensors = {
      {"q", getQ(), qLayout},   {"k", getK(), kLayout},
      {"v", getV(), kLayout},   {"o", getO(), qLayout},
      {"dO", getDO(), qLayout}, {"dQ", getDQ(), qLayout},
      {"dK", getDK(), kLayout}, {"dV", getDV(), kLayout}};
  SmallVector<MemRefType> types;
  for (auto [name, value, layout] : tensors) {
    FailureOr<MemRefType> t = checkRank(op, value, name, 4, layout);
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  FailureOr<MemRefType> lse = checkRank(op, getLse(), "lse", 3, "[B, Hq, Nq]");
  if (failed(lse))
    return failure();

  // dK/dV are written before the dQ nest reads K and V.
  if (failed(
          checkNoAliasing(op,
                          {{"q", getQ()},
                           {"k", getK()},
                           {"v", getV()},
                           {"o", getO()},
                           {"dO", getDO()},
                           {"lse", getLse()}},
                          {{"dQ", getDQ()}, {"dK", getDK()}, {"dV", getDV()}})))
    return failure();

  // Element types: one of f16, bf16, f32 for all eight; LSE is f32.
  Type qElt = types[0].getElementType();
  if (!isGradElement(qElt))
    return emitOpError() << "operand 'q' element type must be f16, bf16 or "
                            "f32 (there is no FP8 backward), but got "
                         << qElt;
  for (auto [i, t] : llvm::enumerate(types))
    if (t.getElementType() != qElt)
      return emitOpError() << "operand '" << std::get<0>(tensors[i])
                           << "' element type must match 'q' (" << qElt
                           << "), but got " << t.getElementType();
  if (!lse->getElementType().isF32())
    return emitOpError() << "operand 'lse' element type must be f32, but got "
                         << lse->getElementType();

  // Shapes: K agrees with Q on B and D; the rest match Q or K.
  ArrayRef<int64_t> qs = types[0].getShape(), ks = types[1].getShape();
  if (failed(checkDim(op, types[1], "k", 0, "batch B", qs[0], "q")) ||
      failed(checkDim(op, types[1], "k", 3, "head dim D", qs[3], "q")))
    return failure();
  for (auto [i, t] : llvm::enumerate(types)) {
    StringRef layout = std::get<2>(tensors[i]);
    if (i > 1 && failed(checkSameShape(op, t, std::get<0>(tensors[i]),
                                       layout == qLayout ? qs : ks,
                                       layout == qLayout ? "q" : "k")))
      return failure();
  }
  int64_t hq = qs[1], hkv = ks[1], d = qs[3];
  if (failed(checkHeadsAndDim(op, hq, hkv, d)))
    return failure();
  SmallVector<int64_t> lseShape = {qs[0], qs[1], qs[2]};
  for (auto [got, want] : llvm::zip_equal(lse->getShape(), lseShape))
    if (dimsDiffer(got, want))
      return emitOpError() << "operand 'lse' shape must be [B, Hq, Nq] = "
                           << shapeStr(lseShape) << ", but got "
                           << shapeStr(lse->getShape());
  if (auto scale = getScaleAttr()) {
    double s = scale.getValueAsDouble();
    if (!(s > 0.0) || !std::isfinite(s))
      return emitOpError() << "attribute 'scale' must be a positive finite "
                              "number, but got "
                           << s;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// VarlenAttentionOp
//===----------------------------------------------------------------------===//

int64_t VarlenAttentionOp::getHeadDim() {
  return cast<MemRefType>(getQ().getType()).getDimSize(2);
}

float VarlenAttentionOp::getScaleOrDefault() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

namespace {
/// A packed [total, H, D] operand: rank, memory space, layout, extent and
/// a unit stride along D where it is static.
FailureOr<MemRefType> checkPacked(Operation *op, Value v, StringRef name,
                                  StringRef layout) {
  FailureOr<MemRefType> t = checkRank(op, v, name, 3, layout);
  if (failed(t))
    return failure();
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)t->getStridesAndOffset(strides, offset);
  if (!ShapedType::isDynamic(strides[2]) && strides[2] != 1)
    return op->emitOpError() << "operand '" << name
                             << "' must have unit stride along D, but got "
                                "stride "
                             << strides[2];
  return t;
}

/// cu_seqlens_q / cu_seqlens_k: i32 [B + 1] with B + 1 >= 1.
FailureOr<MemRefType> checkCuSeqlens(Operation *op, Value v, StringRef name) {
  FailureOr<MemRefType> t = checkRank(op, v, name, 1, "of i32 [B + 1]");
  if (failed(t))
    return failure();
  if (!t->getElementType().isSignlessInteger(32))
    return op->emitOpError()
           << "operand '" << name << "' element type must be i32, but got "
           << t->getElementType();
  if (t->getDimSize(0) == 0)
    return op->emitOpError()
           << "operand '" << name
           << "' must have B + 1 >= 1 entries (prefix sums starting at 0), "
              "but got 0";
  return t;
}
} // namespace

int64_t VarlenAttentionOp::getNumSplits() {
  Value oPartial = getOPartial();
  return oPartial ? cast<MemRefType>(oPartial.getType()).getDimSize(0) : 1;
}

namespace {
/// K or V of a varlen op: packed [total_k, Hkv, D], or with paged K/V a
/// cache [num_pages, page_size, Hkv, D].
FailureOr<MemRefType> checkVarlenKV(Operation *op, Value v, StringRef name,
                                    bool paged) {
  if (paged)
    return checkRank(op, v, name, 4, "[num_pages, page_size, Hkv, D]");
  return checkPacked(op, v, name, "[total_k, Hkv, D]");
}

/// The block table of a varlen op: i32 [B, max_pages], B one less than
/// cu_seqlens_q's `entries`.
LogicalResult checkVarlenBlockTable(Operation *op, Value table,
                                    int64_t entries) {
  if (failed(checkBatchI32(op, table, "block_table", 2, "[B, max_pages]",
                           ShapedType::kDynamic)))
    return failure();
  int64_t rows = cast<MemRefType>(table.getType()).getDimSize(0);
  if (ShapedType::isDynamic(entries) || !dimsDiffer(rows, entries - 1))
    return success();
  return op->emitOpError() << "operand 'block_table' must have B = "
                           << entries - 1 << " rows (cu_seqlens_q has B + 1 = "
                           << entries << " entries), but got " << rows;
}

/// The split-KV workspace of a varlen op: o_partial fp32
/// [S, total_q, Hq, D] and lse_partial fp32 [S, Hq, total_q], one S.
LogicalResult checkVarlenWorkspace(Operation *op, Value oPartial,
                                   Value lsePartial, ArrayRef<int64_t> qs) {
  if (!oPartial)
    return success();
  FailureOr<int64_t> splits = checkSplitBuffer(
      op, oPartial, "o_partial", 4, "[S, total_q, Hq, D]", qs);
  if (failed(splits))
    return failure();
  auto lse = cast<MemRefType>(lsePartial.getType());
  if (lse.getRank() == 3 && dimsDiffer(lse.getDimSize(0), *splits))
    return op->emitOpError()
           << "operand 'lse_partial' split count S must equal 'o_partial''s ("
           << *splits << "), but got " << dimStr(lse.getDimSize(0));
  return failure(failed(checkSplitBuffer(op, lsePartial, "lse_partial", 3,
                                         "[S, Hq, total_q]",
                                         {qs[1], qs[0]})));
}
} // namespace

LogicalResult VarlenAttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)) ||
      failed(checkNoAliasing(op,
                             {{"q", getQ()},
                              {"k", getK()},
                              {"v", getV()},
                              {"cu_seqlens_q", getCuSeqlensQ()},
                              {"cu_seqlens_k", getCuSeqlensK()},
                              {"block_table", getBlockTable()}},
                             {{"o", getO()},
                              {"lse", getLse()},
                              {"o_partial", getOPartial()},
                              {"lse_partial", getLsePartial()}})))
    return failure();
  bool paged = bool(getBlockTable());
  FailureOr<MemRefType> q, k, v, o, cuQ, cuK;
  if (failed(q = checkPacked(op, getQ(), "q", "[total_q, Hq, D]")) ||
      failed(k = checkVarlenKV(op, getK(), "k", paged)) ||
      failed(v = checkVarlenKV(op, getV(), "v", paged)) ||
      failed(o = checkPacked(op, getO(), "o", "[total_q, Hq, D]")))
    return failure();
  Type qElt = q->getElementType();
  if (!isGradElement(qElt))
    return emitOpError() << "operand 'q' element type must be f16, bf16 or "
                            "f32 (there is no FP8 varlen attention), but got "
                         << qElt;
  for (auto [name, type] :
       {std::pair<StringRef, MemRefType>{"k", *k}, {"v", *v}, {"o", *o}})
    if (type.getElementType() != qElt)
      return emitOpError() << "operand '" << name
                           << "' element type must match 'q' (" << qElt
                           << "), but got " << type.getElementType();
  ArrayRef<int64_t> qs = q->getShape(), ks = k->getShape();
  // A paged cache holds Hkv and D in dimensions 2 and 3.
  unsigned kvHeads = paged ? 2 : 1;
  if (failed(checkDim(op, *k, "k", kvHeads + 1, "head dim D", qs[2], "q")) ||
      failed(checkSameShape(op, *v, "v", ks, "k")) ||
      failed(checkSameShape(op, *o, "o", qs, "q")))
    return failure();
  // As for attn.attention's paged clause: a page of no rows would divide
  // by zero in the tiling (j / page_size) and the tensor-core pipeline.
  if (paged && ks[1] == 0)
    return emitOpError() << "operand 'k' page_size (dimension 1) must be at "
                            "least 1, but got 0";
  int64_t hq = qs[1], hkv = ks[kvHeads], d = qs[2];
  if (failed(checkHeadsAndDim(op, hq, hkv, d)))
    return failure();
  if (failed(cuQ = checkCuSeqlens(op, getCuSeqlensQ(), "cu_seqlens_q")) ||
      failed(cuK = checkCuSeqlens(op, getCuSeqlensK(), "cu_seqlens_k")) ||
      failed(checkDim(op, *cuK, "cu_seqlens_k", 0, "length B + 1",
                      cuQ->getDimSize(0), "cu_seqlens_q")))
    return failure();
  if (paged && failed(checkVarlenBlockTable(op, getBlockTable(),
                                            cuQ->getDimSize(0))))
    return failure();
  if (failed(checkVarlenWorkspace(op, getOPartial(), getLsePartial(), qs)))
    return failure();
  if (Value lse = getLse()) {
    FailureOr<MemRefType> lt = checkRank(op, lse, "lse", 2, "[Hq, total_q]");
    if (failed(lt))
      return failure();
    if (!lt->getElementType().isF32())
      return emitOpError() << "operand 'lse' element type must be f32, but got "
                           << lt->getElementType();
    SmallVector<int64_t> expected = {hq, qs[0]};
    for (auto [got, want] : llvm::zip_equal(lt->getShape(), expected))
      if (dimsDiffer(got, want))
        return emitOpError() << "operand 'lse' shape must be [Hq, total_q] = "
                             << shapeStr(expected) << ", but got "
                             << shapeStr(lt->getShape());
  }
  return checkScaleAttr(op, getScaleAttr());
}

//===----------------------------------------------------------------------===//
// Tile ops
//===----------------------------------------------------------------------===//

namespace {
/// Checks that `t` is vector<shape x f32>.
LogicalResult checkF32Vector(Operation *op, Type t, StringRef name,
                             ArrayRef<int64_t> shape) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt || vt.getShape() != shape || !vt.getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name << "' must be "
           << VectorType::get(shape, Float32Type::get(op->getContext()))
           << ", but got " << t;
  return success();
}

/// A workgroup-memory tile [ceil(D / 64), rows, 64] of `elt`: the chunked
/// layout TMA writes and the tensor cores read.
/// Checks that `v` is a workgroup-memory tile [C, rows, 128 bytes] of
/// `elt`: `cols` (D, or the keys of V^T) in C chunks of 128-byte rows.
LogicalResult checkSharedTile(Operation *op, Value v, StringRef name,
                              int64_t rows, int64_t cols, Type elt) {
  auto t = cast<MemRefType>(v.getType());
  int64_t chunkCols = 1024 / elt.getIntOrFloatBitWidth();
  int64_t chunks = llvm::divideCeil(cols, chunkCols);
  auto space = dyn_cast_if_present<gpu::AddressSpaceAttr>(t.getMemorySpace());
  bool shared = space && space.getValue() == gpu::AddressSpace::Workgroup;
  if (!shared || t.getRank() != 3 || t.getElementType() != elt ||
      t.getShape() != ArrayRef<int64_t>{chunks, rows, chunkCols})
    return op->emitOpError()
           << "operand '" << name << "' must be a workgroup-memory tile ["
           << chunks << ", " << rows << ", " << chunkCols << "] of " << elt
           << " (" << cols << " columns in " << chunkCols
           << "-column chunks), but got " << t;
  return success();
}

/// O's TMA descriptor: [1, 1, 64, 64] boxes (one warpgroup's rows, one
/// 128-byte chunk of D) of O's element type, 128-byte swizzled, used with
/// the staging tile it is stored from.
LogicalResult checkStoreMap(EpilogueOp op, Value map, Type elt) {
  auto type = dyn_cast<nvgpu::TensorMapDescriptorType>(map.getType());
  MemRefType box = type ? type.getTensor() : MemRefType();
  // GQA packing: 64 / G queries of G heads, on O's [B, N, H, D] view.
  int64_t g = op.getGqaPack();
  SmallVector<int64_t> shape = {1, 1, kWarpgroupRows, 64};
  if (g > 1)
    shape = {1, kWarpgroupRows / g, g, 64};
  if (!box || box.getShape() != ArrayRef<int64_t>(shape) ||
      box.getElementType() != elt ||
      type.getSwizzle() != nvgpu::TensorMapSwizzleKind::SWIZZLE_128B)
    return op.emitOpError() << "operand 'o_map' must be a 128-byte swizzled "
                               "!nvgpu.tensormap.descriptor of ["
                            << llvm::interleaved(shape, ", ") << "] boxes of "
                            << elt << ", but got " << map.getType();
  if (!op.getStaging())
    return op.emitOpError() << "operand 'o_map' needs the 'staging' tile the "
                               "TMA stores read";
  return success();
}

/// m, l: vector<BLOCK_M x f32>; acc: vector<BLOCK_M x D x f32>.
LogicalResult checkState(Operation *op, Type m, Type l, Type acc,
                         int64_t blockM, int64_t d) {
  if (failed(checkF32Vector(op, m, "m", {blockM})) ||
      failed(checkF32Vector(op, l, "l", {blockM})) ||
      failed(checkF32Vector(op, acc, "acc", {blockM, d})))
    return failure();
  return success();
}

/// GQA packing: G >= 1 query heads per packed row group.
LogicalResult checkGqaPack(Operation *op, int64_t pack) {
  if (pack < 1)
    return op->emitOpError()
           << "attribute 'gqa_pack' must be at least 1, but got " << pack;
  return success();
}
} // namespace

LogicalResult LoadTileOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  if (failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<VectorType>(getResult().getType());
  if (src.getRank() != 4)
    return emitOpError() << "operand 'source' must be a rank-4 memref, but "
                            "got rank "
                         << src.getRank();
  if (failed(checkMemRef(*this, src, "source")))
    return failure();
  // f32: the backward's inputs (attn-tile-grad) may be f32.
  if (!isSupportedInput(src.getElementType()) && !src.getElementType().isF32())
    return emitOpError() << "operand 'source' element type must be f16, "
                            "bf16, f32 or f8E4M3FN, but got "
                         << src.getElementType();
  if (res.getRank() != 2 || res.getElementType() != src.getElementType() ||
      tileExceeds(res.getDimSize(1), src.getDimSize(3)))
    return emitOpError() << "result must be a [BLOCK_M, Dt] vector of the "
                            "source element type with Dt <= D ("
                         << dimStr(src.getDimSize(3)) << "), but got " << res;
  return success();
}

Value OnlineAttentionOp::getKeyCount(OpBuilder &b) {
  if (Value n = getNumKeys())
    return n;
  return b.createOrFold<memref::DimOp>(getLoc(), getK(), 2);
}

LogicalResult OnlineAttentionOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  auto q = cast<VectorType>(getQ().getType());
  if (q.getRank() != 2)
    return emitOpError() << "operand 'q' must be a [BLOCK_M, D] tile, but got "
                         << q;
  int64_t blockM = q.getDimSize(0), d = q.getDimSize(1);
  // The decomposition widens Q, K and V to f32 (arith.extf).
  if (!isSupportedInput(q.getElementType()) && !q.getElementType().isF32())
    return emitOpError() << "operand 'q' element type must be f16, bf16, f32 "
                            "or f8E4M3FN, but got "
                         << q.getElementType();
  for (auto [name, val] : {std::pair<StringRef, Value>{"k", getK()},
                           std::pair<StringRef, Value>{"v", getV()}}) {
    auto t = cast<MemRefType>(val.getType());
    if (t.getRank() != 4 || tileExceeds(d, t.getDimSize(3)) ||
        t.getElementType() != q.getElementType())
      return emitOpError() << "operand '" << name
                           << "' must be a [B, Hkv, Nk, D >= " << d
                           << "] memref of " << q.getElementType()
                           << ", but got " << t;
    if (failed(checkMemRef(*this, t, name,
                           /*vt=*/name == "v" &&
                               isFP8(t.getElementType()))))
      return failure();
  }
  if (!isValidBlockN(getBlockN()))
    return emitOpError() << "attribute 'block_n' must be in [1, " << kMaxBlockN
                         << "], but got " << getBlockN();
  double scale = getScale().convertToDouble();
  if (!(scale > 0.0) || !std::isfinite(scale))
    return emitOpError() << "attribute 'scale' must be a positive finite "
                            "number, but got "
                         << scale;
  int64_t lanes = getRowLanes();
  if (lanes < 1 || lanes > 32 || !llvm::isPowerOf2_64(lanes))
    return emitOpError() << "attribute 'row_lanes' must be a power of two in "
                            "[1, 32], but got "
                         << lanes;
  if (lanes > 1 && blockM != 1)
    return emitOpError() << "attribute 'row_lanes' > 1 requires a one-row "
                            "tile, but 'q' has "
                         << blockM << " rows";
  bool causal = getMask() == MaskKind::causal;
  if (causal != static_cast<bool>(getCausalOffset()))
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  if (failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  for (auto [name, val] :
       {std::pair<StringRef, Value>{"qk_descale", getQkDescale()},
        {"row_descale", getRowDescale()},
        {"key_descale", getKeyDescale()}})
    if (val && !isFP8(q.getElementType()))
      return emitOpError() << "operand '" << name
                           << "' is only valid for an f8E4M3FN tile, but 'q' "
                              "is "
                           << q.getElementType();
  if (Value rows = getRowDescale())
    if (failed(checkF32Vector(*this, rows.getType(), "row_descale", {blockM})))
      return failure();
  if (Value keys = getKeyDescale())
    if (failed(checkF32Vector(*this, keys.getType(), "key_descale",
                              {int64_t(getBlockN())})))
      return failure();
  if (Value table = getBlockTable()) {
    auto t = cast<MemRefType>(table.getType());
    if (t.getRank() != 2 || !t.getElementType().isInteger(32))
      return emitOpError() << "operand 'block_table' must be an i32 "
                              "[B, max_pages] memref, but got "
                           << t;
    if (!getNumKeys())
      return emitOpError() << "operand 'num_keys' is required with "
                              "'block_table' (the sequence's key count)";
    if (getKeyOffset())
      return emitOpError() << "operand 'key_offset' (varlen) cannot be "
                              "combined with 'block_table' (paged K/V)";
  }
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}

LogicalResult EpilogueOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  auto acc = dyn_cast<VectorType>(getAcc().getType());
  if (!acc || acc.getRank() != 2)
    return emitOpError() << "operand 'acc' must be a [BLOCK_M, D] f32 tile";
  int64_t blockM = acc.getDimSize(0), d = acc.getDimSize(1);
  if (failed(checkState(getOperation(), getM().getType(), getL().getType(), acc,
                        blockM, d)))
    return failure();
  auto o = cast<MemRefType>(getO().getType());
  if (o.getRank() != 4 || tileExceeds(d, o.getDimSize(3)))
    return emitOpError() << "operand 'o' must be a [B, Hq, Nq, D >= " << d
                         << "] memref, but got " << o;
  if (failed(checkMemRef(*this, o, "o")))
    return failure();
  // O is the f32 accumulator, narrowed (arith.truncf) unless f32 (the
  // split-KV workspace).
  Type oElt = o.getElementType();
  if (!oElt.isF16() && !oElt.isBF16() && !oElt.isF32())
    return emitOpError() << "operand 'o' element type must be f16, bf16 or "
                            "f32, but got "
                         << o.getElementType();
  if (Value lse = getLse()) {
    auto lt = cast<MemRefType>(lse.getType());
    if (lt.getRank() != 3 || !lt.getElementType().isF32())
      return emitOpError() << "operand 'lse' must be an f32 [B, Hq, Nq] "
                              "memref, but got "
                           << lt;
    if (failed(checkMemRef(*this, lt, "lse")))
      return failure();
  }
  if (Value staging = getStaging()) {
    if (oElt.isF32())
      return emitOpError() << "operand 'staging' needs an f16 or bf16 'o', "
                              "but 'o' is f32";
    // Each consumer warpgroup stores its 64 rows as whole queries.
    if (kWarpgroupRows % getGqaPack() != 0)
      return emitOpError() << "operand 'staging' (the tensor-core epilogue) "
                              "needs gqa_pack to divide 64 (a warpgroup's "
                              "rows hold whole queries), but got "
                           << getGqaPack();
    if (failed(checkSharedTile(getOperation(), staging, "staging", blockM, d,
                               o.getElementType())))
      return failure();
  }
  if (Value channels = getChannelDescale())
    if (failed(
            checkF32Vector(*this, channels.getType(), "channel_descale", {d})))
      return failure();
  if (Value map = getOMap())
    return checkStoreMap(*this, map, o.getElementType());
  return success();
}

LogicalResult CombineStepOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  auto o = cast<VectorType>(getOS().getType());
  if (o.getRank() != 2 || !o.getElementType().isF32())
    return emitOpError() << "operand 'o_s' must be a [BLOCK_M, D] f32 tile, "
                            "but got "
                         << o;
  int64_t blockM = o.getDimSize(0), d = o.getDimSize(1);
  if (failed(checkF32Vector(*this, getLseS().getType(), "lse_s", {blockM})))
    return failure();
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}

//===----------------------------------------------------------------------===//
// Backward tile ops
//===----------------------------------------------------------------------===//

namespace {
/// An fp32 [B, H, N] memref (LSE, Delta).
LogicalResult checkRowsMemRef(Operation *op, Value v, StringRef name) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() != 3 || !t.getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name
           << "' must be an f32 [B, H, N] memref, but got " << t;
  return checkMemRef(op, t, name);
}

/// A [rows, D] tile of f16, bf16 or f32 (rows or D given: must match).
FailureOr<VectorType> checkGradTile(Operation *op, Value v, StringRef name,
                                    int64_t rows, int64_t d, Type elt) {
  auto t = cast<VectorType>(v.getType());
  bool ok = t.getRank() == 2 && isGradElement(t.getElementType()) &&
            (!elt || t.getElementType() == elt) &&
            (rows < 0 || t.getDimSize(0) == rows) &&
            (d < 0 || t.getDimSize(1) == d);
  if (!ok) {
    auto diag = op->emitOpError() << "operand '" << name << "' must be a [";
    diag << (rows < 0 ? "ROWS" : std::to_string(rows)) << ", "
         << (d < 0 ? "D" : std::to_string(d)) << "] tile of ";
    if (elt)
      diag << elt;
    else
      diag << "f16, bf16 or f32";
    diag << ", but got " << t;
    return failure();
  }
  return t;
}

LogicalResult checkScale(Operation *op, APFloat scale) {
  double s = scale.convertToDouble();
  if (!(s > 0.0) || !std::isfinite(s))
    return op->emitOpError() << "attribute 'scale' must be a positive finite "
                                "number, but got "
                             << s;
  return success();
}

/// What the two backward steps share: Q, dO [BLOCK_M, D] of one element
/// type, LSE and Delta rows, scale, and causal_offset with the causal mask.
FailureOr<VectorType> checkGradStep(Operation *op, Value q, Value dO, Value lse,
                                    Value delta, APFloat scale, MaskKind mask,
                                    Value causalOffset) {
  FailureOr<VectorType> qt = checkGradTile(op, q, "q", -1, -1, Type());
  if (failed(qt))
    return failure();
  int64_t blockM = qt->getDimSize(0), d = qt->getDimSize(1);
  if (failed(checkGradTile(op, dO, "dO", blockM, d, qt->getElementType())) ||
      failed(checkF32Vector(op, lse.getType(), "lse", {blockM})) ||
      failed(checkF32Vector(op, delta.getType(), "delta", {blockM})) ||
      failed(checkScale(op, scale)))
    return failure();
  if ((mask == MaskKind::causal) != static_cast<bool>(causalOffset))
    return op->emitOpError() << "operand 'causal_offset' must be present "
                                "exactly when mask is causal";
  return qt;
}
} // namespace

LogicalResult LoadRowsOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkRowsMemRef(*this, getSource(), "source")) ||
      failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  if (int64_t block = getRowBlock(); block < 1)
    return emitOpError() << "attribute 'row_block' must be at least 1, but got "
                         << block;
  auto res = cast<VectorType>(getResult().getType());
  if (res.getRank() != 1 || !res.getElementType().isF32())
    return emitOpError() << "result must be vector<BLOCK_M x f32>, but got "
                         << res;
  return success();
}

LogicalResult StoreRowsOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkRowsMemRef(*this, getDest(), "dest")))
    return failure();
  auto value = cast<VectorType>(getValue().getType());
  if (value.getRank() != 1 || !value.getElementType().isF32())
    return emitOpError() << "operand 'value' must be vector<BLOCK_M x f32>, "
                            "but got "
                         << value;
  return success();
}

LogicalResult StoreTileOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  auto value = cast<VectorType>(getValue().getType());
  if (value.getRank() != 2 || !value.getElementType().isF32())
    return emitOpError() << "operand 'value' must be a [ROWS, D] f32 tile, "
                            "but got "
                         << value;
  auto dest = cast<MemRefType>(getDest().getType());
  if (dest.getRank() != 4 || !isGradElement(dest.getElementType()) ||
      dimsDiffer(dest.getDimSize(3), value.getDimSize(1)))
    return emitOpError() << "operand 'dest' must be a [B, H, N, "
                         << value.getDimSize(1)
                         << "] memref of f16, bf16 or f32, but got " << dest;
  return checkMemRef(*this, dest, "dest");
}

LogicalResult GradDeltaOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> o = checkGradTile(*this, getO(), "o", -1, -1, Type());
  if (failed(o) || failed(checkGradTile(*this, getDO(), "dO", o->getDimSize(0),
                                        o->getDimSize(1), o->getElementType())))
    return failure();
  if (getDelta().getType() !=
      VectorType::get({o->getDimSize(0)}, Float32Type::get(getContext())))
    return emitOpError() << "result must be vector<" << o->getDimSize(0)
                         << "xf32>, but got " << getDelta().getType();
  return success();
}

LogicalResult GradDKDVOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> q =
      checkGradStep(*this, getQ(), getDO(), getLse(), getDelta(), getScale(),
                    getMask(), getCausalOffset());
  if (failed(q))
    return failure();
  int64_t d = q->getDimSize(1);
  FailureOr<VectorType> k =
      checkGradTile(*this, getK(), "k", -1, d, q->getElementType());
  if (failed(k))
    return failure();
  int64_t blockN = k->getDimSize(0);
  if (!isValidBlockN(blockN))
    return emitOpError() << "operand 'k' must have BLOCK_N in [1, "
                         << kMaxBlockN << "] rows, but got " << blockN;
  if (failed(
          checkGradTile(*this, getV(), "v", blockN, d, q->getElementType())) ||
      failed(checkF32Vector(*this, getDK().getType(), "dK", {blockN, d})) ||
      failed(checkF32Vector(*this, getDV().getType(), "dV", {blockN, d})))
    return failure();
  if (getMask() == MaskKind::bounds)
    return emitOpError() << "attribute 'mask' must be none or causal (rows "
                            "past Nq load as zero and contribute nothing), "
                            "but got bounds";
  return success();
}

LogicalResult GradDQOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> q =
      checkGradStep(*this, getQ(), getDO(), getLse(), getDelta(), getScale(),
                    getMask(), getCausalOffset());
  if (failed(q))
    return failure();
  int64_t d = q->getDimSize(1);
  for (auto [name, val] : {std::pair<StringRef, Value>{"k", getK()},
                           std::pair<StringRef, Value>{"v", getV()}}) {
    auto t = cast<MemRefType>(val.getType());
    if (t.getRank() != 4 || dimsDiffer(t.getDimSize(3), d) ||
        t.getElementType() != q->getElementType())
      return emitOpError() << "operand '" << name << "' must be a [B, Hkv, "
                           << "Nk, " << d << "] memref of "
                           << q->getElementType() << ", but got " << t;
    if (failed(checkMemRef(*this, t, name)))
      return failure();
  }
  if (!isValidBlockN(getBlockN()))
    return emitOpError() << "attribute 'block_n' must be in [1, " << kMaxBlockN
                         << "], but got " << getBlockN();
  return checkF32Vector(*this, getDQ().getType(), "dQ", {q->getDimSize(0), d});
}

//===----------------------------------------------------------------------===//
// Hopper pipeline ops
//===----------------------------------------------------------------------===//

LogicalResult WarpSpecializeOp::verify() {
  int64_t groups = getConsumerWarpgroups();
  if (groups < 1 || groups > kMaxConsumerWarpgroups)
    return emitOpError() << "attribute 'consumer_warpgroups' must be 1, 2 or "
                            "3, but got "
                         << groups;
  for (auto [name, regs] : {std::pair<StringRef, int64_t>{
                                "producer_registers", getProducerRegisters()},
                            {"consumer_registers", getConsumerRegisters()}})
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      return emitOpError() << "attribute '" << name
                           << "' must be a multiple of 8 in [24, 256] "
                              "(setmaxnreg), but got "
                           << regs;
  if (getPingPong() && groups < 2)
    return emitOpError() << "ping_pong needs two or three consumer "
                            "warpgroups, but got "
                         << groups;
  int64_t total =
      128 * (getProducerRegisters() + groups * getConsumerRegisters());
  if (total > kRegistersPerSM)
    return emitOpError() << "register budgets need " << total
                         << " registers per CTA, but an SM has "
                         << kRegistersPerSM;
  return success();
}

int64_t OnlineAttentionMmaOp::getBlockM() {
  return cast<MemRefType>(getQ().getType()).getDimSize(1);
}

int64_t OnlineAttentionMmaOp::getBlockN() {
  return cast<MemRefType>(getK().getType()).getDimSize(1);
}

bool OnlineAttentionMmaOp::isFP8() {
  return ::isFP8(cast<MemRefType>(getQ().getType()).getElementType());
}

LogicalResult OnlineAttentionMmaOp::verify() {
  int64_t d = getHeadDim();
  if (d <= 0 || d > 256 || d % 8 != 0)
    return emitOpError() << "attribute 'head_dim' must be a multiple of 8 in "
                            "[8, 256], but got "
                         << d;
  auto q = cast<MemRefType>(getQ().getType());
  Type elt = q.getElementType();
  bool fp8 = ::isFP8(elt);
  if (!elt.isF16() && !elt.isBF16() && !fp8)
    return emitOpError() << "operand 'q' element type must be f16, bf16 or "
                            "f8E4M3FN, but got "
                         << elt;
  if (q.getRank() != 3 || ShapedType::isDynamic(q.getDimSize(1)) ||
      q.getDimSize(1) % 64 != 0)
    return emitOpError() << "operand 'q' must be a [C, BLOCK_M, 128 bytes] "
                            "tile with BLOCK_M a multiple of 64, but got "
                         << q;
  int64_t blockM = getBlockM();
  if (failed(checkSharedTile(getOperation(), getQ(), "q", blockM, d, elt)))
    return failure();
  auto k = cast<MemRefType>(getK().getType());
  int64_t blockN = k.getRank() == 3 ? k.getDimSize(1) : 0;
  int64_t blockNStep = fp8 ? 32 : 16; // FP8: k32 steps of P V
  if (ShapedType::isDynamic(blockN) || blockN <= 0 ||
      blockN % blockNStep != 0 || blockN > 256)
    return emitOpError() << "operand 'k' must be a [C, BLOCK_N, 128 bytes] "
                            "tile with BLOCK_N a multiple of "
                         << blockNStep << " in [" << blockNStep
                         << ", 256], but got " << k;
  if (failed(checkSharedTile(getOperation(), getK(), "k", blockN, d, elt)))
    return failure();
  if (fp8 ? failed(checkSharedTile(getOperation(), getV(), "v", d, blockN,
                                   elt))
          : failed(checkSharedTile(getOperation(), getV(), "v", blockN, d,
                                   elt)))
    return failure();
  if (fp8 != static_cast<bool>(getQkDescale()))
    return emitOpError() << "operand 'qk_descale' must be present exactly "
                            "when the tiles are f8E4M3FN";
  double scale = getScale().convertToDouble();
  if (!(scale > 0.0) || !std::isfinite(scale))
    return emitOpError() << "attribute 'scale' must be a positive finite "
                            "number, but got "
                         << scale;
  if ((getMask() == MaskKind::causal) != static_cast<bool>(getCausalOffset()))
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  if (getUnfilledTail() && (fp8 || getMask() == MaskKind::none))
    return emitOpError() << "attribute 'unfilled_tail' needs f16 or bf16 "
                            "tiles and a mask (rows past Nk are masked and "
                            "V's zeroed)";
  if (failed(checkGqaPack(getOperation(), getGqaPack())))
    return failure();
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}

//===----------------------------------------------------------------------===//
// GradDKDVMmaOp
//===----------------------------------------------------------------------===//

int64_t GradDKDVMmaOp::getBlockM() {
  return cast<MemRefType>(getQ().getType()).getDimSize(1);
}

int64_t GradDKDVMmaOp::getBlockN() {
  return cast<MemRefType>(getK().getType()).getDimSize(1);
}

namespace {
/// Checks that `v` is an fp32 memref of `rank` (LSE, Delta: 3; dQ: 4).
LogicalResult checkF32MemRef(Operation *op, Value v, StringRef name,
                             int64_t rank) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == rank && t.getElementType().isF32())
    return success();
  return op->emitOpError() << "operand '" << name << "' must be a rank-"
                           << rank << " f32 memref, but got " << t;
}
} // namespace

LogicalResult GradDKDVMmaOp::verify() {
  int64_t d = getHeadDim();
  if (d != 64 && d != 128)
    return emitOpError() << "attribute 'head_dim' must be 64 or 128 (dK and "
                            "dV stay in registers), but got "
                         << d;
  Type elt = cast<MemRefType>(getQ().getType()).getElementType();
  if (!elt.isF16() && !elt.isBF16())
    return emitOpError() << "operand 'q' element type must be f16 or bf16, "
                            "but got "
                         << elt;
  Operation *op = getOperation();
  int64_t blockM = 64, blockN = 128;
  if (failed(checkSharedTile(op, getQ(), "q", blockM, d, elt)) ||
      failed(checkSharedTile(op, getDO(), "dO", blockM, d, elt)) ||
      failed(checkSharedTile(op, getK(), "k", blockN, d, elt)) ||
      failed(checkSharedTile(op, getV(), "v", blockN, d, elt)) ||
      failed(checkSharedTile(op, getDs(), "ds", blockM, blockN, elt)) ||
      failed(checkF32MemRef(op, getLseLog2(), "lse_log2", 3)) ||
      failed(checkF32MemRef(op, getDelta(), "delta", 3)) ||
      failed(checkF32MemRef(op, getDqAcc(), "dq_acc", 6)) ||
      failed(checkF32Vector(op, getDK().getType(), "dK", {blockN, d})) ||
      failed(checkF32Vector(op, getDV().getType(), "dV", {blockN, d})))
    return failure();
  // Read unguarded, a whole Q block at a time.
  for (auto [rows, name] :
       {std::pair<Value, StringRef>{getLseLog2(), "lse_log2"},
        {getDelta(), "delta"}}) {
    auto type = cast<MemRefType>(rows.getType());
    if (type.isDynamicDim(2) || type.getDimSize(2) % blockM != 0)
      return emitOpError() << "operand '" << name << "' must hold whole Q "
                           << "blocks (rows a multiple of " << blockM
                           << ", +inf and 0 past Nq), but got " << type;
  }
  auto stage = cast<MemRefType>(getDqStage().getType());
  auto space =
      dyn_cast_if_present<gpu::AddressSpaceAttr>(stage.getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !stage.getElementType().isF32() ||
      stage.getShape() != ArrayRef<int64_t>{2, blockM, d / 2})
    return emitOpError() << "operand 'dq_stage' must be a workgroup-memory "
                            "[2, 64, "
                         << d / 2 << "] f32 buffer, but got " << stage;
  auto acc = cast<MemRefType>(getDqAcc().getType());
  if (acc.getDimSize(3) != 2 || acc.getDimSize(4) != blockM ||
      acc.getDimSize(5) != d / 2)
    return emitOpError() << "operand 'dq_acc' must be [B, Hq, Q blocks, 2, "
                            "64, "
                         << d / 2 << "] tiles, but got " << acc;
  double scale = getScale().convertToDouble();
  if (!(scale > 0.0) || !std::isfinite(scale))
    return emitOpError() << "attribute 'scale' must be a positive finite "
                            "number, but got "
                         << scale;
  if (getMask() == MaskKind::bounds)
    return emitOpError() << "attribute 'mask' must be none or causal, but "
                            "got bounds";
  if ((getMask() == MaskKind::causal) != static_cast<bool>(getCausalOffset()))
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  return success();
}

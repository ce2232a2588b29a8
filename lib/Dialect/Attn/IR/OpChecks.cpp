//===- OpChecks.cpp - checks the attn verifiers share -----------------------===//
//
// Shapes, ranks, element types and operand roles, each check naming the
// offending operand and what was expected.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "OpChecks.h"

#include "attn/Transforms/CtaAttributes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InterleavedRange.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::checks {


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

/// What every memref of the attn ops must be: a strided view (MLIR's memref
/// descriptor: offset, sizes, strides) of global memory, with unit stride
/// along D (the last dimension of a rank-4 operand) where it is static, or
/// with `vt` (an FP8 V, stored V^T) along D or Nk.
LogicalResult checkMemRef(Operation *op, MemRefType type, StringRef name,
                          bool vt) {
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
                                bool vt) {
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


/// Q, K and V of a forward op (`attn.attention`, `attn.partial_attention`):
/// ranks, element types (FP8 only where `allowFP8`), batch, D, V = K's
/// shape, GQA head counts and D's range. `paged`: K and V are caches
/// [num_pages, page_size, Hkv, D]. Returns the types of Q and K.
FailureOr<std::pair<MemRefType, MemRefType>>
checkQKV(Operation *op, Value qv, Value kv, Value vv, bool allowFP8,
         bool paged) {
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

LogicalResult checkScale(Operation *op, double scale) {
  // The kernels scale S in f32: a subnormal scale is flushed to 0 by their
  // .ftz arithmetic, and one that rounds to 0 or overflows is not the scale.
  float f = static_cast<float>(scale);
  if (f >= std::numeric_limits<float>::min() && std::isfinite(f))
    return success();
  auto g = [](double v) { return llvm::formatv("{0}", llvm::format("%g", v)); };
  InFlightDiagnostic diag =
      op->emitOpError()
      << "attribute 'scale' must be a positive normal f32 (in ["
      << g(std::numeric_limits<float>::min()).str() << ", "
      << g(std::numeric_limits<float>::max()).str() << "]), but got "
      << g(scale).str();
  if (scale == 0)
    diag << " (a literal below f32's smallest subnormal also reads as 0)";
  return diag;
}

LogicalResult checkScaleAttr(Operation *op, FloatAttr scale) {
  return scale ? checkScale(op, scale.getValueAsDouble()) : success();
}

/// An f32 memref of `rank` (`layout` names its dimensions).
static FailureOr<MemRefType> checkF32Rank(Operation *op, Value v,
                                          StringRef name, int64_t rank,
                                          StringRef layout) {
  FailureOr<MemRefType> t = checkRank(op, v, name, rank, layout);
  if (failed(t))
    return failure();
  if (!t->getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name << "' element type must be f32, but got "
           << t->getElementType();
  return t;
}

LogicalResult checkPerQueryHead(Operation *op, Value v, StringRef name,
                                int64_t hq) {
  if (!v)
    return success();
  FailureOr<MemRefType> t = checkF32Rank(op, v, name, 1, "[Hq]");
  if (failed(t))
    return failure();
  if (dimsDiffer(t->getDimSize(0), hq))
    return op->emitOpError()
           << "operand '" << name
           << "' must have one value per query head, Hq = " << dimStr(hq)
           << ", but got " << dimStr(t->getDimSize(0));
  return success();
}

LogicalResult checkKeyMask(Operation *op, KeyMaskAttr mask, bool causal) {
  if (!mask || !mask.getPrefix() || causal || mask.getRight() >= 0)
    return success();
  return op->emitOpError()
         << "attribute 'key_mask' has a prefix but no right side and the op "
            "is not causal: every key is visible (prefix-LM is a prefix "
            "under `causal` or `right`)";
}

LogicalResult checkSoftcapAttr(Operation *op, FloatAttr softcap,
                               bool allowOff) {
  if (!softcap)
    return success();
  // The kernels cap log2-domain scores by softcap * log2(e) in f32.
  double v = softcap.getValueAsDouble();
  float f = static_cast<float>(v);
  float limit = std::nextafter(
      static_cast<float>(std::numeric_limits<float>::max() / M_LOG2E), 0.0f);
  if ((allowOff && v == 0) ||
      (f >= std::numeric_limits<float>::min() && f <= limit))
    return success();
  auto g = [](double x) { return llvm::formatv("{0}", llvm::format("%g", x)); };
  return op->emitOpError()
         << "attribute 'softcap' must be a positive normal f32 at most "
         << g(limit).str() << " (softcap * log2(e) must be finite)"
         << (allowOff ? " or 0 (off)" : "") << ", but got " << g(v).str();
}

/// An fp32 memref of `rank` (`layout` names its dimensions) whose shape
/// after the leading split dimension S (static, >= 1) is `rows` where
/// static. Returns S.
FailureOr<int64_t> checkSplitBuffer(Operation *op, Value v, StringRef name,
                                    int64_t rank, StringRef layout,
                                    ArrayRef<int64_t> rows) {
  FailureOr<MemRefType> t = checkF32Rank(op, v, name, rank, layout);
  if (failed(t))
    return failure();
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

LogicalResult checkWgFragment(Operation *op, Type t, StringRef name,
                              ArrayRef<int64_t> shape) {
  auto want = WgFragmentType::get(op->getContext(), shape,
                                  Float32Type::get(op->getContext()));
  if (t == want)
    return success();
  return op->emitOpError() << "operand '" << name << "' must be " << want
                           << ", but got " << t;
}

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

/// GQA packing: G >= 1 query heads per packed row group.
LogicalResult checkGqaPack(Operation *op, int64_t pack) {
  if (pack < 1)
    return op->emitOpError()
           << "attribute 'gqa_pack' must be at least 1, but got " << pack;
  return success();
}
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

} // namespace mlir::attn::checks

/// The name among `candidates` within two edits of `name`, if any.
static std::optional<StringRef> closest(StringRef name,
                                        ArrayRef<StringRef> candidates) {
  std::optional<StringRef> best;
  unsigned bestDistance = 3;
  for (StringRef c : candidates)
    if (unsigned d = name.edit_distance(c, true, bestDistance);
        d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  return best;
}

/// An attn.* attribute the dialect does not define: one of the op's own
/// with the prefix, or a misspelling of one of its own or a pass's.
static LogicalResult refusePrefixed(Operation *op, StringRef name,
                                    ArrayRef<StringRef> own) {
  StringRef bare = name.drop_front(strlen("attn."));
  SmallVector<StringRef> known(std::begin(kAttnOpAttrs),
                               std::end(kAttnOpAttrs));
  InFlightDiagnostic diag = op->emitOpError()
                            << "has no attribute '" << name << "' (";
  if (llvm::is_contained(kSpecAttrs, name))
    return diag << "a bundle kernel function's: put it on the func.func)";
  if (std::optional<StringRef> mine = closest(bare, own))
    return diag << "did you mean '" << *mine << "'?)";
  if (std::optional<StringRef> theirs = closest(name, known))
    return diag << "did you mean '" << *theirs << "'?)";
  diag << "the attn attributes passes set on attn ops are ";
  llvm::interleaveComma(known, diag);
  return diag << ")";
}

LogicalResult mlir::attn::verifyOwnAttributes(Operation *op) {
  SmallVector<StringRef> own;
  for (StringAttr name : op->getName().getAttributeNames())
    if (name != "operandSegmentSizes") // not written in the IR
      own.push_back(name.strref());
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    StringRef name = attr.getName().strref();
    if (name.starts_with("attn.")) {
      if (!llvm::is_contained(kAttnOpAttrs, name))
        return refusePrefixed(op, name, own);
      if (name == kConfigAttr && !isa<ConfigAttr>(attr.getValue()))
        return op->emitOpError()
               << "attribute '" << name
               << "' must be #attn.config<...> (attn-select-config's), but "
                  "got "
               << attr.getValue();
      continue; // a pass's annotation
    }
    if (name.contains('.'))
      continue; // another dialect's attribute
    InFlightDiagnostic diag =
        op->emitOpError() << "has no attribute '" << name << "' (";
    diag << "its attributes: ";
    llvm::interleaveComma(own, diag);
    return diag << ")";
  }
  return success();
}

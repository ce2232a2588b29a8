//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Verifiers name the offending operand and state what was expected; they
// never assert on user input. The contract is docs/ir.md.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "ClauseOrder.h"
#include "OpChecks.h"

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


using namespace mlir::attn::checks;

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
  return checks::isFP8(cast<MemRefType>(getQ().getType()).getElementType());
}

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
                              {"cache_seqlens", getCacheSeqlens()},
                              {"sinks", getSinks()},
                              {"alibi_slopes", getAlibiSlopes()}},
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
  Type oElt = checks::isFP8(qElt) ? Type(BFloat16Type::get(getContext())) : qElt;
  if (o->getElementType() != oElt)
    return emitOpError() << "operand 'o' element type must be " << oElt
                         << (checks::isFP8(qElt) ? " for FP8 inputs"
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

  if (failed(checkScaleAttr(op, getScaleAttr())) ||
      failed(checkSoftcapAttr(op, getSoftcapAttr(), /*allowOff=*/true)) ||
      failed(checkKeyMask(op, getKeyMaskAttr(), getCausal())) ||
      failed(checkPerQueryHead(op, getSinks(), "sinks", qs[1])) ||
      failed(checkPerQueryHead(op, getAlibiSlopes(), "alibi_slopes", qs[1])))
    return failure();

  // FP8 descales.
  bool hasDescale = getQDescale() || getKDescale() || getVDescale();
  if (hasDescale && !(getQDescale() && getKDescale() && getVDescale()))
    return emitOpError() << "descale operands q_descale, k_descale and "
                            "v_descale must be given together";
  if (checks::isFP8(qElt) && !hasDescale)
    return emitOpError() << "FP8 (f8E4M3FN) operands 'q', 'k', 'v' require "
                            "descale operands (q_descale, k_descale, "
                            "v_descale), but none were given";
  if (!checks::isFP8(qElt) && hasDescale)
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
           {"cache_seqlens", getCacheSeqlens()},
           {"alibi_slopes", getAlibiSlopes()}},
          {{"o_partial", getOPartial()}, {"lse_partial", getLsePartial()}})))
    return failure();
  auto qk = checkQKV(op, getQ(), getK(), getV(), /*allowFP8=*/false,
                     /*paged=*/bool(getBlockTable()));
  if (failed(qk) ||
      failed(checkPaged(op, getBlockTable(), getCacheSeqlens(), qk->first)) ||
      failed(checkWorkspace(op, getOPartial(), getLsePartial(),
                            qk->first.getShape())) ||
      failed(checkPerQueryHead(op, getAlibiSlopes(), "alibi_slopes",
                               qk->first.getDimSize(1))))
    return failure();
  if (failed(checkScaleAttr(op, getScaleAttr())))
    return failure();
  if (failed(checkSoftcapAttr(op, getSoftcapAttr(), /*allowOff=*/true)))
    return failure();
  return checkKeyMask(op, getKeyMaskAttr(), getCausal());
}

LogicalResult DecodeCombineOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)) ||
      failed(checkNoAliasing(op,
                             {{"o_partial", getOPartial()},
                              {"lse_partial", getLsePartial()},
                              {"sinks", getSinks()}},
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
  if (failed(checkWorkspace(op, getOPartial(), getLsePartial(), os)) ||
      failed(checkPerQueryHead(op, getSinks(), "sinks", os[1])))
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
                              {"block_table", getBlockTable()},
                              {"sinks", getSinks()},
                              {"alibi_slopes", getAlibiSlopes()}},
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
  if (failed(checkVarlenWorkspace(op, getOPartial(), getLsePartial(), qs)) ||
      failed(checkPerQueryHead(op, getSinks(), "sinks", hq)) ||
      failed(checkPerQueryHead(op, getAlibiSlopes(), "alibi_slopes", hq)))
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
  if (failed(checkScaleAttr(op, getScaleAttr())))
    return failure();
  if (failed(checkSoftcapAttr(op, getSoftcapAttr(), /*allowOff=*/true)))
    return failure();
  return checkKeyMask(op, getKeyMaskAttr(), getCausal());
}


//===- TileBuilders.cpp - vector IR shared by the tile-op decompositions --===//

#include "TileBuilders.h"
#include "CausalBounds.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

Value attn::splat(ImplicitLocOpBuilder &b, VectorType type, double value) {
  return arith::ConstantOp::create(
      b, DenseElementsAttr::get(
             type, FloatAttr::get(type.getElementType(), value).getValue()));
}

Value attn::toF32(ImplicitLocOpBuilder &b, Value v) {
  auto type = cast<VectorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  return arith::ExtFOp::create(b, type.clone(b.getF32Type()), v);
}

Value attn::broadcastRows(ImplicitLocOpBuilder &b, Value rows, int64_t d) {
  auto rowType = cast<VectorType>(rows.getType());
  int64_t bm = rowType.getDimSize(0);
  auto colMajor = VectorType::get({d, bm}, rowType.getElementType());
  Value bc = vector::BroadcastOp::create(b, colMajor, rows);
  return vector::TransposeOp::create(b, bc, ArrayRef<int64_t>{1, 0});
}

Value attn::rowDot(ImplicitLocOpBuilder &b, Value lhs, Value rhs) {
  auto type = cast<VectorType>(lhs.getType());
  Value zeros =
      splat(b, VectorType::get({type.getDimSize(0)}, b.getF32Type()), 0.0);
  return vector::MultiDimReductionOp::create(
      b, arith::MulFOp::create(b, lhs, rhs), zeros, ArrayRef<bool>{false, true},
      vector::CombiningKind::ADD);
}

Value attn::rowDotBroadcast(ImplicitLocOpBuilder &b, Value tile, Value row) {
  return rowDot(b, tile, vector::BroadcastOp::create(b, tile.getType(), row));
}

Value attn::addColumnSum(ImplicitLocOpBuilder &b, Value tile, Value acc) {
  int64_t rows = cast<VectorType>(tile.getType()).getDimSize(0);
  for (int64_t r = 0; r < rows; ++r)
    acc = arith::AddFOp::create(b, acc, vector::ExtractOp::create(b, tile, r));
  return acc;
}

Value attn::readKeyRow(ImplicitLocOpBuilder &b, Value mem, Value batch,
                       Value head, Value row, Value col, int64_t d) {
  auto memType = cast<MemRefType>(mem.getType());
  Type elt = memType.getElementType();
  Value pad = arith::ConstantOp::create(b, b.getZeroAttr(elt));
  Value v = vector::TransferReadOp::create(b, VectorType::get({d}, elt), mem,
                                           ValueRange{batch, head, row, col},
                                           pad, ArrayRef<bool>{true});
  return toF32(b, v);
}

/// A constant (not vector.step) so that GPU outlining sinks it into the
/// kernel.
Value attn::rowIndices(ImplicitLocOpBuilder &b, Value qPos, int64_t bm) {
  auto idxType = VectorType::get({bm}, b.getIndexType());
  SmallVector<APInt> iota;
  for (int64_t i = 0; i < bm; ++i)
    iota.emplace_back(64, i);
  Value offsets =
      arith::ConstantOp::create(b, DenseElementsAttr::get(idxType, iota));
  return arith::AddIOp::create(b, offsets,
                               vector::BroadcastOp::create(b, idxType, qPos));
}

/// `valid` (or null) and key in [lo(p), end(p)) of `mask` at positions p.
static Value maskedKeys(ImplicitLocOpBuilder &b, attn::KeyMaskAttr mask,
                        Value key, Value p, Value valid) {
  attn::KeyInterval interval = attn::keyInterval(b, b.getLoc(), mask, p);
  auto both = [&](Value x, Value y) {
    return x ? arith::AndIOp::create(b, x, y).getResult() : y;
  };
  if (interval.lo)
    valid = both(valid, arith::CmpIOp::create(b, arith::CmpIPredicate::sge, key,
                                              interval.lo));
  if (interval.end)
    valid = both(valid, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, key,
                                              interval.end));
  return valid;
}

Value attn::visibleKeys(ImplicitLocOpBuilder &b, int64_t bm, Value keyIdx,
                        Value numKeys, Value rowIdx, Value causalOffset,
                        KeyMaskAttr keyMask) {
  Value valid;
  if (numKeys) {
    Value inBounds =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, keyIdx, numKeys);
    valid = vector::BroadcastOp::create(b, VectorType::get({bm}, b.getI1Type()),
                                        inBounds);
  }
  if (!causalOffset)
    return valid;
  // Row i sees key j iff j <= i + causal_offset.
  auto idxType = VectorType::get({bm}, b.getIndexType());
  Value limit = arith::AddIOp::create(
      b, rowIdx, vector::BroadcastOp::create(b, idxType, causalOffset));
  Value key = vector::BroadcastOp::create(b, idxType, keyIdx);
  if (keyMask) {
    if (Value visible = maskedKeys(b, keyMask, key, limit, valid))
      return visible;
    return arith::ConstantOp::create( // a prefix with no right side
        b, DenseElementsAttr::get(VectorType::get({bm}, b.getI1Type()), true));
  }
  Value visible =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sle, key, limit);
  return valid ? arith::AndIOp::create(b, valid, visible) : visible;
}

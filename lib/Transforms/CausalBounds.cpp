//===- CausalBounds.cpp - which blocks a causal / tail block must mask ----===//

#include "CausalBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace {
/// max(x, 0) min hi.
Value clamp(OpBuilder &b, Location loc, Value x, Value hi) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value lo = b.createOrFold<arith::MaxSIOp>(loc, x, zero);
  return b.createOrFold<arith::MinSIOp>(loc, lo, hi);
}

Value addConst(OpBuilder &b, Location loc, Value x, int64_t c) {
  return arith::AddIOp::create(b, loc, x,
                               arith::ConstantIndexOp::create(b, loc, c));
}
} // namespace

attn::BlockSplit attn::keyBlockSplit(OpBuilder &b, Location loc,
                                     Value numKeys, Value qPos,
                                     Value causalOffset,
                                     Value numKeyBlocks, int64_t blockM,
                                     int64_t blockN, int64_t rowsPerQuery) {
  Value bn = arith::ConstantIndexOp::create(b, loc, blockN);
  Value nk = numKeys;
  if (!causalOffset)
    return {b.createOrFold<arith::DivUIOp>(loc, nk, bn), numKeyBlocks};
  // Keys visible to the first row of the block: [0, q_pos + offset + 1);
  // to the last row: [0, q_pos + BLOCK_M + offset).
  Value firstEnd, lastEnd;
  if (rowsPerQuery == 1) {
    Value diag = arith::AddIOp::create(b, loc, qPos, causalOffset);
    firstEnd = addConst(b, loc, diag, 1);
    lastEnd = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, qPos, causalOffset),
        arith::ConstantIndexOp::create(b, loc, blockM));
  } else {
    // Packed rows: the block's queries are q_pos / G .. (q_pos + BM - 1) / G.
    Value g = arith::ConstantIndexOp::create(b, loc, rowsPerQuery);
    Value first = arith::DivUIOp::create(b, loc, qPos, g);
    Value last =
        arith::DivUIOp::create(b, loc, addConst(b, loc, qPos, blockM - 1), g);
    firstEnd =
        addConst(b, loc, arith::AddIOp::create(b, loc, first, causalOffset), 1);
    lastEnd =
        addConst(b, loc, arith::AddIOp::create(b, loc, last, causalOffset), 1);
  }
  return {arith::DivUIOp::create(b, loc, clamp(b, loc, firstEnd, nk), bn),
          arith::CeilDivUIOp::create(b, loc, clamp(b, loc, lastEnd, nk), bn)};
}

attn::QueryBlockSplit attn::queryBlockSplit(OpBuilder &b, Location loc,
                                            Value kPos, Value causalOffset,
                                            Value numQBlocks, int64_t blockM,
                                            int64_t blockN) {
  Value bm = arith::ConstantIndexOp::create(b, loc, blockM);
  Value rows = arith::MulIOp::create(b, loc, numQBlocks, bm);
  // Rows from k_pos - offset on see key k_pos (the block's first); rows
  // from k_pos + BLOCK_N - 1 - offset on see all of its keys.
  Value first = arith::SubIOp::create(b, loc, kPos, causalOffset);
  Value firstFull = addConst(b, loc, first, blockN - 1);
  return {
      arith::DivUIOp::create(b, loc, clamp(b, loc, first, rows), bm),
      arith::CeilDivUIOp::create(b, loc, clamp(b, loc, firstFull, rows), bm)};
}

namespace {
/// An index constant of `like`'s type (index, or a vector of index).
Value constantLike(OpBuilder &b, Location loc, Value like, int64_t c) {
  Type type = like.getType();
  if (auto vec = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vec, b.getIndexAttr(c).getValue()));
  return arith::ConstantIndexOp::create(b, loc, c);
}

template <typename OpTy>
Value fold(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return b.createOrFold<OpTy>(loc, lhs, rhs);
}

/// `x` op `c`, for an index constant c.
template <typename OpTy>
Value foldConst(OpBuilder &b, Location loc, Value x, int64_t c) {
  return fold<OpTy>(b, loc, x, constantLike(b, loc, x, c));
}

/// The tighter of two bounds, either possibly null (unbounded).
template <typename OpTy>
Value tighter(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return fold<OpTy>(b, loc, x, y);
}

/// min(max(x, lo), hi).
Value clampTo(OpBuilder &b, Location loc, Value x, Value lo, Value hi) {
  return fold<arith::MinSIOp>(b, loc, fold<arith::MaxSIOp>(b, loc, x, lo), hi);
}
} // namespace

attn::KeyInterval attn::keyInterval(OpBuilder &b, Location loc,
                                    KeyMaskAttr mask, Value p) {
  Value lo, end;
  if (mask.getLeft() >= 0)
    lo = foldConst<arith::SubIOp>(b, loc, p, mask.getLeft());
  if (mask.getRight() >= 0)
    end = foldConst<arith::AddIOp>(b, loc, p, mask.getRight() + 1);
  if (std::optional<int64_t> chunk = mask.getChunk()) {
    Value start = foldConst<arith::MulIOp>(
        b, loc, foldConst<arith::FloorDivSIOp>(b, loc, p, *chunk), *chunk);
    lo = tighter<arith::MaxSIOp>(b, loc, lo, start);
    end = tighter<arith::MinSIOp>(
        b, loc, end, foldConst<arith::AddIOp>(b, loc, start, *chunk));
  }
  // Keys below the prefix are visible to every row (only without lo).
  if (std::optional<int64_t> prefix = mask.getPrefix(); prefix && end)
    end = fold<arith::MaxSIOp>(b, loc, end, constantLike(b, loc, end, *prefix));
  return {lo, end};
}

attn::KeyBlockRange attn::keyBlockRange(OpBuilder &b, Location loc,
                                        KeyMaskAttr mask, Value numKeys,
                                        Value qPos, Value causalOffset,
                                        Value loopBegin, Value loopEnd,
                                        int64_t blockM, int64_t blockN,
                                        int64_t rowsPerQuery) {
  // Key positions of the block's first and last rows.
  Value first = qPos;
  Value last = foldConst<arith::AddIOp>(b, loc, qPos, blockM - 1);
  if (rowsPerQuery > 1) {
    first = foldConst<arith::DivUIOp>(b, loc, first, rowsPerQuery);
    last = foldConst<arith::DivUIOp>(b, loc, last, rowsPerQuery);
  }
  first = fold<arith::AddIOp>(b, loc, first, causalOffset);
  last = fold<arith::AddIOp>(b, loc, last, causalOffset);
  KeyInterval firstRow = keyInterval(b, loc, mask, first);
  KeyInterval lastRow = keyInterval(b, loc, mask, last);

  // Key bounds clamped to [0, Nk], then in blocks: a block is visited if it
  // holds a key of [lo(first), end(last)) and full if it lies within
  // [lo(last), end(first)).
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto keys = [&](Value bound, Value unbounded) {
    return bound ? clampTo(b, loc, bound, zero, numKeys) : unbounded;
  };
  auto blocksBelow = [&](Value key) { // blocks wholly below key
    return foldConst<arith::DivUIOp>(b, loc, key, blockN);
  };
  auto blocksTo = [&](Value key) { // blocks holding a key below key
    return foldConst<arith::CeilDivUIOp>(b, loc, key, blockN);
  };
  Value begin = blocksBelow(keys(firstRow.lo, zero));
  Value end = blocksTo(keys(lastRow.end, numKeys));
  Value fullBegin = blocksTo(keys(lastRow.lo, zero));
  Value fullEnd = blocksBelow(keys(firstRow.end, numKeys));

  // begin <= fullBegin <= fullEnd <= end, inside the loop's range.
  begin = clampTo(b, loc, begin, loopBegin, loopEnd);
  end = clampTo(b, loc, end, begin, loopEnd);
  fullBegin = clampTo(b, loc, fullBegin, begin, end);
  fullEnd = clampTo(b, loc, fullEnd, fullBegin, end);
  return {begin, fullBegin, fullEnd, end};
}

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

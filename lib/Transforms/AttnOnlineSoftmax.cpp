//===- AttnOnlineSoftmax.cpp - tile ops -> exp2-domain online softmax -----===//
//
// Decomposes attn.load_tile, attn.online_attention and attn.epilogue into
// vector/arith/math IR. Scores are kept per key as vector<BLOCK_M x f32>
// (S transposed), so the row dimension BLOCK_M is the only vector dimension
// besides D: the same code serves a CTA tile (CPU) and a single row (one
// GPU thread after attn-distribute-rows).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "TileBuilders.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNONLINESOFTMAX
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Sums a one-row score across the `lanes` consecutive GPU lanes that hold
/// the slices of that row (butterfly of shuffle-xor).
Value sumAcrossLanes(ImplicitLocOpBuilder &b, Value s, int64_t lanes) {
  auto type = cast<VectorType>(s.getType());
  Value x = vector::ExtractOp::create(b, s, 0);
  for (int64_t offset = 1; offset < lanes; offset *= 2) {
    auto shfl = gpu::ShuffleOp::create(b, x, offset, /*width=*/32,
                                       gpu::ShuffleMode::XOR);
    x = arith::AddFOp::create(b, x, shfl.getShuffleResult());
  }
  return vector::BroadcastOp::create(b, type, x);
}

struct LowerLoadTile : OpRewritePattern<LoadTileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadTileOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type elt = op.getResult().getType().getElementType();
    Value pad = arith::ConstantOp::create(b, b.getZeroAttr(elt));
    // Rows past N are padded with zeros: tails never read out of bounds.
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
        op, op.getResult().getType(), op.getSource(),
        ValueRange{op.getBatch(), op.getHead(), op.getRow(), op.getCol()}, pad,
        ArrayRef<bool>{false, true});
    return success();
  }
};

/// Masks score S_j (key k_pos + j) per the op's mask kind.
Value maskScore(ImplicitLocOpBuilder &b, OnlineAttentionOp op, Value s,
                Value keyIdx, Value numKeys, Value rowIdx) {
  auto rowType = cast<VectorType>(s.getType());
  Value valid = visibleKeys(b, rowType.getDimSize(0), keyIdx, numKeys, rowIdx,
                            op.getCausalOffset());
  return arith::SelectOp::create(b, valid, s, splat(b, rowType, -INFINITY));
}

struct LowerOnlineAttention : OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto qType = cast<VectorType>(op.getQ().getType());
    int64_t bm = qType.getDimSize(0), d = qType.getDimSize(1);
    int64_t bn = op.getBlockN();
    auto rowType = VectorType::get({bm}, b.getF32Type());
    auto tileType = VectorType::get({bm, d}, b.getF32Type());

    // Q * scale * log2(e) (* qk_descale for FP8), once per tile
    // (loop-invariant, hoisted by LICM).
    double c = op.getScale().convertToDouble() * M_LOG2E;
    Value q = arith::ExtFOp::create(b, tileType, op.getQ());
    q = arith::MulFOp::create(b, q, splat(b, tileType, c));
    if (Value descale = op.getQkDescale())
      q = arith::MulFOp::create(
          b, q, vector::BroadcastOp::create(b, tileType, descale));

    bool masked = op.getMask() != MaskKind::none;
    Value numKeys = memref::DimOp::create(b, op.getK(), 2);
    Value lastKey = arith::SubIOp::create(
        b, numKeys, arith::ConstantIndexOp::create(b, 1));
    Value rowIdx;
    if (op.getMask() == MaskKind::causal)
      rowIdx = rowIndices(b, op.getQPos(), bm);

    // S_j = rowsum(Q * K[j]), masked. Key rows past Nk are never read.
    SmallVector<Value> scores, keyRows;
    Value zeros = splat(b, rowType, 0.0);
    for (int64_t j = 0; j < bn; ++j) {
      Value key = arith::AddIOp::create(
          b, op.getKPos(), arith::ConstantIndexOp::create(b, j));
      Value row = masked ? arith::MinSIOp::create(b, key, lastKey) : key;
      keyRows.push_back(row);
      Value k = readKeyRow(b, op.getK(), op.getBatch(), op.getKvHead(), row,
                           op.getDOffset(), d);
      Value prod = arith::MulFOp::create(
          b, q, vector::BroadcastOp::create(b, tileType, k));
      Value s = vector::MultiDimReductionOp::create(
          b, prod, zeros, ArrayRef<bool>{false, true},
          vector::CombiningKind::ADD);
      if (op.getRowLanes() > 1)
        s = sumAcrossLanes(b, s, op.getRowLanes());
      scores.push_back(masked ? maskScore(b, op, s, key, numKeys, rowIdx) : s);
    }

    // m_new = max(m, rowmax(S)); rows that saw no key keep m_safe = 0.
    Value mNew = op.getM();
    for (Value s : scores)
      mNew = arith::MaximumFOp::create(b, mNew, s);
    Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                        splat(b, rowType, -INFINITY));
    Value mSafe = arith::SelectOp::create(b, noKey, zeros, mNew);

    // alpha rescales the old state; P_j = exp2(S_j - m_safe).
    Value alpha =
        math::Exp2Op::create(b, arith::SubFOp::create(b, op.getM(), mSafe));
    Value l = arith::MulFOp::create(b, alpha, op.getL());
    Value acc =
        arith::MulFOp::create(b, op.getAcc(), broadcastRows(b, alpha, d));
    for (int64_t j = 0; j < bn; ++j) {
      Value p = math::Exp2Op::create(b, arith::SubFOp::create(b, scores[j], mSafe));
      l = arith::AddFOp::create(b, l, p);
      Value v = readKeyRow(b, op.getV(), op.getBatch(), op.getKvHead(),
                           keyRows[j], op.getDOffset(), d);
      acc = vector::OuterProductOp::create(b, tileType, p, v, acc);
    }
    rewriter.replaceOp(op, {mNew, l, acc});
    return success();
  }
};

struct LowerEpilogue : OpRewritePattern<EpilogueOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EpilogueOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto accType = cast<VectorType>(op.getAcc().getType());
    int64_t d = accType.getDimSize(1);
    auto rowType = cast<VectorType>(op.getL().getType());

    // O = acc / l; a row with l == 0 saw no key and has acc == 0: O = 0.
    Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, op.getL(),
                                        splat(b, rowType, 0.0));
    Value lSafe = arith::SelectOp::create(b, noKey, splat(b, rowType, 1.0),
                                          op.getL());
    Value inv = arith::DivFOp::create(b, splat(b, rowType, 1.0), lSafe);
    // FP8: O = acc * v_descale / l.
    if (Value descale = op.getVDescale())
      inv = arith::MulFOp::create(
          b, inv, vector::BroadcastOp::create(b, rowType, descale));
    Value o = arith::MulFOp::create(b, op.getAcc(), broadcastRows(b, inv, d));
    Type oElt = cast<MemRefType>(op.getO().getType()).getElementType();
    o = arith::TruncFOp::create(b, accType.clone(oElt), o);
    vector::TransferWriteOp::create(
        b, o, op.getO(),
        ValueRange{op.getBatch(), op.getHead(), op.getQPos(), op.getCol()},
        ArrayRef<bool>{false, true});

    // LSE = (m + log2 l) * ln 2, -inf for rows that saw no key; written by
    // the tile that holds column 0.
    if (Value lseMem = op.getLse()) {
      Value lse =
          arith::AddFOp::create(b, op.getM(), math::Log2Op::create(b, lSafe));
      lse = arith::MulFOp::create(b, lse, splat(b, rowType, M_LN2));
      lse = arith::SelectOp::create(b, noKey, splat(b, rowType, -INFINITY), lse);
      Value firstCol = arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq, op.getCol(),
          arith::ConstantIndexOp::create(b, 0));
      auto ifOp = scf::IfOp::create(b, firstCol, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      vector::TransferWriteOp::create(
          b, lse, lseMem, ValueRange{op.getBatch(), op.getHead(), op.getQPos()},
          ArrayRef<bool>{false});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The decomposition unrolls BLOCK_N keys over the tile's rows; bound that
/// work before doing it (kMaxUnrolledRows).
LogicalResult checkUnrollSize(Operation *root) {
  WalkResult res = root->walk([](OnlineAttentionOp op) {
    int64_t rows = cast<VectorType>(op.getQ().getType()).getDimSize(0);
    if (op.getBlockN() * rows <= kMaxUnrolledRows)
      return WalkResult::advance();
    op.emitOpError() << "attn-online-softmax unrolls block_n ("
                     << op.getBlockN() << ") keys over the tile's " << rows
                     << " rows, but at most " << kMaxUnrolledRows
                     << " key-rows per block compile in reasonable time; use "
                        "smaller tiles (e.g. block-m=64 block-n=64)";
    return WalkResult::interrupt();
  });
  return failure(res.wasInterrupted());
}

struct AttnOnlineSoftmaxPass
    : attn::impl::AttnOnlineSoftmaxBase<AttnOnlineSoftmaxPass> {
  void runOnOperation() override {
    if (failed(checkUnrollSize(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateOnlineSoftmaxPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateLoadTilePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLoadTile>(patterns.getContext());
}

void mlir::attn::populateOnlineSoftmaxPatterns(RewritePatternSet &patterns) {
  populateLoadTilePatterns(patterns);
  patterns.add<LowerOnlineAttention, LowerEpilogue>(patterns.getContext());
}

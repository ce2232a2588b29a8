//===- AttnDecomposeGrad.cpp - backward tile ops -> vector IR -------------===//
//
// Decomposes the backward tile ops of attn-tile-grad. As in
// attn-online-softmax, per-key quantities (S_j, P_j, dP_j, dS_j) are
// vector<BLOCK_M> columns and a block's BLOCK_N keys are unrolled.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "TileBuilders.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEGRAD
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Per-block or packed rows (`row_block`, `gqa_pack`): entries are not
/// contiguous, so each is read alone (as zero at or past N).
Value gatherRows(ImplicitLocOpBuilder &b, LoadRowsOp op, Value pad) {
  auto type = cast<VectorType>(op.getResult().getType());
  auto one = VectorType::get({1}, type.getElementType());
  Value g = arith::ConstantIndexOp::create(b, op.getGqaPack());
  Value block = arith::ConstantIndexOp::create(b, op.getRowBlock());
  Value rows = arith::ConstantOp::create(b, b.getZeroAttr(type));
  for (int64_t t = 0; t < type.getDimSize(0); ++t) {
    Value r = arith::AddIOp::create(b, op.getRow(),
                                    arith::ConstantIndexOp::create(b, t));
    Value head = op.getHead();
    if (op.getGqaPack() > 1) {
      head = arith::AddIOp::create(b, head, arith::RemUIOp::create(b, r, g));
      r = arith::DivUIOp::create(b, r, g);
    }
    Value entry = arith::DivUIOp::create(b, r, block);
    Value x = vector::TransferReadOp::create(
        b, one, op.getSource(), ValueRange{op.getBatch(), head, entry}, pad,
        ArrayRef<bool>{false});
    rows = vector::InsertOp::create(b, vector::ExtractOp::create(b, x, 0), rows,
                                    t);
  }
  return rows;
}

struct LowerLoadRows : OpRewritePattern<LoadRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadRowsOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value pad = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
    if (op.getRowBlock() > 1 || op.getGqaPack() > 1) {
      rewriter.replaceOp(op, gatherRows(b, op, pad));
      return success();
    }
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
        op, op.getResult().getType(), op.getSource(),
        ValueRange{op.getBatch(), op.getHead(), op.getRow()}, pad,
        ArrayRef<bool>{false});
    return success();
  }
};

struct LowerStoreRows : OpRewritePattern<StoreRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreRowsOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        op, op.getValue(), op.getDest(),
        ValueRange{op.getBatch(), op.getHead(), op.getRow()},
        ArrayRef<bool>{false});
    return success();
  }
};

struct LowerStoreTile : OpRewritePattern<StoreTileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreTileOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value v = op.getValue();
    auto type = cast<VectorType>(v.getType());
    Type elt = cast<MemRefType>(op.getDest().getType()).getElementType();
    if (elt != type.getElementType())
      v = arith::TruncFOp::create(b, type.clone(elt), v);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        op, v, op.getDest(),
        ValueRange{op.getBatch(), op.getHead(), op.getRow(), zero},
        ArrayRef<bool>{false, true});
    return success();
  }
};

struct LowerGradDelta : OpRewritePattern<GradDeltaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GradDeltaOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value o = toF32(b, op.getO());
    Value dO = toF32(b, op.getDO());
    rewriter.replaceOp(op, rowDot(b, o, dO));
    return success();
  }
};

/// What a backward step needs of its Q block, in f32: Q (for dK), Q * c
/// (for S, c = scale * log2 e), dO, LSE in log2 units (+inf where LSE is
/// -inf: a row without keys gets P = 0) and Delta.
struct QBlockF32 {
  Value q, qScaled, dO, lse2, delta;
  int64_t blockM, d;
};

QBlockF32 prepareQBlock(ImplicitLocOpBuilder &b, Value q, Value dO, Value lse,
                        Value delta, APFloat scale) {
  auto qType = cast<VectorType>(q.getType());
  QBlockF32 r;
  r.blockM = qType.getDimSize(0);
  r.d = qType.getDimSize(1);
  auto tileType = qType.clone(b.getF32Type());
  auto rowType = cast<VectorType>(lse.getType());
  r.q = toF32(b, q);
  r.qScaled = arith::MulFOp::create(
      b, r.q, splat(b, tileType, scale.convertToDouble() * M_LOG2E));
  r.dO = toF32(b, dO);
  Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, lse,
                                      splat(b, rowType, -INFINITY));
  Value lse2 = arith::MulFOp::create(b, lse, splat(b, rowType, M_LOG2E));
  r.lse2 = arith::SelectOp::create(b, noKey, splat(b, rowType, INFINITY), lse2);
  r.delta = delta;
  return r;
}

/// P_j and dS_j of key row (kRow, vRow), f32 vector<D>; `valid` (or null)
/// masks P_j to 0.
std::pair<Value, Value> recompute(ImplicitLocOpBuilder &b, const QBlockF32 &qb,
                                  Value kRow, Value vRow, Value valid) {
  Value s = rowDotBroadcast(b, qb.qScaled, kRow);
  Value p = math::Exp2Op::create(b, arith::SubFOp::create(b, s, qb.lse2));
  if (valid)
    p = arith::SelectOp::create(b, valid, p,
                                splat(b, cast<VectorType>(p.getType()), 0.0));
  Value dP = rowDotBroadcast(b, qb.dO, vRow);
  Value dS =
      arith::MulFOp::create(b, p, arith::SubFOp::create(b, dP, qb.delta));
  return {p, dS};
}

struct LowerGradDKDV : OpRewritePattern<GradDKDVOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GradDKDVOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    QBlockF32 qb = prepareQBlock(b, op.getQ(), op.getDO(), op.getLse(),
                                 op.getDelta(), op.getScale());
    auto rowType = VectorType::get({qb.blockM}, b.getF32Type());
    Value scale = splat(b, rowType, op.getScale().convertToDouble());
    Value k = toF32(b, op.getK()), v = toF32(b, op.getV());
    Value dK = op.getDK(), dV = op.getDV();
    bool causal = op.getMask() == MaskKind::causal;
    Value rowIdx = causal ? rowIndices(b, op.getQPos(), qb.blockM) : Value();
    int64_t blockN = cast<VectorType>(k.getType()).getDimSize(0);
    for (int64_t j = 0; j < blockN; ++j) {
      Value valid;
      if (causal) {
        Value key = arith::AddIOp::create(b, op.getKPos(),
                                          arith::ConstantIndexOp::create(b, j));
        valid = visibleKeys(b, qb.blockM, key, /*numKeys=*/Value(), rowIdx,
                            op.getCausalOffset());
      }
      Value kRow = vector::ExtractOp::create(b, k, j);
      Value vRow = vector::ExtractOp::create(b, v, j);
      auto [p, dS] = recompute(b, qb, kRow, vRow, valid);
      // dV[j] += P_j^T dO;  dK[j] += (dS_j * scale)^T Q.
      Value pdO = arith::MulFOp::create(b, broadcastRows(b, p, qb.d), qb.dO);
      Value dVj = addColumnSum(b, pdO, vector::ExtractOp::create(b, dV, j));
      Value dSq = arith::MulFOp::create(
          b, broadcastRows(b, arith::MulFOp::create(b, dS, scale), qb.d), qb.q);
      Value dKj = addColumnSum(b, dSq, vector::ExtractOp::create(b, dK, j));
      dV = vector::InsertOp::create(b, dVj, dV, j);
      dK = vector::InsertOp::create(b, dKj, dK, j);
    }
    rewriter.replaceOp(op, {dK, dV});
    return success();
  }
};

struct LowerGradDQ : OpRewritePattern<GradDQOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GradDQOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    QBlockF32 qb = prepareQBlock(b, op.getQ(), op.getDO(), op.getLse(),
                                 op.getDelta(), op.getScale());
    auto rowType = VectorType::get({qb.blockM}, b.getF32Type());
    auto tileType = VectorType::get({qb.blockM, qb.d}, b.getF32Type());
    Value scale = splat(b, rowType, op.getScale().convertToDouble());
    bool masked = op.getMask() != MaskKind::none;
    Value numKeys = memref::DimOp::create(b, op.getK(), 2);
    Value lastKey =
        arith::SubIOp::create(b, numKeys, arith::ConstantIndexOp::create(b, 1));
    bool causal = op.getMask() == MaskKind::causal;
    Value rowIdx = causal ? rowIndices(b, op.getQPos(), qb.blockM) : Value();
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value dQ = op.getDQ();
    for (int64_t j = 0, n = op.getBlockN(); j < n; ++j) {
      Value key = arith::AddIOp::create(b, op.getKPos(),
                                        arith::ConstantIndexOp::create(b, j));
      // Masked blocks clamp the row: keys past Nk are never read.
      Value row = masked ? arith::MinSIOp::create(b, key, lastKey) : key;
      Value kRow = readKeyRow(b, op.getK(), op.getBatch(), op.getKvHead(), row,
                              zero, qb.d);
      Value vRow = readKeyRow(b, op.getV(), op.getBatch(), op.getKvHead(), row,
                              zero, qb.d);
      Value valid = masked ? visibleKeys(b, qb.blockM, key, numKeys, rowIdx,
                                         op.getCausalOffset())
                           : Value();
      auto [p, dS] = recompute(b, qb, kRow, vRow, valid);
      // dQ += (dS_j * scale) (x) K[j].
      dQ = vector::OuterProductOp::create(
          b, tileType, arith::MulFOp::create(b, dS, scale), kRow, dQ);
    }
    rewriter.replaceOp(op, dQ);
    return success();
  }
};

/// The decomposition unrolls BLOCK_N keys over the BLOCK_M rows of a step,
/// bounded as attn-online-softmax's (kMaxUnrolledRows).
LogicalResult checkUnrollSize(Operation *root) {
  WalkResult res = root->walk([](Operation *op) {
    int64_t rows = 0, keys = 0;
    if (auto dq = dyn_cast<GradDQOp>(op)) {
      rows = cast<VectorType>(dq.getQ().getType()).getDimSize(0);
      keys = dq.getBlockN();
    } else if (auto dkdv = dyn_cast<GradDKDVOp>(op)) {
      rows = cast<VectorType>(dkdv.getQ().getType()).getDimSize(0);
      keys = cast<VectorType>(dkdv.getK().getType()).getDimSize(0);
    }
    if (rows * keys <= kMaxUnrolledRows)
      return WalkResult::advance();
    emitError(op->getLoc())
        << "attn-decompose-grad unrolls " << keys << " keys over the step's "
        << rows << " rows, but at most " << kMaxUnrolledRows
        << " key-rows per block compile in reasonable time; "
           "use smaller tiles (e.g. block-m=64 block-n=64)";
    return WalkResult::interrupt();
  });
  return failure(res.wasInterrupted());
}

struct AttnDecomposeGradPass
    : StrictOptions<attn::impl::AttnDecomposeGradBase<AttnDecomposeGradPass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    if (failed(checkUnrollSize(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateDecomposeGradPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateDecomposeGradPatterns(RewritePatternSet &patterns) {
  populateLoadTilePatterns(patterns);
  populateLoadRowsPatterns(patterns);
  patterns.add<LowerStoreRows, LowerStoreTile, LowerGradDelta, LowerGradDKDV,
               LowerGradDQ>(patterns.getContext());
}

void mlir::attn::populateLoadRowsPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLoadRows>(patterns.getContext());
}

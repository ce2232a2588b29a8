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
#include "attn/Transforms/StrictOptions.h"

#include "TileBuilders.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "mlir/Dialect/Math/IR/Math.h"

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

/// (head, query) of packed GQA row `row` (attn.load_tile): query row / G of
/// head `head + row % G`.
std::pair<Value, Value> unpackRow(ImplicitLocOpBuilder &b, Value head,
                                  Value row, int64_t pack) {
  Value g = arith::ConstantIndexOp::create(b, pack);
  return {arith::AddIOp::create(b, head, arith::RemUIOp::create(b, row, g)),
          arith::DivUIOp::create(b, row, g)};
}

/// Packed GQA rows are not contiguous: each row is read alone, as zero
/// where its query is at or past N.
Value loadPackedRows(ImplicitLocOpBuilder &b, LoadTileOp op, Value pad) {
  VectorType type = op.getResult().getType();
  auto rowType =
      VectorType::get({1, type.getDimSize(1)}, type.getElementType());
  Value tile = arith::ConstantOp::create(b, b.getZeroAttr(type));
  for (int64_t t = 0; t < type.getDimSize(0); ++t) {
    Value row = arith::AddIOp::create(b, op.getRow(),
                                      arith::ConstantIndexOp::create(b, t));
    auto [head, query] = unpackRow(b, op.getHead(), row, op.getGqaPack());
    Value r = vector::TransferReadOp::create(
        b, rowType, op.getSource(),
        ValueRange{op.getBatch(), head, query, op.getCol()}, pad,
        ArrayRef<bool>{false, true});
    tile = vector::InsertOp::create(b, vector::ExtractOp::create(b, r, 0), tile,
                                    t);
  }
  return tile;
}

struct LowerLoadTile : OpRewritePattern<LoadTileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadTileOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type elt = op.getResult().getType().getElementType();
    Value pad = arith::ConstantOp::create(b, b.getZeroAttr(elt));
    if (op.getGqaPack() > 1) {
      rewriter.replaceOp(op, loadPackedRows(b, op, pad));
      return success();
    }
    // Rows past N are padded with zeros: tails never read out of bounds.
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
        op, op.getResult().getType(), op.getSource(),
        ValueRange{op.getBatch(), op.getHead(), op.getRow(), op.getCol()}, pad,
        ArrayRef<bool>{false, true});
    return success();
  }
};

/// The query index of each tile row: packed GQA row r is query r / G.
Value queryIndices(ImplicitLocOpBuilder &b, Value qPos, int64_t bm,
                   int64_t pack) {
  Value rows = rowIndices(b, qPos, bm);
  if (pack == 1)
    return rows;
  auto idxType = VectorType::get({bm}, b.getIndexType());
  Value g = vector::BroadcastOp::create(
      b, idxType, arith::ConstantIndexOp::create(b, pack));
  return arith::DivUIOp::create(b, rows, g);
}

/// Logit softcapping of a log2-domain score s = S * log2(e): S' = c *
/// tanh(S / c) is s' = c2 * tanh(s / c2) with c2 = c * log2(e).
Value capScore(ImplicitLocOpBuilder &b, Value s, double softcap) {
  auto type = cast<VectorType>(s.getType());
  double c2 = softcap * M_LOG2E;
  Value t = math::TanhOp::create(
      b, arith::MulFOp::create(b, s, splat(b, type, 1.0 / c2)));
  return arith::MulFOp::create(b, t, splat(b, type, c2));
}

/// ALiBi: s - slope * |p - key| per row, p = row + offset (the slopes are
/// in the log2 domain already).
Value addAlibi(ImplicitLocOpBuilder &b, Value s, Value slopes, Value rowIdx,
               Value offset, Value key) {
  auto rowType = cast<VectorType>(s.getType());
  auto idxType = rowType.clone(b.getIndexType());
  Value distance = arith::SubIOp::create(
      b,
      arith::AddIOp::create(b, rowIdx,
                            vector::BroadcastOp::create(b, idxType, offset)),
      vector::BroadcastOp::create(b, idxType, key));
  Value i64 =
      arith::IndexCastOp::create(b, rowType.clone(b.getI64Type()), distance);
  Value f = math::AbsFOp::create(b, arith::SIToFPOp::create(b, rowType, i64));
  return arith::SubFOp::create(b, s, arith::MulFOp::create(b, slopes, f));
}

/// Masks score S_j (key k_pos + j) per the op's mask kind.
Value maskScore(ImplicitLocOpBuilder &b, OnlineAttentionOp op, Value s,
                Value keyIdx, Value numKeys, Value rowIdx) {
  auto rowType = cast<VectorType>(s.getType());
  // ALiBi keeps causal_offset on steps of any mask: only `causal` uses it.
  Value offset =
      op.getMask() == MaskKind::causal ? op.getCausalOffset() : Value();
  Value valid =
      visibleKeys(b, rowType.getDimSize(0), keyIdx, numKeys,
                  offset ? rowIdx : Value(), offset, op.getKeyMaskAttr());
  return arith::SelectOp::create(b, valid, s, splat(b, rowType, -INFINITY));
}

/// Where key `key` of the step's sequence lies in k/v: (batch, row) of
/// [B, Hkv, Nk, D] (varlen: the row past `key_offset`), or with a block
/// table (page, row in page) of the [num_pages, Hkv, page_size, D] view.
std::pair<Value, Value> keyLocation(ImplicitLocOpBuilder &b,
                                    OnlineAttentionOp op, Value key) {
  Value table = op.getBlockTable();
  if (Value offset = op.getKeyOffset())
    key = arith::AddIOp::create(b, key, offset);
  if (!table)
    return {op.getBatch(), key};
  Value pageSize = memref::DimOp::create(b, op.getK(), 2);
  Value entry = memref::LoadOp::create(
      b, table,
      ValueRange{op.getBatch(), arith::DivUIOp::create(b, key, pageSize)});
  return {arith::IndexCastOp::create(b, b.getIndexType(), entry),
          arith::RemUIOp::create(b, key, pageSize)};
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
    Value q = toF32(b, op.getQ());
    q = arith::MulFOp::create(b, q, splat(b, tileType, c));
    if (Value descale = op.getQkDescale())
      q = arith::MulFOp::create(
          b, q, vector::BroadcastOp::create(b, tileType, descale));
    // Per-block Q descales: row i of S scaled by row_descale[i].
    if (Value rows = op.getRowDescale())
      q = arith::MulFOp::create(b, q, broadcastRows(b, rows, d));

    bool masked = op.getMask() != MaskKind::none;
    Value numKeys = op.getKeyCount(b);
    Value lastKey = arith::SubIOp::create(
        b, numKeys, arith::ConstantIndexOp::create(b, 1));
    Value rowIdx;
    if (op.getMask() == MaskKind::causal || op.getAlibiSlopes())
      rowIdx = queryIndices(b, op.getQPos(), bm, op.getGqaPack());

    // S_j = rowsum(Q * K[j]), masked. Key rows past Nk are never read.
    SmallVector<Value> scores;
    SmallVector<std::pair<Value, Value>> keyRows;
    Value zeros = splat(b, rowType, 0.0);
    for (int64_t j = 0; j < bn; ++j) {
      Value key = arith::AddIOp::create(
          b, op.getKPos(), arith::ConstantIndexOp::create(b, j));
      Value row = masked ? arith::MinSIOp::create(b, key, lastKey) : key;
      auto [batch, at] = keyLocation(b, op, row);
      keyRows.push_back({batch, at});
      Value k = readKeyRow(b, op.getK(), batch, op.getKvHead(), at,
                           op.getDOffset(), d);
      Value prod = arith::MulFOp::create(
          b, q, vector::BroadcastOp::create(b, tileType, k));
      Value s = vector::MultiDimReductionOp::create(
          b, prod, zeros, ArrayRef<bool>{false, true},
          vector::CombiningKind::ADD);
      if (op.getRowLanes() > 1)
        s = sumAcrossLanes(b, s, op.getRowLanes());
      // Per-block K descales: S_j scaled by key_descale[j].
      if (Value keys = op.getKeyDescale())
        s = arith::MulFOp::create(
            b, s,
            vector::BroadcastOp::create(b, rowType,
                                        vector::ExtractOp::create(b, keys, j)));
      if (FloatAttr softcap = op.getSoftcapAttr())
        s = capScore(b, s, softcap.getValueAsDouble());
      if (Value slopes = op.getAlibiSlopes())
        s = addAlibi(b, s, slopes, rowIdx, op.getCausalOffset(), key);
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
      Value v = readKeyRow(b, op.getV(), keyRows[j].first, op.getKvHead(),
                           keyRows[j].second, op.getDOffset(), d);
      acc = vector::OuterProductOp::create(b, tileType, p, v, acc);
    }
    rewriter.replaceOp(op, {mNew, l, acc});
    return success();
  }
};

/// Stores the rows of `value` ([BM, Dt] or [BM]) at `indices` (batch,
/// head, row[, col]) of `dest`; rows at or past N are dropped. Packed GQA
/// rows (`pack` > 1) are stored one by one at their (head, query).
void storeRows(ImplicitLocOpBuilder &b, Value value, Value dest,
               SmallVector<Value> indices, int64_t pack) {
  auto type = cast<VectorType>(value.getType());
  SmallVector<bool> inBounds(type.getRank(), true);
  inBounds[0] = false;
  if (pack == 1) {
    vector::TransferWriteOp::create(b, value, dest, indices, inBounds);
    return;
  }
  Value head = indices[1], row = indices[2];
  for (int64_t t = 0; t < type.getDimSize(0); ++t) {
    Value r =
        arith::AddIOp::create(b, row, arith::ConstantIndexOp::create(b, t));
    std::tie(indices[1], indices[2]) = unpackRow(b, head, r, pack);
    Value slice = vector::ExtractStridedSliceOp::create(
        b, value, ArrayRef<int64_t>{t}, ArrayRef<int64_t>{1},
        ArrayRef<int64_t>{1});
    vector::TransferWriteOp::create(b, slice, dest, indices, inBounds);
  }
}

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
    // Per-channel V descales: column c scaled by channel_descale[c].
    if (Value channels = op.getChannelDescale())
      o = arith::MulFOp::create(
          b, o, vector::BroadcastOp::create(b, accType, channels));
    Type oElt = cast<MemRefType>(op.getO().getType()).getElementType();
    if (oElt != accType.getElementType())
      o = arith::TruncFOp::create(b, accType.clone(oElt), o);
    int64_t pack = op.getGqaPack();
    storeRows(b, o, op.getO(),
              {op.getBatch(), op.getHead(), op.getQPos(), op.getCol()}, pack);

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
      storeRows(b, lse, lseMem, {op.getBatch(), op.getHead(), op.getQPos()},
                pack);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// One split folded into the state (attn.combine_step), in the log2 domain.
struct LowerCombineStep : OpRewritePattern<CombineStepOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CombineStepOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto rowType = cast<VectorType>(op.getM().getType());
    int64_t d = cast<VectorType>(op.getAcc().getType()).getDimSize(1);
    Value x =
        arith::MulFOp::create(b, op.getLseS(), splat(b, rowType, M_LOG2E));
    // m_new = max(m, x); m_safe = 0 while no split saw a key: no NaN.
    Value mNew = arith::MaximumFOp::create(b, op.getM(), x);
    Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                        splat(b, rowType, -INFINITY));
    Value mSafe =
        arith::SelectOp::create(b, noKey, splat(b, rowType, 0.0), mNew);
    Value alpha =
        math::Exp2Op::create(b, arith::SubFOp::create(b, op.getM(), mSafe));
    Value w = math::Exp2Op::create(b, arith::SubFOp::create(b, x, mSafe));
    Value l =
        arith::AddFOp::create(b, arith::MulFOp::create(b, alpha, op.getL()), w);
    Value acc = arith::AddFOp::create(
        b, arith::MulFOp::create(b, op.getAcc(), broadcastRows(b, alpha, d)),
        arith::MulFOp::create(b, op.getOS(), broadcastRows(b, w, d)));
    rewriter.replaceOp(op, {mNew, l, acc});
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
    emitError(op.getLoc())
        << "attn-online-softmax unrolls block_n (" << op.getBlockN()
        << ") keys over the tile's " << rows << " rows, but at most "
        << kMaxUnrolledRows
        << " key-rows per block compile in reasonable time; use "
           "smaller tiles (e.g. block-m=64 block-n=64)";
    return WalkResult::interrupt();
  });
  return failure(res.wasInterrupted());
}

struct AttnOnlineSoftmaxPass
    : StrictOptions<attn::impl::AttnOnlineSoftmaxBase<AttnOnlineSoftmaxPass>> {
  using StrictOptions::StrictOptions;
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
  populateLoadRowsPatterns(patterns);
  patterns.add<LowerOnlineAttention, LowerEpilogue, LowerCombineStep>(
      patterns.getContext());
}

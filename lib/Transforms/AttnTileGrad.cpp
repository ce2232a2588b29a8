//===- AttnTileGrad.cpp - attn.attention_grad -> three loop nests ---------===//
//
// The FlashAttention-2 backward as three CTA grids, in order: the preprocess
// (Delta = rowsum(dO * O) into an fp32 scratch buffer), the dK/dV nest (one
// K/V block resident per CTA, walking the query heads of its group and their
// Q blocks) and the dQ nest (one Q block resident, walking the K/V blocks).
// Nothing is accumulated across CTAs, so the result is deterministic.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEGRAD
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the three nests share: sizes as index values (constants when
/// static), tile sizes and the backward's operands.
struct GradTiling {
  AttentionGradOp op;
  Location loc;
  int64_t blockM, blockN, d;
  Value batch, numHeadsQ, seqLenQ, numHeadsKV, seqLenK, group;
  Value numQBlocks, numKBlocks;
  Value bm, bn, zero, one, causalOffset, delta;
  Type elt;

  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  VectorType tile(int64_t rows, Type t) {
    return VectorType::get({rows, d}, t);
  }
  VectorType rows(OpBuilder &b) {
    return VectorType::get({blockM}, b.getF32Type());
  }
  Value zeroTile(OpBuilder &b, int64_t rows) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(tile(rows, b.getF32Type()),
                               b.getF32FloatAttr(0).getValue()));
  }
};

GradTiling getTiling(OpBuilder &b, AttentionGradOp op, int64_t blockM,
                     int64_t blockN) {
  Location loc = op.getLoc();
  auto dim = [&](Value v, int64_t i) -> Value {
    return b.createOrFold<memref::DimOp>(loc, v, i);
  };
  GradTiling t{op, loc, blockM, blockN, op.getHeadDim()};
  t.batch = dim(op.getQ(), 0);
  t.numHeadsQ = dim(op.getQ(), 1);
  t.seqLenQ = dim(op.getQ(), 2);
  t.numHeadsKV = dim(op.getK(), 1);
  t.seqLenK = dim(op.getK(), 2);
  t.group = b.createOrFold<arith::DivUIOp>(loc, t.numHeadsQ, t.numHeadsKV);
  t.bm = t.index(b, blockM);
  t.bn = t.index(b, blockN);
  t.numQBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, t.seqLenQ, t.bm);
  t.numKBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, t.seqLenK, t.bn);
  t.zero = t.index(b, 0);
  t.one = t.index(b, 1);
  if (op.getCausal())
    t.causalOffset = b.createOrFold<arith::SubIOp>(loc, t.seqLenK, t.seqLenQ);
  t.elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  return t;
}

/// A CTA grid over `sizes`, mapped to #gpu.block<x, y, z> as attn-tile's
/// (the mapping also keeps --canonicalize from folding it away). The
/// builder is left at the start of its body.
scf::ForallOp buildGrid(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes) {
  MLIRContext *ctx = b.getContext();
  auto forall = scf::ForallOp::create(
      b, loc, sizes, ValueRange{},
      b.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  b.setInsertionPointToStart(forall.getBody());
  return forall;
}

/// (a) Delta[b, h, i] = rowsum(dO * O) for each Q block.
void buildPreprocess(OpBuilder &b, GradTiling &t) {
  OpBuilder::InsertionGuard guard(b);
  auto grid = buildGrid(b, t.loc, {t.numQBlocks, t.numHeadsQ, t.batch});
  ValueRange ivs = grid.getInductionVars();
  Value head = ivs[1], batch = ivs[2];
  Value qPos = arith::MulIOp::create(b, t.loc, ivs[0], t.bm);
  auto tileType = t.tile(t.blockM, t.elt);
  Value o = LoadTileOp::create(b, t.loc, tileType, t.op.getO(), batch, head,
                               qPos, t.zero);
  Value dO = LoadTileOp::create(b, t.loc, tileType, t.op.getDO(), batch, head,
                                qPos, t.zero);
  Value delta = GradDeltaOp::create(b, t.loc, t.rows(b), o, dO);
  StoreRowsOp::create(b, t.loc, delta, t.delta, batch, head, qPos);
}

/// Loads the Q-block operands of a backward step: Q, dO, LSE and Delta rows.
struct QBlock {
  Value q, dO, lse, delta;
};

QBlock loadQBlock(OpBuilder &b, GradTiling &t, Value batch, Value head,
                  Value qPos) {
  auto tileType = t.tile(t.blockM, t.elt);
  return {
      LoadTileOp::create(b, t.loc, tileType, t.op.getQ(), batch, head, qPos,
                         t.zero),
      LoadTileOp::create(b, t.loc, tileType, t.op.getDO(), batch, head, qPos,
                         t.zero),
      LoadRowsOp::create(b, t.loc, t.rows(b), t.op.getLse(), batch, head, qPos),
      LoadRowsOp::create(b, t.loc, t.rows(b), t.delta, batch, head, qPos)};
}

MaskKindAttr maskAttr(OpBuilder &b, MaskKind kind) {
  return MaskKindAttr::get(b.getContext(), kind);
}

/// (b) dK, dV of one K/V block: loops over the query heads of its group and
/// over their Q blocks, K and V resident. attn-causal-split-grad later skips
/// the Q blocks above the diagonal and unmasks those below it.
void buildDKDV(OpBuilder &b, GradTiling &t) {
  OpBuilder::InsertionGuard guard(b);
  auto grid = buildGrid(b, t.loc, {t.numKBlocks, t.numHeadsKV, t.batch});
  ValueRange ivs = grid.getInductionVars();
  Value kvHead = ivs[1], batch = ivs[2];
  Value kPos = arith::MulIOp::create(b, t.loc, ivs[0], t.bn);
  auto kvType = t.tile(t.blockN, t.elt);
  Value k = LoadTileOp::create(b, t.loc, kvType, t.op.getK(), batch, kvHead,
                               kPos, t.zero);
  Value v = LoadTileOp::create(b, t.loc, kvType, t.op.getV(), batch, kvHead,
                               kPos, t.zero);
  Value zeros = t.zeroTile(b, t.blockN);

  // Query heads h = kv_head * group + g of the group, g = 0 .. group - 1.
  auto heads = scf::ForOp::create(b, t.loc, t.zero, t.group, t.one,
                                  ValueRange{zeros, zeros});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(heads.getBody());
    Value head = arith::AddIOp::create(
        b, t.loc, arith::MulIOp::create(b, t.loc, kvHead, t.group),
        heads.getInductionVar());
    auto qLoop = scf::ForOp::create(b, t.loc, t.zero, t.numQBlocks, t.one,
                                    heads.getRegionIterArgs());
    b.setInsertionPointToStart(qLoop.getBody());
    Value qPos = arith::MulIOp::create(b, t.loc, qLoop.getInductionVar(), t.bm);
    QBlock qb = loadQBlock(b, t, batch, head, qPos);
    ValueRange state = qLoop.getRegionIterArgs();
    MaskKind mask = t.causalOffset ? MaskKind::causal : MaskKind::none;
    auto step = GradDKDVOp::create(
        b, t.loc, state[0].getType(), state[1].getType(), qb.q, qb.dO, qb.lse,
        qb.delta, k, v, qPos, kPos, t.causalOffset, state[0], state[1],
        b.getF32FloatAttr(t.op.getScaleOrDefault()), maskAttr(b, mask));
    scf::YieldOp::create(b, t.loc, step.getResults());
    b.setInsertionPointAfter(qLoop);
    scf::YieldOp::create(b, t.loc, qLoop.getResults());
  }
  StoreTileOp::create(b, t.loc, heads.getResult(0), t.op.getDK(), batch, kvHead,
                      kPos);
  StoreTileOp::create(b, t.loc, heads.getResult(1), t.op.getDV(), batch, kvHead,
                      kPos);
}

/// The mask every K/V block of the dQ nest gets before attn-causal-split-grad
/// refines it (as attn-tile's).
MaskKind dqMask(GradTiling &t) {
  if (t.causalOffset)
    return MaskKind::causal;
  int64_t nk = cast<MemRefType>(t.op.getK().getType()).getDimSize(2);
  return (!ShapedType::isDynamic(nk) && nk % t.blockN == 0) ? MaskKind::none
                                                            : MaskKind::bounds;
}

/// (c) dQ of one Q block: walks the K/V blocks, Q resident.
void buildDQ(OpBuilder &b, GradTiling &t) {
  OpBuilder::InsertionGuard guard(b);
  auto grid = buildGrid(b, t.loc, {t.numQBlocks, t.numHeadsQ, t.batch});
  ValueRange ivs = grid.getInductionVars();
  Value head = ivs[1], batch = ivs[2];
  Value qPos = arith::MulIOp::create(b, t.loc, ivs[0], t.bm);
  Value kvHead = arith::DivUIOp::create(b, t.loc, head, t.group);
  QBlock qb = loadQBlock(b, t, batch, head, qPos);
  auto loop = scf::ForOp::create(b, t.loc, t.zero, t.numKBlocks, t.one,
                                 ValueRange{t.zeroTile(b, t.blockM)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kPos = arith::MulIOp::create(b, t.loc, loop.getInductionVar(), t.bn);
    Value dQ = loop.getRegionIterArgs()[0];
    auto step = GradDQOp::create(
        b, t.loc, dQ.getType(), qb.q, qb.dO, qb.lse, qb.delta, t.op.getK(),
        t.op.getV(), batch, kvHead, kPos, qPos, t.causalOffset, dQ,
        b.getF32FloatAttr(t.op.getScaleOrDefault()),
        b.getI64IntegerAttr(t.blockN), maskAttr(b, dqMask(t)));
    scf::YieldOp::create(b, t.loc, step.getResult());
  }
  StoreTileOp::create(b, t.loc, loop.getResult(0), t.op.getDQ(), batch, head,
                      qPos);
}

LogicalResult tileAttentionGrad(AttentionGradOp op, int64_t blockM,
                                int64_t blockN) {
  if (ShapedType::isDynamic(op.getHeadDim()))
    return op.emitOpError("attn-tile-grad needs a static head dim D");
  OpBuilder b(op);
  GradTiling t = getTiling(b, op, blockM, blockN);
  // Delta: fp32 [B, Hq, Nq] scratch, live from the preprocess to the end.
  auto lseType = cast<MemRefType>(op.getLse().getType());
  auto deltaType = MemRefType::get(lseType.getShape(), b.getF32Type());
  SmallVector<Value> dynSizes, sizes = {t.batch, t.numHeadsQ, t.seqLenQ};
  for (auto [size, value] : llvm::zip_equal(deltaType.getShape(), sizes))
    if (ShapedType::isDynamic(size))
      dynSizes.push_back(value);
  t.delta = memref::AllocOp::create(b, t.loc, deltaType, dynSizes);
  buildPreprocess(b, t);
  buildDKDV(b, t);
  buildDQ(b, t);
  memref::DeallocOp::create(b, t.loc, t.delta);
  op.erase();
  return success();
}

struct AttnTileGradPass
    : StrictOptions<attn::impl::AttnTileGradBase<AttnTileGradPass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    SmallVector<AttentionGradOp> ops;
    getOperation().walk([&](AttentionGradOp op) { ops.push_back(op); });
    if (ops.empty())
      return; // e.g. the CPU pipeline on a forward-only module
    if (!isValidBlockM(blockM) || !isValidBlockN(blockN)) {
      emitError(UnknownLoc::get(&getContext())) // an option: no location
          << "attn-tile-grad: block-m must be in [1, " << kMaxBlockM
          << "] and block-n in [1, " << kMaxBlockN
          << "], but got block-m=" << static_cast<int64_t>(blockM)
          << " block-n=" << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    for (AttentionGradOp op : ops)
      if (failed(tileAttentionGrad(op, blockM, blockN)))
        return signalPassFailure();
  }
};

} // namespace

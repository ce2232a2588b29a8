//===- AttnCausalSplit.cpp - split the K/V loop by mask need --------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCAUSALSPLIT
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Discardable attribute naming a K/V loop's stage (the seed's STAGE 1/2).
constexpr StringLiteral kStageAttr = "attn.stage";

/// Block bounds [numFull, numEnd) of the masked stage for one Q block.
struct StageBounds {
  Value numFull, numEnd;
};

StageBounds computeBounds(OpBuilder &b, Location loc, scf::ForOp loop,
                          OnlineAttentionOp step) {
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  Value bn = arith::ConstantIndexOp::create(b, loc, step.getBlockN());
  Value nk = b.createOrFold<memref::DimOp>(loc, step.getK(), 2);
  if (step.getMask() != MaskKind::causal)
    return {b.createOrFold<arith::DivUIOp>(loc, nk, bn), loop.getUpperBound()};

  // Row i sees key j iff j <= i + offset (bottom-right aligned).
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto clampToKeys = [&](Value x) {
    Value lo = b.createOrFold<arith::MaxSIOp>(loc, x, zero);
    return b.createOrFold<arith::MinSIOp>(loc, lo, nk);
  };
  Value off = step.getCausalOffset();
  Value qPos = step.getQPos();
  // Keys visible to the first row of the block: [0, q_pos + offset + 1).
  Value firstEnd = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, qPos, off),
      arith::ConstantIndexOp::create(b, loc, 1));
  // Keys visible to the last row: [0, q_pos + BLOCK_M + offset).
  Value lastEnd = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, qPos, off),
      arith::ConstantIndexOp::create(b, loc, blockM));
  return {arith::DivUIOp::create(b, loc, clampToKeys(firstEnd), bn),
          arith::CeilDivUIOp::create(b, loc, clampToKeys(lastEnd), bn)};
}

/// Splits `loop` into a mask-free stage [0, numFull) and a masked stage
/// [numFull, numEnd); blocks from numEnd on are never visited.
void splitLoop(scf::ForOp loop, OnlineAttentionOp step) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  StageBounds bounds = computeBounds(b, loc, loop, step);

  auto full = cast<scf::ForOp>(b.clone(*loop.getOperation()));
  full.setUpperBound(bounds.numFull);
  full->setAttr(kStageAttr, b.getStringAttr("full"));
  full.getBody()->walk([&](OnlineAttentionOp inner) {
    inner.setMask(MaskKind::none);
    inner.getCausalOffsetMutable().clear();
  });

  loop.setLowerBound(bounds.numFull);
  loop.setUpperBound(bounds.numEnd);
  loop.getInitArgsMutable().assign(full.getResults());
  loop->setAttr(kStageAttr, b.getStringAttr("masked"));
}

struct AttnCausalSplitPass
    : attn::impl::AttnCausalSplitBase<AttnCausalSplitPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, OnlineAttentionOp>> work;
    getOperation().walk([&](OnlineAttentionOp step) {
      auto loop = dyn_cast<scf::ForOp>(step->getParentOp());
      if (loop && step.getMask() != MaskKind::none &&
          !loop->hasAttr(kStageAttr))
        work.emplace_back(loop, step);
    });
    for (auto [loop, step] : work)
      splitLoop(loop, step);
  }
};

} // namespace

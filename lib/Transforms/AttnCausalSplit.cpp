//===- AttnCausalSplit.cpp - split the K/V loop by mask need --------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "CausalBounds.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCAUSALSPLIT
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Block bounds [numFull, numEnd) of the masked stage for one Q block.
struct StageBounds {
  Value numFull, numEnd;
};

StageBounds computeBounds(OpBuilder &b, Location loc, scf::ForOp loop,
                          OnlineAttentionOp step) {
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  Value offset =
      step.getMask() == MaskKind::causal ? step.getCausalOffset() : Value();
  BlockSplit split = keyBlockSplit(b, loc, step.getKeyCount(b),
                                   step.getQPos(), offset, loop.getUpperBound(),
                                   blockM, step.getBlockN(), step.getGqaPack());
  if (isConstantIntValue(loop.getLowerBound(), 0))
    return {split.mid, split.end};
  // A K/V range [begin, end) (a split of split-KV): keep both stages in it.
  Value begin = loop.getLowerBound(), end = loop.getUpperBound();
  Value mid = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, split.mid, begin), end);
  Value last = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, split.end, end), mid);
  return {mid, last};
}

/// Puts `loop`'s copy over [begin, end) before `loop`, taking `loop`'s
/// initial state and handing its results to `loop`; `fullStage`: without
/// the mask.
void peelStage(OpBuilder &b, scf::ForOp loop, Value begin, Value end,
               bool fullStage) {
  auto stage = cast<scf::ForOp>(b.clone(*loop.getOperation()));
  stage.setLowerBound(begin);
  stage.setUpperBound(end);
  stage->setAttr(kStageAttr, b.getStringAttr(fullStage ? "full" : "masked"));
  if (fullStage)
    stage.getBody()->walk([&](OnlineAttentionOp inner) {
      inner.setMask(MaskKind::none);
      if (!inner.getAlibiSlopes()) // ALiBi places rows by it
        inner.getCausalOffsetMutable().clear();
      inner.removeKeyMaskAttr();
    });
  loop.getInitArgsMutable().assign(stage.getResults());
}

/// Under a key mask: a masked stage [begin, fullBegin) (the window's left
/// edge), a mask-free stage [fullBegin, fullEnd) and a masked stage
/// [fullEnd, end); the blocks outside [begin, end) are never visited.
void splitKeyMaskLoop(scf::ForOp loop, OnlineAttentionOp step) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  KeyMaskAttr mask = step.getKeyMaskAttr();
  KeyBlockRange range = keyBlockRange(
      b, loc, mask, step.getKeyCount(b), step.getQPos(), step.getCausalOffset(),
      loop.getLowerBound(), loop.getUpperBound(), blockM, step.getBlockN(),
      step.getGqaPack());
  if (mask.hasLowerBound())
    peelStage(b, loop, range.begin, range.fullBegin, /*fullStage=*/false);
  peelStage(b, loop, range.fullBegin, range.fullEnd, /*fullStage=*/true);
  loop.setLowerBound(range.fullEnd);
  loop.setUpperBound(range.end);
  loop->setAttr(kStageAttr, b.getStringAttr("masked"));
}

/// Splits `loop` into a mask-free stage [0, numFull) and a masked stage
/// [numFull, numEnd); blocks from numEnd on are never visited.
void splitLoop(scf::ForOp loop, OnlineAttentionOp step) {
  if (step.getKeyMask())
    return splitKeyMaskLoop(loop, step);
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  StageBounds bounds = computeBounds(b, loc, loop, step);

  peelStage(b, loop, loop.getLowerBound(), bounds.numFull, /*fullStage=*/true);
  loop.setLowerBound(bounds.numFull);
  loop.setUpperBound(bounds.numEnd);
  loop->setAttr(kStageAttr, b.getStringAttr("masked"));
}

/// The bounds are computed per CTA, before the loop: what they read must be
/// defined there, and all threads of a CTA must keep the same loop (their
/// lanes shuffle together).
LogicalResult checkSplittable(scf::ForOp loop, OnlineAttentionOp step) {
  auto threads = step->getParentOfType<scf::ForallOp>();
  if (step.getRowLanes() > 1 ||
      (threads && threads.getMapping() &&
       llvm::any_of(*threads.getMapping(), [](Attribute a) {
         return isa<gpu::GPUThreadMappingAttr>(a);
       })))
    return emitError(step.getLoc(),
                     "attn-causal-split must run before "
                     "attn-distribute-rows (the K/V loop must stay the "
                     "same for every thread of a CTA)");
  Value offset = step.getCausalOffset();
  Value numKeys = step.getNumKeys();
  if (!loop.isDefinedOutsideOfLoop(step.getQPos()) ||
      !loop.isDefinedOutsideOfLoop(step.getK()) ||
      (offset && !loop.isDefinedOutsideOfLoop(offset)) ||
      (numKeys && !loop.isDefinedOutsideOfLoop(numKeys)))
    return emitError(step.getLoc(),
                     "attn-causal-split needs q_pos, causal_offset, "
                     "num_keys and k defined outside the K/V loop");
  if (loop.getNumRegionIterArgs() != 3 ||
      !llvm::equal(loop.getBody()->getTerminator()->getOperands(),
                   step.getResults()))
    return emitError(step.getLoc(),
                     "attn-causal-split expects the K/V loop of "
                     "attn-tile: it carries (m, l, acc) through this "
                     "op alone");
  return success();
}

struct AttnCausalSplitPass
    : StrictOptions<attn::impl::AttnCausalSplitBase<AttnCausalSplitPass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, OnlineAttentionOp>> work;
    WalkResult res = getOperation().walk([&](OnlineAttentionOp step) {
      auto loop = dyn_cast<scf::ForOp>(step->getParentOp());
      if (!loop || step.getMask() == MaskKind::none ||
          loop->hasAttr(kStageAttr))
        return WalkResult::advance();
      if (failed(checkSplittable(loop, step)))
        return WalkResult::interrupt();
      work.emplace_back(loop, step);
      return WalkResult::advance();
    });
    if (res.wasInterrupted())
      return signalPassFailure();
    for (auto [loop, step] : work)
      splitLoop(loop, step);
  }
};

} // namespace

//===- AttnCausalSplitGrad.cpp - split the backward's loops by mask need --===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "CausalBounds.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCAUSALSPLITGRAD
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Drops the mask of the backward steps in `loop`.
void unmask(scf::ForOp loop) {
  loop.getBody()->walk([](Operation *op) {
    if (auto dq = dyn_cast<GradDQOp>(op)) {
      dq.setMask(MaskKind::none);
      dq.getCausalOffsetMutable().clear();
    } else if (auto dkdv = dyn_cast<GradDKDVOp>(op)) {
      dkdv.setMask(MaskKind::none);
      dkdv.getCausalOffsetMutable().clear();
    }
  });
}

/// Splits `loop` into [lb, mid) (a clone, run first) and [mid, end) (the
/// loop itself, continuing the clone's state). The stage named "full" loses
/// its mask; the other keeps it.
void splitLoop(scf::ForOp loop, Value mid, Value end, bool firstIsFull) {
  OpBuilder b(loop);
  auto first = cast<scf::ForOp>(b.clone(*loop.getOperation()));
  first.setUpperBound(mid);
  loop.setLowerBound(mid);
  loop.setUpperBound(end);
  loop.getInitArgsMutable().assign(first.getResults());
  first->setAttr(kStageAttr, b.getStringAttr(firstIsFull ? "full" : "masked"));
  loop->setAttr(kStageAttr, b.getStringAttr(firstIsFull ? "masked" : "full"));
  unmask(firstIsFull ? first : loop);
}

/// dQ: the K/V loop of a Q block, split as the forward's: mask-free blocks
/// [0, num_full), masked [num_full, num_end), none after.
void splitDQ(scf::ForOp loop, GradDQOp step) {
  OpBuilder b(loop);
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  Value offset =
      step.getMask() == MaskKind::causal ? step.getCausalOffset() : Value();
  BlockSplit split =
      keyBlockSplit(b, loop.getLoc(),
                    b.createOrFold<memref::DimOp>(loop.getLoc(), step.getK(), 2),
                    step.getQPos(), offset,
                    loop.getUpperBound(), blockM, step.getBlockN());
  splitLoop(loop, split.mid, split.end, /*firstIsFull=*/true);
}

/// dK/dV: the Q loop of a K/V block. Q blocks above the diagonal are
/// skipped, the diagonal ones [begin, mid) masked, the rest mask-free.
void splitDKDV(scf::ForOp loop, GradDKDVOp step) {
  OpBuilder b(loop);
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  int64_t blockN = cast<VectorType>(step.getK().getType()).getDimSize(0);
  QueryBlockSplit split =
      queryBlockSplit(b, loop.getLoc(), step.getKPos(), step.getCausalOffset(),
                      loop.getUpperBound(), blockM, blockN);
  loop.setLowerBound(split.begin);
  splitLoop(loop, split.mid, loop.getUpperBound(), /*firstIsFull=*/false);
}

/// Whether `loop` is the block loop attn-tile-grad built around `step`: from
/// 0 in steps of 1, block position `pos` = iv * `block`, the state carried
/// through the step alone. Anything else (e.g. the GQA heads loop, once
/// canonicalize has inlined a one-block loop) is left alone, masked.
bool isBlockLoop(scf::ForOp loop, Operation *step, Value pos, int64_t block) {
  auto mul = pos.getDefiningOp<arith::MulIOp>();
  return mul && mul.getLhs() == loop.getInductionVar() &&
         getConstantIntValue(mul.getRhs()) == block &&
         matchPattern(loop.getLowerBound(), m_Zero()) &&
         matchPattern(loop.getStep(), m_One()) &&
         llvm::equal(loop.getBody()->getTerminator()->getOperands(),
                     step->getResults());
}

/// The bounds are computed before the loop from what the step reads there.
LogicalResult checkInvariants(scf::ForOp loop, Operation *step,
                              ValueRange invariants) {
  for (Value v : invariants)
    if (v && !loop.isDefinedOutsideOfLoop(v))
      return emitError(step->getLoc(),
                       "attn-causal-split-grad needs the block "
                       "position of the other operand, "
                       "causal_offset and k defined outside the loop");
  return success();
}

struct AttnCausalSplitGradPass
    : StrictOptions<
          attn::impl::AttnCausalSplitGradBase<AttnCausalSplitGradPass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, Operation *>> work;
    WalkResult res = getOperation().walk([&](Operation *op) {
      auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
      auto dq = dyn_cast<GradDQOp>(op);
      auto dkdv = dyn_cast<GradDKDVOp>(op);
      if (!loop || loop->hasAttr(kStageAttr) ||
          !(dq ? dq.getMask() != MaskKind::none
               : dkdv && dkdv.getMask() != MaskKind::none))
        return WalkResult::advance();
      bool blockLoop =
          dq ? isBlockLoop(loop, op, dq.getKPos(), dq.getBlockN())
             : isBlockLoop(
                   loop, op, dkdv.getQPos(),
                   cast<VectorType>(dkdv.getQ().getType()).getDimSize(0));
      if (!blockLoop)
        return WalkResult::advance();
      SmallVector<Value> invariants =
          dq ? SmallVector<Value>{dq.getQPos(), dq.getCausalOffset(), dq.getK()}
             : SmallVector<Value>{dkdv.getKPos(), dkdv.getCausalOffset()};
      if (failed(checkInvariants(loop, op, invariants)))
        return WalkResult::interrupt();
      work.emplace_back(loop, op);
      return WalkResult::advance();
    });
    if (res.wasInterrupted())
      return signalPassFailure();
    for (auto [loop, op] : work) {
      if (auto dq = dyn_cast<GradDQOp>(op))
        splitDQ(loop, dq);
      else
        splitDKDV(loop, cast<GradDKDVOp>(op));
    }
  }
};

} // namespace

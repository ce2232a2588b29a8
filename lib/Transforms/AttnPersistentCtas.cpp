//===- AttnPersistentCtas.cpp - a fixed grid of CTAs looping over tiles ---===//
//
// Turns each role of a ring CTA (attn-tma-ring) into a loop over the tiles
// that a persistent CTA is dealt, with the barrier phases and ring
// positions carried from tile to tile (Passes.td, AttnPersistentCtas).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "PipelineBuilders.h"
#include "RingCta.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-persistent-ctas"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPERSISTENTCTAS
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {


/// Where a role is in its CTA's sequence of tiles: the tile's ordinal (its
/// Q barrier phase), the K/V blocks of its earlier tiles (the ring's
/// position) and its number in decodeTile's order.
struct TileState {
  Value ordinal, blocksBefore, index;
};

/// Wraps the ops of `role` in the loop over a persistent CTA's tiles, dealt
/// back and forth in rounds of gridDim.x (dealtRounds, dealtTile), carrying
/// the K/V blocks of earlier tiles (endTileLoop adds each tile's). The loop
/// counts rounds, so its induction variable is the tile's ordinal.
scf::ForOp wrapInTileLoop(Block &role, Location loc, Value numTiles,
                          TileState &tile) {
  OpBuilder b = OpBuilder::atBlockBegin(&role);
  Value x = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value g = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, c0, dealtRounds(b, loc, numTiles, x, g), c1, ValueRange{c0});
  b.setInsertionPointToStart(loop.getBody());
  Value round = loop.getInductionVar();
  tile.index = dealtTile(b, loc, round, x, g);
  tile.ordinal = round;
  tile.blocksBefore = loop.getRegionIterArgs()[0];
  auto yield = scf::YieldOp::create(b, loc, loop.getRegionIterArgs());
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(std::next(loop->getIterator()), role.end())))
    op.moveBefore(yield);
  return loop;
}

/// The next tile: numBlocks more blocks through the ring.
void endTileLoop(scf::ForOp loop, Value numBlocks) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  OpBuilder b(yield);
  yield->setOperands(ValueRange{arith::AddIOp::create(
      b, loop.getLoc(), loop.getRegionIterArgs()[0], numBlocks)});
}

/// Offsets every ring wait of `region` (its slot and parity) by the K/V
/// blocks of earlier tiles.
LogicalResult offsetRingPositions(Region &region, Value qBar,
                                  Value blocksBefore) {
  SmallVector<nvgpu::MBarrierTryWaitParityOp> waits;
  region.walk([&](nvgpu::MBarrierTryWaitParityOp w) {
    if (w.getBarriers() != qBar)
      waits.push_back(w);
  });
  for (auto wait : waits) {
    FailureOr<RingPosition> pos = ringPositionOf(wait);
    if (failed(pos))
      return emitError(wait.getLoc(), "attn-persistent-ctas: expected the "
                                      "slot of a ring wait to be its ring "
                                      "position mod stages (attn-tma-ring)");
    OpBuilder b(pos->slot);
    Value moved =
        arith::AddIOp::create(b, wait.getLoc(), pos->position, blocksBefore);
    pos->slot->setOperand(0, moved);
    pos->round->setOperand(0, moved);
  }
  return success();
}

/// Re-creates, in tile loop `loop` after its tile `tileIndex`, every value
/// of the CTA body that depends on the CTA loop's (Q block, head, batch),
/// for that tile (decodeTile), and makes the loop use them; causal loops
/// take `heaviestFirst`, so that every CTA's tiles are in longest-first
/// order.
LogicalResult bindTile(scf::ForallOp cta, scf::ForOp loop, Value tileIndex,
                       bool heaviestFirst) {
  OpBuilder b(loop.getContext());
  b.setInsertionPointAfterValue(tileIndex);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  IRMapping map;
  map.map(cta.getInductionVars(),
          decodeTile(b, loc, tileIndex, ub, heaviestFirst));
  // The CTA body's ops that read the induction variables, directly or not.
  DenseSet<Value> dependent(cta.getInductionVars().begin(),
                            cta.getInductionVars().end());
  SmallVector<Value> rebound(cta.getInductionVars());
  for (Operation &op : cta.getBody()->without_terminator()) {
    if (op.isAncestor(loop))
      continue;
    SetVector<Value> used(op.getOperands().begin(), op.getOperands().end());
    for (Region &region : op.getRegions())
      getUsedValuesDefinedAbove(region, used);
    if (llvm::none_of(used, [&](Value v) { return dependent.contains(v); }))
      continue;
    // Re-running it per tile would repeat its effect; reading an input
    // (FP8's descales) again is harmless.
    if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
      return emitError(op.getLoc(),
                       "attn-persistent-ctas: re-creates the per-tile values "
                       "of the CTA body, which must be free of side effects");
    b.clone(op, map);
    for (Value r : op.getResults()) {
      dependent.insert(r);
      rebound.push_back(r);
    }
  }
  for (Value v : rebound)
    v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
      return loop->isProperAncestor(use.getOwner());
    });
  return success();
}

/// The persistent form of ring CTA `r` (see the pass description).
LogicalResult makePersistent(RingCta &r, int64_t ctas) {
  scf::ForallOp cta = r.cta;
  Location loc = cta.getLoc();
  MLIRContext *ctx = cta.getContext();
  // The tiles: after the prologue's barrier initialization.
  auto published = cast<nvgpu::MBarrierInitOp>(
      *llvm::find_if(r.qBar.getUsers(), llvm::IsaPred<nvgpu::MBarrierInitOp>));
  Operation *prologueEnd = r.ws->getPrevNode();
  while (prologueEnd && !isa<gpu::BarrierOp>(prologueEnd))
    prologueEnd = prologueEnd->getPrevNode();
  if (!prologueEnd)
    return emitError(loc, "attn-persistent-ctas: expected the barrier "
                          "that publishes the mbarriers; run attn-tma-ring "
                          "first");
  OpBuilder b(ctx);
  b.setInsertionPointAfter(prologueEnd);
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  Value numTiles = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ub[0], ub[1]), ub[2]);
  // qEmpty: every consumer thread is done with Q (and the staged O where
  // it shares Q's tile), once per tile.
  Operation *lastGroup = r.full.getDefiningOp();
  for (Operation *op = lastGroup; op != r.ws; op = op->getNextNode())
    if (isa<nvgpu::MBarrierCreateOp>(op))
      lastGroup = op;
  b.setInsertionPointAfter(lastGroup);
  Value qEmpty = nvgpu::MBarrierCreateOp::create(
      b, loc, cast<nvgpu::MBarrierGroupType>(r.qBar.getType()));
  b.setInsertionPointAfter(published);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  nvgpu::MBarrierInitOp::create(
      b, loc, qEmpty,
      arith::ConstantIndexOp::create(b, loc,
                                     128 * r.ws.getConsumerWarpgroups()),
      c0, published.getPredicate());

  Value numBlocks = r.consumerLoops.back().getUpperBound();
  TileState consumer, producer;
  scf::ForOp consumerLoop =
      wrapInTileLoop(r.ws.getConsumer().front(), loc, numTiles, consumer);
  scf::ForOp producerLoop =
      wrapInTileLoop(r.ws.getProducer().front(), loc, numTiles, producer);
  if (failed(offsetRingPositions(r.ws.getConsumer(), r.qBar,
                                 consumer.blocksBefore)) ||
      failed(offsetRingPositions(r.ws.getProducer(), r.qBar,
                                 producer.blocksBefore)))
    return failure();

  // Consumer: Q of the tile's phase; then Q is released once every
  // consumer thread is done with it and, where the epilogue stages O in
  // Q's tile, with the staged O (generic-proxy writes before TMA's). FP8
  // stages O in a buffer of its own, so the next tile's Q loads while the
  // epilogue runs.
  auto qWait = *consumerLoop.getBody()->getOps<nvgpu::MBarrierTryWaitParityOp>()
                    .begin();
  b.setInsertionPoint(qWait);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  qWait.getPhaseParityMutable().assign(
      phaseParity(b, loc, consumer.ordinal));
  b.setInsertionPoint(r.epilogue.getStaging() != r.step.getQ()
                          ? r.epilogue.getOperation()
                          : consumerLoop.getBody()->getTerminator());
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  nvgpu::MBarrierArriveOp::create(b, loc, nvgpu::MBarrierTokenType::get(ctx),
                                  qEmpty, zero);

  // Producer: Q of the next tile once the consumers release the last one
  // (parity ^ 1: the first tile passes a fresh barrier).
  b.setInsertionPointToStart(r.leader.thenBlock());
  Value c0InThread = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
  nvgpu::MBarrierTryWaitParityOp::create(
      b, loc, qEmpty,
      arith::XOrIOp::create(b, loc, phaseParity(b, loc, producer.ordinal),
                            one),
      arith::ConstantIndexOp::create(b, loc, kWaitTicks), c0InThread);
  endTileLoop(consumerLoop, numBlocks);
  endTileLoop(producerLoop, numBlocks);

  bool causal = llvm::any_of(r.consumerLoops, [](scf::ForOp loop) {
    return llvm::any_of(loop.getBody()->getOps<OnlineAttentionMmaOp>(),
                        [](OnlineAttentionMmaOp s) {
                          return s.getMask() == MaskKind::causal;
                        });
  });
  LLVM_DEBUG(llvm::dbgs() << ctas << " persistent CTAs at " << loc << ", "
                          << (causal ? "heaviest tile first" : "Q block fastest")
                          << "\n");
  if (failed(bindTile(cta, consumerLoop, consumer.index, causal)) ||
      failed(bindTile(cta, producerLoop, producer.index, causal)))
    return failure();
  cta->setAttr(kPersistentCtasAttr, b.getI64IntegerAttr(ctas));
  return success();
}

struct AttnPersistentCtasPass
    : StrictOptions<
          attn::impl::AttnPersistentCtasBase<AttnPersistentCtasPass>> {
  using StrictOptions::StrictOptions;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (ctas < 1 || ctas > kMaxGridX)
      return emitError(UnknownLoc::get(ctx))
             << "attn-persistent-ctas: ctas must be a CTA count in [1, 2^31 "
                "- 1], but got "
             << static_cast<int64_t>(ctas);
    return success();
  }

  LogicalResult check(RingCta &r) {
    if (cast<MemRefType>(r.epilogue.getO().getType()).getElementType().isF32())
      return emitError(r.cta.getLoc(),
                       "attn-persistent-ctas: does not take split-KV "
                       "(attn.partial_attention) tiles yet");
    if (r.cta->hasAttr(kCtaOrderAttr))
      return emitError(r.cta.getLoc(),
                       "attn-persistent-ctas: the CTA loop is already in "
                       "heaviest-first launch order (attn-cta-order); "
                       "persistent CTAs deal their tiles in an order of "
                       "their own: leave attn-cta-order out");
    return success();
  }

  void runOnOperation() override {
    for (WarpSpecializeOp ws : forwardRings(getOperation())) {
      auto cta = dyn_cast<scf::ForallOp>(ws->getParentOp());
      if (cta && cta->hasAttr(kPersistentCtasAttr))
        continue;
      FailureOr<RingCta> r = matchRing(ws, "attn-persistent-ctas");
      if (failed(r) || failed(check(*r)) || failed(makePersistent(*r, ctas)))
        return signalPassFailure();
    }
  }
};

} // namespace

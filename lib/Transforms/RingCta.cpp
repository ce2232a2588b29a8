//===- RingCta.cpp - the CTA that attn-tma-ring leaves --------------------===//

#include "RingCta.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::attn::pipeline {

SmallVector<WarpSpecializeOp> forwardRings(Operation *root) {
  SmallVector<WarpSpecializeOp> rings;
  root->walk<WalkOrder::PreOrder>([&](WarpSpecializeOp ws) {
    if (ws.getConsumer()
            .walk([](OnlineAttentionMmaOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      rings.push_back(ws);
    return WalkResult::skip();
  });
  return rings;
}

FailureOr<RingCta> matchRing(WarpSpecializeOp ws, StringRef pass) {
  RingCta r;
  r.ws = ws;
  r.cta = dyn_cast<scf::ForallOp>(ws->getParentOp());
  auto fail = [&](const Twine &why) {
    return emitError(ws.getLoc(), pass + ": ")
           << why << "; run attn-tma-ring first";
  };
  if (!r.cta)
    return fail("expected the attn.warp_specialize in a CTA loop");
  Block &consumer = ws.getConsumer().front();
  for (Operation &op : consumer) {
    if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op);
        wait && !r.qBar)
      r.qBar = wait.getBarriers();
    if (auto epi = dyn_cast<EpilogueOp>(op))
      r.epilogue = epi;
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      continue;
    auto steps = loop.getBody()->getOps<OnlineAttentionMmaOp>();
    auto waits = loop.getBody()->getOps<nvgpu::MBarrierTryWaitParityOp>();
    auto arrivals = loop.getBody()->getOps<nvgpu::MBarrierArriveOp>();
    if (steps.empty() || waits.empty() || arrivals.empty())
      return fail("a consumer K/V loop must wait for its slot, run an "
                  "attn.online_attention_mma and release the slot");
    r.step = r.step ? r.step : *steps.begin();
    r.full = (*waits.begin()).getBarriers();
    r.empty = (*arrivals.begin()).getBarriers();
    r.consumerLoops.push_back(loop);
  }
  Block &producer = ws.getProducer().front();
  if (!producer.empty())
    r.leader = dyn_cast<scf::IfOp>(producer.front());
  if (r.leader)
    for (auto loop : r.leader.thenBlock()->getOps<scf::ForOp>())
      r.producerLoop = loop;
  if (!r.qBar || !r.step || !r.epilogue || !r.producerLoop)
    return fail("expected a consumer that waits for Q, runs K/V loops and "
                "an attn.epilogue, and a producer thread with a K/V loop");
  return r;
}

FailureOr<RingPosition> ringPositionOf(nvgpu::MBarrierTryWaitParityOp wait) {
  auto slot = wait.getMbarId().getDefiningOp<arith::RemUIOp>();
  if (!slot)
    return failure();
  Value position = slot.getLhs();
  for (Operation *user : position.getUsers())
    if (auto round = dyn_cast<arith::DivUIOp>(user);
        round && round.getRhs() == slot.getRhs() &&
        round->getBlock() == slot->getBlock())
      return RingPosition{position, slot, round};
  return failure();
}

} // namespace mlir::attn::pipeline

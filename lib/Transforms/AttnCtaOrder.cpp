//===- AttnCtaOrder.cpp - causal CTAs launched heaviest first -------------===//
//
// Rebinds the (Q block, head, batch) of a causal CTA loop of attn-tile /
// attn-causal-split so that the CTAs with the most K/V blocks start first
// (Passes.td, AttnCtaOrder).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "PipelineBuilders.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-cta-order"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCTAORDER
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// The first step of `cta`'s K/V loops and whether any of them is causal;
/// a null step where `cta` is not a forward CTA of attn-tile.
std::pair<OnlineAttentionOp, bool> stepsOf(scf::ForallOp cta) {
  OnlineAttentionOp first;
  bool causal = false;
  for (auto loop : cta.getBody()->getOps<scf::ForOp>())
    for (auto step : loop.getBody()->getOps<OnlineAttentionOp>()) {
      first = first ? first : step;
      causal |= step.getMask() == MaskKind::causal;
    }
  return {first, causal};
}

/// Whether `cta` is already a thread loop (attn-distribute-rows): the
/// CUDA-core path keeps launch order.
bool isMappedToThreads(scf::ForallOp cta) {
  return cta.getMapping() &&
         llvm::any_of(*cta.getMapping(),
                      llvm::IsaPred<gpu::GPUThreadMappingAttr>);
}

/// Whether `cta` writes split-KV's fp32 workspace (its first loop index
/// interleaves splits and Q blocks: its CTAs keep launch order).
bool isSplitKV(scf::ForallOp cta) {
  for (auto epi : cta.getBody()->getOps<EpilogueOp>())
    return cast<MemRefType>(epi.getO().getType()).getElementType().isF32();
  return false;
}

/// Whether K and V of every (batch, KV head) pair take at most `budget`
/// bytes: a bool attribute for a static K, else an i1 computed from the
/// sizes of K (defined outside `cta`) at `b`; false for paged or varlen
/// K/V (a cache, or packed sequences, not what one grid reads at once).
OpFoldResult keyValueFitsL2(OpBuilder &b, Location loc, scf::ForallOp cta,
                            OnlineAttentionOp step, int64_t budget) {
  auto k = cast<MemRefType>(step.getK().getType());
  if (step.getBlockTable() || step.getKeyOffset() || k.getRank() != 4 ||
      !cta.isDefinedOutsideOfLoop(step.getK()))
    return b.getBoolAttr(false);
  int64_t kvBytes = 2 * k.getElementTypeBitWidth() / 8;
  if (k.hasStaticShape())
    return b.getBoolAttr(kvBytes * k.getNumElements() <= budget);
  Value bytes = arith::ConstantIndexOp::create(b, loc, kvBytes);
  for (int64_t d = 0; d < k.getRank(); ++d)
    bytes = arith::MulIOp::create(
        b, loc, bytes,
        k.isDynamicDim(d)
            ? Value(memref::DimOp::create(b, loc, step.getK(), d))
            : Value(arith::ConstantIndexOp::create(b, loc, k.getDimSize(d))));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, bytes,
                               arith::ConstantIndexOp::create(b, loc, budget))
      .getResult();
}

/// Rebinds `cta`'s (Q block, head, batch) at the top of its body so that
/// launch position p = q + nQ (h + H b) (the launch runs the loop Q block
/// fastest) runs, where K and V fit the L2 budget, tile p of decodeTile's
/// heaviest-first order; otherwise each head's Q blocks from the last,
/// head after head. A dynamic K chooses at run time (a select).
void orderCausalTiles(scf::ForallOp cta, OnlineAttentionOp step,
                      int64_t budget) {
  Block *body = cta.getBody();
  Operation *firstOp = &body->front();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  SmallVector<Value> iv = cta.getInductionVars();
  OpFoldResult fits = keyValueFitsL2(b, loc, cta, step, budget);
  auto headAfterHead = [&]() -> SmallVector<Value> {
    Value last = arith::SubIOp::create(
        b, loc, ub[0], arith::ConstantIndexOp::create(b, loc, 1));
    return {arith::SubIOp::create(b, loc, last, iv[0]), iv[1], iv[2]};
  };
  auto qBlockMajor = [&]() {
    Value pair = arith::AddIOp::create(
        b, loc, iv[1], arith::MulIOp::create(b, loc, ub[1], iv[2]));
    Value pos = arith::AddIOp::create(
        b, loc, iv[0], arith::MulIOp::create(b, loc, ub[0], pair));
    return decodeTile(b, loc, pos, ub, /*heaviestFirst=*/true);
  };
  SmallVector<Value> tile;
  if (std::optional<int64_t> known = getConstantIntValue(fits)) {
    LLVM_DEBUG(llvm::dbgs() << "K/V " << (*known ? "fit" : "exceed")
                            << " the L2 budget: "
                            << (*known ? "grid" : "head after head")
                            << " heaviest first\n");
    tile = *known ? qBlockMajor() : headAfterHead();
  } else {
    LLVM_DEBUG(llvm::dbgs() << "dynamic K: order chosen at run time\n");
    SmallVector<Value> major = qBlockMajor(), serial = headAfterHead();
    for (auto [m, h] : llvm::zip(major, serial))
      tile.push_back(arith::SelectOp::create(b, loc, cast<Value>(fits), m, h));
  }
  for (auto [v, t] : llvm::zip(iv, tile))
    if (t != v)
      v.replaceUsesWithIf(t, [&](OpOperand &use) {
        Operation *owner = body->findAncestorOpInBlock(*use.getOwner());
        return owner && !owner->isBeforeInBlock(firstOp);
      });
  cta->setAttr(kCtaOrderAttr, b.getUnitAttr());
}

struct AttnCtaOrderPass
    : StrictOptions<attn::impl::AttnCtaOrderBase<AttnCtaOrderPass>> {
  using StrictOptions::StrictOptions;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (l2Budget < 0)
      return emitError(UnknownLoc::get(ctx))
             << "attn-cta-order: l2-budget must be a byte count >= 0, but "
                "got "
             << static_cast<int64_t>(l2Budget);
    return success();
  }

  void runOnOperation() override {
    getOperation().walk([&](LoadTileOp load) {
      auto cta = dyn_cast<scf::ForallOp>(load->getParentOp());
      if (!cta || cta.getRank() != 3 || isMappedToThreads(cta) ||
          cta->hasAttr(kCtaOrderAttr) ||
          cta->hasAttr(kPersistentCtasAttr) || isSplitKV(cta))
        return;
      auto [step, causal] = stepsOf(cta);
      if (!step || !causal)
        return;
      LLVM_DEBUG(llvm::dbgs() << "causal CTA loop at " << cta.getLoc()
                              << ": heaviest first\n");
      orderCausalTiles(cta, step, l2Budget);
    });
  }
};

} // namespace

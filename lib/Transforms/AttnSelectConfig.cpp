//===- AttnSelectConfig.cpp - each kernel's tile and schedule, chosen once ===//
//
// Records #attn.config on each forward attention op (Passes.td,
// AttnSelectConfig); the heuristics are HopperConfig.h's.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/HopperConfig.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-select-config"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTCONFIG
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the choice reads from a forward op: Q's type ([B, Hq, Nq, D], or a
/// varlen op's packed [total_q, Hq, D], whose Nq is per sequence).
struct ForwardShape {
  int64_t headDim;
  std::optional<int64_t> seqLenQ;
  Type elt;
};

ForwardShape shapeOf(Value q, int64_t headDim, bool varlen) {
  auto type = cast<MemRefType>(q.getType());
  std::optional<int64_t> nq;
  if (!varlen && !type.isDynamicDim(2))
    nq = type.getDimSize(2);
  return {headDim, nq, type.getElementType()};
}

struct AttnSelectConfigPass
    : StrictOptions<attn::impl::AttnSelectConfigBase<AttnSelectConfigPass>> {
  using StrictOptions::StrictOptions;

  /// Options are checked once, before any function (no location: they are
  /// not in the input).
  LogicalResult initialize(MLIRContext *ctx) override {
    auto error = [&] {
      return emitError(UnknownLoc::get(ctx)) << "attn-select-config: ";
    };
    if (path != "wgmma" && path != "fma")
      return error() << "path must be wgmma or fma, but got '" << path << "'";
    if ((blockM != 0 && !isValidBlockM(blockM)) ||
        (blockN != 0 && !isValidBlockN(blockN)))
      return error() << "block-m must be in [1, " << kMaxBlockM
                     << "] and block-n in [1, " << kMaxBlockN
                     << "] (or 0: per D), but got block-m="
                     << static_cast<int64_t>(blockM)
                     << " block-n=" << static_cast<int64_t>(blockN);
    if (stages < 0 || stages == 1)
      return error() << "stages must be 0 (chosen per D) or at least 2, but "
                        "got "
                     << static_cast<int64_t>(stages);
    return success();
  }

  /// The CUDA-core path: the given tile, or 64 x 16; no ring.
  ConfigAttr fmaConfig(MLIRContext *ctx) {
    Builder b(ctx);
    return ConfigAttr::get(ctx, blockM ? int64_t(blockM) : kFmaBlockM,
                           blockN ? int64_t(blockN) : kFmaBlockN,
                           /*stages=*/0, /*consumer_warpgroups=*/0,
                           b.getBoolAttr(false), b.getBoolAttr(false));
  }

  /// The tensor-core path: the tile per D, dtype and Nq, the ring's stages
  /// that fit shared memory, and the FlashAttention-3 schedule.
  FailureOr<ConfigAttr> wgmmaConfig(Operation *op, const ForwardShape &s) {
    auto [bm, bn] = tensorCoreTile(s.headDim, isa<Float8E4M3FNType>(s.elt),
                                   s.seqLenQ, blockM, blockN);
    int64_t groups = bm / kWarpgroupRows;
    if (bm % kWarpgroupRows != 0 || groups > kMaxConsumerWarpgroups)
      return op->emitError("attn-select-config: BLOCK_M must be 64, 128 or "
                           "192 (one to three consumer warpgroups of 64 "
                           "rows), but got ")
             << bm;
    PipelineShape ring = pipelineShape(bm, bn, s.headDim, s.elt);
    int64_t ringStages = fittingStages(ring, stages);
    if (!ringStages) {
      ring.stages = 2;
      return op->emitError("attn-select-config: Q and two K/V stages need ")
             << ring.sharedBytes() << " bytes of shared memory, more than the "
             << kMaxSharedBytes << " a CTA may use; use a smaller block-n";
    }
    Builder b(op->getContext());
    return ConfigAttr::get(op->getContext(), bm, bn, ringStages, groups,
                           b.getBoolAttr(pingPong && groups >= 2),
                           b.getBoolAttr(overlap && ringStages >= 3));
  }

  LogicalResult select(Operation *op, Value q, int64_t headDim, bool varlen) {
    // attn-tile reports a dynamic D; a config chosen before stays.
    if (ShapedType::isDynamic(headDim) || op->hasAttr(kConfigAttr))
      return success();
    FailureOr<ConfigAttr> config =
        path == "fma" ? fmaConfig(op->getContext())
                      : wgmmaConfig(op, shapeOf(q, headDim, varlen));
    if (failed(config))
      return failure();
    LLVM_DEBUG(llvm::dbgs() << op->getName() << " (D " << headDim << "): "
                            << *config << "\n");
    op->setAttr(kConfigAttr, *config);
    return success();
  }

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](Operation *op) {
      LogicalResult selected = success();
      if (auto a = dyn_cast<AttentionOp>(op))
        selected = select(op, a.getQ(), a.getHeadDim(), false);
      else if (auto p = dyn_cast<PartialAttentionOp>(op))
        selected = select(op, p.getQ(), p.getHeadDim(), false);
      else if (auto v = dyn_cast<VarlenAttentionOp>(op))
        selected = select(op, v.getQ(), v.getHeadDim(), true);
      return failed(selected) ? WalkResult::interrupt()
                              : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

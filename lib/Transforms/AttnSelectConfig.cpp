//===- AttnSelectConfig.cpp - each kernel's tile and schedule, chosen once ===//
//
// Records #attn.config on each forward attention op (Passes.td,
// AttnSelectConfig); the heuristics are HopperConfig.h's.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/HopperConfig.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/SelectConfig.h"
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

/// What the choice reads from a forward op: D, a static Nq (a varlen op's
/// Nq is per sequence) and the element type the attention computes in.
struct ForwardShape {
  int64_t headDim;
  std::optional<int64_t> seqLenQ;
  Type elt;
};

std::optional<ForwardShape> shapeOf(Operation *op, Type computeType) {
  Value q;
  int64_t headDim;
  bool varlen = false;
  if (auto a = dyn_cast<AttentionOp>(op)) {
    q = a.getQ();
    headDim = a.getHeadDim();
  } else if (auto p = dyn_cast<PartialAttentionOp>(op)) {
    q = p.getQ();
    headDim = p.getHeadDim();
  } else if (auto v = dyn_cast<VarlenAttentionOp>(op)) {
    q = v.getQ();
    headDim = v.getHeadDim();
    varlen = true;
  } else {
    return std::nullopt;
  }
  auto type = cast<MemRefType>(q.getType());
  std::optional<int64_t> nq;
  if (!varlen && !type.isDynamicDim(2))
    nq = type.getDimSize(2);
  return ForwardShape{headDim, nq,
                      computeType ? computeType : type.getElementType()};
}

/// The CUDA-core path: the given tile, or 64 x 16; no ring.
ConfigAttr fmaConfig(MLIRContext *ctx, const ConfigRequest &r) {
  Builder b(ctx);
  return ConfigAttr::get(ctx, r.blockM ? r.blockM : kFmaBlockM,
                         r.blockN ? r.blockN : kFmaBlockN,
                         /*stages=*/0, /*consumer_warpgroups=*/0,
                         b.getBoolAttr(false), b.getBoolAttr(false));
}

/// The tensor-core path: the tile per D, dtype and Nq, the ring's stages
/// that fit shared memory, and the FlashAttention-3 schedule.
FailureOr<ConfigAttr> wgmmaConfig(Operation *op, const ForwardShape &s,
                                  const ConfigRequest &r) {
  auto [bm, bn] = tensorCoreTile(s.headDim, isa<Float8E4M3FNType>(s.elt),
                                 s.seqLenQ, r.blockM, r.blockN);
  int64_t groups = bm / kWarpgroupRows;
  if (bm % kWarpgroupRows != 0 || groups > kMaxConsumerWarpgroups)
    return op->emitError("attn-select-config: BLOCK_M must be 64, 128 or "
                         "192 (one to three consumer warpgroups of 64 "
                         "rows), but got ")
           << bm;
  PipelineShape ring = pipelineShape(bm, bn, s.headDim, s.elt);
  int64_t ringStages = fittingStages(ring, r.stages);
  if (!ringStages) {
    ring.stages = 2;
    return op->emitError("attn-select-config: Q and two K/V stages need ")
           << ring.sharedBytes() << " bytes of shared memory, more than the "
           << kMaxSharedBytes << " a CTA may use; use a smaller block-n";
  }
  Builder b(op->getContext());
  return ConfigAttr::get(op->getContext(), bm, bn, ringStages, groups,
                         b.getBoolAttr(r.pingPong && groups >= 2),
                         b.getBoolAttr(r.overlap && ringStages >= 3));
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

  LogicalResult select(Operation *op, const ConfigRequest &request) {
    std::optional<ForwardShape> shape = shapeOf(op, {});
    // attn-tile reports a dynamic D; a config chosen before stays.
    if (!shape || ShapedType::isDynamic(shape->headDim) ||
        op->hasAttr(kConfigAttr))
      return success();
    FailureOr<ConfigAttr> config = selectConfig(op, request);
    if (failed(config))
      return failure();
    LLVM_DEBUG(llvm::dbgs() << op->getName() << " (D " << shape->headDim
                            << "): " << *config << "\n");
    op->setAttr(kConfigAttr, *config);
    return success();
  }

  void runOnOperation() override {
    ConfigRequest request;
    request.fma = path == "fma";
    request.blockM = blockM;
    request.blockN = blockN;
    request.stages = stages;
    request.pingPong = pingPong;
    request.overlap = overlap;
    WalkResult result = getOperation().walk([&](Operation *op) {
      return failed(select(op, request)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

FailureOr<ConfigAttr> mlir::attn::selectConfig(Operation *op,
                                               const ConfigRequest &request) {
  if (request.fma)
    return fmaConfig(op->getContext(), request);
  std::optional<ForwardShape> shape = shapeOf(op, request.computeType);
  if (!shape || ShapedType::isDynamic(shape->headDim))
    return op->emitError("attn-select-config: the tensor-core path needs a "
                         "forward attention op with a static head dim D");
  return wgmmaConfig(op, *shape, request);
}

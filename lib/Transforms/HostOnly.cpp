//===- HostOnly.cpp - tile ops with a host lowering only ------------------===//

#include "HostOnly.h"

#include "attn/Dialect/Attn/IR/Attn.h"

using namespace mlir;
using namespace mlir::attn;

/// FP8 tiles: an f8E4M3FN Q tile, or a descale on a step or an epilogue.
static bool isFP8Tile(Operation *op) {
  if (auto load = dyn_cast<LoadTileOp>(op))
    return isa<Float8E4M3FNType>(load.getResult().getType().getElementType());
  if (auto step = dyn_cast<OnlineAttentionOp>(op))
    return bool(step.getQkDescale());
  if (auto epilogue = dyn_cast<EpilogueOp>(op))
    return bool(epilogue.getVDescale());
  return false;
}

/// Per-block Q/K descales (a step's row or key descales, their per-block
/// or packed loads) and per-channel V descales (an epilogue's), or an
/// attn.attention that has them.
static bool hasFineDescales(Operation *op) {
  if (auto step = dyn_cast<OnlineAttentionOp>(op))
    return step.getRowDescale() || step.getKeyDescale();
  if (auto epilogue = dyn_cast<EpilogueOp>(op))
    return bool(epilogue.getChannelDescale());
  if (auto rows = dyn_cast<LoadRowsOp>(op))
    return rows.getRowBlock() != 1 || rows.getGqaPack() != 1;
  if (auto attention = dyn_cast<AttentionOp>(op))
    return attention.isFP8() && !attention.hasPerHeadDescales();
  return false;
}

LogicalResult attn::checkPerHeadDescales(Operation *root, StringRef pass) {
  WalkResult res = root->walk([&](Operation *op) {
    if (!hasFineDescales(op))
      return WalkResult::advance();
    return WalkResult(emitError(op->getLoc())
                      << pass
                      << ": per-block Q/K descales and per-channel V "
                         "descales have no lowering here; the tensor-core "
                         "path (attn-async-pipeline) takes Q/K descales per "
                         "head, per tensor or per block of its tiles and V "
                         "descales per head (attn-quantize-fp8 "
                         "v-granularity=head); per-channel V descales lower "
                         "to the host only: --attn-to-cpu");
  });
  return failure(res.wasInterrupted());
}

/// What of `step` (an attention variant, paged K/V) `support` leaves out,
/// and where it lowers instead; none if the step is supported.
static std::optional<StringRef> unsupportedStep(OnlineAttentionOp step,
                                                GpuTileSupport support) {
  if (step.getAlibiSlopes())
    return StringRef("ALiBi has no GPU lowering yet: it lowers to the host "
                     "only (--attn-to-cpu)");
  if (step.getSoftcap())
    return StringRef("logit softcapping has no GPU lowering yet: it lowers "
                     "to the host only (--attn-to-cpu)");
  if (step.getKeyMask() && !support.keyMask)
    return StringRef("key masks (#attn.key_mask: sliding window, chunked, "
                     "prefix-LM) have no lowering here: they lower to the "
                     "host (--attn-to-cpu) and the tensor-core path "
                     "(attn-async-pipeline)");
  if (step.getBlockTable() && !support.paged)
    return StringRef("paged K/V has no lowering here: it lowers to the host "
                     "(--attn-to-cpu) and the tensor-core path "
                     "(attn-async-pipeline)");
  return std::nullopt;
}

LogicalResult attn::checkNoHostOnlyTiles(Operation *root, StringRef pass,
                                         GpuTileSupport support) {
  if (failed(checkPerHeadDescales(root, pass)))
    return failure();
  // Pre-order: a varlen CTA is refused as a whole, before its tiles.
  WalkResult res = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasAttr(kSinksAttr))
      return WalkResult(emitError(op->getLoc())
                        << pass
                        << ": attention sinks have no GPU lowering yet: "
                           "they lower to the host only (--attn-to-cpu)");
    if (op->hasAttr(kVarlenAttr) && !support.varlen)
      return WalkResult(emitError(op->getLoc())
                        << pass
                        << ": variable-length batches "
                           "(attn.varlen_attention) have no lowering here: "
                           "they lower to the host (--attn-to-cpu) and the "
                           "tensor-core path (attn-async-pipeline)");
    if (!support.fp8 && isFP8Tile(op))
      return WalkResult(emitError(op->getLoc())
                        << pass
                        << ": FP8 (an f8E4M3FN tile or its descale) has no "
                           "lowering here: FP8 attention runs on the host "
                           "(attn-to-cpu) and the tensor-core path "
                           "(attn-async-pipeline)");
    if (auto step = dyn_cast<OnlineAttentionOp>(op))
      if (std::optional<StringRef> why = unsupportedStep(step, support))
        return WalkResult(emitError(op->getLoc()) << pass << ": " << *why);
    auto epilogue = dyn_cast<EpilogueOp>(op);
    int64_t pack = 1;
    if (auto load = dyn_cast<LoadTileOp>(op))
      pack = load.getGqaPack();
    else if (auto step = dyn_cast<OnlineAttentionOp>(op)) {
      pack = step.getGqaPack();
      if (cast<VectorType>(step.getQ().getType()).getElementType().isF32())
        return WalkResult(emitError(op->getLoc())
                          << pass
                          << ": f32 attention has no GPU lowering "
                             "yet (it lowers to the host only: "
                             "--attn-to-cpu)");
    } else if (epilogue)
      pack = epilogue.getGqaPack();
    if (pack == 1 || support.gqaPack)
      return WalkResult::advance();
    return WalkResult(emitError(op->getLoc())
                      << pass
                      << ": GQA packing has no lowering here: it lowers to "
                         "the host (--attn-to-cpu) and the tensor-core path "
                         "(attn-async-pipeline)");
  });
  return failure(res.wasInterrupted());
}

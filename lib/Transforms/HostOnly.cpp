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

LogicalResult attn::checkNoHostOnlyTiles(Operation *root, StringRef pass,
                                         GpuTileSupport support) {
  // Pre-order: a varlen CTA is refused as a whole, before its tiles.
  WalkResult res = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasAttr(kVarlenAttr))
      return WalkResult(op->emitOpError()
                        << pass
                        << ": variable-length batches "
                           "(attn.varlen_attention) have no GPU lowering yet "
                           "(they lower to the host only: --attn-to-cpu)");
    if (!support.fp8 && isFP8Tile(op))
      return WalkResult(op->emitOpError()
                        << "is FP8 (an f8E4M3FN tile or its descale), but "
                        << pass
                        << " has no FP8 lowering: FP8 attention runs on "
                           "the host (attn-to-cpu) and the tensor-core path "
                           "(attn-async-pipeline)");
    auto epilogue = dyn_cast<EpilogueOp>(op);
    int64_t pack = 1;
    if (auto load = dyn_cast<LoadTileOp>(op))
      pack = load.getGqaPack();
    else if (auto step = dyn_cast<OnlineAttentionOp>(op)) {
      pack = step.getGqaPack();
      if (cast<VectorType>(step.getQ().getType()).getElementType().isF32())
        return WalkResult(op->emitOpError()
                          << pass
                          << ": f32 attention has no GPU lowering "
                             "yet (it lowers to the host only: "
                             "--attn-to-cpu)");
    } else if (epilogue)
      pack = epilogue.getGqaPack();
    if (pack == 1 || support.gqaPack)
      return WalkResult::advance();
    return WalkResult(op->emitOpError()
                      << pass
                      << ": GQA packing has no lowering here: it lowers to "
                         "the host (--attn-to-cpu) and the tensor-core path "
                         "(attn-async-pipeline)");
  });
  return failure(res.wasInterrupted());
}

//===- AttnTmaStore.cpp - O written by TMA bulk tensor stores -------------===//
//
// Gives each tensor-core epilogue that stages O in shared memory the TMA
// descriptor of O, so that attn-lower-to-wgmma stores it with bulk tensor
// copies (Passes.td, AttnTmaStore).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "PipelineBuilders.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-tma-store"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTMASTORE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// Builds O's descriptor ([1, 1, 64, chunk] boxes: one warpgroup's rows;
/// with GQA packing its [B, N, H, D] view) on the host, before the CTA
/// loop, and hands it to `epi`.
LogicalResult addStoreDescriptor(EpilogueOp epi) {
  auto cta = epi->getParentOfType<scf::ForallOp>();
  if (!cta)
    return emitError(epi.getLoc(), "attn-tma-store: expected the epilogue "
                                   "in a CTA loop; run attn-tma-ring first");
  if (!cta.isDefinedOutsideOfLoop(epi.getO()))
    return emitError(
        cta.getLoc(),
        "attn-tma-store: needs O defined outside the CTA loop (its "
        "descriptor is built on the host), but a varlen CTA stores into its "
        "sequence's rows of O; leave tma-store off");
  LLVM_DEBUG(llvm::dbgs() << "O descriptor for the epilogue at "
                          << epi.getLoc() << "\n");
  OpBuilder host(cta);
  epi.getOMapMutable().assign(createDescriptor(
      host, cta.getLoc(), epi.getO(), kWarpgroupRows, epi.getGqaPack()));
  return success();
}

struct AttnTmaStorePass : attn::impl::AttnTmaStoreBase<AttnTmaStorePass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](EpilogueOp epi) {
      // Split-KV's fp32 workspace is stored from the registers.
      auto o = cast<MemRefType>(epi.getO().getType());
      if (epi.getOMap() || o.getElementType().isF32())
        return WalkResult::advance();
      if (!epi.getStaging()) {
        emitError(epi.getLoc(),
                  "attn-tma-store: the epilogue has no staging tile in "
                  "shared memory to store O from; run attn-tma-ring first");
        return WalkResult::interrupt();
      }
      return failed(addStoreDescriptor(epi)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

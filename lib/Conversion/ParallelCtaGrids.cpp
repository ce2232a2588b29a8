//===- ParallelCtaGrids.cpp - CUDA-core CTA nests -> scf.parallel ---------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <numeric>

#define DEBUG_TYPE "attn-parallel-cta-grids"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARALLELCTAGRIDS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnParallelCtaGridsPass
    : attn::impl::AttnParallelCtaGridsBase<AttnParallelCtaGridsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    // attn-distribute-rows' mapping is the one gpu-map-parallel-loops
    // assigns; scf.parallel would carry it in a form that pass ignores.
    WalkResult res = module.walk([&](scf::ForallOp forall) {
      forall.setMappingAttr(nullptr);
      if (succeeded(scf::forallToParallelLoop(rewriter, forall)))
        return WalkResult::advance();
      forall.emitOpError("attn-lower-to-nvvm: expected a bufferized "
                         "scf.forall (no results)");
      return WalkResult::interrupt();
    });
    if (res.wasInterrupted())
      return signalPassFailure();
    SmallVector<scf::ParallelOp> ctas;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() && loop.getNumLoops() > 1)
        ctas.push_back(loop);
    });
    for (scf::ParallelOp loop : ctas) {
      LLVM_DEBUG(llvm::dbgs() << "collapse the " << loop.getNumLoops()
                              << "-D CTA loop at " << loop.getLoc() << "\n");
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};
} // namespace

//===- RowTransfers.cpp - 1-D transfers -> aligned vector loads/stores ----===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-lower-row-transfers"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERROWTRANSFERS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Marks whole-row-slice vector loads/stores of a multiple of 16 bytes as
/// 16-byte aligned (the runtime contract, docs/ir.md).
void alignRowAccesses(gpu::GPUModuleOp kernels) {
  int64_t count = 0;
  auto align = [&](Operation *op, VectorType vt) {
    unsigned bits = vt.getElementTypeBitWidth() * vt.getNumElements();
    if (vt.getRank() != 1 || bits % 128 != 0)
      return;
    op->setAttr("alignment",
                IntegerAttr::get(IntegerType::get(op->getContext(), 64), 16));
    ++count;
  };
  kernels.walk([&](Operation *op) {
    if (auto load = dyn_cast<vector::LoadOp>(op))
      align(op, load.getVectorType());
    else if (auto store = dyn_cast<vector::StoreOp>(op))
      align(op, store.getVectorType());
  });
  LLVM_DEBUG(llvm::dbgs() << kernels.getName() << ": " << count
                          << " access(es) 16-byte aligned\n");
}

struct AttnLowerRowTransfersPass
    : attn::impl::AttnLowerRowTransfersBase<AttnLowerRowTransfersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RewritePatternSet transfers(&getContext());
    vector::populateVectorTransferLoweringPatterns(transfers,
                                                   /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(module, std::move(transfers))))
      return signalPassFailure();
    module.walk([](gpu::GPUModuleOp kernels) { alignRowAccesses(kernels); });
  }
};

} // namespace

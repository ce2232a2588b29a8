//===- CheckNVVMInput.cpp - what attn-lower-to-nvvm can build -------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/StrictOptions.h"

#include "NVVMTarget.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-check-nvvm-input"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCHECKNVVMINPUT
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

bool isThreadLoop(scf::ForallOp forall) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  return mapping && llvm::any_of(*mapping, [](Attribute a) {
           return isa<gpu::GPUThreadMappingAttr>(a);
         });
}

/// Why `op` cannot be lowered yet (an error at the user's op), or success.
LogicalResult checkOp(Operation *op) {
  if (isa<AttentionGradOp>(op))
    return op->emitOpError(
        "attn-lower-to-nvvm needs it lowered: run attn-grad-async-pipeline "
        "and attn-lower-to-wgmma first (or --attn-to-cubin, path=wgmma)");
  if (isa<AttentionOp, PartialAttentionOp, DecodeCombineOp,
          VarlenAttentionOp>(op))
    return op->emitOpError(
        "attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile, "
        "attn-causal-split, then attn-async-pipeline and "
        "attn-lower-to-wgmma, or attn-distribute-rows and "
        "attn-online-softmax first (or --attn-to-cubin)");
  if (auto ws = op->getParentOfType<WarpSpecializeOp>())
    op = ws;
  if (isa<WarpSpecializeOp, OnlineAttentionMmaOp>(op))
    return emitError(op->getLoc(),
                     "attn-lower-to-nvvm needs the tensor-core pipeline "
                     "lowered: run attn-lower-to-wgmma first");
  if (isa<AttnDialect>(op->getDialect()))
    return emitError(op->getLoc(),
                     "attn-lower-to-nvvm needs the tile ops decomposed: run "
                     "attn-online-softmax (or attn-lower-to-wgmma) first");
  auto forall = dyn_cast<scf::ForallOp>(op);
  // Tensor-core CTAs (attn-lower-to-wgmma) carry their thread count.
  if (!forall || isThreadLoop(forall) || forall->hasAttr(kThreadsAttr) ||
      forall.getBody()
          ->walk([&](scf::ForallOp inner) {
            return isThreadLoop(inner) ? WalkResult::interrupt()
                                       : WalkResult::advance();
          })
          .wasInterrupted())
    return success();
  return emitError(forall.getLoc(),
                   "attn-lower-to-nvvm needs the CTA loop mapped to threads: "
                   "run attn-distribute-rows before attn-online-softmax (or "
                   "attn-async-pipeline and attn-lower-to-wgmma)");
}

struct AttnCheckNVVMInputPass
    : StrictOptions<
          attn::impl::AttnCheckNVVMInputBase<AttnCheckNVVMInputPass>> {
  using StrictOptions::StrictOptions;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    markAllAnalysesPreserved();
    if (module.walk([](Operation *op) {
                return failed(checkOp(op)) ? WalkResult::interrupt()
                                           : WalkResult::advance();
              })
            .wasInterrupted())
      return signalPassFailure();
    if (failed(resolveTarget(UnknownLoc::get(&getContext()), chip, features)))
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs() << "target " << chip << " "
                            << targetFeatures(chip, features) << "\n");
    if (chip == "sm_90a")
      return;
    module.walk([&](scf::ForallOp cta) {
      if (!cta->hasAttr(kThreadsAttr))
        return WalkResult::advance();
      emitError(cta.getLoc(),
                "attn-lower-to-nvvm: the tensor-core kernel "
                "(warpgroup MMA, setmaxnreg) needs chip sm_90a, not ")
          << chip << "; use path=fma for other chips";
      signalPassFailure();
      return WalkResult::interrupt();
    });
  }
};

} // namespace

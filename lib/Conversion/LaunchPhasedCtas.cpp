//===- LaunchPhasedCtas.cpp - CTAs of several thread loops -> gpu.launch --===//

#include "attn/Conversion/Passes.h"

#include "PhasedCta.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-launch-phased-ctas"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLAUNCHPHASEDCTAS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnLaunchPhasedCtasPass
    : attn::impl::AttnLaunchPhasedCtasBase<AttnLaunchPhasedCtasPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> phased;
    getOperation().walk([&](scf::ForallOp forall) {
      if (isPhasedCta(forall))
        phased.push_back(forall);
    });
    LLVM_DEBUG(llvm::dbgs() << phased.size() << " phased CTA loop(s)\n");
    for (scf::ForallOp cta : phased)
      if (failed(launchPhasedCta(cta)))
        return signalPassFailure();
  }
};
} // namespace

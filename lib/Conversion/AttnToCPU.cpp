//===- AttnToCPU.cpp - decomposed loop nest -> LLVM dialect (host) --------===//

#include "attn/Conversion/Passes.h"

#include "VectorLowering.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOCPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnLowerToCPUPass : attn::impl::AttnLowerToCPUBase<AttnLowerToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every public function gets a C entry point for the ExecutionEngine.
    module.walk([&](func::FuncOp fn) {
      if (fn.isPublic() && !fn.isExternal())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
    });
    auto run = [&](OpPassManager &pm, Operation *op) {
      return runPipeline(pm, op);
    };
    if (failed(runTextualPipeline(module, "scf-forall-to-for,canonicalize,cse",
                                  run)) ||
        failed(lowerTileVectors(module, RewritePatternSet(&getContext()))) ||
        failed(runTextualPipeline(
            module,
            "convert-vector-to-scf{full-unroll=true},convert-vector-to-llvm,"
            "lower-affine,convert-scf-to-cf,convert-math-to-llvm,"
            "expand-strided-metadata,convert-to-llvm,"
            "reconcile-unrealized-casts",
            run)))
      return signalPassFailure();
  }
};

} // namespace

//===- VectorLowering.cpp - shared vector pre-lowering --------------------===//

#include "VectorLowering.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

void mlir::attn::populateTileVectorLoweringPatterns(
    RewritePatternSet &patterns) {
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  vector::populateVectorOuterProductLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
}

LogicalResult mlir::attn::lowerTileVectors(Operation *root,
                                           RewritePatternSet &&extra) {
  populateTileVectorLoweringPatterns(extra);
  return applyPatternsGreedily(root, std::move(extra));
}

LogicalResult mlir::attn::runTextualPipeline(
    Operation *root, StringRef pipeline,
    function_ref<LogicalResult(OpPassManager &, Operation *)> run) {
  OpPassManager pm(root->getName());
  std::string err;
  llvm::raw_string_ostream os(err);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return root->emitError() << "invalid internal pipeline '" << pipeline
                             << "': " << err;
  return run(pm, root);
}

//===- VectorLowering.cpp - shared vector pre-lowering --------------------===//

#include "VectorLowering.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
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

//===- VectorLowering.h - shared vector pre-lowering ------------*- C++ -*-===//
//
// Both targets lower the decomposed tile IR's vector ops (reductions, outer
// products, broadcasts, transposes) to elementwise 1-D vector code before
// the conversion to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_VECTORLOWERING_H
#define ATTN_LIB_CONVERSION_VECTORLOWERING_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
/// Adds the vector-to-vector lowerings shared by the CPU and GPU paths.
void populateTileVectorLoweringPatterns(RewritePatternSet &patterns);
/// Applies them (greedily) to `root`.
LogicalResult lowerTileVectors(Operation *root, RewritePatternSet &&extra);
} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_VECTORLOWERING_H

//===- GradToWGMMA.h - the backward step on warpgroup MMA -------*- C++ -*-===//
//
// attn-lower-to-wgmma's lowering of the consumer region that
// attn-grad-async-pipeline builds (attn.grad_dkdv_mma steps, the dK/dV
// attn.store_tile ops).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_GRADTOWGMMA_H
#define ATTN_LIB_CONVERSION_GRADTOWGMMA_H

#include "attn/Dialect/Attn/IR/Attn.h"

namespace mlir::attn::wgmma {

/// Whether `ws`'s consumer region runs the backward (attn.grad_dkdv_mma).
bool isGradConsumer(WarpSpecializeOp ws);

/// Lowers the backward's consumer region of `ws` to fragments, wgmma and
/// atomics, then `ws` itself (lowerWarpSpecialize).
LogicalResult lowerGradConsumer(WarpSpecializeOp ws);

} // namespace mlir::attn::wgmma

#endif // ATTN_LIB_CONVERSION_GRADTOWGMMA_H

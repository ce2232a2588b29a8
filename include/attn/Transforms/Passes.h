//===- Passes.h - attn passes -----------------------------------*- C++ -*-===//

#ifndef ATTN_TRANSFORMS_PASSES_H
#define ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

/// attn-quantize-fp8's scale groups of Q and K, and of V.
enum class QkGranularity { tensor, head, block };
enum class VGranularity { head, channel };

#define GEN_PASS_DECL
#include "attn/Transforms/Passes.h.inc"

/// Patterns of attn-online-softmax: tile ops -> vector/arith/math.
void populateOnlineSoftmaxPatterns(RewritePatternSet &patterns);

/// attn.load_tile -> vector.transfer_read (rows past N read as zero); part
/// of both decompositions.
void populateLoadTilePatterns(RewritePatternSet &patterns);

/// attn.load_rows -> vector.transfer_read (rows past N read as zero); part
/// of both decompositions (LSE, Delta; the split-KV combine's LSE_s).
void populateLoadRowsPatterns(RewritePatternSet &patterns);

/// Patterns of attn-decompose-grad: backward tile ops -> vector/arith/math.
void populateDecomposeGradPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "attn/Transforms/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_TRANSFORMS_PASSES_H

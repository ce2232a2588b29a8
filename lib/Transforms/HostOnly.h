//===- HostOnly.h - tile ops with a host lowering only ----------*- C++ -*-===//
//
// f32 attention and GQA packing (gqa_pack > 1) lower to the host so far, and
// FP8 attention (f8E4M3FN tiles, descales on the step and epilogue) to the
// host and the tensor-core path; the GPU passes after attn-tile refuse what
// they cannot lower with this check. Split-KV (an fp32 attn.epilogue into
// the workspace, attn.combine_step) lowers on both GPU paths.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_HOSTONLY_H
#define ATTN_LIB_TRANSFORMS_HOSTONLY_H

#include "mlir/IR/Operation.h"

namespace mlir::attn {

/// Discardable unit attribute on the CTA loop attn-tile builds for
/// attn.varlen_attention (per-sequence views inside): host lowering only.
constexpr llvm::StringLiteral kVarlenAttr = "attn.varlen";

/// Fails with an error naming `pass` on the first f32, GQA-packed or
/// varlen tile op under `root`, and on FP8 ones unless `allowFP8`.
LogicalResult checkNoHostOnlyTiles(Operation *root, StringRef pass,
                                   bool allowFP8 = false);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_HOSTONLY_H

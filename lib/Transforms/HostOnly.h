//===- HostOnly.h - tile ops with a host lowering only ----------*- C++ -*-===//
//
// f32 attention and GQA packing (gqa_pack > 1) lower to the host so far, and
// FP8 attention (f8E4M3FN tiles, descales on the step and epilogue) to the
// host and the tensor-core path; the GPU passes after attn-tile refuse what
// they cannot lower with this check; per-block and per-channel FP8 descales
// lower to the host only. Split-KV (an fp32 attn.epilogue into
// the workspace, attn.combine_step) lowers on both GPU paths.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_HOSTONLY_H
#define ATTN_LIB_TRANSFORMS_HOSTONLY_H

#include "mlir/IR/Operation.h"

namespace mlir::attn {

/// Fails with an error naming `pass` on the first f32 or GQA-packed tile
/// op under `root`, on FP8 ones unless `allowFP8`, and on per-block or
/// per-channel descales (checkPerHeadDescales).
LogicalResult checkNoHostOnlyTiles(Operation *root, StringRef pass,
                                   bool allowFP8 = false);

/// Fails with an error naming `pass` on the first op under `root` with
/// per-block Q/K or per-channel V descales (an attn.attention, its tile
/// ops): only [B, Hkv] descales have a GPU lowering.
LogicalResult checkPerHeadDescales(Operation *root, StringRef pass);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_HOSTONLY_H

//===- HostOnly.h - tile ops a GPU pass cannot lower ------------*- C++ -*-===//
//
// The host lowering (attn-to-cpu) takes every tile op; the GPU passes after
// attn-tile take a subset and refuse the rest with this check: f32
// attention and per-channel FP8 descales lower to the host only, per-block
// ones to the host and the tensor-core path (BlockDescales.h); FP8 (f8E4M3FN
// tiles, [B, Hkv] descales on the step and epilogue), GQA packing (gqa_pack >
// 1), paged K/V (a step's block table), varlen batches and key masks to the
// host and the tensor-core path; softcapping, ALiBi and sinks to the host
// only. Split-KV (an fp32 attn.epilogue into the workspace,
// attn.combine_step) lowers on both GPU paths.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_HOSTONLY_H
#define ATTN_LIB_TRANSFORMS_HOSTONLY_H

#include "attn/Transforms/CtaAttributes.h"
#include "mlir/IR/Operation.h"

namespace mlir::attn {

/// What a GPU pass lowers beyond f16/bf16 tiles of one query head.
struct GpuTileSupport {
  bool fp8 = false;
  bool gqaPack = false;
  /// Steps that read paged K/V through a block table.
  bool paged = false;
  /// Varlen CTAs (attn.varlen_attention's nest, kVarlenAttr).
  bool varlen = false;
  /// Steps under a key mask (#attn.key_mask).
  bool keyMask = false;
};

/// Fails with an error naming `pass` on the first f32 or varlen tile op
/// under `root`, on per-block or per-channel descales
/// (checkPerHeadDescales), and on FP8 or GQA-packed ones that `support`
/// leaves out.
LogicalResult checkNoHostOnlyTiles(Operation *root, StringRef pass,
                                   GpuTileSupport support = {});

/// Fails with an error naming `pass` on the first op under `root` with
/// per-block Q/K or per-channel V descales (an attn.attention, its tile
/// ops): attn-tma-ring scalarizes per-block Q/K descales first
/// (BlockDescales.h); per-channel V descales lower to the host only.
LogicalResult checkPerHeadDescales(Operation *root, StringRef pass);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_HOSTONLY_H

//===- BlockDescales.h - per-block FP8 descales as scalars ------*- C++ -*-===//
//
// attn-tile gives a step of per-block FP8 attention its Q descales per row
// (row_descale) and K descales per key (key_descale), for scale blocks of
// any size. When the scale blocks are the kernel's tiles (BLOCK_M rows of
// one query head, BLOCK_N keys of one KV head: attn-quantize-fp8's default)
// each is one scalar, and the tensor-core step takes their product as its
// qk_descale, as with per-head descales.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_BLOCKDESCALES_H
#define ATTN_LIB_TRANSFORMS_BLOCKDESCALES_H

#include "mlir/IR/Operation.h"

namespace mlir::attn {

/// Rewrites every attn.online_attention under `root` with per-block
/// row_descale / key_descale into one with qk_descale = q_descale[b, h,
/// q_pos / BLOCK_M] * k_descale[b, kv_head, k_pos / BLOCK_N] (times its
/// per-head qk_descale, if any), a scalar load per CTA and per K/V block.
/// Fails with an error naming `pass` and attn-quantize-fp8's block-m /
/// block-n where a scale block is not the tile, or the tile packs GQA rows.
LogicalResult scalarizeBlockDescales(Operation *root, StringRef pass);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_BLOCKDESCALES_H

//===- TileBuilders.h - vector IR shared by the tile-op decompositions -*-===//
//
// Building blocks of attn-online-softmax (forward) and attn-decompose-grad
// (backward): tiles are vector<BLOCK_M x D> with the query rows first, and
// per-key quantities (scores, P, dS) are vector<BLOCK_M> columns.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_TILEBUILDERS_H
#define ATTN_LIB_TRANSFORMS_TILEBUILDERS_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// A constant vector of `type` with every element `value`.
Value splat(ImplicitLocOpBuilder &b, VectorType type, double value);

/// `v` widened to f32 (unchanged if it is f32 already).
Value toF32(ImplicitLocOpBuilder &b, Value v);

/// Broadcasts a per-row vector<BM> across D columns: vector<BM x D>.
Value broadcastRows(ImplicitLocOpBuilder &b, Value rows, int64_t d);

/// rowsum(a * b) of two [BM, D] f32 tiles: vector<BM x f32>.
Value rowDot(ImplicitLocOpBuilder &b, Value lhs, Value rhs);

/// rowsum(tile * broadcast(row)): the dot product of every tile row with
/// one vector<D> (S_j = Q K[j]^T), vector<BM x f32>.
Value rowDotBroadcast(ImplicitLocOpBuilder &b, Value tile, Value row);

/// acc + sum over the rows of `tile` ([BM, D] -> vector<D>), as BM
/// vector adds (a reduction over the outer dimension would be lowered
/// through an element-wise transpose).
Value addColumnSum(ImplicitLocOpBuilder &b, Value tile, Value acc);

/// Reads columns [col, col + d) of row `row` of the (batch, head) slice of a
/// [B, H, N, D] memref, widened to f32.
Value readKeyRow(ImplicitLocOpBuilder &b, Value mem, Value batch, Value head,
                 Value row, Value col, int64_t d);

/// Query row index of each tile row: q_pos + [0, 1, .., BLOCK_M-1].
Value rowIndices(ImplicitLocOpBuilder &b, Value qPos, int64_t bm);

/// vector<BM x i1>: which rows may see key `keyIdx`. `numKeys` (or null):
/// the key must be below it; `rowIdx` and `causalOffset` (both or neither):
/// key <= row + causal_offset (bottom-right causal), or with `keyMask` the
/// key in that mask's interval at row + causal_offset. At least one is
/// given.
Value visibleKeys(ImplicitLocOpBuilder &b, int64_t bm, Value keyIdx,
                  Value numKeys, Value rowIdx, Value causalOffset,
                  KeyMaskAttr keyMask = {});

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_TILEBUILDERS_H

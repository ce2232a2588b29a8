//===- CausalBounds.h - which blocks a causal / tail block must mask -*-===//
//
// The loop bounds of the causal block split (FlashAttention-2 section 3.1.1:
// blocks wholly above the diagonal are skipped, only the diagonal ones are
// masked), shared by attn-causal-split (forward) and attn-causal-split-grad
// (backward). Causal is bottom-right aligned: row i sees key j iff
// j <= i + offset, offset = Nk - Nq.
//
// A key mask (#attn.key_mask) generalizes it: row i sees the keys of one
// interval [lo(p), end(p)) at p = i + offset, whose ends never decrease
// with p. A Q block then visits [lo(p_first), end(p_last)) and needs no
// mask on [lo(p_last), end(p_first)): both exact, from two rows.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_CAUSALBOUNDS_H
#define ATTN_LIB_TRANSFORMS_CAUSALBOUNDS_H

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/KeyInterval.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// A split of a block loop: [begin, mid) and [mid, end).
struct BlockSplit {
  Value mid, end;
};

/// The K/V blocks of the Q block [qPos, qPos + blockM) (a K/V loop over
/// `numKeyBlocks` blocks of `blockN` of the `numKeys` keys Nk): blocks
/// [0, mid) need no mask (below the diagonal and inside Nk), [mid, end) do,
/// and from `end` on no row sees a key. `causalOffset` null: not causal.
/// With GQA packing (`rowsPerQuery` = G > 1) row r of the block is query
/// r / G.
BlockSplit keyBlockSplit(OpBuilder &b, Location loc, Value numKeys, Value qPos,
                         Value causalOffset, Value numKeyBlocks, int64_t blockM,
                         int64_t blockN, int64_t rowsPerQuery = 1);

/// The Q blocks of the K/V block [kPos, kPos + blockN) under the causal
/// mask (a Q loop over `numQBlocks` blocks of `blockM` rows): blocks before
/// `begin` see none of its keys, [begin, mid) need the mask (the diagonal)
/// and [mid, numQBlocks) see all of them.
struct QueryBlockSplit {
  Value begin, mid;
};
QueryBlockSplit queryBlockSplit(OpBuilder &b, Location loc, Value kPos,
                                Value causalOffset, Value numQBlocks,
                                int64_t blockM, int64_t blockN);

/// The K/V blocks of a Q block under a key mask: [begin, fullBegin) and
/// [fullEnd, end) need the mask, [fullBegin, fullEnd) do not, blocks
/// outside [begin, end) hold no visible key; begin <= fullBegin <= fullEnd
/// <= end, all within [loopBegin, loopEnd).
struct KeyBlockRange {
  Value begin, fullBegin, fullEnd, end;
};

/// The range of the Q block [qPos, qPos + blockM) (packed rows with
/// `rowsPerQuery` = G > 1: queries qPos / G .. (qPos + blockM - 1) / G) over
/// the blocks of `blockN` of the `numKeys` keys, limited to the loop's
/// [loopBegin, loopEnd).
KeyBlockRange keyBlockRange(OpBuilder &b, Location loc, KeyMaskAttr mask,
                            Value numKeys, Value qPos, Value causalOffset,
                            Value loopBegin, Value loopEnd, int64_t blockM,
                            int64_t blockN, int64_t rowsPerQuery = 1);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_CAUSALBOUNDS_H

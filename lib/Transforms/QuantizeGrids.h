//===- QuantizeGrids.h - the FP8 quantize step's launches -------*- C++ -*-===//
//
// The grids of attn-quantize-fp8's quantize step, built from
// QuantizeBuilders.h: one grid of every amax (buildAmaxLaunch; per-block
// Q and K finish there), then one copy grid per other operand (row-major,
// or V^T through a tile in shared memory): two GPU launches with the
// defaults, no atomics. Per-block Q and K with `hadamard` take a launch
// each instead (buildRotatedBlockGrid: a fast Walsh-Hadamard transform in
// shared memory).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_QUANTIZEGRIDS_H
#define ATTN_LIB_TRANSFORMS_QUANTIZEGRIDS_H

#include "QuantizeBuilders.h"

#include <functional>

namespace mlir::attn::quantize {

/// One operand's CTAs in the quantize step's first launch (buildAmaxLaunch):
/// `ctas` CTAs of kBlockThreads threads; thread t's max |x| over its share
/// of CTA `cta` (numbered from 0 in the program), and what the CTA does
/// with the max of those (thread t).
struct AmaxProgram {
  int64_t ctas;
  std::function<Value(ImplicitLocOpBuilder &, Value cta, Value t)> partial;
  std::function<void(ImplicitLocOpBuilder &, Value cta, Value t, Value amax)>
      finish;
};

/// The quantize step's first launch: one grid of every program's CTAs
/// (kBlockThreads threads each), each CTA, in order, separated by barriers
/// on the GPU:
///   part[t] = its program's partial(t)
///   part[0] = max over part                 (buildMaxTree)
///   its program's finish(t, part[0])
/// `part` is a workgroup buffer (shared memory on the GPU). One launch
/// instead of one or more per operand: no launch gaps between them, and
/// one operand's CTAs fill the tail of another's.
void buildAmaxLaunch(ImplicitLocOpBuilder &b, ArrayRef<AmaxProgram> programs);

/// Per-block Q or K: one CTA per scale block (rows [n0, n1) of one head,
/// whole: its amax is the CTA's). Partial maxima over 16-byte chunks; then
/// descale = amax > 0 ? amax / 448 : 1 (thread 0 stores it) and x_fp8 =
/// truncf(x / descale) in 8-byte stores (SharedDivisor): amax, descale and
/// copy in one kernel, without atomics.
AmaxProgram blockProgram(Value fp8, Value descale, int64_t block,
                         RowValue value);

/// CTAs per group of `groups` for partialAmaxProgram.
int64_t amaxCtasPerGroup(const Groups &groups);

/// Groups that are not blocks of rows: each cut across `ctas` CTAs whose
/// threads stride over its elements (16-byte chunks of kChunk where the
/// group spans whole rows); a CTA's max goes to partials[group, c]
/// ([groups.shape..., ctas], reduced by the second launch: no atomics and
/// no zero fill).
AmaxProgram partialAmaxProgram(Value partials, Groups groups, RowValue value,
                               int64_t ctas);

/// x_fp8[b, h, n, j] = truncf(x / descale) for a row-major copy whose
/// groups span whole heads (per tensor or KV head), stored in its memory
/// order: CTAs of kQuantizeRows rows (b, h, n block). First one thread
/// takes the descale of the CTA's group from the partial maxima into a
/// workgroup buffer and, in row block 0 of the first head of its descale
/// entry, stores it; then one thread per column j loops over the rows
/// (SharedDivisor), so consecutive threads write consecutive bytes.
void buildQuantizeGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                       Value partials, const Groups &groups,
                       const RowValue &value, int64_t ctasPerGroup);

/// The V^T copy through a tile in shared memory: a CTA of kBlockThreads
/// threads per kTransposeKeys keys of one head, in three phases separated
/// by barriers on the GPU: the descales of the CTA's groups (one, or one
/// per column of D) from the partial maxima into `scales` (stored to the
/// descale operand by the head's first CTA); quantizeIntoTile (16-byte
/// loads of V's rows; a warp takes 32 keys of one chunk, so its byte
/// stores to the tile fill whole words); copyTileRow (16-byte loads and
/// stores). `storage` is V^T's [B, H, D, N padded to 16] buffer; its
/// padding gets zeros.
void buildTransposedQuantizeGrid(ImplicitLocOpBuilder &b, Value storage,
                                 Value descale, Value partials,
                                 const Groups &groups, const RowValue &value,
                                 int64_t n, int64_t ctasPerGroup);

/// Per-block Q or K with `hadamard`: the rotation as a fast Walsh-Hadamard
/// transform in shared memory, O(log D) work per element instead of the
/// O(D) of RowValue's sums. One CTA of kBlockThreads threads per scale
/// block takes it in batches of R = kRotateTileFloats / D rows: the batch
/// with S's signs into an f32 tile (rows past N: zeros), then log2(D)
/// butterfly passes, (a, b) -> (a + b, a - b) over columns h apart (h < 8
/// in registers as the 16-byte chunks are loaded, the others in the tile),
/// which leave H S x in each row (H_ij = (-1)^popcount(i & j)); elements
/// are read as tile / sqrt(D). Once for the amax (per-thread maxima,
/// buildMaxTree) and once for the copy (descale stored by thread 0,
/// truncf(x / descale) in 8-byte stores, SharedDivisor). A launch of its
/// own: its tile and barriers would burden the other programs' CTAs.
void buildRotatedBlockGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                           int64_t block, const RowValue &value);

} // namespace mlir::attn::quantize

#endif // ATTN_LIB_TRANSFORMS_QUANTIZEGRIDS_H

//===- PipelineBuilders.h - TMA, shared memory and mbarrier rings -*- C++ -*-===//
//
// What a Hopper pipeline pass builds its CTAs from, shared by
// attn-tma-ring and the passes after it (forward) and
// attn-grad-async-pipeline (backward):
// tiles of 128-byte rows in dynamic shared memory (128B swizzle), their
// TMA descriptors and copies, and the slot/parity arithmetic of a ring of
// stages with full/empty mbarriers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_PIPELINEBUILDERS_H
#define ATTN_LIB_TRANSFORMS_PIPELINEBUILDERS_H

#include "attn/Transforms/HopperConfig.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::pipeline {

/// Suspend-time hint of mbarrier.try_wait (ns); the wait loops until done.
constexpr int64_t kWaitTicks = 10000000;

/// Columns of `elt` in one 128-byte chunk row (64 f16/bf16, 128 e4m3).
int64_t chunkCols(Type elt);

/// The TMA box of `rows` rows of a tile, 128 bytes each: [1, 1, rows,
/// chunk] of a [B, H, N, D] tensor (or V^T's [B, H, D, N]), or with GQA
/// packing (`pack` = G > 1) [1, rows / G, G, chunk] of its [B, N, H, D]
/// view, which lands query-major: tile row r is query r / G of head r % G.
SmallVector<int64_t> boxShape(Type elt, int64_t rows, int64_t pack);

/// !nvgpu.tensormap.descriptor of boxes `box`, 128-byte swizzled,
/// out-of-bounds elements read as zero.
nvgpu::TensorMapDescriptorType descriptorType(Type elt,
                                              ArrayRef<int64_t> boxDims);

/// The view of `t` with dimensions `perm` (a permutation of 0..3).
Value permuted(OpBuilder &b, Location loc, Value t, ArrayRef<unsigned> perm);

/// Host side, before the CTA loop: the TMA descriptor of `tensor` in boxes
/// of `rows` rows (boxShape; with `pack` > 1, of its [B, N, H, D] view).
Value createDescriptor(OpBuilder &b, Location loc, Value tensor, int64_t rows,
                       int64_t pack = 1);

/// A memref type in workgroup memory.
MemRefType sharedType(ArrayRef<int64_t> shape, Type elt);

/// Ring slot of block `kb` and the parity of its current use:
/// slot = kb mod stages, parity = (kb / stages) mod 2 (flips at wrap-around).
std::pair<Value, Value> slotAndParity(OpBuilder &b, Location loc, Value kb,
                                      int64_t stages);

/// memref.subview of chunk `chunk` of stage `slot` as a rank-4 TMA box.
Value boxView(OpBuilder &b, Location loc, Value buffer, Value slot,
              int64_t chunk);

/// A [1, 1, rows, chunk] box view as GQA packing's [1, rows / G, G, chunk]
/// (boxShape): the same bytes.
Value packedBox(OpBuilder &b, Location loc, Value box, int64_t pack);

/// TMA copies of the chunks of rows [row, row + box rows) of (batch, head)
/// into stage `slot` of `buffer`, completing on `bars[barId]`. With GQA
/// packing (`pack` = G > 1) `row` counts packed rows and the box is
/// queries [row / G, ..) of heads [head, head + G) (boxShape).
void copyTile(OpBuilder &b, Location loc, Value desc, Value buffer, Value slot,
              Value bars, Value barId, Value row, Value head, Value batch,
              int64_t chunks, int64_t pack = 1);

/// The tile of stage `slot` of a ring (the ring without its first
/// dimension).
Value stageTile(OpBuilder &b, Location loc, Value ring, Value slot);

/// Persistent CTAs deal `numTiles` tiles in rounds of `ctas`, back and
/// forth: round r gives CTA `cta` tile r * ctas + cta for even r and
/// r * ctas + ctas - 1 - cta for odd r (dealtTile), so that with tiles
/// numbered heaviest first each CTA's sum of tile costs evens out, where
/// dealing round-robin gives CTA 0 the heaviest tile of every round. Every
/// tile goes to exactly one CTA; a CTA takes the last, partial round when
/// its tile there is below `numTiles`. Index values; constants fold.
Value dealtRounds(OpBuilder &b, Location loc, Value numTiles, Value cta,
                  Value ctas);
Value dealtTile(OpBuilder &b, Location loc, Value round, Value cta, Value ctas);

/// The ring position of block `kb` of a tile whose blocks start at
/// `first` (a split-KV CTA's first block), after `blocksBefore` others
/// (a null `blocksBefore`: none).
Value ringBlock(OpBuilder &b, Location loc, Value kb, Value first,
                Value blocksBefore = Value());

/// Parity of phase `ordinal` of a barrier used once per tile (a null
/// `ordinal`: phase 0).
Value phaseParity(OpBuilder &b, Location loc, Value ordinal = Value());

/// The (Q block, head, batch) of tile `t` of a CTA loop with upper bounds
/// `ub`: Q block fastest (neighbours share K/V in L2), or for
/// `heaviestFirst` Q block slowest and descending, (head, batch) pairs
/// fastest: the longest causal tiles of the grid first.
SmallVector<Value> decodeTile(OpBuilder &b, Location loc, Value t,
                              ArrayRef<Value> ub, bool heaviestFirst);

} // namespace mlir::attn::pipeline

#endif // ATTN_LIB_TRANSFORMS_PIPELINEBUILDERS_H

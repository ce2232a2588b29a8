//===- AttnAsyncPipeline.cpp - K/V blocks through a TMA + mbarrier ring ---===//
//
// Rewrites the CTA body of the FlashAttention loop nest (attn-tile,
// attn-causal-split) into a warp-specialized producer/consumer pipeline:
// TMA copies Q and each K/V block into shared memory, a ring of `stages`
// K/V buffers with one full and one empty mbarrier per stage hands them to
// the consumer warpgroups, whose steps become attn.online_attention_mma.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "BlockDescales.h"
#include "HostOnly.h"
#include "PipelineBuilders.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNASYNCPIPELINE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// Keys per row chunk of an FP8 V^T tile.
constexpr int64_t kFP8KeyChunk = 128;
/// FP8: the producer threads that permute each V^T tile (warps 1-3 of the
/// producer warpgroup; warp 0 holds the TMA thread).
constexpr int64_t kPermuteThreads = 96;
/// The largest grid x of a launch.
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
/// K and V of every (batch, KV head) together within this many bytes stay
/// in L2 (80% of the 50 MiB of an H100/H200) when every head runs at once.
constexpr int64_t kL2KeyValueBytes = int64_t{40} << 20;

/// The loop nest attn-tile and attn-causal-split leave in one CTA.
struct CtaNest {
  scf::ForallOp cta;
  LoadTileOp loadQ;
  SmallVector<scf::ForOp> loops; // consecutive K/V block ranges [lb, n)
  EpilogueOp epilogue;
  OnlineAttentionOp step; // the first step, for operands shared by all
};

/// Sizes of the pipeline of one CTA. Q and K are [C, rows, chunkCols]
/// tiles; V is too, except for FP8: V^T, [ceil(BLOCK_N / 128), D, 128],
/// since the FP8 MMA reads B K-major only; a BLOCK_N that is not a multiple
/// of 128 leaves the last 128-key row partly unused. FP8 stages O (bf16)
/// in a buffer of its own; f16/bf16 stage it in Q's tile.
struct PipelineShape {
  int64_t blockM, blockN, headDim, chunks, stages;
  Type elt;
  bool fp8() const { return isa<Float8E4M3FNType>(elt); }
  int64_t qBytes() const { return chunks * blockM * kChunkBytes; }
  int64_t kBytes() const { return chunks * blockN * kChunkBytes; }
  /// FP8: 128-key rows of V^T per stage (the last one padded).
  int64_t keyChunks() const { return llvm::divideCeil(blockN, kFP8KeyChunk); }
  int64_t vBytes() const {
    return fp8() ? keyChunks() * headDim * kChunkBytes : kBytes();
  }
  int64_t ringBytes() const { return stages * (kBytes() + vBytes()); }
  int64_t stagingBytes() const {
    return fp8() ? llvm::divideCeil(headDim, 64) * blockM * kChunkBytes : 0;
  }
  int64_t sharedBytes() const {
    return qBytes() + stagingBytes() + ringBytes();
  }
};

OnlineAttentionOp stepOf(scf::ForOp loop) {
  auto steps = loop.getBody()->getOps<OnlineAttentionOp>();
  return llvm::hasSingleElement(steps) ? *steps.begin() : OnlineAttentionOp();
}

/// Matches `cta` against the nest of attn-tile / attn-causal-split: Q tile
/// load, K/V loops that cover [lb, n) block by block (lb = 0, or a split's
/// first block), epilogue.
FailureOr<CtaNest> matchNest(scf::ForallOp cta, LoadTileOp loadQ) {
  CtaNest nest{cta, loadQ, {}, {}, {}};
  auto fail = [&](const Twine &why) {
    return emitError(cta.getLoc(), "attn-async-pipeline: ")
           << why << "; run attn-tile and attn-causal-split first, "
           << "and attn-async-pipeline instead of attn-distribute-rows";
  };
  for (Operation &op : *cta.getBody()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (!stepOf(loop))
        return fail("a K/V loop must hold exactly one attn.online_attention");
      nest.loops.push_back(loop);
    } else if (auto epi = dyn_cast<EpilogueOp>(op)) {
      nest.epilogue = epi;
    }
  }
  if (nest.loops.empty() || !nest.epilogue)
    return fail("expected K/V loops and an attn.epilogue");
  nest.step = stepOf(nest.loops.front());
  for (size_t i = 1; i < nest.loops.size(); ++i) {
    scf::ForOp prev = nest.loops[i - 1], next = nest.loops[i];
    if (next.getLowerBound() != prev.getUpperBound() ||
        next.getInitArgs() != ValueRange(prev.getResults()))
      return fail("K/V loops must cover consecutive block ranges");
  }
  for (scf::ForOp loop : nest.loops) {
    OnlineAttentionOp s = stepOf(loop);
    if (s.getQ() != loadQ.getResult() || s.getK() != nest.step.getK() ||
        s.getV() != nest.step.getV() || s.getRowLanes() != 1 ||
        !matchPattern(loop.getStep(), m_One()) ||
        !matchPattern(s.getDOffset(), m_Zero()))
      return fail("every step must read the resident Q tile and whole rows "
                  "of the same K/V, one block per iteration");
  }
  EpilogueOp epi = nest.epilogue;
  if (ValueRange{epi.getM(), epi.getL(), epi.getAcc()} !=
      ValueRange(nest.loops.back().getResults()))
    return fail("the epilogue must take the state of the last K/V loop");
  return nest;
}


/// Host side: the TMA descriptor of an FP8 V stored as V^T (unit stride
/// along N), read through its [B, H, D, N] view in [1, 1, D, 128] boxes.
Value createTransposedDescriptor(OpBuilder &b, Location loc, Value v,
                                 int64_t headDim) {
  return createDescriptor(b, loc, permuted(b, loc, v, {0, 1, 3, 2}), headDim);
}

/// Whether `v` (FP8) is stored as V^T: unit stride along N.
bool isTransposedV(Value v) {
  auto [strides, offset] = cast<MemRefType>(v.getType()).getStridesAndOffset();
  return strides[2] == 1;
}

/// The CTA's shared memory and barriers.
struct SharedState {
  Value q;       // [1, C, BLOCK_M, chunk columns]
  Value k, v;    // [stages, C, BLOCK_N, chunk columns] (FP8 v: V^T tiles)
  Value vUnits;  // FP8: v as [stages, 16-byte units, 4] i32 words
  Value qTile;   // [C, BLOCK_M, chunk columns]: the consumer's view of q
  Value staging; // where the epilogue stages O: qTile, or FP8's own buffer
  Value qBar;   // Q landed (one barrier)
  Value qEmpty; // persistent: the consumers are done with Q (and staging)
  Value full;   // per stage: K/V block ready (TMA bytes; FP8: permuted)
  Value loaded; // FP8, per stage: K/V block landed (TMA bytes)
  Value empty;  // per stage: every consumer thread is done with it
  Value leader; // thread 0 of the CTA (the producer's TMA thread)
};

/// Carves Q, the K/V rings and FP8's staging tile out of dynamic shared
/// memory (each buffer a multiple of 1024 bytes, as 128-byte swizzled tiles
/// need).
SharedState allocateShared(OpBuilder &b, Location loc, const PipelineShape &s,
                           Type oElt) {
  MLIRContext *ctx = b.getContext();
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get(
          {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
  auto viewAt = [&](int64_t offset, ArrayRef<int64_t> shape,
                    Type elt) -> Value {
    Value at = arith::ConstantIndexOp::create(b, loc, offset);
    return memref::ViewOp::create(b, loc, sharedType(shape, elt), smem, at,
                                  ValueRange{});
  };
  int64_t offset = 0; // the next buffer's
  auto view = [&](ArrayRef<int64_t> shape, Type elt) -> Value {
    Value buffer = viewAt(offset, shape, elt);
    offset += ShapedType::getNumElements(shape) *
              elt.getIntOrFloatBitWidth() / 8;
    return buffer;
  };
  int64_t cols = chunkCols(s.elt);
  SharedState st;
  st.q = view({1, s.chunks, s.blockM, cols}, s.elt);
  st.k = view({s.stages, s.chunks, s.blockN, cols}, s.elt);
  int64_t vOffset = offset;
  st.v = s.fp8() ? view({s.stages, s.keyChunks(), s.headDim, cols},
                        s.elt)
                 : view({s.stages, s.chunks, s.blockN, cols}, s.elt);
  if (s.fp8()) // the same bytes as 16-byte units of four words
    st.vUnits = viewAt(vOffset, {s.stages, s.vBytes() / 16, 4},
                       IntegerType::get(ctx, 32));
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(1), b.getIndexAttr(s.chunks), b.getIndexAttr(s.blockM),
      b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  auto tileType = memref::SubViewOp::inferRankReducedResultType(
      {s.chunks, s.blockM, cols}, cast<MemRefType>(st.q.getType()), zeros,
      sizes, ones);
  st.qTile =
      memref::SubViewOp::create(b, loc, tileType, st.q, zeros, sizes, ones);
  st.staging = s.fp8() ? view({llvm::divideCeilSigned(s.headDim, int64_t(64)),
                               s.blockM, chunkCols(oElt)},
                              oElt)
                       : st.qTile;
  return st;
}

/// mbarriers: Q (one arrival + TMA bytes), full (one arrival + TMA bytes),
/// empty (one arrival per consumer thread). Thread 0 initializes them; the
/// fence and the CTA barrier publish the initialization before any use.
void createBarriers(OpBuilder &b, Location loc, const PipelineShape &s,
                    int64_t consumerThreads, bool persistent,
                    SharedState &st) {
  MLIRContext *ctx = b.getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto group = [&](unsigned n) {
    return nvgpu::MBarrierCreateOp::create(
        b, loc, nvgpu::MBarrierGroupType::get(ctx, space, n));
  };
  st.qBar = group(1);
  st.full = group(s.stages);
  st.empty = group(s.stages);
  if (s.fp8())
    st.loaded = group(s.stages);
  if (persistent)
    st.qEmpty = group(1);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  st.leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c0);
  nvgpu::MBarrierInitOp::create(b, loc, st.qBar, c1, c0, st.leader);
  Value consumers = arith::ConstantIndexOp::create(b, loc, consumerThreads);
  if (persistent)
    nvgpu::MBarrierInitOp::create(b, loc, st.qEmpty, consumers, c0, st.leader);
  Value permuters = arith::ConstantIndexOp::create(b, loc, kPermuteThreads);
  for (int64_t i = 0; i < s.stages; ++i) {
    Value idx = arith::ConstantIndexOp::create(b, loc, i);
    nvgpu::MBarrierInitOp::create(b, loc, st.full, st.loaded ? permuters : c1,
                                  idx, st.leader);
    nvgpu::MBarrierInitOp::create(b, loc, st.empty, consumers, idx, st.leader);
    if (st.loaded)
      nvgpu::MBarrierInitOp::create(b, loc, st.loaded, c1, idx, st.leader);
  }
  NVVM::FenceMbarrierInitOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
}

/// Paged K/V: tokens per page (dimension 2 of the [num_pages, Hkv,
/// page_size, D] view the step reads).
int64_t pageSizeOf(OnlineAttentionOp step) {
  return cast<MemRefType>(step.getK().getType()).getDimSize(2);
}

/// Paged K/V: rows of a page per TMA box (the page, or BLOCK_N rows of it).
int64_t pagedBoxRows(OnlineAttentionOp step, int64_t blockN) {
  return std::min(pageSizeOf(step), blockN);
}

/// Paged K/V: where the boxes of the K/V block at key `key` come from, one
/// (page, row in page) per pagedBoxRows rows: the block table's entries,
/// all loaded before any copy is issued. A box that starts at or past the
/// sequence's Nk reads page -1, which TMA fills with zeros, so no table
/// entry past the sequence's pages (nor past the table's row) is read.
SmallVector<std::pair<Value, Value>>
pagedBoxes(OpBuilder &b, Location loc, OnlineAttentionOp step, Value key,
           Value numKeys, int64_t blockN) {
  Value table = step.getBlockTable();
  int64_t rows = pagedBoxRows(step, blockN);
  Value ps = arith::ConstantIndexOp::create(b, loc, pageSizeOf(step));
  Value lastSlot = arith::SubIOp::create(
      b, loc, b.createOrFold<memref::DimOp>(loc, table, 1),
      arith::ConstantIndexOp::create(b, loc, 1));
  Value none = arith::ConstantIndexOp::create(b, loc, -1);
  SmallVector<std::pair<Value, Value>> boxes;
  for (int64_t i = 0; i < blockN / rows; ++i) {
    Value at = arith::AddIOp::create(
        b, loc, key, arith::ConstantIndexOp::create(b, loc, i * rows));
    Value slot = arith::MinUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, at, ps), lastSlot);
    Value entry = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, table,
                               ValueRange{step.getBatch(), slot}));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, numKeys);
    boxes.push_back({arith::SelectOp::create(b, loc, inside, entry, none),
                     arith::RemUIOp::create(b, loc, at, ps)});
  }
  return boxes;
}

/// Paged K/V: TMA copies of one K/V block of stage `slot` of `buffer` from
/// `boxes` (pagedBoxes), completing on `bars[slot]`.
void copyPagedTile(OpBuilder &b, Location loc, Value desc, Value buffer,
                   Value slot, Value bars, ArrayRef<std::pair<Value, Value>> boxes,
                   Value head, int64_t chunks) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t cols = type.getDimSize(3);
  int64_t rows = type.getDimSize(2) / boxes.size();
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(rows),
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  for (int64_t c = 0; c < chunks; ++c) {
    Value tile = boxView(b, loc, buffer, slot, c);
    Value col = arith::ConstantIndexOp::create(b, loc, c * cols);
    for (auto [i, box] : llvm::enumerate(boxes)) {
      SmallVector<OpFoldResult> offsets = {
          b.getIndexAttr(0), b.getIndexAttr(0),
          b.getIndexAttr(static_cast<int64_t>(i) * rows), b.getIndexAttr(0)};
      Value dst =
          memref::SubViewOp::create(b, loc, tile, offsets, sizes, ones);
      nvgpu::TmaAsyncLoadOp::create(b, loc, dst, bars, desc,
                                    ValueRange{col, box.second, head, box.first},
                                    slot, Value(), Value());
    }
  }
}

/// TMA copies of keys [key, key + BLOCK_N) of an FP8 V^T (all D rows) into
/// stage `slot` of `buffer`, 128 keys per copy.
void copyTransposedTile(OpBuilder &b, Location loc, Value desc, Value buffer,
                        Value slot, Value bars, Value key, Value head,
                        Value batch) {
  Value d0 = arith::ConstantIndexOp::create(b, loc, 0);
  int64_t keyChunks = cast<MemRefType>(buffer.getType()).getDimSize(1);
  for (int64_t c = 0; c < keyChunks; ++c) {
    Value at = arith::AddIOp::create(
        b, loc, key, arith::ConstantIndexOp::create(b, loc, c * kFP8KeyChunk));
    nvgpu::TmaAsyncLoadOp::create(b, loc, boxView(b, loc, buffer, slot, c),
                                  bars, desc, ValueRange{at, d0, head, batch},
                                  slot, Value(), Value());
  }
}

/// Where a CTA is in its sequence of tiles: the tile's ordinal (its Q
/// barrier phase) and the K/V blocks of its earlier tiles (the ring's
/// position), both zero without a persistent loop; and a persistent loop's
/// tile, its number in decodeTile's order.
struct TileState {
  Value ordinal, blocksBefore, index;
};

/// The ring position of block `kb` of a tile whose blocks start at
/// `first` (a split-KV CTA's first block), after `blocksBefore` others.
Value ringBlock(OpBuilder &b, Location loc, Value kb, Value first,
                Value blocksBefore) {
  if (!matchPattern(first, m_Zero()))
    kb = arith::SubIOp::create(b, loc, kb, first);
  if (matchPattern(blocksBefore, m_Zero()))
    return kb;
  return arith::AddIOp::create(b, loc, kb, blocksBefore);
}

/// Parity of phase `ordinal` of a barrier used once per tile.
Value phaseParity(OpBuilder &b, Location loc, Value ordinal) {
  if (matchPattern(ordinal, m_Zero()))
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  return arith::IndexCastOp::create(
      b, loc, b.getI1Type(),
      arith::RemUIOp::create(b, loc, ordinal,
                             arith::ConstantIndexOp::create(b, loc, 2)));
}

/// The producer: its leader thread copies Q (once the consumers are done
/// with the previous tile's), then K/V blocks first .. numBlocks-1 into the
/// ring, waiting for each slot to be released.
void buildProducer(OpBuilder &b, Location loc, CtaNest nest,
                   const PipelineShape &s, const SharedState &st,
                   ArrayRef<Value> desc, Value numBlocks, Value numKeys,
                   const TileState &tile) {
  auto ifOp = scf::IfOp::create(b, loc, st.leader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (st.qEmpty) // parity ^ 1: the first tile passes a fresh barrier
    nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, st.qEmpty,
        arith::XOrIOp::create(b, loc, phaseParity(b, loc, tile.ordinal), one),
        arith::ConstantIndexOp::create(b, loc, kWaitTicks), c0);
  LoadTileOp q = nest.loadQ;
  nvgpu::MBarrierArriveExpectTxOp::create(
      b, loc, st.qBar, arith::ConstantIndexOp::create(b, loc, s.qBytes()), c0,
      Value());
  copyTile(b, loc, desc[0], st.q, c0, st.qBar, c0, q.getRow(), q.getHead(),
           q.getBatch(), s.chunks, q.getGqaPack());

  Value first = nest.loops.front().getLowerBound();
  auto loop = scf::ForOp::create(b, loc, first, numBlocks, c1);
  b.setInsertionPointToStart(loop.getBody());
  Value kb = loop.getInductionVar();
  auto [slot, parity] = slotAndParity(
      b, loc, ringBlock(b, loc, kb, first, tile.blocksBefore), s.stages);
  // A fresh barrier counts as having completed the phase before phase 0:
  // waiting for parity ^ 1 lets the first round pass.
  Value emptyParity = arith::XOrIOp::create(b, loc, parity, one);
  Value ticks = arith::ConstantIndexOp::create(b, loc, kWaitTicks);
  OnlineAttentionOp step = nest.step;
  auto blockRow = [&] {
    return arith::MulIOp::create(
        b, loc, kb, arith::ConstantIndexOp::create(b, loc, s.blockN));
  };
  // Paged K/V: the block table is read before the wait for the slot, so
  // the loads' latency hides behind it (docs/perf-notes.md).
  SmallVector<std::pair<Value, Value>> boxes;
  if (step.getBlockTable())
    boxes = pagedBoxes(b, loc, step, blockRow(), numKeys, s.blockN);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, st.empty, emptyParity, ticks,
                                         slot);
  // expect_tx counts full boxes: TMA delivers every byte of a box, rows past
  // Nk as zeros. FP8 blocks land on `loaded`; the permuters then fill
  // `full`.
  Value landed = st.loaded ? st.loaded : st.full;
  nvgpu::MBarrierArriveExpectTxOp::create(
      b, loc, landed,
      arith::ConstantIndexOp::create(b, loc, s.kBytes() + s.vBytes()), slot,
      Value());
  if (step.getBlockTable()) {
    copyPagedTile(b, loc, desc[1], st.k, slot, landed, boxes,
                  step.getKvHead(), s.chunks);
    copyPagedTile(b, loc, desc[2], st.v, slot, landed, boxes,
                  step.getKvHead(), s.chunks);
    return;
  }
  Value row = blockRow();
  // Varlen: the sequence's keys start at key_offset.
  if (Value offset = step.getKeyOffset())
    row = arith::AddIOp::create(b, loc, row, offset);
  copyTile(b, loc, desc[1], st.k, slot, landed, slot, row, step.getKvHead(),
           step.getBatch(), s.chunks);
  if (s.fp8())
    copyTransposedTile(b, loc, desc[2], st.v, slot, landed, row,
                       step.getKvHead(), step.getBatch());
  else
    copyTile(b, loc, desc[2], st.v, slot, landed, slot, row, step.getKvHead(),
             step.getBatch(), s.chunks);
}

/// FP8: the key order of V^T that P's e4m3 A registers need. An A register
/// holds four consecutive k positions, but the S accumulator gives a thread
/// keys 2q, 2q + 1, 8 + 2q, 9 + 2q of each 16 (HOPPER.md); packing those
/// as they are puts key pi(4q + b) = 8 (b >> 1) + 2q + (b & 1) at k
/// position 4q + b. So V^T's keys are permuted the same way inside every
/// 16-byte unit (16 keys; the 128-byte swizzle moves whole units): out
/// word q takes bytes 2 (q % 2), +1 of in words q / 2 and 2 + q / 2.
Value permuteUnit(OpBuilder &b, Location loc, ArrayRef<Value> in,
                  int64_t word) {
  Value lo = in[word / 2], hi = in[2 + word / 2];
  Value selector = arith::ConstantIntOp::create(
      b, loc, word % 2 ? 0x7632 : 0x5410, 32);
  return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                 NVVM::PermuteMode::DEFAULT);
}

/// FP8: producer warps 1-3 wait for each block to land, permute its V^T
/// tile in place (permuteUnit), make the writes visible to the async proxy
/// (the MMA reads them) and arrive on the block's `full` barrier.
void buildPermuter(OpBuilder &b, Location loc, const PipelineShape &s,
                   const SharedState &st, Value first, Value numBlocks,
                   const TileState &tile) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value isPermuter = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           tid, cst(128 - kPermuteThreads));
  auto ifOp = scf::IfOp::create(b, loc, isPermuter, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value myUnit =
      arith::SubIOp::create(b, loc, tid, cst(128 - kPermuteThreads));
  auto loop = scf::ForOp::create(b, loc, first, numBlocks, cst(1));
  b.setInsertionPointToStart(loop.getBody());
  auto [slot, parity] = slotAndParity(
      b, loc,
      ringBlock(b, loc, loop.getInductionVar(), first, tile.blocksBefore),
      s.stages);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, st.loaded, parity,
                                         cst(kWaitTicks), slot);
  auto units = scf::ForOp::create(b, loc, myUnit, cst(s.vBytes() / 16),
                                  cst(kPermuteThreads));
  {
    OpBuilder::InsertionGuard unitGuard(b);
    b.setInsertionPointToStart(units.getBody());
    SmallVector<Value> at = {slot, units.getInductionVar(), Value(cst(0))};
    auto wordsType = VectorType::get({4}, b.getI32Type());
    Value words = vector::LoadOp::create(b, loc, wordsType, st.vUnits, at);
    SmallVector<Value> in, out;
    for (int64_t w = 0; w < 4; ++w)
      in.push_back(vector::ExtractOp::create(b, loc, words, w));
    for (int64_t w = 0; w < 4; ++w)
      out.push_back(permuteUnit(b, loc, in, w));
    vector::StoreOp::create(
        b, loc, vector::FromElementsOp::create(b, loc, wordsType, out),
        st.vUnits, at);
  }
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  nvgpu::MBarrierArriveOp::create(
      b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), st.full, slot);
}

/// One consumer K/V loop: wait for the block's slot, run the step on tensor
/// cores from shared memory, release the slot.
void rewriteConsumerLoop(scf::ForOp loop, const PipelineShape &s,
                         const SharedState &st, Value numKeys, Value first,
                         Value blocksBefore) {
  OnlineAttentionOp step = stepOf(loop);
  Location loc = step.getLoc();
  OpBuilder b(step);
  auto [slot, parity] = slotAndParity(
      b, loc,
      ringBlock(b, loc, loop.getInductionVar(), first, blocksBefore),
      s.stages);
  Value ticks = arith::ConstantIndexOp::create(b, loc, kWaitTicks);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, st.full, parity, ticks, slot);
  auto mma = OnlineAttentionMmaOp::create(
      b, loc, step.getM().getType(), step.getL().getType(),
      step.getAcc().getType(), st.qTile, stageTile(b, loc, st.k, slot),
      stageTile(b, loc, st.v, slot), step.getKPos(), numKeys, step.getQPos(),
      step.getCausalOffset(), step.getQkDescale(), step.getM(), step.getL(),
      step.getAcc(),
      step.getScaleAttr(), b.getI64IntegerAttr(s.headDim), step.getMaskAttr());
  mma.setGqaPack(step.getGqaPack());
  // TMA bounds the packed buffer or the cache, not the sequence; blocks
  // without a mask end at or before Nk.
  if ((step.getKeyOffset() || step.getBlockTable()) &&
      step.getMask() != MaskKind::none)
    mma.setUnfilledTail(true);
  step.replaceAllUsesWith(mma.getResults());
  step.erase();
  b.setInsertionPointAfter(mma);
  nvgpu::MBarrierArriveOp::create(
      b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), st.empty, slot);
}

//===----------------------------------------------------------------------===//
// Persistent CTAs
//===----------------------------------------------------------------------===//

/// Starts at `b` the loop over a persistent CTA's tiles, dealt back and
/// forth in rounds of gridDim.x (dealtRounds, dealtTile), carrying the K/V
/// blocks of earlier tiles (`tile`); leaves `b` before the loop's yield,
/// which endTileLoop fills. The loop counts rounds, so its induction
/// variable is the tile's ordinal.
scf::ForOp beginTileLoop(OpBuilder &b, Location loc, Value numTiles,
                         TileState &tile) {
  Value x = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value g = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, c0, dealtRounds(b, loc, numTiles, x, g), c1, ValueRange{c0});
  b.setInsertionPointToStart(loop.getBody());
  Value round = loop.getInductionVar();
  tile.index = dealtTile(b, loc, round, x, g);
  auto yield = scf::YieldOp::create(b, loc, loop.getRegionIterArgs());
  b.setInsertionPoint(yield);
  tile.ordinal = round;
  tile.blocksBefore = loop.getRegionIterArgs()[0];
  return loop;
}

/// The next tile: numBlocks more blocks through the ring.
void endTileLoop(scf::ForOp loop, Value numBlocks) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  OpBuilder b(yield);
  yield->setOperands(ValueRange{arith::AddIOp::create(
      b, loop.getLoc(), loop.getRegionIterArgs()[0], numBlocks)});
}

/// The (Q block, head, batch) of tile `t` of a CTA loop with upper bounds
/// `ub`: Q block fastest (neighbours share K/V in L2), or for
/// `heaviestFirst` Q block slowest and descending, (head, batch) pairs
/// fastest: the longest causal tiles of the grid first.
SmallVector<Value> decodeTile(OpBuilder &b, Location loc, Value t,
                              ArrayRef<Value> ub, bool heaviestFirst) {
  Value qBlock, rest;
  if (heaviestFirst) {
    Value pairs = arith::MulIOp::create(b, loc, ub[1], ub[2]);
    Value last = arith::SubIOp::create(
        b, loc, ub[0], arith::ConstantIndexOp::create(b, loc, 1));
    qBlock = arith::SubIOp::create(b, loc, last,
                                   arith::DivUIOp::create(b, loc, t, pairs));
    rest = arith::RemUIOp::create(b, loc, t, pairs);
  } else {
    qBlock = arith::RemUIOp::create(b, loc, t, ub[0]);
    rest = arith::DivUIOp::create(b, loc, t, ub[0]);
  }
  return {qBlock, arith::RemUIOp::create(b, loc, rest, ub[1]),
          arith::DivUIOp::create(b, loc, rest, ub[1])};
}

/// Whether K and V of every (batch, KV head) pair take at most
/// kL2KeyValueBytes: a bool attribute for a static K, else an i1 computed
/// from the sizes of K (defined outside `cta`) at `b`; false for paged or
/// varlen K/V (a cache, or packed sequences, not what one grid reads at
/// once).
OpFoldResult keyValueFitsL2(OpBuilder &b, Location loc, scf::ForallOp cta,
                            OnlineAttentionOp step) {
  auto k = cast<MemRefType>(step.getK().getType());
  if (step.getBlockTable() || step.getKeyOffset() || k.getRank() != 4 ||
      !cta.isDefinedOutsideOfLoop(step.getK()))
    return b.getBoolAttr(false);
  int64_t kvBytes = 2 * k.getElementTypeBitWidth() / 8;
  if (k.hasStaticShape())
    return b.getBoolAttr(kvBytes * k.getNumElements() <= kL2KeyValueBytes);
  Value bytes = arith::ConstantIndexOp::create(b, loc, kvBytes);
  for (int64_t d = 0; d < k.getRank(); ++d)
    bytes = arith::MulIOp::create(
        b, loc, bytes,
        k.isDynamicDim(d)
            ? Value(memref::DimOp::create(b, loc, step.getK(), d))
            : Value(arith::ConstantIndexOp::create(b, loc, k.getDimSize(d))));
  return arith::CmpIOp::create(
             b, loc, arith::CmpIPredicate::ule, bytes,
             arith::ConstantIndexOp::create(b, loc, kL2KeyValueBytes))
      .getResult();
}

/// Starts a causal grid of one CTA per tile with its heaviest CTAs. The
/// launch enumerates the CTA loop Q block fastest (attn-lower-to-nvvm);
/// this rebinds the loop's (Q block, head, batch) so that launch position
/// p = q + nQ (h + H b) runs, where K and V fit in L2 (keyValueFitsL2), tile
/// p of decodeTile's heaviest-first order: the longest tiles of the whole
/// grid first, a greedy longest-first schedule for the block scheduler.
/// Otherwise each head's Q blocks run from the last, head after head, so
/// that the CTAs running together share one head's K/V. A dynamic K
/// chooses at run time.
void orderCausalTiles(scf::ForallOp cta, OnlineAttentionOp step) {
  Block *body = cta.getBody();
  Operation *firstOp = &body->front();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  SmallVector<Value> iv = cta.getInductionVars();
  OpFoldResult fits = keyValueFitsL2(b, loc, cta, step);
  auto headAfterHead = [&]() -> SmallVector<Value> {
    Value last = arith::SubIOp::create(
        b, loc, ub[0], arith::ConstantIndexOp::create(b, loc, 1));
    return {arith::SubIOp::create(b, loc, last, iv[0]), iv[1], iv[2]};
  };
  auto qBlockMajor = [&]() {
    Value pair = arith::AddIOp::create(
        b, loc, iv[1], arith::MulIOp::create(b, loc, ub[1], iv[2]));
    Value pos = arith::AddIOp::create(
        b, loc, iv[0], arith::MulIOp::create(b, loc, ub[0], pair));
    return decodeTile(b, loc, pos, ub, /*heaviestFirst=*/true);
  };
  SmallVector<Value> tile;
  if (std::optional<int64_t> known = getConstantIntValue(fits)) {
    tile = *known ? qBlockMajor() : headAfterHead();
  } else {
    SmallVector<Value> major = qBlockMajor(), serial = headAfterHead();
    for (auto [m, h] : llvm::zip(major, serial))
      tile.push_back(arith::SelectOp::create(b, loc, cast<Value>(fits), m, h));
  }
  for (auto [v, t] : llvm::zip(iv, tile))
    if (t != v)
      v.replaceUsesWithIf(t, [&](OpOperand &use) {
        Operation *owner = body->findAncestorOpInBlock(*use.getOwner());
        return owner && !owner->isBeforeInBlock(firstOp);
      });
}

/// Re-creates, in tile loop `loop` after its tile `tileIndex`, every value
/// of the CTA body that depends on the CTA loop's (Q block, head, batch),
/// for that tile (decodeTile), and makes the loop use them; causal loops
/// take `heaviestFirst`, so that every CTA's tiles are in longest-first
/// order.
LogicalResult bindTile(scf::ForallOp cta, scf::ForOp loop, Value tileIndex,
                       bool heaviestFirst) {
  OpBuilder b(loop.getContext());
  b.setInsertionPointAfterValue(tileIndex);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  IRMapping map;
  map.map(cta.getInductionVars(),
          decodeTile(b, loc, tileIndex, ub, heaviestFirst));
  // The CTA body's ops that read the induction variables, directly or not.
  DenseSet<Value> dependent(cta.getInductionVars().begin(),
                            cta.getInductionVars().end());
  SmallVector<Value> rebound(cta.getInductionVars());
  for (Operation &op : cta.getBody()->without_terminator()) {
    if (op.isAncestor(loop))
      continue;
    SetVector<Value> used(op.getOperands().begin(), op.getOperands().end());
    for (Region &region : op.getRegions())
      getUsedValuesDefinedAbove(region, used);
    if (llvm::none_of(used, [&](Value v) { return dependent.contains(v); }))
      continue;
    // Re-running it per tile would repeat its effect; reading an input
    // (FP8's descales) again is harmless.
    if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
      return emitError(op.getLoc(),
                       "attn-async-pipeline: persistent-ctas re-creates "
                       "the per-tile values of the CTA body, which must "
                       "be free of side effects");
    b.clone(op, map);
    for (Value r : op.getResults()) {
      dependent.insert(r);
      rebound.push_back(r);
    }
  }
  for (Value v : rebound)
    v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
      return loop->isProperAncestor(use.getOwner());
    });
  return success();
}

/// FP8 markers agree: f8E4M3FN tiles exactly when every step has a
/// qk_descale and the epilogue a v_descale (the lowering scales P, O and
/// LSE by them).
LogicalResult checkDescales(CtaNest nest, const PipelineShape &s) {
  bool agree = s.fp8() == bool(nest.epilogue.getVDescale());
  for (scf::ForOp loop : nest.loops)
    agree &= s.fp8() == bool(stepOf(loop).getQkDescale());
  if (agree)
    return success();
  return emitError(nest.cta.getLoc(),
                   "attn-async-pipeline: the steps' qk_descale "
                   "and the epilogue's v_descale must be given "
                   "exactly when the tiles are f8E4M3FN, but the "
                   "tiles are ")
         << s.elt;
}

/// What the FP8 tensor-core step needs: V stored as V^T (the MMA reads FP8
/// B operands K-major only) and BLOCK_N a whole number of k32 steps.
LogicalResult checkFP8(CtaNest nest, const PipelineShape &s) {
  if (!isTransposedV(nest.step.getV()))
    return emitError(
               nest.cta.getLoc(),
               "attn-async-pipeline: FP8 on tensor cores reads V as V^T: "
               "operand 'v' needs unit stride along Nk (stored [B, Hkv, D, "
               "Nk]), but got ")
           << nest.step.getV().getType();
  if (s.blockN % 32 != 0)
    return emitError(nest.cta.getLoc(),
                     "attn-async-pipeline: FP8 needs BLOCK_N a "
                     "multiple of 32 (whole k32 steps of P V), "
                     "but got ")
           << s.blockN;
  if (s.headDim % 16 != 0)
    return emitError(nest.cta.getLoc(),
                     "attn-async-pipeline: FP8 needs D a multiple "
                     "of 16, but got ")
           << s.headDim;
  return success();
}

/// Paged K/V: a static page size whose boxes tile a K/V block and keep the
/// 128-byte swizzle's 8-row period: page_size a multiple of 8 dividing
/// BLOCK_N, or a multiple of BLOCK_N.
LogicalResult checkPaged(CtaNest nest, const PipelineShape &s) {
  if (!nest.step.getBlockTable())
    return success();
  int64_t pageSize = pageSizeOf(nest.step);
  if (!ShapedType::isDynamic(pageSize) &&
      (pageSize % s.blockN == 0 ||
       (s.blockN % pageSize == 0 && pageSize % 8 == 0)))
    return success();
  return emitError(nest.cta.getLoc(),
                   "attn-async-pipeline: paged K/V needs a static "
                   "page_size that is a multiple of BLOCK_N (")
         << s.blockN << ") or a multiple of 8 dividing it, but got "
         << (ShapedType::isDynamic(pageSize) ? std::string("?")
                                             : std::to_string(pageSize))
         << " (BLOCK_N is attn-tile's block-n: attn-compile --block-n, a "
            "spec's block_n)";
}

/// Stages that fit shared memory: at most `requested` (0: up to 4 for
/// D <= 64, else 3), at least 2.
FailureOr<int64_t> chooseStages(PipelineShape s, int64_t requested,
                                Operation *op) {
  if (requested < 0 || requested == 1)
    return emitError(op->getLoc(),
                     "attn-async-pipeline: stages must be 0 (chosen "
                     "per D) or at least 2, but got ")
           << requested;
  int64_t want = requested > 0 ? requested : (s.chunks == 1 ? 4 : 3);
  int64_t fit = (kMaxSharedBytes - s.qBytes() - s.stagingBytes()) /
                (s.kBytes() + s.vBytes());
  if (fit >= 2)
    return std::min(want, fit);
  s.stages = 2;
  return emitError(op->getLoc(),
                   "attn-async-pipeline: Q and two K/V stages need ")
         << s.sharedBytes() << " bytes of shared memory, more than the "
         << kMaxSharedBytes << " a CTA may use; use a smaller block-n";
}

struct AttnAsyncPipelinePass
    : StrictOptions<attn::impl::AttnAsyncPipelineBase<AttnAsyncPipelinePass>> {
  using StrictOptions::StrictOptions;

  /// Options are checked once, before any function (no location: they are
  /// not in the input), rather than by the verifier of the
  /// attn.warp_specialize they would build.
  LogicalResult initialize(MLIRContext *ctx) override {
    for (auto [name, regs, automatic] :
         {std::tuple<StringRef, int64_t, StringRef>{
              "producer-registers", producerRegisters,
              "24, or for FP8 and paged K/V what the consumers leave"},
          {"consumer-registers", consumerRegisters, "per BLOCK_M"}})
      if (regs != 0 && (regs < 24 || regs > 256 || regs % 8 != 0))
        return emitError(UnknownLoc::get(ctx))
               << "attn-async-pipeline: " << name
               << " must be a multiple of 8 in [24, 256] (setmaxnreg), or 0: "
               << automatic << ", but got " << regs;
    if (persistentCtas < 0 || persistentCtas > kMaxGridX)
      return emitError(UnknownLoc::get(ctx))
             << "attn-async-pipeline: persistent-ctas must be 0 (one CTA per "
                "tile) or a CTA count in [1, 2^31 - 1], but got "
             << static_cast<int64_t>(persistentCtas);
    return success();
  }

  LogicalResult pipeline(CtaNest nest) {
    OnlineAttentionOp step = nest.step;
    auto qType = cast<VectorType>(nest.loadQ.getResult().getType());
    int64_t d = qType.getDimSize(1);
    Type elt = qType.getElementType();
    PipelineShape s{qType.getDimSize(0),
                    static_cast<int64_t>(step.getBlockN()),
                    d,
                    llvm::divideCeilSigned(d, chunkCols(elt)),
                    0,
                    elt};
    if (!s.elt.isF16() && !s.elt.isBF16() && !s.fp8())
      return emitError(nest.cta.getLoc(),
                       "attn-async-pipeline: tensor cores take "
                       "f16, bf16 or f8E4M3FN here, not ")
             << s.elt;
    if (failed(checkDescales(nest, s)) ||
        (s.fp8() && failed(checkFP8(nest, s))) || failed(checkPaged(nest, s)))
      return failure();
    if (s.blockM % 64 != 0 || s.blockM / 64 > kMaxConsumerWarpgroups)
      return emitError(nest.cta.getLoc(),
                       "attn-async-pipeline: BLOCK_M must be 64, "
                       "128 or 192 (one to three consumer "
                       "warpgroups of 64 rows), but got ")
             << s.blockM;
    if (kWarpgroupRows % nest.loadQ.getGqaPack() != 0)
      return emitError(nest.cta.getLoc(),
                       "attn-async-pipeline: GQA packing needs "
                       "the group size Hq / Hkv to divide 64 (a "
                       "warpgroup's rows hold whole queries), but "
                       "got ")
             << nest.loadQ.getGqaPack();
    if (s.blockN % 16 != 0 || s.blockN > 256)
      return emitError(nest.cta.getLoc(),
                       "attn-async-pipeline: BLOCK_N must be a "
                       "multiple of 16 up to 256, but got ")
             << s.blockN;
    int64_t accumulators = accumulatorsPerThread(s.blockN, s.headDim);
    int64_t room = maxThreeWarpgroupAccumulators(s.fp8());
    if (s.blockM / 64 == 3 && accumulators > room)
      return emitError(
                 nest.cta.getLoc(),
                 "attn-async-pipeline: with three consumer warpgroups "
                 "(BLOCK_M 192) ptxas has 128 registers per thread, room for ")
             << room << " S and O accumulators (BLOCK_N / 2 + D / 2) beside "
             << (s.fp8() ? "e4m3" : "16-bit") << " P, but BLOCK_N " << s.blockN
             << " and D " << s.headDim << " need " << accumulators
             << "; use BLOCK_M 128 or a smaller BLOCK_N";
    bool splitKV = cast<MemRefType>(nest.epilogue.getO().getType())
                       .getElementType()
                       .isF32();
    if (tmaStore && !splitKV &&
        !nest.cta.isDefinedOutsideOfLoop(nest.epilogue.getO()))
      return emitError(
          nest.cta.getLoc(),
          "attn-async-pipeline: tma-store needs O defined outside the CTA "
          "loop (its descriptor is built on the host), but a varlen CTA "
          "stores into its sequence's rows of O; leave tma-store off");
    if (splitKV && persistentCtas > 0)
      return emitError(nest.cta.getLoc(),
                       "attn-async-pipeline: persistent-ctas does "
                       "not take split-KV (attn.partial_attention) "
                       "tiles yet");
    FailureOr<int64_t> stagesOr = chooseStages(s, stages, nest.cta);
    if (failed(stagesOr))
      return failure();
    s.stages = *stagesOr;
    int64_t groups = s.blockM / 64;
    int64_t consumerRegs = consumerRegisters ? int64_t(consumerRegisters)
                                             : defaultConsumerRegisters(groups);
    int64_t producerRegs =
        producerRegisters
            ? int64_t(producerRegisters)
            : defaultProducerRegisters(groups, consumerRegs,
                                       s.fp8() || step.getBlockTable());
    if (int64_t total = 128 * (producerRegs + groups * consumerRegs);
        total > kRegistersPerSM)
      return emitError(nest.cta.getLoc())
             << "attn-async-pipeline: producer-registers " << producerRegs
             << " and consumer-registers " << consumerRegs << " for " << groups
             << " consumer warpgroups (BLOCK_M " << s.blockM << ") need "
             << total << " registers per CTA, but an SM has "
             << kRegistersPerSM;

    // Host side: TMA descriptors of Q, K, V.
    OpBuilder host(nest.cta);
    Location loc = nest.cta.getLoc();
    int64_t pack = nest.loadQ.getGqaPack();
    int64_t kvRows =
        step.getBlockTable() ? pagedBoxRows(step, s.blockN) : s.blockN;
    SmallVector<Value> desc = {
        createDescriptor(host, loc, nest.loadQ.getSource(), s.blockM, pack),
        createDescriptor(host, loc, step.getK(), kvRows),
        s.fp8() ? createTransposedDescriptor(host, loc, step.getV(), d)
                : createDescriptor(host, loc, step.getV(), kvRows)};

    // CTA prologue: shared memory, barriers.
    OpBuilder b(nest.loops.front());
    SharedState st = allocateShared(
        b, loc, s,
        cast<MemRefType>(nest.epilogue.getO().getType()).getElementType());
    bool persistent = persistentCtas > 0;
    createBarriers(b, loc, s, 128 * groups, persistent, st);
    Value numTiles;
    if (persistent) {
      SmallVector<Value> ub = getValueOrCreateConstantIndexOp(
          b, loc, nest.cta.getMixedUpperBound());
      numTiles = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, ub[0], ub[1]), ub[2]);
    }
    Value numKeys = step.getKeyCount(b);
    auto ws = WarpSpecializeOp::create(
        b, loc, b.getI64IntegerAttr(groups), b.getI64IntegerAttr(producerRegs),
        b.getI64IntegerAttr(consumerRegs),
        pingPong && groups >= 2 ? b.getUnitAttr() : UnitAttr(),
        overlap && s.stages >= 3 ? b.getUnitAttr() : UnitAttr());
    if (failed(ws.verify()))
      return failure();
    Block &producer = ws.getProducer().emplaceBlock();
    Block &consumer = ws.getConsumer().emplaceBlock();

    // Persistent CTAs loop over tiles in each region; otherwise each region
    // runs one tile, the CTA's.
    Value numBlocks = nest.loops.back().getUpperBound();
    b.setInsertionPointToStart(&consumer);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    TileState consumerTile{c0, c0}, producerTile;
    scf::ForOp consumerLoop, producerLoop;
    if (persistent)
      consumerLoop = beginTileLoop(b, loc, numTiles, consumerTile);

    // Consumer: wait for Q, then the K/V loops and the epilogue, moved.
    nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, st.qBar, phaseParity(b, loc, consumerTile.ordinal),
        arith::ConstantIndexOp::create(b, loc, kWaitTicks), c0);
    Block *dest = b.getInsertionBlock();
    Block::iterator at = b.getInsertionPoint();
    for (scf::ForOp loop : nest.loops)
      loop->moveBefore(dest, at);
    nest.epilogue->moveBefore(dest, at);
    // An fp32 O (split-KV's workspace) is stored from the registers.
    if (!splitKV)
      nest.epilogue.getStagingMutable().assign(st.staging);
    if (tmaStore && !splitKV)
      nest.epilogue.getOMapMutable().assign(createDescriptor(
          host, loc, nest.epilogue.getO(), kWarpgroupRows, pack));
    if (persistent) {
      // The next tile's Q may land once every consumer thread is done with
      // Q and, where the epilogue stages O in Q's tile, with the staged O
      // (generic-proxy writes before TMA's). FP8 stages O in a buffer of
      // its own, so Q is free after the K/V loops' last Q K^T, and the next
      // tile's Q loads while the epilogue runs.
      OpBuilder::InsertionGuard guard(b);
      if (st.staging != st.qTile)
        b.setInsertionPoint(nest.epilogue);
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
      nvgpu::MBarrierArriveOp::create(
          b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), st.qEmpty, c0);
      endTileLoop(consumerLoop, numBlocks);
    }
    b.setInsertionPointToStart(&producer);
    Value p0 = arith::ConstantIndexOp::create(b, loc, 0);
    producerTile = {p0, p0};
    if (persistent)
      producerLoop = beginTileLoop(b, loc, numTiles, producerTile);
    buildProducer(b, loc, nest, s, st, desc, numBlocks, numKeys,
                  producerTile);
    if (s.fp8())
      buildPermuter(b, loc, s, st, nest.loops.front().getLowerBound(),
                    numBlocks, producerTile);
    if (persistent)
      endTileLoop(producerLoop, numBlocks);
    // One CTA per (Q block, head, batch), as blocks x, y, z (mapped loops
    // keep their unit dimensions through canonicalization).
    MLIRContext *ctx = b.getContext();
    nest.cta.setMappingAttr(ArrayAttr::get(
        ctx, {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
              gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
              gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
    // Causal: the last Q blocks see the most keys; start them first.
    bool causal = llvm::any_of(nest.loops, [](scf::ForOp loop) {
      return stepOf(loop).getMask() == MaskKind::causal;
    });
    // (Split-KV's first loop index interleaves splits and Q blocks; its
    // CTAs keep launch order.)
    if (causal && !persistent && !splitKV)
      orderCausalTiles(nest.cta, step);
    // Rewriting the steps erases them (nest.step among them): last.
    for (scf::ForOp loop : nest.loops)
      rewriteConsumerLoop(loop, s, st, numKeys,
                          nest.loops.front().getLowerBound(),
                          consumerTile.blocksBefore);
    nest.loadQ.erase();
    if (persistent) {
      if (failed(
              bindTile(nest.cta, consumerLoop, consumerTile.index, causal)) ||
          failed(bindTile(nest.cta, producerLoop, producerTile.index, causal)))
        return failure();
      nest.cta->setAttr("attn.persistent_ctas",
                        b.getI64IntegerAttr(persistentCtas));
    }
    return success();
  }

  void runOnOperation() override {
    if (failed(scalarizeBlockDescales(getOperation(), "attn-async-pipeline")))
      return signalPassFailure();
    if (failed(checkNoHostOnlyTiles(getOperation(), "attn-async-pipeline",
                                    GpuTileSupport{/*fp8=*/true,
                                                   /*gqaPack=*/true,
                                                   /*paged=*/true,
                                                   /*varlen=*/true})))
      return signalPassFailure();
    SmallVector<std::pair<scf::ForallOp, LoadTileOp>> ctas;
    getOperation().walk([&](LoadTileOp load) {
      if (auto cta = dyn_cast<scf::ForallOp>(load->getParentOp()))
        ctas.emplace_back(cta, load);
    });
    for (auto [cta, load] : ctas) {
      if (cta.getMapping() &&
          llvm::any_of(*cta.getMapping(),
                       llvm::IsaPred<gpu::GPUThreadMappingAttr>)) {
        emitError(cta.getLoc(),
                  "attn-async-pipeline: the CTA loop is already mapped "
                  "to threads (attn-distribute-rows); run "
                  "attn-async-pipeline instead of attn-distribute-rows");
        return signalPassFailure();
      }
      FailureOr<CtaNest> nest = matchNest(cta, load);
      if (failed(nest) || failed(pipeline(*nest)))
        return signalPassFailure();
      // Lowered: later passes (the CUDA-core combine of split-KV) must not
      // take it for a varlen CTA still to lower.
      cta->removeAttr(kVarlenAttr);
    }
  }
};

} // namespace

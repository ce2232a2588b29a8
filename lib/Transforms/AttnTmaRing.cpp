//===- AttnTmaRing.cpp - K/V blocks through a TMA + mbarrier ring ---------===//
//
// Rewrites the CTA body of the FlashAttention loop nest (attn-tile,
// attn-causal-split) into a warp-specialized producer/consumer pipeline:
// TMA copies Q and each K/V block into shared memory, a ring of `stages`
// K/V buffers with one full and one empty mbarrier per stage hands them to
// the consumer warpgroups, whose steps become attn.online_attention_mma
// (Passes.td, AttnTmaRing).
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
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "attn-tma-ring"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTMARING
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// The loop nest attn-tile and attn-causal-split leave in one CTA.
struct CtaNest {
  scf::ForallOp cta;
  LoadTileOp loadQ;
  SmallVector<scf::ForOp> loops; // consecutive K/V block ranges [lb, n)
  EpilogueOp epilogue;
  OnlineAttentionOp step; // the first step, for operands shared by all
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
    return emitError(cta.getLoc(), "attn-tma-ring: ")
           << why << "; run attn-tile and attn-causal-split first, "
           << "and attn-tma-ring instead of attn-distribute-rows";
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
  Value qTile;   // [C, BLOCK_M, chunk columns]: the consumer's view of q
  Value staging; // where the epilogue stages O: qTile, or FP8's own buffer
  Value qBar;   // Q landed (one barrier)
  Value full;   // per stage: K/V block landed (TMA bytes)
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
  st.v = s.fp8() ? view({s.stages, s.keyChunks(), s.headDim, cols},
                        s.elt)
                 : view({s.stages, s.chunks, s.blockN, cols}, s.elt);
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
                    int64_t consumerThreads, SharedState &st) {
  MLIRContext *ctx = b.getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto group = [&](unsigned n) {
    return nvgpu::MBarrierCreateOp::create(
        b, loc, nvgpu::MBarrierGroupType::get(ctx, space, n));
  };
  st.qBar = group(1);
  st.full = group(s.stages);
  st.empty = group(s.stages);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  st.leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c0);
  nvgpu::MBarrierInitOp::create(b, loc, st.qBar, c1, c0, st.leader);
  Value consumers = arith::ConstantIndexOp::create(b, loc, consumerThreads);
  for (int64_t i = 0; i < s.stages; ++i) {
    Value idx = arith::ConstantIndexOp::create(b, loc, i);
    nvgpu::MBarrierInitOp::create(b, loc, st.full, c1, idx, st.leader);
    nvgpu::MBarrierInitOp::create(b, loc, st.empty, consumers, idx, st.leader);
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

/// The producer: its leader thread copies Q, then K/V blocks first ..
/// numBlocks-1 into the ring, waiting for each slot to be released.
void buildProducer(OpBuilder &b, Location loc, CtaNest nest,
                   const PipelineShape &s, const SharedState &st,
                   ArrayRef<Value> desc, Value numBlocks, Value numKeys) {
  auto ifOp = scf::IfOp::create(b, loc, st.leader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
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
  auto [slot, parity] =
      slotAndParity(b, loc, ringBlock(b, loc, kb, first), s.stages);
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
  // Nk as zeros.
  Value landed = st.full;
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

/// One consumer K/V loop: wait for the block's slot, run the step on tensor
/// cores from shared memory, release the slot.
void rewriteConsumerLoop(scf::ForOp loop, const PipelineShape &s,
                         const SharedState &st, Value numKeys, Value first) {
  OnlineAttentionOp step = stepOf(loop);
  Location loc = step.getLoc();
  OpBuilder b(step);
  auto [slot, parity] = slotAndParity(
      b, loc, ringBlock(b, loc, loop.getInductionVar(), first), s.stages);
  Value ticks = arith::ConstantIndexOp::create(b, loc, kWaitTicks);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, st.full, parity, ticks, slot);
  auto mma = OnlineAttentionMmaOp::create(
      b, loc, step.getM().getType(), step.getL().getType(),
      step.getAcc().getType(), st.qTile, stageTile(b, loc, st.k, slot),
      stageTile(b, loc, st.v, slot), step.getKPos(), numKeys, step.getQPos(),
      step.getCausalOffset(), step.getQkDescale(), step.getM(), step.getL(),
      step.getAcc(), step.getScaleAttr(), b.getI64IntegerAttr(s.headDim),
      step.getMaskAttr(), step.getGqaPackAttr(), /*unfilled_tail=*/UnitAttr(),
      step.getKeyMaskAttr());
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

/// The consumer's online-softmax state (m, l, acc) as warpgroup fragments
/// (!attn.wg_fragment): the initial values converted once at the start of
/// the consumer region, the state the K/V loops carry and the steps'
/// results typed so. Only these values change type: the lowering
/// (attn-lower-to-wgmma) converts the type, not vectors of some shape.
void assignFragments(MutableArrayRef<scf::ForOp> loops, Block &consumer) {
  OpBuilder b = OpBuilder::atBlockBegin(&consumer);
  auto fragment = [](Type t) {
    return WgFragmentType::get(cast<VectorType>(t));
  };
  for (OpOperand &init : loops.front().getInitArgsMutable())
    init.set(ToWgFragmentOp::create(b, init.get().getLoc(),
                                    fragment(init.get().getType()),
                                    init.get()));
  for (scf::ForOp loop : loops) {
    for (auto [arg, result] :
         llvm::zip_equal(loop.getRegionIterArgs(), loop.getResults())) {
      arg.setType(fragment(arg.getType()));
      result.setType(arg.getType());
    }
    for (auto step : loop.getBody()->getOps<OnlineAttentionMmaOp>())
      for (OpResult r : step->getResults())
        r.setType(fragment(r.getType()));
  }
  LLVM_DEBUG(llvm::dbgs() << "state of " << loops.size()
                          << " K/V loop(s) as warpgroup fragments\n");
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
                   "attn-tma-ring: the steps' qk_descale "
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
               "attn-tma-ring: FP8 on tensor cores reads V as V^T: "
               "operand 'v' needs unit stride along Nk (stored [B, Hkv, D, "
               "Nk]), but got ")
           << nest.step.getV().getType();
  if (s.blockN % 32 != 0)
    return emitError(nest.cta.getLoc(),
                     "attn-tma-ring: FP8 needs BLOCK_N a "
                     "multiple of 32 (whole k32 steps of P V), "
                     "but got ")
           << s.blockN;
  if (s.headDim % 16 != 0)
    return emitError(nest.cta.getLoc(),
                     "attn-tma-ring: FP8 needs D a multiple "
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
                   "attn-tma-ring: paged K/V needs a static "
                   "page_size that is a multiple of BLOCK_N (")
         << s.blockN << ") or a multiple of 8 dividing it, but got "
         << (ShapedType::isDynamic(pageSize) ? std::string("?")
                                             : std::to_string(pageSize))
         << " (BLOCK_N is attn-tile's block-n: attn-compile --block-n, a "
            "spec's block_n)";
}

/// The ring's stages: the CTA's #attn.config's (attn-select-config), or
/// without one those that fit shared memory, at most `requested` (0: up to
/// 4 for D <= 64, else 3), at least 2 (HopperConfig.h).
FailureOr<int64_t> chooseStages(PipelineShape s, int64_t requested,
                                ConfigAttr config, Operation *op) {
  if (config) {
    s.stages = config.getStages();
    if (config.getBlockM() == s.blockM && config.getBlockN() == s.blockN &&
        s.sharedBytes() <= kMaxSharedBytes)
      return s.stages;
    return emitError(op->getLoc(), "attn-tma-ring: the CTA's ")
           << config << " does not fit its " << s.blockM << " x " << s.blockN
           << " tile in " << kMaxSharedBytes
           << " bytes of shared memory; run attn-select-config before "
              "attn-tile";
  }
  if (requested < 0 || requested == 1)
    return emitError(op->getLoc(),
                     "attn-tma-ring: stages must be 0 (chosen "
                     "per D) or at least 2, but got ")
           << requested;
  if (int64_t fit = fittingStages(s, requested))
    return fit;
  s.stages = 2;
  return emitError(op->getLoc(),
                   "attn-tma-ring: Q and two K/V stages need ")
         << s.sharedBytes() << " bytes of shared memory, more than the "
         << kMaxSharedBytes << " a CTA may use; use a smaller block-n";
}

struct AttnTmaRingPass
    : StrictOptions<attn::impl::AttnTmaRingBase<AttnTmaRingPass>> {
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
               << "attn-tma-ring: " << name
               << " must be a multiple of 8 in [24, 256] (setmaxnreg), or 0: "
               << automatic << ", but got " << regs;
    return success();
  }

  LogicalResult pipeline(CtaNest nest) {
    OnlineAttentionOp step = nest.step;
    auto qType = cast<VectorType>(nest.loadQ.getResult().getType());
    int64_t d = qType.getDimSize(1);
    Type elt = qType.getElementType();
    PipelineShape s = pipelineShape(
        qType.getDimSize(0), static_cast<int64_t>(step.getBlockN()), d, elt);
    if (!s.elt.isF16() && !s.elt.isBF16() && !s.fp8())
      return emitError(nest.cta.getLoc(),
                       "attn-tma-ring: tensor cores take "
                       "f16, bf16 or f8E4M3FN here, not ")
             << s.elt;
    if (failed(checkDescales(nest, s)) ||
        (s.fp8() && failed(checkFP8(nest, s))) || failed(checkPaged(nest, s)))
      return failure();
    if (s.blockM % 64 != 0 || s.blockM / 64 > kMaxConsumerWarpgroups)
      return emitError(nest.cta.getLoc(),
                       "attn-tma-ring: BLOCK_M must be 64, "
                       "128 or 192 (one to three consumer "
                       "warpgroups of 64 rows), but got ")
             << s.blockM;
    if (kWarpgroupRows % nest.loadQ.getGqaPack() != 0)
      return emitError(nest.cta.getLoc(),
                       "attn-tma-ring: GQA packing needs "
                       "the group size Hq / Hkv to divide 64 (a "
                       "warpgroup's rows hold whole queries), but "
                       "got ")
             << nest.loadQ.getGqaPack();
    if (s.blockN % 16 != 0 || s.blockN > 256)
      return emitError(nest.cta.getLoc(),
                       "attn-tma-ring: BLOCK_N must be a "
                       "multiple of 16 up to 256, but got ")
             << s.blockN;
    int64_t accumulators = accumulatorsPerThread(s.blockN, s.headDim);
    int64_t room = maxThreeWarpgroupAccumulators(s.fp8());
    if (s.blockM / 64 == 3 && accumulators > room)
      return emitError(
                 nest.cta.getLoc(),
                 "attn-tma-ring: with three consumer warpgroups "
                 "(BLOCK_M 192) ptxas has 128 registers per thread, room for ")
             << room << " S and O accumulators (BLOCK_N / 2 + D / 2) beside "
             << (s.fp8() ? "e4m3" : "16-bit") << " P, but BLOCK_N " << s.blockN
             << " and D " << s.headDim << " need " << accumulators
             << "; use BLOCK_M 128 or a smaller BLOCK_N";
    bool splitKV = cast<MemRefType>(nest.epilogue.getO().getType())
                       .getElementType()
                       .isF32();
    auto config = nest.cta->getAttrOfType<ConfigAttr>(kConfigAttr);
    FailureOr<int64_t> stagesOr = chooseStages(s, stages, config, nest.cta);
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
             << "attn-tma-ring: producer-registers " << producerRegs
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
    createBarriers(b, loc, s, 128 * groups, st);
    Value numKeys = step.getKeyCount(b);
    auto ws = WarpSpecializeOp::create(
        b, loc, b.getI64IntegerAttr(groups), b.getI64IntegerAttr(producerRegs),
        b.getI64IntegerAttr(consumerRegs),
        (config ? config.isPingPong() : pingPong && groups >= 2)
            ? b.getUnitAttr()
            : UnitAttr(),
        (config ? config.isOverlap() : overlap && s.stages >= 3)
            ? b.getUnitAttr()
            : UnitAttr());
    if (failed(ws.verify()))
      return failure();
    LLVM_DEBUG(llvm::dbgs() << (config ? "from #attn.config: " : "chosen: ")
                            << "ring of " << s.stages << " stages, "
                            << s.sharedBytes() << " bytes of shared memory, "
                            << groups << " consumer warpgroups, registers "
                            << producerRegs << "/" << consumerRegs << "\n");
    Block &producer = ws.getProducer().emplaceBlock();
    Block &consumer = ws.getConsumer().emplaceBlock();

    // Consumer: wait for Q, then the K/V loops and the epilogue, moved.
    Value numBlocks = nest.loops.back().getUpperBound();
    b.setInsertionPointToStart(&consumer);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, st.qBar, phaseParity(b, loc),
        arith::ConstantIndexOp::create(b, loc, kWaitTicks), c0);
    for (scf::ForOp loop : nest.loops)
      loop->moveBefore(&consumer, consumer.end());
    nest.epilogue->moveBefore(&consumer, consumer.end());
    // An fp32 O (split-KV's workspace) is stored from the registers.
    if (!splitKV)
      nest.epilogue.getStagingMutable().assign(st.staging);
    b.setInsertionPointToStart(&producer);
    buildProducer(b, loc, nest, s, st, desc, numBlocks, numKeys);
    // One CTA per (Q block, head, batch), as blocks x, y, z (mapped loops
    // keep their unit dimensions through canonicalization).
    MLIRContext *ctx = b.getContext();
    nest.cta.setMappingAttr(ArrayAttr::get(
        ctx, {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
              gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
              gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
    // Rewriting the steps erases them (nest.step among them): last.
    for (scf::ForOp loop : nest.loops)
      rewriteConsumerLoop(loop, s, st, numKeys,
                          nest.loops.front().getLowerBound());
    assignFragments(nest.loops, consumer);
    nest.loadQ.erase();
    return success();
  }

  void runOnOperation() override {
    if (failed(scalarizeBlockDescales(getOperation(), "attn-tma-ring")))
      return signalPassFailure();
    if (failed(checkNoHostOnlyTiles(getOperation(), "attn-tma-ring",
                                    GpuTileSupport{/*fp8=*/true,
                                                   /*gqaPack=*/true,
                                                   /*paged=*/true,
                                                   /*varlen=*/true,
                                                   /*keyMask=*/true})))
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
                  "attn-tma-ring: the CTA loop is already mapped "
                  "to threads (attn-distribute-rows); run "
                  "attn-tma-ring instead of attn-distribute-rows");
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

//===- AttnTile.cpp - attn.attention -> FlashAttention-2 loop nest --------===//

#include "attn/Transforms/HopperConfig.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "HostOnly.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "attn-tile"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// BLOCK_M of the decode_combine grid when attn-tile picks block sizes (0).
constexpr int64_t kCombineBlockM = 64;

/// What the forward tilings read from attn.attention and
/// attn.partial_attention: the inputs, where the epilogue stores (O, LSE or
/// the split-KV workspace) and the split count (1: no split-KV).
struct ForwardOp {
  Operation *op;
  Value q, k, v;
  float scale;
  bool causal;
  /// The key mask under `causal` (null: none; causal alone is `causal`).
  KeyMaskAttr keyMask;
  /// Logit softcapping (null: off).
  FloatAttr softcap;
  int64_t headDim;
  Value o, lse;
  int64_t splits;
  /// FP8: the f32 descale factors (null for f16/bf16): [B, Hkv], or per
  /// block of `qBlock` rows / `kBlock` keys, or (V) per channel.
  Value qDescale, kDescale, vDescale;
  int64_t qBlock = 0, kBlock = 0;
  /// Paged K/V (null otherwise): k and v are [num_pages, page_size, Hkv, D]
  /// caches.
  Value blockTable, cacheSeqlens;
  /// Varlen: k and v hold every sequence's keys (each its own Nk).
  bool varlen = false;
  /// Attention sinks, f32 [Hq] (null: none, or taken by a combine).
  Value sinks;
  /// ALiBi slopes, f32 [Hq] (null: none).
  Value alibi;
};

/// The fields every forward op has; the rest stay empty (no FP8, no pages).
/// The op's softcap, null if absent or 0 (off).
template <typename Op> FloatAttr softcapOf(Op op) {
  FloatAttr softcap = op.getSoftcapAttr();
  return softcap && softcap.getValueAsDouble() != 0 ? softcap : FloatAttr();
}

template <typename Op>
ForwardOp commonView(Op op, Value o, Value lse, int64_t splits) {
  KeyMaskAttr keyMask = op.getKeyMaskAttr();
  if (keyMask && op.getCausal())
    keyMask = keyMask.withCausal();
  return ForwardOp{op,
                   op.getQ(),
                   op.getK(),
                   op.getV(),
                   op.getScaleOrDefault(),
                   op.getCausal(),
                   keyMask,
                   softcapOf(op),
                   op.getHeadDim(),
                   o,
                   lse,
                   splits};
}

ForwardOp viewOf(AttentionOp op) {
  ForwardOp view = commonView(op, op.getO(), op.getLse(), /*splits=*/1);
  view.qDescale = op.getQDescale();
  view.kDescale = op.getKDescale();
  view.vDescale = op.getVDescale();
  view.qBlock = static_cast<int64_t>(op.getQDescaleBlock().value_or(0));
  view.kBlock = static_cast<int64_t>(op.getKDescaleBlock().value_or(0));
  view.blockTable = op.getBlockTable();
  view.cacheSeqlens = op.getCacheSeqlens();
  view.sinks = op.getSinks();
  view.alibi = op.getAlibiSlopes();
  return view;
}

ForwardOp viewOf(PartialAttentionOp op) {
  ForwardOp view = commonView(op, op.getOPartial(), op.getLsePartial(),
                              op.getNumSplits());
  view.blockTable = op.getBlockTable();
  view.cacheSeqlens = op.getCacheSeqlens();
  view.alibi = op.getAlibiSlopes();
  return view;
}

/// The packed operands of a varlen op (rank 3; the tiling views them as one
/// batch).
ForwardOp viewOf(VarlenAttentionOp op) {
  ForwardOp view = commonView(op, op.getO(), op.getLse(), op.getNumSplits());
  view.varlen = true;
  view.blockTable = op.getBlockTable();
  view.alibi = op.getAlibiSlopes();
  // With a workspace the sinks enter in the combine, once.
  if (!op.getOPartial())
    view.sinks = op.getSinks();
  return view;
}

/// Sizes of one attention problem as index values (constants when static).
struct ProblemSizes {
  Value batch, numHeadsQ, seqLenQ, numHeadsKV, seqLenK;
};

ProblemSizes getSizes(OpBuilder &b, Location loc, Value q, Value k) {
  auto dim = [&](Value v, int64_t i) -> Value {
    return b.createOrFold<memref::DimOp>(loc, v, i);
  };
  return {dim(q, 0), dim(q, 1), dim(q, 2), dim(k, 1), dim(k, 2)};
}

/// Paged K/V: a cache [num_pages, page_size, Hkv, D] as the [num_pages,
/// Hkv, page_size, D] view the tile ops read (a page where [B, Hkv, Nk, D]
/// has a batch).
Value pageView(OpBuilder &b, Location loc, Value cache) {
  AffineMap perm = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3},
                                                b.getContext());
  return memref::TransposeOp::create(b, loc, cache, AffineMapAttr::get(perm));
}

/// Paged K/V: a sequence's Nk `len` clamped to [0, max_pages * page_size]
/// so that a length breaking the contract cannot make a CTA read past its
/// row of the block table (`op.k` is the page view).
Value clampToCapacity(OpBuilder &b, Location loc, const ForwardOp &op,
                      Value len) {
  Value capacity = arith::MulIOp::create(
      b, loc, b.createOrFold<memref::DimOp>(loc, op.blockTable, 1),
      b.createOrFold<memref::DimOp>(loc, op.k, 2));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, len, zero), capacity);
}

/// Paged K/V: Nk of sequence `batch`, cache_seqlens[batch] clamped.
Value cacheLength(OpBuilder &b, Location loc, const ForwardOp &op,
                  Value batch) {
  Value len = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, op.cacheSeqlens, ValueRange{batch}));
  return clampToCapacity(b, loc, op, len);
}

/// The tile shape and CTA grid of one tiling.
struct TileShape {
  int64_t blockM, blockN;
  /// GQA packing: query heads per KV head packed into the tile rows (1: a
  /// tile holds rows of one query head).
  int64_t pack = 1;
  /// Split-KV: CTAs per (Q block, head, batch) along the keys (1: none).
  int64_t splits = 1;
  /// The op's #attn.config, copied onto a tensor-core CTA loop for
  /// attn-tma-ring (null: none, or the CUDA-core path's).
  ConfigAttr config = {};
};

/// The mask every K/V block gets before attn-causal-split refines it.
MaskKind initialMask(const ForwardOp &op, int64_t blockN) {
  if (op.causal || op.keyMask)
    return MaskKind::causal;
  // Each sequence has its own Nk: any block may reach past it.
  if (op.blockTable || op.varlen)
    return MaskKind::bounds;
  int64_t nk = cast<MemRefType>(op.k.getType()).getDimSize(2);
  return (!ShapedType::isDynamic(nk) && nk % blockN == 0) ? MaskKind::none
                                                          : MaskKind::bounds;
}

/// The online-softmax state a loop starts from: m = -inf, l = 0, acc = 0.
SmallVector<Value> initialState(OpBuilder &b, Location loc, int64_t blockM,
                                int64_t d) {
  Type f32 = b.getF32Type();
  auto rowType = VectorType::get({blockM}, f32);
  auto accType = VectorType::get({blockM, d}, f32);
  auto splat = [&](VectorType type, float x) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(x).getValue()));
  };
  return {splat(rowType, -INFINITY), splat(rowType, 0), splat(accType, 0)};
}

/// A constant vector<BLOCK_M x f32>.
Value rowSplat(OpBuilder &b, Location loc, VectorType rowType, double x) {
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(x).getValue()));
}

/// Each tile row's value of a per-query-head f32 [Hq] operand, times
/// log2(e): row r of a GQA-packed tile at q_pos belongs to head
/// `head + (q_pos + r) % pack`.
Value perRowOfHead(OpBuilder &b, Location loc, Value perHead, Value head,
                   Value qPos, int64_t pack, VectorType rowType) {
  Value rows;
  if (pack == 1) {
    rows = vector::BroadcastOp::create(
        b, loc, rowType, memref::LoadOp::create(b, loc, perHead, head));
  } else {
    SmallVector<Value> values;
    Value g = arith::ConstantIndexOp::create(b, loc, pack);
    for (int64_t r = 0; r < rowType.getDimSize(0); ++r) {
      Value row = arith::AddIOp::create(
          b, loc, qPos, arith::ConstantIndexOp::create(b, loc, r));
      Value h = arith::AddIOp::create(b, loc, head,
                                      arith::RemUIOp::create(b, loc, row, g));
      values.push_back(memref::LoadOp::create(b, loc, perHead, h));
    }
    rows = vector::FromElementsOp::create(b, loc, rowType, values);
  }
  return arith::MulFOp::create(b, loc, rows,
                               rowSplat(b, loc, rowType, M_LOG2E));
}

/// The state a CTA starts from with attention sinks: m = sink * log2(e)
/// of each row's query head, l = 1 (0 where the sink is -inf), so the sink
/// joins the denominator and adds no value. Marks the CTA loop.
void startFromSinks(OpBuilder &b, Location loc, Value sinks, Value head,
                    Value qPos, int64_t pack, SmallVector<Value> &state) {
  b.getInsertionBlock()->getParentOp()->setAttr(kSinksAttr, b.getUnitAttr());
  auto rowType = cast<VectorType>(state[0].getType());
  auto splat = [&](double x) { return rowSplat(b, loc, rowType, x); };
  Value m = perRowOfHead(b, loc, sinks, head, qPos, pack, rowType);
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                     splat(-INFINITY));
  state[0] = m;
  state[1] = arith::SelectOp::create(b, loc, none, splat(0), splat(1));
}

/// Indices of one CTA of a forward grid. Varlen: `rowBase` (the
/// sequence's first packed row) and `keyBase` (its first key) place the
/// sequence in the packed operands, whose views the tile ops read, and
/// with paged K/V `kvBatch` is the sequence (the block table's row) where
/// `batch` is the packed view's 0; null elsewhere.
struct Cta {
  Value batch, head, kvHead, qPos, split;
  Value rowBase, keyBase, kvBatch;
};

/// FP8 descale factors of one CTA (all null for f16/bf16): f32 scalars of
/// its (batch, KV head) from the [B, Hkv] descales, `qk` = q_descale *
/// k_descale (or the one of them that is per head) and `v`; the tile rows'
/// q descales (per-block q_descale, vector<BLOCK_M x f32>); V's per-channel
/// descales (vector<D x f32>); and the per-block k_descale, read per K/V
/// block by the loop (keyDescales).
struct Descales {
  Value qk, v, rows, channels;
  Value kBlocks;
  int64_t kBlock = 0;
};

bool isPerHead(Value descale) {
  return cast<MemRefType>(descale.getType()).getRank() == 2;
}

Descales loadDescales(OpBuilder &b, Location loc, const ForwardOp &op,
                      const Cta &cta, const TileShape &t) {
  if (!op.qDescale)
    return {};
  auto load = [&](Value mem) -> Value {
    if (!isPerHead(mem))
      return Value();
    return memref::LoadOp::create(b, loc, mem,
                                  ValueRange{cta.batch, cta.kvHead});
  };
  Descales d;
  Value q = load(op.qDescale), k = load(op.kDescale);
  d.qk = q && k ? arith::MulFOp::create(b, loc, q, k) : (q ? q : k);
  d.v = load(op.vDescale);
  Type f32 = b.getF32Type();
  if (!q) {
    auto rows = LoadRowsOp::create(b, loc, VectorType::get({t.blockM}, f32),
                                   op.qDescale, cta.batch, cta.head, cta.qPos);
    rows.setRowBlock(op.qBlock);
    rows.setGqaPack(t.pack);
    d.rows = rows;
  }
  if (!k) {
    d.kBlocks = op.kDescale;
    d.kBlock = op.kBlock;
  }
  if (!d.v) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    d.channels = vector::TransferReadOp::create(
        b, loc, VectorType::get({op.headDim}, f32), op.vDescale,
        ValueRange{cta.batch, cta.kvHead, zero},
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
        ArrayRef<bool>{true});
  }
  return d;
}

/// The k descale of each key of the block at `kPos` (per-block k_descale;
/// null otherwise).
Value keyDescales(OpBuilder &b, Location loc, const Descales &d, const Cta &cta,
                  Value kPos, int64_t blockN) {
  if (!d.kBlocks)
    return Value();
  auto keys =
      LoadRowsOp::create(b, loc, VectorType::get({blockN}, b.getF32Type()),
                         d.kBlocks, cta.batch, cta.kvHead, kPos);
  keys.setRowBlock(d.kBlock);
  return keys;
}

/// One CTA per (Q block, query head, batch): the FA2 grid. With GQA
/// packing the y dimension walks KV heads and a CTA's rows are the packed
/// (query, head-in-group) rows; with split-KV, x walks (Q block, split)
/// pairs, split-minor. The mapping keeps canonicalization from folding unit
/// dimensions (or the whole loop) away, so later passes always find it.
Cta buildGrid(OpBuilder &b, Location loc, const ProblemSizes &sz,
              const TileShape &t) {
  Value bm = arith::ConstantIndexOp::create(b, loc, t.blockM);
  // ceil(Nq * G / BLOCK_M) packed rows; ceil(Nq / (BLOCK_M / G)) where G
  // divides BLOCK_M, which a bundle's grid can express (operand size over a
  // constant).
  Value numQBlocks;
  if (t.pack > 1 && t.blockM % t.pack == 0)
    numQBlocks = b.createOrFold<arith::CeilDivUIOp>(
        loc, sz.seqLenQ,
        arith::ConstantIndexOp::create(b, loc, t.blockM / t.pack));
  else if (t.pack > 1)
    numQBlocks = b.createOrFold<arith::CeilDivUIOp>(
        loc,
        arith::MulIOp::create(b, loc, sz.seqLenQ,
                              arith::ConstantIndexOp::create(b, loc, t.pack)),
        bm);
  else
    numQBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, sz.seqLenQ, bm);
  Value splits = arith::ConstantIndexOp::create(b, loc, t.splits);
  Value x = t.splits > 1 ? arith::MulIOp::create(b, loc, numQBlocks, splits)
                         : numQBlocks;
  Value y = t.pack > 1 ? sz.numHeadsKV : sz.numHeadsQ;
  Value group = t.pack > 1 ? Value()
                           : b.createOrFold<arith::DivUIOp>(loc, sz.numHeadsQ,
                                                            sz.numHeadsKV);
  MLIRContext *ctx = b.getContext();
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{x, y, sz.batch}, ValueRange{},
      b.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  if (t.config && t.config.isTensorCore())
    forall->setAttr(kConfigAttr, t.config);
  b.setInsertionPointToStart(forall.getBody());
  ValueRange ivs = forall.getInductionVars();
  Cta cta;
  cta.batch = ivs[2];
  Value qBlock = ivs[0];
  if (t.splits > 1) {
    cta.split = arith::RemUIOp::create(b, loc, ivs[0], splits);
    qBlock = arith::DivUIOp::create(b, loc, ivs[0], splits);
  }
  cta.qPos = arith::MulIOp::create(b, loc, qBlock, bm);
  if (t.pack > 1) {
    cta.kvHead = ivs[1];
    cta.head = arith::MulIOp::create(
        b, loc, cta.kvHead, arith::ConstantIndexOp::create(b, loc, t.pack));
  } else {
    cta.head = ivs[1];
    cta.kvHead = arith::DivUIOp::create(b, loc, cta.head, group);
  }
  return cta;
}

/// K/V blocks [begin, end) of split `split` of `splits`: ceil(numBlocks /
/// splits) whole blocks each, as FlashAttention-2's num_splits; the splits
/// past the last block are empty.
std::pair<Value, Value> splitBlockRange(OpBuilder &b, Location loc,
                                        Value numBlocks, Value split,
                                        int64_t splits) {
  Value perSplit = b.createOrFold<arith::CeilDivUIOp>(
      loc, numBlocks, arith::ConstantIndexOp::create(b, loc, splits));
  Value begin = arith::MinUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, split, perSplit), numBlocks);
  Value end = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, begin, perSplit), numBlocks);
  return {begin, end};
}

/// Builds the K/V loop of one CTA over blocks [begin, end) and returns it;
/// its results are the final (m, l, acc).
scf::ForOp buildKVLoop(OpBuilder &b, Location loc, const ForwardOp &op,
                       const ProblemSizes &sz, const TileShape &t, Value qTile,
                       const Cta &cta, const Descales &descale, Value begin,
                       Value end) {
  SmallVector<Value> init = initialState(b, loc, t.blockM, op.headDim);
  if (op.sinks)
    startFromSinks(b, loc, op.sinks, cta.head, cta.qPos, t.pack, init);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value bn = arith::ConstantIndexOp::create(b, loc, t.blockN);
  MaskKind mask = initialMask(op, t.blockN);
  Value causalOffset, alibi;
  if (mask == MaskKind::causal || op.alibi)
    causalOffset = b.createOrFold<arith::SubIOp>(loc, sz.seqLenK, sz.seqLenQ);
  if (op.alibi)
    alibi = perRowOfHead(b, loc, op.alibi, cta.head, cta.qPos, t.pack,
                         cast<VectorType>(init[0].getType()));

  auto loop = scf::ForOp::create(b, loc, begin, end, one, init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kPos = arith::MulIOp::create(b, loc, loop.getInductionVar(), bn);
  ValueRange state = loop.getRegionIterArgs();
  auto step = OnlineAttentionOp::create(
      b, loc, init[0].getType(), init[1].getType(), init[2].getType(), qTile,
      op.k, op.v, cta.kvBatch ? cta.kvBatch : cta.batch, cta.kvHead, kPos,
      /*d_offset=*/zero, cta.qPos, causalOffset, state[0], state[1], state[2],
      descale.qk, descale.rows,
      keyDescales(b, loc, descale, cta, kPos, t.blockN), op.blockTable,
      op.blockTable || cta.keyBase ? sz.seqLenK : Value(), cta.keyBase, alibi,
      b.getF32FloatAttr(op.scale), b.getI64IntegerAttr(t.blockN),
      MaskKindAttr::get(b.getContext(), mask),
      /*row_lanes=*/b.getI64IntegerAttr(1), b.getI64IntegerAttr(t.pack),
      op.keyMask, op.softcap);
  scf::YieldOp::create(b, loc, step.getResults());
  return loop;
}

/// Split `split` of a split-KV workspace ([S, ...] -> [...]).
Value splitSlice(OpBuilder &b, Location loc, Value workspace,
                 OpFoldResult split) {
  auto type = cast<MemRefType>(workspace.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
  offsets[0] = split;
  for (int64_t i = 1; i < rank; ++i)
    sizes.push_back(memref::getMixedSize(b, loc, workspace, i));
  auto sliceType = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().drop_front(), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, sliceType, workspace, offsets, sizes,
                                   strides);
}

LogicalResult checkStaticHeadDim(Operation *op, int64_t d) {
  if (ShapedType::isDynamic(d))
    return op->emitOpError("attn-tile needs a static head dim D");
  return success();
}

/// One CTA of the FA2 nest: the Q tile, the K/V loop and the epilogue;
/// with split-KV the epilogue stores into the CTA's split of the workspace.
void buildCta(OpBuilder &b, Location loc, const ForwardOp &op,
              const ProblemSizes &sz, const TileShape &t, const Cta &cta) {
  Value o = op.o, lse = op.lse;
  auto qType = cast<MemRefType>(op.q.getType());
  auto qTileType =
      VectorType::get({t.blockM, op.headDim}, qType.getElementType());
  Value col = arith::ConstantIndexOp::create(b, loc, 0);
  // Where the tile's rows are in Q and O (varlen: past the sequence's
  // first row); the steps count rows of the sequence.
  Value row = cta.rowBase ? arith::AddIOp::create(b, loc, cta.rowBase, cta.qPos)
                          : cta.qPos;
  auto qTile = LoadTileOp::create(b, loc, qTileType, op.q, cta.batch, cta.head,
                                  row, col);
  qTile.setGqaPack(t.pack);
  Value numKBlocks = b.createOrFold<arith::CeilDivUIOp>(
      loc, sz.seqLenK, arith::ConstantIndexOp::create(b, loc, t.blockN));
  Value begin = arith::ConstantIndexOp::create(b, loc, 0), end = numKBlocks;
  if (t.splits > 1)
    std::tie(begin, end) =
        splitBlockRange(b, loc, numKBlocks, cta.split, t.splits);
  // A workspace output ([S, B, Hq, Nq, D]; S = 1 too, as the verifiers
  // allow): the CTA stores into its split.
  if (cast<MemRefType>(o.getType()).getRank() == 5) {
    OpFoldResult split =
        t.splits > 1 ? OpFoldResult(cta.split) : b.getIndexAttr(0);
    o = splitSlice(b, loc, o, split);
    lse = splitSlice(b, loc, lse, split);
  }
  Descales descale = loadDescales(b, loc, op, cta, t);
  scf::ForOp loop =
      buildKVLoop(b, loc, op, sz, t, qTile, cta, descale, begin, end);
  ValueRange fin = loop.getResults();
  auto epilogue = EpilogueOp::create(b, loc, fin[0], fin[1], fin[2], o, lse,
                                     cta.batch, cta.head, row, col,
                                     /*staging=*/Value(), /*oMap=*/Value(),
                                     descale.v, descale.channels);
  epilogue.setGqaPack(t.pack);
}

/// The FA2 loop nest of a forward op. Paged K/V: Hkv is the caches'
/// dimension 2, the tile ops read their page views, and each CTA reads its
/// sequence's Nk.
void tileForward(ForwardOp op, TileShape t) {
  OpBuilder b(op.op);
  Location loc = op.op->getLoc();
  ProblemSizes sz = getSizes(b, loc, op.q, op.k);
  if (op.blockTable) {
    op.k = pageView(b, loc, op.k);
    op.v = pageView(b, loc, op.v);
    sz.numHeadsKV = b.createOrFold<memref::DimOp>(loc, op.k, 1);
  }
  Cta cta = buildGrid(b, loc, sz, t);
  if (op.blockTable)
    sz.seqLenK = cacheLength(b, loc, op, cta.batch);
  buildCta(b, loc, op, sz, t, cta);
  op.op->erase();
}

/// A packed [total, H, D] operand as the one-batch view [1, H, total, D]
/// (strides [_, H stride, row stride, 1]); an LSE [H, total] as
/// [1, H, total]. `lead` leading dimensions (a split-KV workspace's S) are
/// kept in front: [S, total, H, D] -> [S, 1, H, total, D].
Value packedView(OpBuilder &b, Location loc, Value packed, int64_t lead = 0) {
  auto type = cast<MemRefType>(packed.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outputShape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t at = shape.size();
    if (i == lead) {
      shape.push_back(1);
      outputShape.push_back(b.getIndexAttr(1));
      groups.push_back({at, at + 1});
    } else {
      groups.push_back({at});
    }
    shape.push_back(type.getDimSize(i));
    outputShape.push_back(memref::getMixedSize(b, loc, packed, i));
  }
  Value view =
      memref::ExpandShapeOp::create(b, loc, shape, packed, groups, outputShape);
  if (rank - lead == 2)
    return view;
  // [.., 1, total, H, D] -> [.., 1, H, total, D].
  SmallVector<unsigned> perm = llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(rank + 1)));
  std::swap(perm[lead + 1], perm[lead + 2]);
  return memref::TransposeOp::create(
      b, loc, view,
      AffineMapAttr::get(AffineMap::getPermutationMap(perm, b.getContext())));
}

/// Rows [0, end) (dimension `dim`, total) of a packed view: stores into it
/// stop at a sequence's last row.
Value rowPrefix(OpBuilder &b, Location loc, Value view, Value end,
                int64_t dim = 2) {
  auto type = cast<MemRefType>(view.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i)
    sizes.push_back(i == dim ? OpFoldResult(end)
                             : memref::getMixedSize(b, loc, view, i));
  return memref::SubViewOp::create(b, loc, view, offsets, sizes, strides);
}

/// Where one sequence lies in the packed operands: its first query row and
/// key, and its lengths Nq_b and Nk_b.
struct Sequence {
  Value qStart, kStart, lenQ, lenK;
};

/// Sequence `seq`'s entries of cu_seqlens_q / cu_seqlens_k (i32).
Sequence loadSequence(OpBuilder &b, Location loc, VarlenAttentionOp op,
                      Value seq) {
  Value next = arith::AddIOp::create(b, loc, seq,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  auto load = [&](Value cuSeqlens, Value i) -> Value {
    Value entry = memref::LoadOp::create(b, loc, cuSeqlens, ValueRange{i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  };
  Sequence s;
  s.qStart = load(op.getCuSeqlensQ(), seq);
  s.kStart = load(op.getCuSeqlensK(), seq);
  s.lenQ =
      arith::SubIOp::create(b, loc, load(op.getCuSeqlensQ(), next), s.qStart);
  s.lenK =
      arith::SubIOp::create(b, loc, load(op.getCuSeqlensK(), next), s.kStart);
  return s;
}

/// The varlen op's partial/final outputs as the views its grids store
/// into: O and LSE, or with split-KV the workspace [S, 1, Hq, total_q, D]
/// and [S, 1, Hq, total_q] (rows in dimension 3).
struct VarlenOutputs {
  Value o, lse;
  int64_t rowDim = 2;
};

VarlenOutputs varlenOutputs(OpBuilder &b, Location loc, VarlenAttentionOp op) {
  if (Value oPartial = op.getOPartial())
    return {packedView(b, loc, oPartial, /*lead=*/1),
            packedView(b, loc, op.getLsePartial(), /*lead=*/1), 3};
  Value lse = op.getLse();
  return {packedView(b, loc, op.getO()),
          lse ? packedView(b, loc, lse) : Value(), 2};
}

/// Varlen: the FA2 grid over (Q block of max_seqlen_q, head, sequence).
/// The tile ops read one-batch views of the packed operands (built before
/// the grid, so the tensor-core path's TMA descriptors see them) at the
/// sequence's first row and key (paged K/V: through the block table's row
/// of the sequence), with the sequence's Nk as `num_keys`; O and LSE (or
/// the split-KV workspace) are cut after the sequence's last row. A CTA
/// whose Q block starts past its sequence visits no K/V block and stores
/// no row. Returns the output views.
VarlenOutputs tileVarlenPartials(OpBuilder &b, VarlenAttentionOp op,
                                 TileShape t) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op.getLoc();
  auto dim = [&](Value v, int64_t i) -> Value {
    return b.createOrFold<memref::DimOp>(loc, v, i);
  };
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value numSeqs =
      b.createOrFold<arith::SubIOp>(loc, dim(op.getCuSeqlensQ(), 0), one);
  ForwardOp seq = viewOf(op);
  seq.q = packedView(b, loc, seq.q);
  seq.k = seq.blockTable ? pageView(b, loc, seq.k) : packedView(b, loc, seq.k);
  seq.v = seq.blockTable ? pageView(b, loc, seq.v) : packedView(b, loc, seq.v);
  VarlenOutputs out = varlenOutputs(b, loc, op);
  ProblemSizes grid{numSeqs, dim(op.getQ(), 1), op.getMaxSeqlenQ(),
                    dim(seq.k, 1), op.getMaxSeqlenK()};
  Cta cta = buildGrid(b, loc, grid, t);
  b.getInsertionBlock()->getParentOp()->setAttr(kVarlenAttr,
                                                b.getUnitAttr());

  Sequence s = loadSequence(b, loc, op, cta.batch);
  Value pack = arith::ConstantIndexOp::create(b, loc, t.pack);
  Value rows = t.pack > 1 ? arith::MulIOp::create(b, loc, s.lenQ, pack)
                          : s.lenQ;
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, cta.qPos, rows);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value lenK = seq.blockTable ? clampToCapacity(b, loc, seq, s.lenK) : s.lenK;
  lenK = arith::SelectOp::create(b, loc, inside, lenK, zero);
  Value end = arith::AddIOp::create(b, loc, s.qStart, s.lenQ);
  seq.o = rowPrefix(b, loc, out.o, end, out.rowDim);
  if (out.lse)
    seq.lse = rowPrefix(b, loc, out.lse, end, out.rowDim);
  ProblemSizes sz{one, grid.numHeadsQ, s.lenQ, grid.numHeadsKV, lenK};
  Cta local = cta;
  local.batch = zero;
  local.rowBase = t.pack > 1 ? arith::MulIOp::create(b, loc, s.qStart, pack)
                             : s.qStart;
  if (seq.blockTable)
    local.kvBatch = cta.batch;
  else
    local.keyBase = s.kStart;
  buildCta(b, loc, seq, sz, t, local);
  return out;
}

/// GQA packing applies where the group size Hq / Hkv is static and > 1.
int64_t packFactor(const ForwardOp &op, bool packGqa) {
  int64_t hq = cast<MemRefType>(op.q.getType()).getDimSize(1);
  // Paged caches [num_pages, page_size, Hkv, D] hold Hkv in dimension 2.
  int64_t hkv =
      cast<MemRefType>(op.k.getType()).getDimSize(op.blockTable ? 2 : 1);
  if (!packGqa || ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return 1;
  return hq / hkv;
}

/// The decode_combine grid: one CTA per (Q block, query head, batch) folds
/// the S splits of its rows (workspaces [S, B, Hq, Nq, D] and
/// [S, B, Hq, Nq]) into the online-softmax state and stores O ([B, Hq, Nq,
/// D]) and LSE; `sz` gives B, Hq and Nq. `rowEnd`, if set, gives (inside
/// the CTA) the row where O and LSE end (varlen: the batch's last row).
void buildCombine(OpBuilder &b, Location loc, const ProblemSizes &sz,
                  Value oPartial, Value lsePartial, Value o, Value lse,
                  Value sinks, int64_t blockM,
                  function_ref<Value()> rowEnd = nullptr) {
  int64_t d = cast<MemRefType>(o.getType()).getDimSize(3);
  Cta cta = buildGrid(b, loc, sz, TileShape{blockM, 1});
  if (rowEnd) {
    Value end = rowEnd();
    o = rowPrefix(b, loc, o, end);
    lse = lse ? rowPrefix(b, loc, lse, end) : Value();
  }
  int64_t splits = cast<MemRefType>(oPartial.getType()).getDimSize(0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> init = initialState(b, loc, blockM, d);
  if (sinks)
    startFromSinks(b, loc, sinks, cta.head, cta.qPos, /*pack=*/1, init);
  auto loop = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, splits),
      arith::ConstantIndexOp::create(b, loc, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    Value oS =
        LoadTileOp::create(b, loc, VectorType::get({blockM, d}, b.getF32Type()),
                           splitSlice(b, loc, oPartial, s), cta.batch,
                           cta.head, cta.qPos, zero);
    Value lseS =
        LoadRowsOp::create(b, loc, VectorType::get({blockM}, b.getF32Type()),
                           splitSlice(b, loc, lsePartial, s), cta.batch,
                           cta.head, cta.qPos);
    ValueRange state = loop.getRegionIterArgs();
    auto step = CombineStepOp::create(b, loc, state.getTypes(), oS, lseS,
                                      state[0], state[1], state[2]);
    scf::YieldOp::create(b, loc, step.getResults());
  }
  ValueRange fin = loop.getResults();
  EpilogueOp::create(b, loc, fin[0], fin[1], fin[2], o, lse, cta.batch,
                     cta.head, cta.qPos, zero, /*staging=*/Value(),
                     /*oMap=*/Value(), /*vDescale=*/Value(),
                     /*channelDescale=*/Value());
}

void tileCombine(DecodeCombineOp op, int64_t blockM) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  buildCombine(b, loc, getSizes(b, loc, op.getO(), op.getO()), op.getOPartial(),
               op.getLsePartial(), op.getO(), op.getLse(), op.getSinks(),
               blockM);
  op.erase();
}

/// Varlen: the partial grid, and with split-KV the combine grid after it
/// over the packed rows [0, total_q) (rows past cu_seqlens_q[B] are not
/// stored).
void tileVarlen(VarlenAttentionOp op, TileShape t, int64_t combineBlockM) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  VarlenOutputs out = tileVarlenPartials(b, op, t);
  // A workspace (S >= 1) always has a combine: it is where O is written.
  if (op.getOPartial()) {
    Value o = packedView(b, loc, op.getO());
    Value lse = op.getLse() ? packedView(b, loc, op.getLse()) : Value();
    Value cuQ = op.getCuSeqlensQ();
    auto rowEnd = [&]() -> Value {
      Value last = arith::SubIOp::create(
          b, loc, b.createOrFold<memref::DimOp>(loc, cuQ, 0),
          arith::ConstantIndexOp::create(b, loc, 1));
      return arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          memref::LoadOp::create(b, loc, cuQ, ValueRange{last}));
    };
    // The grid's sizes from the packed operand (B = 1, Hq, total_q), which
    // a bundle's grid terms can express.
    auto dim = [&](int64_t i) -> Value {
      return b.createOrFold<memref::DimOp>(loc, op.getO(), i);
    };
    Value heads = dim(1), total = dim(0);
    ProblemSizes sz{arith::ConstantIndexOp::create(b, loc, 1), heads, total,
                    heads, total};
    buildCombine(b, loc, sz, out.o, out.lse, o, lse, op.getSinks(),
                 combineBlockM, rowEnd);
  }
  op.erase();
}

struct AttnTilePass : StrictOptions<attn::impl::AttnTileBase<AttnTilePass>> {
  using StrictOptions::StrictOptions;
  /// Options are checked once, before any function (no location: they
  /// are not in the input). Block sizes 0 pick the tensor-core defaults per
  /// D (below).
  LogicalResult initialize(MLIRContext *ctx) override {
    if (combineBlockM != 0 && !isValidBlockM(combineBlockM))
      return emitError(UnknownLoc::get(ctx))
             << "attn-tile: combine-block-m must be in [1, " << kMaxBlockM
             << "] (or 0: block-m), but got "
             << static_cast<int64_t>(combineBlockM);
    if ((blockM != 0 && !isValidBlockM(blockM)) ||
        (blockN != 0 && !isValidBlockN(blockN)))
      return emitError(UnknownLoc::get(ctx))
             << "attn-tile: block-m must be in [1, " << kMaxBlockM
             << "] and block-n in [1, " << kMaxBlockN
             << "] (or 0: per D), but got block-m="
             << static_cast<int64_t>(blockM)
             << " block-n=" << static_cast<int64_t>(blockN);
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, PartialAttentionOp, DecodeCombineOp,
              VarlenAttentionOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(tileOne(op)))
        return signalPassFailure();
  }

  int64_t getCombineBlockM() {
    return combineBlockM ? int64_t(combineBlockM)
           : blockM      ? int64_t(blockM)
                         : kCombineBlockM;
  }

  LogicalResult tileOne(Operation *op) {
    if (auto combine = dyn_cast<DecodeCombineOp>(op)) {
      int64_t d = cast<MemRefType>(combine.getO().getType()).getDimSize(3);
      if (failed(checkStaticHeadDim(op, d)))
        return failure();
      tileCombine(combine, getCombineBlockM());
      return success();
    }
    auto attention = dyn_cast<AttentionOp>(op);
    auto varlen = dyn_cast<VarlenAttentionOp>(op);
    ForwardOp fwd = attention ? viewOf(attention)
                    : varlen  ? viewOf(varlen)
                              : viewOf(cast<PartialAttentionOp>(op));
    if (failed(checkStaticHeadDim(op, fwd.headDim)))
      return failure();
    int64_t d = fwd.headDim;
    // Varlen: the sequences' Nq differ; max_seqlen_q is a value.
    int64_t nq = varlen ? ShapedType::kDynamic
                        : cast<MemRefType>(fwd.q.getType()).getDimSize(2);
    bool fp8 = isa<Float8E4M3FNType>(
        cast<MemRefType>(fwd.q.getType()).getElementType());
    // The tile attn-select-config chose, else the options (0: the
    // tensor-core tile per D, HopperConfig.h).
    auto config = op->getAttrOfType<ConfigAttr>(kConfigAttr);
    auto [bm, bn] =
        config ? std::pair(config.getBlockM(), config.getBlockN())
               : tensorCoreTile(d, fp8,
                                ShapedType::isDynamic(nq) ? std::nullopt
                                                          : std::optional(nq),
                                blockM, blockN);
    LLVM_DEBUG(llvm::dbgs() << op->getName() << ": " << bm << " x " << bn
                            << (config ? " (#attn.config)" : " (options)")
                            << "\n");
    TileShape shape{bm, bn, packFactor(fwd, packGqa), fwd.splits, config};
    // A static total_q of 0: no query row to compute or store (views of
    // the empty rows would not verify), whatever the sequences.
    if (varlen &&
        cast<MemRefType>(varlen.getQ().getType()).getDimSize(0) == 0) {
      varlen.erase();
      return success();
    }
    if (varlen)
      tileVarlen(varlen, shape, getCombineBlockM());
    else
      tileForward(fwd, shape);
    return success();
  }
};

} // namespace

//===- AttnTile.cpp - attn.attention -> FlashAttention-2 loop nest --------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Sizes of one attention problem as index values (constants when static).
struct ProblemSizes {
  Value batch, numHeadsQ, seqLenQ, numHeadsKV, seqLenK;
};

ProblemSizes getSizes(OpBuilder &b, Location loc, AttentionOp op) {
  auto dim = [&](Value v, int64_t i) -> Value {
    return b.createOrFold<memref::DimOp>(loc, v, i);
  };
  return {dim(op.getQ(), 0), dim(op.getQ(), 1), dim(op.getQ(), 2),
          dim(op.getK(), 1), dim(op.getK(), 2)};
}

/// The mask every K/V block gets before attn-causal-split refines it.
MaskKind initialMask(AttentionOp op, int64_t blockN) {
  if (op.getCausal())
    return MaskKind::causal;
  int64_t nk = cast<MemRefType>(op.getK().getType()).getDimSize(2);
  return (!ShapedType::isDynamic(nk) && nk % blockN == 0) ? MaskKind::none
                                                          : MaskKind::bounds;
}

/// FP8 descale factors of one (batch, KV head), f32 scalars: q_descale *
/// k_descale (for the scores) and v_descale (for O); null for f16/bf16.
struct Descales {
  Value qk, v;
};

Descales loadDescales(OpBuilder &b, Location loc, AttentionOp op, Value batch,
                      Value kvHead) {
  if (!op.isFP8())
    return {};
  auto load = [&](Value mem) {
    return memref::LoadOp::create(b, loc, mem, ValueRange{batch, kvHead});
  };
  Value qk = arith::MulFOp::create(b, loc, load(op.getQDescale()),
                                   load(op.getKDescale()));
  return {qk, load(op.getVDescale())};
}

/// Builds the K/V loop of one Q block and returns its final (m, l, acc).
scf::ForOp buildKVLoop(OpBuilder &b, Location loc, AttentionOp op,
                       const ProblemSizes &sz, Value qTile, Value batch,
                       Value kvHead, Value qPos, Value qkDescale,
                       int64_t blockM, int64_t blockN) {
  int64_t d = op.getHeadDim();
  Type f32 = b.getF32Type();
  auto rowType = VectorType::get({blockM}, f32);
  auto accType = VectorType::get({blockM, d}, f32);
  Value m0 = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(
                  rowType, b.getF32FloatAttr(-INFINITY).getValue()));
  Value l0 = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(0).getValue()));
  Value acc0 = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0).getValue()));

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value bn = arith::ConstantIndexOp::create(b, loc, blockN);
  Value numKBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, sz.seqLenK, bn);
  MaskKind mask = initialMask(op, blockN);
  Value causalOffset;
  if (mask == MaskKind::causal)
    causalOffset = b.createOrFold<arith::SubIOp>(loc, sz.seqLenK, sz.seqLenQ);

  auto loop = scf::ForOp::create(b, loc, zero, numKBlocks, one,
                                 ValueRange{m0, l0, acc0});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kPos = arith::MulIOp::create(b, loc, loop.getInductionVar(), bn);
  ValueRange state = loop.getRegionIterArgs();
  auto step = OnlineAttentionOp::create(
      b, loc, rowType, rowType, accType, qTile, op.getK(), op.getV(), batch,
      kvHead, kPos, /*d_offset=*/zero, qPos, causalOffset, state[0], state[1],
      state[2], qkDescale, b.getF32FloatAttr(op.getScaleOrDefault()),
      b.getI64IntegerAttr(blockN), MaskKindAttr::get(b.getContext(), mask),
      /*row_lanes=*/b.getI64IntegerAttr(1));
  scf::YieldOp::create(b, loc, step.getResults());
  return loop;
}

LogicalResult tileAttention(AttentionOp op, int64_t blockM, int64_t blockN) {
  if (ShapedType::isDynamic(op.getHeadDim()))
    return op.emitOpError("attn-tile needs a static head dim D");
  OpBuilder b(op);
  Location loc = op.getLoc();
  ProblemSizes sz = getSizes(b, loc, op);
  Value bm = arith::ConstantIndexOp::create(b, loc, blockM);
  Value numQBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, sz.seqLenQ, bm);
  Value group = b.createOrFold<arith::DivUIOp>(loc, sz.numHeadsQ, sz.numHeadsKV);

  // One CTA per (Q block, query head, batch): the FA2 grid. The mapping
  // keeps canonicalization from folding unit dimensions (or the whole loop)
  // away, so later passes always find the CTA loop.
  MLIRContext *ctx = b.getContext();
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{numQBlocks, sz.numHeadsQ, sz.batch},
      ValueRange{},
      b.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  b.setInsertionPointToStart(forall.getBody());
  ValueRange ivs = forall.getInductionVars();
  Value qBlock = ivs[0], head = ivs[1], batch = ivs[2];
  Value qPos = arith::MulIOp::create(b, loc, qBlock, bm);
  Value kvHead = arith::DivUIOp::create(b, loc, head, group);
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto qTileType =
      VectorType::get({blockM, op.getHeadDim()}, qType.getElementType());
  Value col = arith::ConstantIndexOp::create(b, loc, 0);
  Value qTile =
      LoadTileOp::create(b, loc, qTileType, op.getQ(), batch, head, qPos, col);
  Descales descale = loadDescales(b, loc, op, batch, kvHead);
  scf::ForOp loop = buildKVLoop(b, loc, op, sz, qTile, batch, kvHead, qPos,
                                descale.qk, blockM, blockN);
  ValueRange fin = loop.getResults();
  EpilogueOp::create(b, loc, fin[0], fin[1], fin[2], op.getO(), op.getLse(),
                     batch, head, qPos, col, /*staging=*/Value(),
                     /*oMap=*/Value(), descale.v);
  op.erase();
  return success();
}

struct AttnTilePass : attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;
  void runOnOperation() override {
    // Block sizes 0 pick the tensor-core defaults per D (below).
    if ((blockM != 0 && !isValidBlockM(blockM)) ||
        (blockN != 0 && !isValidBlockN(blockN))) {
      getOperation().emitError()
          << "attn-tile: block-m must be in [1, " << kMaxBlockM
          << "] and block-n in [1, " << kMaxBlockN
          << "] (or 0: per D), but got block-m="
          << static_cast<int64_t>(blockM)
          << " block-n=" << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops) {
      int64_t d = op.getHeadDim();
      int64_t nq = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
      int64_t bn = blockN ? int64_t(blockN) : tensorCoreBlockN(d);
      int64_t bm = blockM ? int64_t(blockM)
                          : tensorCoreBlockM(d, bn,
                                             ShapedType::isDynamic(nq)
                                                 ? std::nullopt
                                                 : std::optional(nq));
      if (failed(tileAttention(op, bm, bn)))
        return signalPassFailure();
    }
  }
};

} // namespace

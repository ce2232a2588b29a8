//===- AttnGradAsyncPipeline.cpp - the backward on Hopper -----------------===//
//
// Rewrites attn.attention_grad into the tensor-core backward: a preprocess
// grid (Delta, LSE in log2 units), a grid zeroing the fp32 dQ accumulator,
// the dK/dV CTAs (K/V resident, Q/dO blocks through a TMA + mbarrier ring,
// warp-specialized, dQ added with atomics by attn.grad_dkdv_mma) and a grid
// converting dQ to the output's type.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "CausalBounds.h"
#include "PipelineBuilders.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGRADASYNCPIPELINE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// Query rows per Q block and keys per CTA (64 per consumer warpgroup).
constexpr int64_t kBlockM = 64;
constexpr int64_t kBlockN = 128;
constexpr int64_t kConsumerWarpgroups = 2;
/// Threads of the row-wise grids: rows per preprocess CTA; rows per CTA of
/// the dQ zero/convert grids (one thread per column).
constexpr int64_t kRowsPerCta = 128;
constexpr int64_t kColumnRows = 16;

/// Static sizes of the backward and its scratch buffers.
struct GradShape {
  int64_t batch, headsQ, seqQ, headsKV, seqK, d, group;
  Type elt;
  int64_t chunks() const { return d / 64; }
  int64_t qBlocks() const { return llvm::divideCeilSigned(seqQ, kBlockM); }
  int64_t kBlocks() const { return llvm::divideCeilSigned(seqK, kBlockN); }
};

FailureOr<GradShape> gradShape(AttentionGradOp op) {
  auto q = cast<MemRefType>(op.getQ().getType());
  auto k = cast<MemRefType>(op.getK().getType());
  for (Value v : op->getOperands())
    if (!cast<MemRefType>(v.getType()).hasStaticShape())
      return op.emitOpError("attn-grad-async-pipeline needs static shapes, "
                            "but operand ")
             << v.getType() << " has a dynamic size";
  GradShape s{q.getDimSize(0), q.getDimSize(1), q.getDimSize(2),
              k.getDimSize(1), k.getDimSize(2), q.getDimSize(3),
              q.getDimSize(1) / k.getDimSize(1), q.getElementType()};
  if (s.d != 64 && s.d != 128)
    return op.emitOpError("attn-grad-async-pipeline needs head dim D = 64 "
                          "or 128 (dK and dV stay in registers), but got ")
           << s.d;
  if (!s.elt.isF16() && !s.elt.isBF16())
    return op.emitOpError("attn-grad-async-pipeline needs f16 or bf16 "
                          "inputs, but got ")
           << s.elt;
  return s;
}

/// A grid of static `blocks` mapped to GPU blocks around `threads` mapped
/// to GPU threads (attn-to-cpu runs both as loops; attn-lower-to-nvvm
/// makes the pair a kernel). `body` gets the block indices and the thread.
void buildThreadGrid(
    ImplicitLocOpBuilder &b, ArrayRef<int64_t> blocks, int64_t threads,
    function_ref<void(ImplicitLocOpBuilder &, ValueRange, Value)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Attribute> blockMapping;
  for (size_t i = 0; i < blocks.size(); ++i)
    blockMapping.push_back(gpu::GPUBlockMappingAttr::get(
        ctx, static_cast<gpu::MappingId>(i)));
  OpBuilder::InsertionGuard guard(b);
  auto grid = scf::ForallOp::create(b, getAsIndexOpFoldResult(ctx, blocks),
                                    ValueRange{}, b.getArrayAttr(blockMapping));
  b.setInsertionPointToStart(grid.getBody());
  auto inner = scf::ForallOp::create(
      b, getAsIndexOpFoldResult(ctx, {threads}), ValueRange{},
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  b.setInsertionPointToStart(inner.getBody());
  body(b, grid.getInductionVars(), inner.getInductionVars()[0]);
}

Value index(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value f32(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

/// Runs `body` if `row` < `rows`.
void ifRowInside(ImplicitLocOpBuilder &b, Value row, int64_t rows,
                 function_ref<void()> body) {
  Value inside =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, index(b, rows));
  auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

/// (a) One thread per query row: Delta = rowsum(dO * O) in fp32 and
/// LSE_log2 = LSE * log2(e), +inf where LSE = -inf (then P = 0). The
/// buffers hold whole Q blocks: rows from Nq to the last block's end get
/// +inf and 0, so attn.grad_dkdv_mma reads them unguarded.
void buildPreprocess(ImplicitLocOpBuilder &b, AttentionGradOp op,
                     const GradShape &s, Value delta, Value lseLog2) {
  buildThreadGrid(
      b, {llvm::divideCeilSigned(s.seqQ, kRowsPerCta), s.headsQ, s.batch},
      kRowsPerCta, [&](ImplicitLocOpBuilder &ib, ValueRange blk, Value t) {
        Value row = arith::AddIOp::create(
            ib, arith::MulIOp::create(ib, blk[0], index(ib, kRowsPerCta)), t);
        SmallVector<Value> at = {blk[2], blk[1], row};
        ifRowInside(ib, row, s.qBlocks() * kBlockM, [&] {
          Value inside = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult,
                                               row, index(ib, s.seqQ));
          auto ifOp = scf::IfOp::create(ib, inside, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(ib);
          ib.setInsertionPointToStart(ifOp.elseBlock());
          memref::StoreOp::create(ib, f32(ib, 0), delta, at);
          memref::StoreOp::create(ib, f32(ib, INFINITY), lseLog2, at);
          ib.setInsertionPointToStart(ifOp.thenBlock());
          auto loop = scf::ForOp::create(ib, index(ib, 0), index(ib, s.d),
                                         index(ib, 1), ValueRange{f32(ib, 0)});
          {
            OpBuilder::InsertionGuard guard(ib);
            ib.setInsertionPointToStart(loop.getBody());
            SmallVector<Value> elt(at);
            elt.push_back(loop.getInductionVar());
            auto load = [&](Value mem) -> Value {
              return arith::ExtFOp::create(
                  ib, ib.getF32Type(),
                  memref::LoadOp::create(ib, mem, elt).getResult());
            };
            Value o = load(op.getO()), dO = load(op.getDO());
            scf::YieldOp::create(
                ib, ValueRange{math::FmaOp::create(
                        ib, o, dO, loop.getRegionIterArgs()[0])});
          }
          memref::StoreOp::create(ib, loop.getResult(0), delta, at);
          Value lse = memref::LoadOp::create(ib, op.getLse(), at);
          Value noKey = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ,
                                              lse, f32(ib, -INFINITY));
          Value log2 = arith::MulFOp::create(ib, lse, f32(ib, M_LOG2E));
          memref::StoreOp::create(
              ib, arith::SelectOp::create(ib, noKey, f32(ib, INFINITY), log2),
              lseLog2, at);
        });
      });
}

/// (b), (d): for each (row, column) of [B, Hq, Nq, D], `body(b, at)`; CTAs
/// of kColumnRows rows, one thread per column (coalesced).
void buildColumnGrid(ImplicitLocOpBuilder &b, const GradShape &s,
                     int64_t rows,
                     function_ref<void(ImplicitLocOpBuilder &, ValueRange)>
                         body) {
  buildThreadGrid(
      b, {llvm::divideCeilSigned(rows, kColumnRows), s.headsQ, s.batch}, s.d,
      [&](ImplicitLocOpBuilder &ib, ValueRange blk, Value t) {
        Value first = arith::MulIOp::create(ib, blk[0], index(ib, kColumnRows));
        Value last = arith::MinUIOp::create(
            ib, arith::AddIOp::create(ib, first, index(ib, kColumnRows)),
            index(ib, rows));
        auto loop = scf::ForOp::create(ib, first, last, index(ib, 1));
        OpBuilder::InsertionGuard guard(ib);
        ib.setInsertionPointToStart(loop.getBody());
        body(ib, ValueRange{blk[2], blk[1], loop.getInductionVar(), t});
      });
}

/// The dQ accumulator's tiles: [B, Hq, ceil(Nq / 64), 2, 64, D / 2], tile
/// (b, h, Q block, half) with the 8-column groups of row r XOR-swizzled by
/// r mod (D / 16) (attn.grad_dkdv_mma's bulk reductions add whole tiles;
/// the swizzle keeps its staging stores free of bank conflicts).
MemRefType dqAccType(ImplicitLocOpBuilder &b, const GradShape &s) {
  return MemRefType::get({s.batch, s.headsQ, s.qBlocks(), 2, kBlockM, s.d / 2},
                         b.getF32Type());
}

/// Where element (b, h, row, col) of dQ lives in its accumulator.
SmallVector<Value> dqAccIndex(ImplicitLocOpBuilder &b, const GradShape &s,
                              ValueRange at) {
  Value row = at[2], col = at[3];
  Value half = index(b, s.d / 2);
  Value inRow = arith::RemUIOp::create(b, row, index(b, kBlockM));
  Value inHalf = arith::RemUIOp::create(b, col, half);
  Value group = arith::XOrIOp::create(
      b, arith::DivUIOp::create(b, inHalf, index(b, 8)),
      arith::RemUIOp::create(b, inRow, index(b, s.d / 16)));
  return {at[0], at[1], arith::DivUIOp::create(b, row, index(b, kBlockM)),
          arith::DivUIOp::create(b, col, half), inRow,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, group, index(b, 8)),
              arith::RemUIOp::create(b, inHalf, index(b, 8)))};
}

/// The dK/dV CTA's shared memory: the Q and dO rings [stages, C, 64, 64],
/// K and V [1, C, 128, 64], two dS buffers [2, 2, 64, 64] (iteration n
/// writes buffer n mod 2; a warpgroup reuses it only after the named
/// barrier of iteration n + 1, which both pass after their dQ of n) and two
/// fp32 dQ staging buffers [2, 2, 64, D / 2] (iteration n stages in buffer
/// n mod 2; its bulk reduction has read it before iteration n + 2 writes).
struct GradShared {
  Value q, dO, k, v, ds, dqStage;
  Value kvBar, full, empty, leader;
};

GradShared allocateShared(ImplicitLocOpBuilder &b, const GradShape &s,
                          int64_t stages) {
  MLIRContext *ctx = b.getContext();
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get(
             {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
             gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
  int64_t offset = 0;
  auto view = [&](ArrayRef<int64_t> shape, Type elt) -> Value {
    Value buffer = memref::ViewOp::create(b, sharedType(shape, elt), smem,
                                          index(b, offset), ValueRange{});
    offset += ShapedType::getNumElements(shape) *
              elt.getIntOrFloatBitWidth() / 8;
    return buffer;
  };
  int64_t c = s.chunks();
  GradShared st;
  st.q = view({stages, c, kBlockM, 64}, s.elt);
  st.dO = view({stages, c, kBlockM, 64}, s.elt);
  st.k = view({1, c, kBlockN, 64}, s.elt);
  st.v = view({1, c, kBlockN, 64}, s.elt);
  st.ds = view({2, kBlockN / 64, kBlockM, 64}, s.elt);
  st.dqStage = view({2, kConsumerWarpgroups, kBlockM, s.d / 2},
                    b.getF32Type());
  return st;
}

/// mbarriers: K/V landed (one arrival + TMA bytes); per stage, Q/dO full
/// (one arrival + TMA bytes) and empty (every consumer thread).
void createBarriers(ImplicitLocOpBuilder &b, int64_t stages, GradShared &st) {
  MLIRContext *ctx = b.getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto group = [&](unsigned n) {
    return nvgpu::MBarrierCreateOp::create(
        b, nvgpu::MBarrierGroupType::get(ctx, space, n));
  };
  st.kvBar = group(1);
  st.full = group(stages);
  st.empty = group(stages);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  st.leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, index(b, 0));
  nvgpu::MBarrierInitOp::create(b, st.kvBar, index(b, 1), index(b, 0),
                                st.leader);
  for (int64_t i = 0; i < stages; ++i) {
    nvgpu::MBarrierInitOp::create(b, st.full, index(b, 1), index(b, i),
                                  st.leader);
    nvgpu::MBarrierInitOp::create(b, st.empty,
                                  index(b, 128 * kConsumerWarpgroups),
                                  index(b, i), st.leader);
  }
  NVVM::FenceMbarrierInitOp::create(b);
  gpu::BarrierOp::create(b);
}

/// Where the CTA is: its K/V block and heads, and the Q blocks it visits
/// for each query head of its group: [begin, mid) on the causal diagonal
/// (masked), [mid, numQBlocks) below it.
struct CtaBlocks {
  Value kPos, kvHead, batch, causalOffset;
  Value begin, mid, numQBlocks, perHead;
};

/// Ring position of Q block `qb` of group member `g`: the blocks of the
/// earlier members come first.
Value ringPosition(ImplicitLocOpBuilder &b, const CtaBlocks &cta, Value g,
                   Value qb) {
  return arith::AddIOp::create(b, arith::MulIOp::create(b, g, cta.perHead),
                               arith::SubIOp::create(b, qb, cta.begin));
}

Value queryHead(ImplicitLocOpBuilder &b, const GradShape &s,
                const CtaBlocks &cta, Value g) {
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, cta.kvHead, index(b, s.group)), g);
}

/// The producer's leader thread: K and V once, then Q and dO of every
/// (query head, Q block) the consumers visit, in their order.
void buildProducer(ImplicitLocOpBuilder &b, const GradShape &s,
                   int64_t stages, const GradShared &st,
                   ArrayRef<Value> desc, const CtaBlocks &cta) {
  auto ifOp = scf::IfOp::create(b, st.leader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value c0 = index(b, 0);
  int64_t tileBytes = s.chunks() * kBlockM * kChunkBytes;
  nvgpu::MBarrierArriveExpectTxOp::create(b, st.kvBar, index(b, 4 * tileBytes),
                                          c0, Value());
  copyTile(b, b.getLoc(), desc[2], st.k, c0, st.kvBar, c0, cta.kPos,
           cta.kvHead, cta.batch, s.chunks());
  copyTile(b, b.getLoc(), desc[3], st.v, c0, st.kvBar, c0, cta.kPos,
           cta.kvHead, cta.batch, s.chunks());
  auto heads = scf::ForOp::create(b, c0, index(b, s.group), index(b, 1));
  b.setInsertionPointToStart(heads.getBody());
  Value g = heads.getInductionVar();
  Value head = queryHead(b, s, cta, g);
  auto blocks = scf::ForOp::create(b, cta.begin, cta.numQBlocks, index(b, 1));
  b.setInsertionPointToStart(blocks.getBody());
  Value qb = blocks.getInductionVar();
  auto [slot, parity] = slotAndParity(
      b, b.getLoc(), ringPosition(b, cta, g, qb), stages);
  // A fresh barrier has completed the phase before phase 0: waiting for
  // parity ^ 1 lets the first round pass.
  Value one = arith::ConstantIntOp::create(b, 1, 1);
  nvgpu::MBarrierTryWaitParityOp::create(
      b, st.empty, arith::XOrIOp::create(b, parity, one),
      index(b, kWaitTicks), slot);
  nvgpu::MBarrierArriveExpectTxOp::create(b, st.full, index(b, 2 * tileBytes),
                                          slot, Value());
  Value row = arith::MulIOp::create(b, qb, index(b, kBlockM));
  copyTile(b, b.getLoc(), desc[0], st.q, slot, st.full, slot, row, head,
           cta.batch, s.chunks());
  copyTile(b, b.getLoc(), desc[1], st.dO, slot, st.full, slot, row, head,
           cta.batch, s.chunks());
}

/// Everything a consumer step reads besides its ring slot.
struct StepOperands {
  mutable AttentionGradOp op;
  Value k, v, lseLog2, delta, dqAcc;
};

/// One consumer Q-block loop over [lb, ub) with `mask`: wait for the
/// block's slot, run the step, release the slot.
scf::ForOp buildConsumerLoop(ImplicitLocOpBuilder &b, const GradShape &s,
                             int64_t stages, const GradShared &st,
                             const CtaBlocks &cta, const StepOperands &ops,
                             Value g, Value lb, Value ub, MaskKind mask,
                             ValueRange state) {
  auto loop = scf::ForOp::create(b, lb, ub, index(b, 1), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value qb = loop.getInductionVar();
  Value pos = ringPosition(b, cta, g, qb);
  auto [slot, parity] = slotAndParity(b, b.getLoc(), pos, stages);
  nvgpu::MBarrierTryWaitParityOp::create(b, st.full, parity,
                                         index(b, kWaitTicks), slot);
  Value parity2 = arith::RemUIOp::create(b, pos, index(b, 2));
  Value dsBuffer = stageTile(b, b.getLoc(), st.ds, parity2);
  Value dqBuffer = stageTile(b, b.getLoc(), st.dqStage, parity2);
  ValueRange dkdv = loop.getRegionIterArgs();
  auto step = GradDKDVMmaOp::create(
      b, dkdv[0].getType(), dkdv[1].getType(),
      stageTile(b, b.getLoc(), st.q, slot),
      stageTile(b, b.getLoc(), st.dO, slot), ops.k, ops.v, dsBuffer,
      dqBuffer, ops.lseLog2, ops.delta, ops.dqAcc, cta.batch, queryHead(b, s, cta, g),
      arith::MulIOp::create(b, qb, index(b, kBlockM)), cta.kPos,
      mask == MaskKind::causal ? cta.causalOffset : Value(), dkdv[0],
      dkdv[1], b.getF32FloatAttr(ops.op.getScaleOrDefault()),
      b.getI64IntegerAttr(s.d), MaskKindAttr::get(b.getContext(), mask));
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), st.empty, slot);
  scf::YieldOp::create(b, step.getResults());
  return loop;
}

/// The consumers: wait for K/V, walk the group's query heads and their Q
/// blocks (the causal diagonal masked first), store dK and dV. dK and dV
/// start from `zeros` as the consumer warpgroups' fragments
/// (!attn.wg_fragment<BLOCK_N x D x f32>: warpgroup w holds keys
/// [64 w, 64 w + 64)), the type the loops carry and the steps and stores
/// take; attn-lower-to-wgmma converts that type, not vectors of some shape.
void buildConsumer(ImplicitLocOpBuilder &b, const GradShape &s,
                   int64_t stages, const GradShared &st, const CtaBlocks &cta,
                   const StepOperands &ops, Value zeros) {
  auto fragment = WgFragmentType::get(cast<VectorType>(zeros.getType()));
  Value dK = ToWgFragmentOp::create(b, fragment, zeros);
  Value dV = ToWgFragmentOp::create(b, fragment, zeros);
  Value c0 = index(b, 0);
  nvgpu::MBarrierTryWaitParityOp::create(
      b, st.kvBar, arith::ConstantIntOp::create(b, 0, 1),
      index(b, kWaitTicks), c0);
  auto heads = scf::ForOp::create(b, c0, index(b, s.group), index(b, 1),
                                  ValueRange{dK, dV});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(heads.getBody());
    Value g = heads.getInductionVar();
    ValueRange state = heads.getRegionIterArgs();
    if (cta.causalOffset) {
      auto masked = buildConsumerLoop(b, s, stages, st, cta, ops, g,
                                      cta.begin, cta.mid, MaskKind::causal,
                                      state);
      state = masked.getResults();
    }
    auto full = buildConsumerLoop(b, s, stages, st, cta, ops, g, cta.mid,
                                  cta.numQBlocks, MaskKind::none, state);
    scf::YieldOp::create(b, full.getResults());
  }
  StoreTileOp::create(b, heads.getResult(0), ops.op.getDK(), cta.batch,
                      cta.kvHead, cta.kPos);
  StoreTileOp::create(b, heads.getResult(1), ops.op.getDV(), cta.batch,
                      cta.kvHead, cta.kPos);
}

/// The dK/dV CTAs launch in the order (KV head within a band of `band`
/// heads, K/V block, band and batch): causal CTAs get lighter along the
/// K/V blocks, so with one head per band the next head's heaviest CTAs
/// would start behind the previous head's lightest (a 24% longer tail,
/// simulated, for Llama-3-8B's 64 K/V blocks x 8 KV heads on 132 SMs);
/// with every head in one band the CTAs start heaviest first but the
/// whole Q, dO and dQ_acc stream through L2 at once (measured 25% slower
/// at causal N16384 H16). A band is the fewest heads whose CTAs fill
/// about a wave: band x ceil(Nk / 128) >= kWaveCtas.
constexpr int64_t kWaveCtas = 116; // 7/8 of an H100/H200 SXM's 132 SMs

int64_t headBand(const GradShape &s) {
  for (int64_t band = 1; band < s.headsKV; ++band)
    if (s.headsKV % band == 0 && band * s.kBlocks() >= kWaveCtas)
      return band;
  return s.headsKV;
}

/// (c) The dK/dV grid: one CTA per (KV head, K/V block, batch).
void buildDKDV(ImplicitLocOpBuilder &b, const GradShape &s, int64_t stages,
               const StepOperands &ops) {
  AttentionGradOp op = ops.op;
  Location loc = b.getLoc();
  SmallVector<Value> desc = {
      createDescriptor(b, loc, op.getQ(), kBlockM),
      createDescriptor(b, loc, op.getDO(), kBlockM),
      createDescriptor(b, loc, op.getK(), kBlockN),
      createDescriptor(b, loc, op.getV(), kBlockN)};
  auto stateType = VectorType::get({kBlockN, s.d}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(stateType, b.getF32FloatAttr(0).getValue()));
  MLIRContext *ctx = b.getContext();
  int64_t band = headBand(s);
  int64_t bands = s.headsKV / band;
  auto cta = scf::ForallOp::create(
      b, getAsIndexOpFoldResult(ctx, {band, s.kBlocks(), bands * s.batch}),
      ValueRange{},
      b.getArrayAttr({gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
                      gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
                      gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(cta.getBody());
  SmallVector<Value> ivs = cta.getInductionVars();
  CtaBlocks blocks;
  blocks.kPos = arith::MulIOp::create(b, ivs[1], index(b, kBlockN));
  blocks.kvHead = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b, arith::RemUIOp::create(b, ivs[2], index(b, bands)),
          index(b, band)),
      ivs[0]);
  blocks.batch = arith::DivUIOp::create(b, ivs[2], index(b, bands));
  blocks.numQBlocks = index(b, s.qBlocks());
  blocks.begin = blocks.mid = index(b, 0);
  if (op.getCausal()) {
    blocks.causalOffset = index(b, s.seqK - s.seqQ);
    QueryBlockSplit split =
        queryBlockSplit(b, loc, blocks.kPos, blocks.causalOffset,
                        blocks.numQBlocks, kBlockM, kBlockN);
    blocks.begin = split.begin;
    blocks.mid = split.mid;
  }
  blocks.perHead = arith::SubIOp::create(b, blocks.numQBlocks, blocks.begin);
  GradShared st = allocateShared(b, s, stages);
  createBarriers(b, stages, st);
  StepOperands inCta = ops;
  inCta.k = stageTile(b, loc, st.k, index(b, 0));
  inCta.v = stageTile(b, loc, st.v, index(b, 0));
  auto ws = WarpSpecializeOp::create(
      b, b.getI64IntegerAttr(kConsumerWarpgroups),
      b.getI64IntegerAttr(kProducerRegisters),
      b.getI64IntegerAttr(defaultConsumerRegisters(kConsumerWarpgroups)),
      UnitAttr(), UnitAttr());
  b.setInsertionPointToStart(&ws.getProducer().emplaceBlock());
  buildProducer(b, s, stages, st, desc, blocks);
  b.setInsertionPointToStart(&ws.getConsumer().emplaceBlock());
  buildConsumer(b, s, stages, st, blocks, inCta, zeros);
}

/// Bytes of the dK/dV CTA's shared memory (allocateShared's buffers).
int64_t sharedBytes(const GradShape &s, int64_t stages) {
  int64_t tile = s.d * 2; // bytes of a 16-bit row
  return 2 * stages * kBlockM * tile + 2 * kBlockN * tile +
         2 * kBlockN * kBlockM * 2 + 2 * kConsumerWarpgroups * kBlockM * s.d / 2 * 4;
}

LogicalResult lowerGrad(AttentionGradOp op, int64_t stages) {
  FailureOr<GradShape> s = gradShape(op);
  if (failed(s))
    return failure();
  if (int64_t bytes = sharedBytes(*s, stages); bytes > kMaxSharedBytes)
    return op.emitOpError("attn-grad-async-pipeline: ")
           << stages << " stages need " << bytes
           << " bytes of shared memory at D = " << s->d << ", but a CTA has "
           << kMaxSharedBytes << " (use fewer stages)";
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto rowsType = MemRefType::get({s->batch, s->headsQ, s->qBlocks() * kBlockM},
                                  b.getF32Type());
  StepOperands ops{op};
  ops.delta = memref::AllocOp::create(b, rowsType);
  ops.lseLog2 = memref::AllocOp::create(b, rowsType);
  ops.dqAcc = memref::AllocOp::create(b, dqAccType(b, *s));
  buildPreprocess(b, op, *s, ops.delta, ops.lseLog2);
  // Every row of the tiles, padding included: bulk reductions add to it.
  buildColumnGrid(b, *s, s->qBlocks() * kBlockM,
                  [&](ImplicitLocOpBuilder &ib, ValueRange at) {
                    memref::StoreOp::create(ib, f32(ib, 0), ops.dqAcc,
                                            dqAccIndex(ib, *s, at));
                  });
  buildDKDV(b, *s, stages, ops);
  buildColumnGrid(b, *s, s->seqQ, [&](ImplicitLocOpBuilder &ib, ValueRange at) {
    Value x =
        memref::LoadOp::create(ib, ops.dqAcc, dqAccIndex(ib, *s, at));
    memref::StoreOp::create(ib, arith::TruncFOp::create(ib, s->elt, x),
                            op.getDQ(), at);
  });
  for (Value buffer : {ops.delta, ops.lseLog2, ops.dqAcc})
    memref::DeallocOp::create(b, buffer);
  op.erase();
  return success();
}

struct AttnGradAsyncPipelinePass
    : StrictOptions<
          attn::impl::AttnGradAsyncPipelineBase<AttnGradAsyncPipelinePass>> {
  using StrictOptions::StrictOptions;
  /// Options are checked once, before any function (no location: they
  /// are not in the input).
  LogicalResult initialize(MLIRContext *ctx) override {
    if (stages >= 2 && stages <= 4)
      return success();
    return emitError(UnknownLoc::get(ctx),
                     "attn-grad-async-pipeline: stages must be in [2, 4], "
                     "but got ")
           << static_cast<int64_t>(stages);
  }

  void runOnOperation() override {
    SmallVector<AttentionGradOp> ops;
    getOperation().walk([&](AttentionGradOp op) { ops.push_back(op); });
    for (AttentionGradOp op : ops)
      if (failed(lowerGrad(op, stages)))
        return signalPassFailure();
  }
};

} // namespace

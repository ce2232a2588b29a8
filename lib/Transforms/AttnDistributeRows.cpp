//===- AttnDistributeRows.cpp - one query row per GPU thread --------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "HostOnly.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDISTRIBUTEROWS
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The layout of one CTA tile over threads: BLOCK_M rows, each split into
/// `lanes` column slices of `cols` elements held by consecutive threads;
/// `combine` for a split-KV combine's CTA.
struct RowLayout {
  int64_t blockM, headDim, lanes, cols;
  bool combine = false;
};

/// Lanes per row for head dim D: the fewest that bring a thread's slice to
/// at most 32 columns while keeping slices multiples of 8 elements (16-byte
/// loads). Q and acc then take 2 * 32 registers per thread.
int64_t chooseLanes(int64_t d) {
  int64_t lanes = 1;
  while (d / lanes > 32 && d % (16 * lanes) == 0 && lanes < 8)
    lanes *= 2;
  return lanes;
}

/// Lanes per row of a split-KV combine (its rows are fp32 O_s): four
/// columns per lane (16-byte loads), at most a warp per row, so that the
/// few rows of a decode call still keep many lanes loading.
int64_t chooseCombineLanes(int64_t d) {
  int64_t lanes = 1;
  while (lanes < 32 && d % (8 * lanes) == 0)
    lanes *= 2;
  return lanes;
}

/// Splits the combine folds per unrolled iteration: each thread's loads of
/// that many O_s slices and LSE_s are independent, so they are in flight
/// together instead of one split's latency after another's.
constexpr int64_t kCombineUnroll = 16;

/// vector<BLOCK_M> -> vector<1>, vector<BLOCK_M x D> -> vector<1 x cols>.
Type threadType(Type t, const RowLayout &layout) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt || vt.getRank() == 0 || vt.getDimSize(0) != layout.blockM)
    return t;
  SmallVector<int64_t> shape(vt.getShape());
  shape[0] = 1;
  if (shape.size() == 2 && shape[1] == layout.headDim)
    shape[1] = layout.cols;
  return VectorType::get(shape, vt.getElementType());
}

/// Narrows every CTA-tile value in `body` to the thread's part. Before
/// attn-online-softmax the only vectors are the Q tile and the (m, l, acc)
/// state.
LogicalResult narrowToThread(Block &body, const RowLayout &layout) {
  WalkResult res = body.walk([&](Operation *op) {
    if (isa<vector::VectorDialect>(op->getDialect()))
      return WalkResult(emitError(
          op->getLoc(),
          "attn-distribute-rows must run before attn-online-softmax"));
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        arg.setType(threadType(arg.getType(), layout));
    for (OpResult r : op->getResults())
      r.setType(threadType(r.getType(), layout));
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<SplatElementsAttr>(cst.getValue()))
        cst.setValueAttr(DenseElementsAttr::get(
            cast<ShapedType>(cst.getType()), dense.getSplatValue<Attribute>()));
    return WalkResult::advance();
  });
  return failure(res.wasInterrupted());
}

/// Canonicalization hoists constants (the initial m, l, acc) out of the CTA
/// loop; narrowing needs its own thread-sized copy of each in `body`.
LogicalResult localizeConstants(Operation *threads, Block &body,
                                const RowLayout &layout) {
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  WalkResult res = body.walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      Operation *def = v.getDefiningOp();
      if (threadType(v.getType(), layout) == v.getType() ||
          (def ? threads->isAncestor(def)
               : threads->isAncestor(v.getParentRegion()->getParentOp())))
        continue;
      if (!isa_and_nonnull<arith::ConstantOp>(def))
        return WalkResult(emitError(
            op->getLoc(),
            "attn-distribute-rows: a CTA tile value is defined outside the "
            "CTA loop of attn-tile"));
      use.set(b.clone(*def)->getResult(0));
    }
    return WalkResult::advance();
  });
  return failure(res.wasInterrupted());
}

/// Thread `tid` works on query row q_pos + tid / lanes, columns
/// (tid % lanes) * cols ...
void assignThreadTiles(Block &body, Value tid, const RowLayout &layout) {
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location loc = tid.getLoc();
  Value lanes = arith::ConstantIndexOp::create(b, loc, layout.lanes);
  Value row = arith::DivUIOp::create(b, loc, tid, lanes);
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tid, lanes),
      arith::ConstantIndexOp::create(b, loc, layout.cols));
  body.walk([&](Operation *op) {
    OpBuilder ob(op);
    auto shift = [&](OpOperand &qPos) {
      qPos.set(arith::AddIOp::create(ob, op->getLoc(), qPos.get(), row));
    };
    if (auto load = dyn_cast<LoadTileOp>(op)) {
      shift(load.getRowMutable());
      load.getColMutable().set(col);
    } else if (auto rows = dyn_cast<LoadRowsOp>(op)) {
      shift(rows.getRowMutable());
    } else if (auto step = dyn_cast<OnlineAttentionOp>(op)) {
      shift(step.getQPosMutable());
      step.getDOffsetMutable().set(col);
      step.setRowLanes(layout.lanes);
    } else if (auto epi = dyn_cast<EpilogueOp>(op)) {
      shift(epi.getQPosMutable());
      epi.getColMutable().set(col);
    }
  });
}

LogicalResult distribute(scf::ForallOp cta, RowLayout layout) {
  MLIRContext *ctx = cta.getContext();
  cta.setMappingAttr(ArrayAttr::get(
      ctx, {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
            gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
            gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  OpBuilder b(ctx);
  b.setInsertionPointToStart(cta.getBody());
  auto threads = scf::ForallOp::create(
      b, cta.getLoc(),
      ArrayRef<OpFoldResult>{b.getIndexAttr(layout.blockM * layout.lanes)},
      ValueRange{},
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  // Move the CTA body (all but the two terminators) into the thread loop.
  Block &inner = *threads.getBody();
  Block &outer = *cta.getBody();
  inner.getOperations().splice(
      inner.begin(), outer.getOperations(), std::next(threads->getIterator()),
      std::prev(outer.end()));
  if (failed(localizeConstants(threads, inner, layout)) ||
      failed(narrowToThread(inner, layout)))
    return failure();
  assignThreadTiles(inner, threads.getInductionVar(0), layout);
  return success();
}

/// True when `forall` is mapped to GPU threads (the loop this pass makes).
bool isThreadLoop(scf::ForallOp forall) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  return mapping && llvm::any_of(*mapping, [](Attribute a) {
           return isa<gpu::GPUThreadMappingAttr>(a);
         });
}

/// True for the CTA loop of an attn.decode_combine (its steps are
/// attn.combine_step).
bool isCombine(scf::ForallOp cta) {
  return cta.getBody()
      ->walk([](CombineStepOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Unrolls the combine's loops over the splits by kCombineUnroll.
void unrollSplitLoops(scf::ForallOp cta) {
  SmallVector<scf::ForOp> loops;
  cta.getBody()->walk([&](CombineStepOp step) {
    if (auto loop = dyn_cast<scf::ForOp>(step->getParentOp()))
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    // The split count is static (the workspace's first dimension): fewer
    // splits than the factor unroll fully.
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    if (lb && ub && *ub - *lb <= kCombineUnroll &&
        matchPattern(loop.getStep(), m_One()))
      (void)loopUnrollFull(loop);
    else
      (void)loopUnrollByFactor(loop, kCombineUnroll);
  }
}

/// True when the CTA loop `forall` already holds a thread loop.
bool isDistributed(scf::ForallOp forall) {
  return forall.getBody()
      ->walk([](scf::ForallOp inner) {
        return isThreadLoop(inner) ? WalkResult::interrupt()
                                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct AttnDistributeRowsPass
    : StrictOptions<
          attn::impl::AttnDistributeRowsBase<AttnDistributeRowsPass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    if (lanesPerRow < 0 || lanesPerRow > 32) {
      emitError(getOperation().getLoc())
          << "attn-distribute-rows: lanes-per-row must be in [0, 32] (0: "
             "chosen per D), but got "
          << static_cast<int64_t>(lanesPerRow);
      return signalPassFailure();
    }
    if (failed(checkNoHostOnlyTiles(getOperation(), "attn-distribute-rows")))
      return signalPassFailure();
    SmallVector<std::pair<scf::ForallOp, RowLayout>> ctas;
    DenseSet<Operation *> seen;
    WalkResult outside = getOperation().walk([&](LoadTileOp load) {
      // The Q tile sits in the CTA loop; decode_combine's O_s tiles in its
      // loop over the splits.
      auto cta = dyn_cast<scf::ForallOp>(load->getParentOp());
      if (!cta && isa<scf::ForOp>(load->getParentOp()))
        cta = dyn_cast<scf::ForallOp>(load->getParentOp()->getParentOp());
      if (!cta)
        return WalkResult(emitError(
            load.getLoc(),
            "attn-distribute-rows expects the Q tile load directly inside "
            "the CTA scf.forall that attn-tile creates"));
      if (isThreadLoop(cta) || !seen.insert(cta).second)
        return WalkResult::advance();
      VectorType tile = load.getResult().getType();
      int64_t d = tile.getDimSize(1);
      bool combine = isCombine(cta);
      int64_t lanes = lanesPerRow > 0 ? lanesPerRow
                      : combine       ? chooseCombineLanes(d)
                                      : chooseLanes(d);
      ctas.emplace_back(
          cta, RowLayout{tile.getDimSize(0), d, lanes, d / lanes, combine});
      return WalkResult::advance();
    });
    if (outside.wasInterrupted())
      return signalPassFailure();
    // Decomposed tiles can no longer be narrowed to a thread.
    WalkResult late = getOperation().walk([&](scf::ForallOp forall) {
      // Tensor-core CTAs (attn-lower-to-wgmma) are lowered already.
      if (isThreadLoop(forall) || isDistributed(forall) || !ctas.empty() ||
          forall->hasAttr(kThreadsAttr))
        return WalkResult::advance();
      WalkResult inner = forall.getBody()->walk([](Operation *op) {
        return isa<vector::VectorDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (!inner.wasInterrupted())
        return WalkResult::advance();
      emitError(forall.getLoc(),
                "attn-distribute-rows must run before attn-online-softmax");
      return WalkResult::interrupt();
    });
    if (late.wasInterrupted())
      return signalPassFailure();
    for (auto [cta, layout] : ctas) {
      if (layout.headDim % layout.lanes != 0 ||
          !llvm::isPowerOf2_64(layout.lanes) || layout.lanes > 32) {
        emitError(cta.getLoc())
            << "attn-distribute-rows: lanes-per-row (" << layout.lanes
            << ") must be a power of two <= 32 dividing D (" << layout.headDim
            << ")";
        return signalPassFailure();
      }
      int64_t threads = layout.blockM * layout.lanes;
      if (threads > 1024) {
        emitError(cta.getLoc())
            << "attn-distribute-rows: BLOCK_M * lanes-per-row = " << threads
            << " threads per CTA, but a CTA has at most 1024";
        return signalPassFailure();
      }
      if (failed(distribute(cta, layout)))
        return signalPassFailure();
      if (layout.combine)
        unrollSplitLoops(cta);
    }
  }
};

} // namespace

//===- AttnFP8VPermute.cpp - V^T keys in the order of P's e4m3 registers --===//
//
// FP8 rings of attn-tma-ring: producer warps 1-3 permute each V^T tile in
// shared memory between its landing and the consumers' wait (Passes.td,
// AttnFP8VPermute).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/Passes.h"

#include "PipelineBuilders.h"
#include "RingCta.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-fp8-v-permute"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFP8VPERMUTE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::pipeline;

namespace {

/// The producer threads that permute each V^T tile (warps 1-3 of the
/// producer warpgroup; warp 0 holds the TMA thread).
constexpr int64_t kPermuteThreads = 96;

/// The V^T ring of an FP8 CTA: its view of dynamic shared memory, stages
/// and bytes per stage.
struct VRing {
  memref::ViewOp view;
  int64_t stages, bytes;
};

FailureOr<VRing> vRingOf(RingCta &r) {
  auto tile = r.step.getV().getDefiningOp<memref::SubViewOp>();
  auto view = tile ? tile.getSource().getDefiningOp<memref::ViewOp>()
                   : memref::ViewOp();
  if (!view || !matchPattern(view.getByteShift(), m_Constant()))
    return emitError(r.cta.getLoc(),
                     "attn-fp8-v-permute: expected the step's V^T tile in a "
                     "ring of dynamic shared memory; run attn-tma-ring first");
  auto type = cast<MemRefType>(view.getType());
  return VRing{view, type.getDimSize(0),
               type.getNumElements() / type.getDimSize(0) *
                   type.getElementTypeBitWidth() / 8};
}

/// The key order of V^T that P's e4m3 A registers need. An A register
/// holds four consecutive k positions, but the S accumulator gives a thread
/// keys 2q, 2q + 1, 8 + 2q, 9 + 2q of each 16 (PTX ISA, wgmma register fragments); packing those
/// as they are puts key pi(4q + b) = 8 (b >> 1) + 2q + (b & 1) at k
/// position 4q + b. So V^T's keys are permuted the same way inside every
/// 16-byte unit (16 keys; the 128-byte swizzle moves whole units): out
/// word q takes bytes 2 (q % 2), +1 of in words q / 2 and 2 + q / 2.
Value permuteUnit(OpBuilder &b, Location loc, ArrayRef<Value> in,
                  int64_t word) {
  Value lo = in[word / 2], hi = in[2 + word / 2];
  Value selector =
      arith::ConstantIntOp::create(b, loc, word % 2 ? 0x7632 : 0x5410, 32);
  return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                 NVVM::PermuteMode::DEFAULT);
}

/// Permutes the 16-byte units of stage `slot` of `vUnits` that this thread
/// owns (every kPermuteThreads-th from `myUnit`).
void permuteTile(OpBuilder &b, Location loc, Value vUnits, Value slot,
                 Value myUnit, int64_t units) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto loop = scf::ForOp::create(b, loc, myUnit, cst(units),
                                 cst(kPermuteThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> at = {slot, loop.getInductionVar(), Value(cst(0))};
  auto wordsType = VectorType::get({4}, b.getI32Type());
  Value words = vector::LoadOp::create(b, loc, wordsType, vUnits, at);
  SmallVector<Value> in, out;
  for (int64_t w = 0; w < 4; ++w)
    in.push_back(vector::ExtractOp::create(b, loc, words, w));
  for (int64_t w = 0; w < 4; ++w)
    out.push_back(permuteUnit(b, loc, in, w));
  vector::StoreOp::create(
      b, loc, vector::FromElementsOp::create(b, loc, wordsType, out), vUnits,
      at);
}

/// Producer warps 1-3 wait for each block of [first, numBlocks) to land
/// on `loaded`, permute its V^T tile in place, make the writes visible to
/// the async proxy (the MMA reads them) and arrive on the block's `full`.
void buildPermuter(OpBuilder &b, Location loc, const VRing &ring,
                   Value vUnits, Value loaded, Value full, Value first,
                   Value numBlocks) {
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
      b, loc, ringBlock(b, loc, loop.getInductionVar(), first), ring.stages);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, loaded, parity,
                                         cst(kWaitTicks), slot);
  permuteTile(b, loc, vUnits, slot, myUnit, ring.bytes / 16);
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  nvgpu::MBarrierArriveOp::create(
      b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), full, slot);
}

/// Blocks now land on a `loaded` barrier per stage (one arrival + TMA
/// bytes, the producer's expect_tx and copies); `full` waits for the
/// kPermuteThreads permuters instead. Returns `loaded`.
Value addLoadedBarriers(RingCta &r) {
  auto fullGroup = r.full.getDefiningOp();
  OpBuilder b(r.empty.getDefiningOp()->getBlock(),
              std::next(r.empty.getDefiningOp()->getIterator()));
  Location loc = r.cta.getLoc();
  Value loaded = nvgpu::MBarrierCreateOp::create(
      b, loc, cast<nvgpu::MBarrierGroupType>(r.full.getType()));
  for (Operation *user : llvm::to_vector(fullGroup->getUsers())) {
    auto init = dyn_cast<nvgpu::MBarrierInitOp>(user);
    if (!init)
      continue;
    b.setInsertionPoint(init);
    init.getCountMutable().assign(
        arith::ConstantIndexOp::create(b, loc, kPermuteThreads));
  }
  for (Operation *user : llvm::to_vector(r.empty.getUsers())) {
    auto init = dyn_cast<nvgpu::MBarrierInitOp>(user);
    if (!init)
      continue;
    b.setInsertionPointAfter(init);
    nvgpu::MBarrierInitOp::create(b, loc, loaded,
                                  arith::ConstantIndexOp::create(b, loc, 1),
                                  init.getMbarId(), init.getPredicate());
  }
  r.full.replaceUsesWithIf(loaded, [&](OpOperand &use) {
    return r.ws.getProducer().isAncestor(use.getOwner()->getParentRegion());
  });
  return loaded;
}

LogicalResult permute(RingCta &r) {
  FailureOr<VRing> ring = vRingOf(r);
  if (failed(ring))
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "V^T ring of " << ring->stages << " stages of "
                          << ring->bytes << " bytes at " << r.cta.getLoc()
                          << "\n");
  // The V^T ring's bytes as 16-byte units of four words.
  OpBuilder b(ring->view);
  b.setInsertionPointAfter(ring->view);
  Location loc = r.cta.getLoc();
  Value at = arith::ConstantIndexOp::create(
      b, loc, *getConstantIntValue(ring->view.getByteShift()));
  Value vUnits = memref::ViewOp::create(
      b, loc, sharedType({ring->stages, ring->bytes / 16, 4}, b.getI32Type()),
      ring->view.getSource(), at, ValueRange{});
  Value loaded = addLoadedBarriers(r);
  b.setInsertionPointToEnd(&r.ws.getProducer().front());
  buildPermuter(b, loc, *ring, vUnits, loaded, r.full,
                r.producerLoop.getLowerBound(), r.producerLoop.getUpperBound());
  r.ws->setAttr(kVPermutedAttr, b.getUnitAttr());
  return success();
}

struct AttnFP8VPermutePass
    : attn::impl::AttnFP8VPermuteBase<AttnFP8VPermutePass> {
  void runOnOperation() override {
    for (WarpSpecializeOp ws : forwardRings(getOperation())) {
      if (ws->hasAttr(kVPermutedAttr))
        continue;
      FailureOr<RingCta> r = matchRing(ws, "attn-fp8-v-permute");
      if (failed(r))
        return signalPassFailure();
      auto q = cast<MemRefType>(r->step.getQ().getType());
      if (!isa<Float8E4M3FNType>(q.getElementType()))
        continue;
      if (failed(permute(*r)))
        return signalPassFailure();
    }
  }
};

} // namespace

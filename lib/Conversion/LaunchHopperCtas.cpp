//===- LaunchHopperCtas.cpp - tensor-core CTA loops -> gpu.launch ---------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/CtaAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-launch-hopper-ctas"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLAUNCHHOPPERCTAS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Bytes of dynamic shared memory that the views `region` uses reach
/// (views may have been hoisted out of it).
int64_t dynamicSharedBytes(Region &region) {
  int64_t bytes = 0;
  auto count = [&](memref::ViewOp view) {
    if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
      return;
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    MemRefType type = view.getType();
    if (shift && type.hasStaticShape())
      bytes = std::max(bytes, *shift + type.getNumElements() *
                                           type.getElementTypeBitWidth() / 8);
  };
  region.walk(count);
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  for (Value v : above)
    if (auto view = v.getDefiningOp<memref::ViewOp>())
      count(view);
  return bytes;
}

/// The CTA loop (Q block, head, batch) -> gpu.launch over a 1-D grid, the Q
/// block fastest (attn-async-pipeline rebinds a causal loop's tiles to
/// start the heaviest first).
LogicalResult launchHopperCta(scf::ForallOp cta) {
  auto threads = cta->getAttrOfType<IntegerAttr>(kThreadsAttr);
  if (cta.getRank() != 3 || !cta.isNormalized())
    return emitError(cta.getLoc(),
                     "attn-lower-to-nvvm: expected the 3-D CTA loop "
                     "(Q block, head, batch) of attn-tile");
  OpBuilder b(cta);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  Value grid = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ub[0], ub[1]), ub[2]);
  // Persistent CTAs find their tiles themselves (attn-async-pipeline).
  auto persistent = cta->getAttrOfType<IntegerAttr>(kPersistentCtasAttr);
  if (persistent)
    grid = arith::ConstantIndexOp::create(b, loc, persistent.getInt());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value block = arith::ConstantIndexOp::create(b, loc, threads.getInt());
  int64_t smemBytes = dynamicSharedBytes(cta.getRegion());
  LLVM_DEBUG(llvm::dbgs() << "CTA at " << loc << ": " << threads.getInt()
                          << " threads, " << smemBytes
                          << " bytes of dynamic shared memory\n");
  Value smem = arith::ConstantIntOp::create(b, loc, smemBytes, 32);
  auto launch =
      gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one, smem);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value id = launch.getBlockIds().x;
  Value rest = arith::DivUIOp::create(b, loc, id, ub[0]);
  IRMapping map;
  map.map(cta.getInductionVars(),
          ValueRange{arith::RemUIOp::create(b, loc, id, ub[0]),
                     arith::RemUIOp::create(b, loc, rest, ub[1]),
                     arith::DivUIOp::create(b, loc, rest, ub[1])});
  // (Persistent: nothing live reads them; the tile loops decode their own.)
  for (Operation &op : cta.getBody()->without_terminator())
    b.clone(op, map);
  gpu::TerminatorOp::create(b, loc);
  cta.erase();
  return success();
}

struct AttnLaunchHopperCtasPass
    : attn::impl::AttnLaunchHopperCtasBase<AttnLaunchHopperCtasPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> ctas;
    getOperation().walk([&](scf::ForallOp forall) {
      if (forall->hasAttr(kThreadsAttr))
        ctas.push_back(forall);
    });
    for (scf::ForallOp cta : ctas)
      if (failed(launchHopperCta(cta)))
        return signalPassFailure();
  }
};

} // namespace

//===- PhasedCta.cpp - CTAs of several thread loops -> gpu.launch --------===//

#include "PhasedCta.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;

namespace {

bool hasMapping(scf::ForallOp loop, function_ref<bool(Attribute)> kind) {
  std::optional<ArrayAttr> mapping = loop.getMapping();
  return mapping && !mapping->empty() && llvm::all_of(*mapping, kind);
}

bool isThreadLoop(Operation &op) {
  auto loop = dyn_cast<scf::ForallOp>(op);
  return loop && hasMapping(loop, llvm::IsaPred<gpu::GPUThreadMappingAttr>);
}

bool isWorkgroupBuffer(Operation &op) {
  auto alloca = dyn_cast<memref::AllocaOp>(op);
  auto space = alloca ? dyn_cast_or_null<gpu::AddressSpaceAttr>(
                            alloca.getType().getMemorySpace())
                      : nullptr;
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// The block mapping's dimension order: x (or linear_dim_0) first.
SmallVector<unsigned> blockOrder(scf::ForallOp cta) {
  SmallVector<unsigned> order(cta.getRank());
  std::iota(order.begin(), order.end(), 0);
  ArrayAttr mapping = *cta.getMapping();
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return cast<gpu::GPUBlockMappingAttr>(mapping[a]).getMappingId() <
           cast<gpu::GPUBlockMappingAttr>(mapping[b]).getMappingId();
  });
  return order;
}

/// Threads of the widest thread loop, or failure on a loop that is not a
/// static 1-D one.
FailureOr<int64_t> threadCount(scf::ForallOp cta) {
  int64_t threads = 1;
  for (Operation &op : cta.getBody()->without_terminator()) {
    if (!isThreadLoop(op))
      continue;
    auto loop = cast<scf::ForallOp>(op);
    ArrayRef<int64_t> ub = loop.getStaticUpperBound();
    if (loop.getRank() != 1 || !loop.isNormalized() ||
        ShapedType::isDynamic(ub[0]))
      return emitError(loop.getLoc(),
                       "attn-lower-to-nvvm: a thread loop of a CTA "
                       "with several must be 1-D, from 0 by 1 to a "
                       "static bound");
    threads = std::max(threads, ub[0]);
  }
  return threads;
}

/// One thread loop's body on threads [0, n), guarded where the CTA has
/// more threads.
void emitPhase(OpBuilder &b, scf::ForallOp loop, Value tid, int64_t threads,
               IRMapping &map) {
  Location loc = loop.getLoc();
  int64_t n = loop.getStaticUpperBound()[0];
  OpBuilder::InsertionGuard guard(b);
  if (n < threads) {
    Value inside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, tid,
        arith::ConstantIndexOp::create(b, loc, n));
    auto guarded = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    b.setInsertionPoint(guarded.thenBlock()->getTerminator());
  }
  map.map(loop.getInductionVars()[0], tid);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  b.setInsertionPointAfter(b.getInsertionBlock()->getParentOp());
}

} // namespace

bool attn::isPhasedCta(scf::ForallOp cta) {
  if (!hasMapping(cta, llvm::IsaPred<gpu::GPUBlockMappingAttr>))
    return false;
  Block *body = cta.getBody();
  return llvm::count_if(*body, isThreadLoop) > 1 ||
         llvm::any_of(*body, isWorkgroupBuffer);
}

LogicalResult attn::launchPhasedCta(scf::ForallOp cta) {
  FailureOr<int64_t> threads = threadCount(cta);
  if (failed(threads))
    return failure();
  if (!cta.isNormalized())
    return emitError(cta.getLoc(),
                     "attn-lower-to-nvvm: expected a CTA loop from 0 "
                     "by 1");
  OpBuilder b(cta);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  Value grid = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value u : ub)
    grid = arith::MulIOp::create(b, loc, grid, u);
  SmallVector<Type> buffers;
  for (Operation &op : cta.getBody()->without_terminator())
    if (isWorkgroupBuffer(op))
      buffers.push_back(cast<memref::AllocaOp>(op).getType());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, grid, one, one,
      arith::ConstantIndexOp::create(b, loc, *threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange{}, buffers);
  b.setInsertionPointToStart(&launch.getBody().front());
  // Block ids, first mapped dimension fastest.
  IRMapping map;
  Value id = launch.getBlockIds().x;
  for (unsigned d : blockOrder(cta)) {
    map.map(cta.getInductionVars()[d],
            arith::RemUIOp::create(b, loc, id, ub[d]));
    id = arith::DivUIOp::create(b, loc, id, ub[d]);
  }
  Value tid = launch.getThreadIds().x;
  unsigned buffer = 0;
  bool pending = false; // a thread loop ran since the last barrier
  for (Operation &op : cta.getBody()->without_terminator()) {
    if (isWorkgroupBuffer(op)) {
      map.map(op.getResult(0), launch.getWorkgroupAttributions()[buffer++]);
    } else if (isThreadLoop(op)) {
      if (pending)
        gpu::BarrierOp::create(b, loc);
      emitPhase(b, cast<scf::ForallOp>(op), tid, *threads, map);
      pending = true;
    } else if (isMemoryEffectFree(&op)) {
      b.clone(op, map);
    } else {
      launch.erase();
      return emitError(op.getLoc(),
                       "attn-lower-to-nvvm: a CTA of several thread "
                       "loops may have side effects only inside them "
                       "(every thread would run it)");
    }
  }
  gpu::TerminatorOp::create(b, loc);
  cta.erase();
  return success();
}

//===- KernelBoundary.cpp - what crosses into a kernel --------------------===//
//
// attn-sink-into-launch and attn-pass-descriptors-as-pointers: before
// gpu-kernel-outlining, a gpu.launch is left using from above only the
// memrefs of the attention op and its TMA descriptors, as !llvm.ptr.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-sink-into-launch"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSINKINTOLAUNCH
#define GEN_PASS_DEF_ATTNPASSDESCRIPTORSASPOINTERS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Clones every pure chain `launch` uses from above into its body, down to
/// the function's arguments (descriptor casts stay: they are arguments).
void sinkIntoLaunch(gpu::LaunchOp launch) {
  auto isSinkable = [](Operation *op) {
    return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
           op->getNumResults() == 1 && !isa<UnrealizedConversionCastOp>(op);
  };
  Region &body = launch.getBody();
  SetVector<Value> above;
  getUsedValuesDefinedAbove(body, above);
  OpBuilder b = OpBuilder::atBlockBegin(&body.front());
  IRMapping map;
  std::function<Value(Value)> sink = [&](Value v) -> Value {
    if (Value done = map.lookupOrNull(v))
      return done;
    Operation *def = v.getDefiningOp();
    if (!def || !isSinkable(def))
      return v; // a kernel argument
    for (Value operand : def->getOperands())
      sink(operand);
    return b.clone(*def, map)->getResult(0);
  };
  for (Value v : above)
    if (Value inside = sink(v); inside != v)
      replaceAllUsesInRegionWith(v, inside, body);
  LLVM_DEBUG(llvm::dbgs() << "launch at " << launch.getLoc() << ": "
                          << map.getValueMap().size() << " value(s) sunk\n");
}

/// Casts each descriptor `launch` uses from above to !llvm.ptr on the host
/// and back inside.
void passDescriptorsAsPointers(gpu::LaunchOp launch) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(launch.getBody(), above);
  Type ptr = LLVM::LLVMPointerType::get(launch.getContext());
  for (Value desc : above) {
    if (!isa<nvgpu::TensorMapDescriptorType>(desc.getType()))
      continue;
    OpBuilder host(launch);
    host.setInsertionPointAfterValue(desc);
    Value p = UnrealizedConversionCastOp::create(host, desc.getLoc(), ptr, desc)
                  .getResult(0);
    OpBuilder inner = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value back = UnrealizedConversionCastOp::create(inner, desc.getLoc(),
                                                    desc.getType(), p)
                     .getResult(0);
    replaceAllUsesInRegionWith(desc, back, launch.getBody());
  }
}

struct AttnSinkIntoLaunchPass
    : attn::impl::AttnSinkIntoLaunchBase<AttnSinkIntoLaunchPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::LaunchOp l) { sinkIntoLaunch(l); });
  }
};

struct AttnPassDescriptorsAsPointersPass
    : attn::impl::AttnPassDescriptorsAsPointersBase<
          AttnPassDescriptorsAsPointersPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::LaunchOp l) { passDescriptorsAsPointers(l); });
  }
};

} // namespace

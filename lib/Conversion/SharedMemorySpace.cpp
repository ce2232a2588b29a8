//===- SharedMemorySpace.cpp - workgroup address space -> 3 ---------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-number-shared-memory"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNUMBERSHAREDMEMORY
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnNumberSharedMemoryPass
    : attn::impl::AttnNumberSharedMemoryBase<AttnNumberSharedMemoryPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp kernels = getOperation();
    AttrTypeReplacer replacer;
    replacer.addReplacement(
        [](gpu::AddressSpaceAttr space) -> std::optional<Attribute> {
          if (space.getValue() != gpu::AddressSpace::Workgroup)
            return std::nullopt;
          return IntegerAttr::get(
              IntegerType::get(space.getContext(), 64),
              static_cast<int64_t>(NVVM::NVVMMemorySpace::Shared));
        });
    // gpu.dynamic_shared_memory must stay in the attribute space: cast it.
    kernels.walk([](gpu::DynamicSharedMemoryOp smem) {
      OpBuilder b(smem->getContext());
      b.setInsertionPointAfter(smem);
      MemRefType type = smem.getType();
      MemRefType shared = MemRefType::Builder(type).setMemorySpace(
          b.getI64IntegerAttr(int64_t(NVVM::NVVMMemorySpace::Shared)));
      auto cast = memref::MemorySpaceCastOp::create(b, smem.getLoc(), shared,
                                                    smem.getResult());
      smem.getResult().replaceAllUsesExcept(cast, cast);
      LLVM_DEBUG(llvm::dbgs() << "cast " << smem << "\n");
    });
    kernels.walk([&](Operation *op) {
      if (!isa<gpu::DynamicSharedMemoryOp>(op))
        replacer.replaceElementsIn(op, /*replaceAttrs=*/true,
                                   /*replaceLocs=*/false,
                                   /*replaceTypes=*/true);
    });
  }
};
} // namespace

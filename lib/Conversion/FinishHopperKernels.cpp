//===- FinishHopperKernels.cpp - tensor maps by value, aligned smem -------===//

#include "attn/Conversion/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-finish-hopper-kernels"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFINISHHOPPERKERNELS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// "module::kernel": kernels of one function (split-KV's partial attention
/// and combine) share a name in different gpu.modules.
std::string kernelKey(StringRef module, StringRef name) {
  return (module + "::" + name).str();
}

/// Per kernel: the LLVM argument positions of its tensor maps, the
/// !llvm.ptr operands of its launches (a memref operand expands to
/// 3 + 2 * rank arguments).
llvm::StringMap<SmallVector<unsigned>> tensorMapArguments(ModuleOp module) {
  llvm::StringMap<SmallVector<unsigned>> result;
  module.walk([&](gpu::LaunchFuncOp launch) {
    std::string key = kernelKey(launch.getKernelModuleName().getValue(),
                                launch.getKernelName().getValue());
    if (result.contains(key))
      return;
    SmallVector<unsigned> positions;
    unsigned pos = 0;
    for (Value operand : launch.getKernelOperands()) {
      Type t = operand.getType();
      if (isa<LLVM::LLVMPointerType>(t))
        positions.push_back(pos);
      auto mem = dyn_cast<MemRefType>(t);
      pos += mem ? 3 + 2 * mem.getRank() : 1;
    }
    if (!positions.empty())
      result[key] = std::move(positions);
  });
  return result;
}

struct AttnFinishHopperKernelsPass
    : attn::impl::AttnFinishHopperKernelsBase<AttnFinishHopperKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    llvm::StringMap<SmallVector<unsigned>> maps = tensorMapArguments(module);
    auto map = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 64), 16);
    module.walk([&](LLVM::LLVMFuncOp fn) {
      auto kernels = fn->getParentOfType<gpu::GPUModuleOp>();
      if (!kernels)
        return;
      auto it = maps.find(kernelKey(kernels.getName(), fn.getName()));
      if (it == maps.end())
        return;
      LLVM_DEBUG(llvm::dbgs() << it->first() << ": " << it->second.size()
                              << " tensor map(s) by value\n");
      for (unsigned i : it->second) {
        fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(map));
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      IntegerAttr::get(IntegerType::get(ctx, 64), 64));
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      UnitAttr::get(ctx));
      }
      fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  IntegerAttr::get(IntegerType::get(ctx, 32), 1));
    });
    module.walk([&](LLVM::GlobalOp global) {
      // An internal zero-size global prints as a static .shared variable;
      // dynamic shared memory is an .extern array.
      if (global.getAddrSpace() == 3 &&
          global.getSymName().starts_with("__dynamic_shmem")) {
        global.setAlignment(1024);
        global.setLinkage(LLVM::Linkage::External);
      }
    });
  }
};

} // namespace

//===- LowerToNVVMPipeline.cpp - the attn-lower-to-nvvm pass list ---------===//

#include "attn/Conversion/Passes.h"

#include "NVVMTarget.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Launches: the CTA loops become gpu.launch ops whose bodies use from
/// above only memrefs and descriptor pointers, then kernels.
void addLaunches(OpPassManager &pm) {
  pm.addPass(createAttnLaunchHopperCtas());
  pm.addPass(createAttnLaunchPhasedCtas());
  pm.addPass(createAttnParallelCtaGrids());
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createGpuMapParallelLoopsPass());
  fn.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createAttnSinkIntoLaunch());
  pm.addPass(createAttnPassDescriptorsAsPointers());
  pm.addPass(createGpuKernelOutliningPass());
}

/// Inside kernels: transfers unrolled into 1-D ones guarded by their row
/// bound (rows past Nq are neither read nor written) before the unit row
/// dimension is dropped, which would lose that bound; then the rest of the
/// tile vectors, and the row transfers become aligned loads and stores.
void addKernelVectors(OpPassManager &pm) {
  VectorTransferToSCFOptions unroll;
  unroll.enableFullUnroll();
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertVectorToSCFPass(unroll));
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnLowerKernelVectors());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertVectorToSCFPass(unroll));
  pm.addPass(createAttnLowerRowTransfers());
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnNumberSharedMemory());
}

/// The kernels to the NVVM and LLVM dialects, 64-bit indices (offsets may
/// exceed 2^31).
void addToNVVM(OpPassManager &pm, StringRef chip, StringRef features) {
  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  target.features = targetFeatures(chip, features);
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertVectorToLLVMPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createCanonicalizerPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  pm.addPass(createAttnFinishHopperKernels());
}

} // namespace

void mlir::attn::buildLowerToNVVMPipeline(OpPassManager &pm, StringRef chip,
                                          StringRef features) {
  pm.addPass(createAttnCheckNVVMInput(
      AttnCheckNVVMInputOptions{chip.str(), features.str()}));
  addLaunches(pm);
  addKernelVectors(pm);
  addToNVVM(pm, chip, features);
}

void mlir::attn::buildLowerToNVVMPipeline(OpPassManager &pm,
                                          const LowerToNVVMOptions &options) {
  buildLowerToNVVMPipeline(pm, options.chip, options.features);
}

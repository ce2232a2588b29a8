//===- AttnToNVVM.cpp - distributed loop nest -> NVVM kernel --------------===//

#include "attn/Conversion/Passes.h"

#include "VectorLowering.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// f32 `math.exp2` / `math.log2` -> the PTX approximations the FlashAttention
/// kernels use (ex2.approx.ftz.f32, lg2.approx.ftz.f32). Vectors are unrolled.
template <typename MathOp>
struct ApproxToNVVM : OpRewritePattern<MathOp> {
  ApproxToNVVM(MLIRContext *ctx, StringRef intrinsic)
      : OpRewritePattern<MathOp>(ctx), intrinsic(intrinsic) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    if (type.isF32()) {
      rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
          op, type, rewriter.getStringAttr(intrinsic), op.getOperand());
      return success();
    }
    auto vt = dyn_cast<VectorType>(type);
    if (!vt || vt.getRank() != 1 || !vt.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "expected f32 or vector<N x f32>");
    SmallVector<Value> elts;
    for (int64_t i = 0, e = vt.getNumElements(); i < e; ++i) {
      Value x = vector::ExtractOp::create(rewriter, loc, op.getOperand(), i);
      elts.push_back(MathOp::create(rewriter, loc, x));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elts);
    return success();
  }

  std::string intrinsic;
};

/// Marks whole-row-slice vector loads/stores as 16-byte aligned. The
/// runtime contract (docs/ir.md) makes every row of Q/K/V/O start on a
/// 16-byte boundary (aligned base, strides that are multiples of 8
/// elements), and thread slices are multiples of 16 bytes wide.
void alignRowAccesses(gpu::GPUModuleOp kernels) {
  auto align = [](Operation *op, VectorType vt) {
    unsigned bits = vt.getElementTypeBitWidth() * vt.getNumElements();
    if (vt.getRank() == 1 && bits % 128 == 0)
      op->setAttr("alignment", IntegerAttr::get(
                                   IntegerType::get(op->getContext(), 64), 16));
  };
  kernels.walk([&](Operation *op) {
    if (auto load = dyn_cast<vector::LoadOp>(op))
      align(op, load.getVectorType());
    else if (auto store = dyn_cast<vector::StoreOp>(op))
      align(op, store.getVectorType());
  });
}

/// Moves every pure computation a gpu.launch uses from above into its body,
/// so that outlined kernels take only the memref operands of attn.attention
/// (sizes come from their descriptors). The bundle's parameter list and the
/// runtime's launch code depend on that: no host-computed scalar crosses the
/// kernel boundary.
LogicalResult sinkIntoLaunches(ModuleOp module) {
  auto isSinkable = [](Operation *op) {
    return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
           op->getNumResults() == 1;
  };
  WalkResult res = module.walk([&](gpu::LaunchOp launch) {
    return failed(sinkOperationsIntoLaunchOp(launch, isSinkable))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return failure(res.wasInterrupted());
}

/// `chip` must name an SM the kernels can run on: sm_<N>[a] with N >= 80
/// (bf16 conversions); LLVM would otherwise pick a generic target and fail
/// (or abort) in instruction selection.
LogicalResult checkChipName(ModuleOp module, StringRef chip) {
  StringRef rest = chip;
  unsigned sm = 0;
  bool ok = rest.consume_front("sm_") && !rest.consumeInteger(10, sm) &&
            (rest.empty() || rest == "a") && sm >= 80;
  if (ok)
    return success();
  return emitError(module.getLoc(), "attn-lower-to-nvvm: chip '")
         << chip << "' is not an NVIDIA SM of sm_80 or later (e.g. sm_90a)";
}

/// The input this pass lowers: every attn op decomposed by
/// attn-online-softmax, every CTA loop mapped to threads by
/// attn-distribute-rows. Anything else would leave attn ops behind or build
/// a one-thread kernel, so it stops with what to run first.
LogicalResult checkNVVMPreconditions(ModuleOp module) {
  auto isThreadLoop = [](scf::ForallOp forall) {
    std::optional<ArrayAttr> mapping = forall.getMapping();
    return mapping && llvm::any_of(*mapping, [](Attribute a) {
             return isa<gpu::GPUThreadMappingAttr>(a);
           });
  };
  WalkResult res = module.walk([&](Operation *op) {
    if (isa<AttentionOp>(op))
      return WalkResult(op->emitOpError(
          "attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile, "
          "attn-causal-split, attn-distribute-rows and attn-online-softmax "
          "first (or --attn-to-cubin)"));
    if (isa<AttnDialect>(op->getDialect()))
      return WalkResult(op->emitOpError(
          "attn-lower-to-nvvm needs it decomposed: run attn-online-softmax "
          "first"));
    auto forall = dyn_cast<scf::ForallOp>(op);
    if (!forall || isThreadLoop(forall) ||
        forall.getBody()
            ->walk([&](scf::ForallOp inner) {
              return isThreadLoop(inner) ? WalkResult::interrupt()
                                         : WalkResult::advance();
            })
            .wasInterrupted())
      return WalkResult::advance();
    return WalkResult(forall.emitOpError(
        "attn-lower-to-nvvm needs the CTA loop mapped to threads: run "
        "attn-distribute-rows before attn-online-softmax"));
  });
  return failure(res.wasInterrupted());
}

struct AttnLowerToNVVMPass
    : attn::impl::AttnLowerToNVVMBase<AttnLowerToNVVMPass> {
  using AttnLowerToNVVMBase::AttnLowerToNVVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNVVMPreconditions(module)) ||
        failed(checkChipName(module, chip)))
      return signalPassFailure();
    auto run = [&](OpPassManager &pm, Operation *op) {
      return runPipeline(pm, op);
    };
    // attn-distribute-rows maps (Q block, head, batch) to blocks x, y, z and
    // rows to threads x: exactly the order gpu-map-parallel-loops assigns
    // greedily, which is the form convert-parallel-loops-to-gpu consumes.
    module.walk([](scf::ForallOp forall) { forall.setMappingAttr(nullptr); });
    if (failed(runTextualPipeline(
            module,
            "scf-forall-to-parallel,func.func(gpu-map-parallel-loops,"
            "convert-parallel-loops-to-gpu),canonicalize,cse",
            run)) ||
        failed(sinkIntoLaunches(module)) ||
        failed(runTextualPipeline(module, "gpu-kernel-outlining", run)))
      return signalPassFailure();

    // Inside kernels: one row per thread, so drop the unit row dimension,
    // lower the remaining vector ops and the exp2/log2 approximations.
    // First unroll transfers into 1-D ones guarded by their row bound
    // (rows past Nq must be neither read nor written); only then drop the
    // unit row dimension, which would otherwise lose that bound.
    if (failed(runTextualPipeline(
            module, "gpu.module(convert-vector-to-scf{full-unroll=true})",
            run)))
      return signalPassFailure();
    WalkResult res = module.walk([&](gpu::GPUModuleOp kernels) {
      RewritePatternSet rowPatterns(&getContext());
      vector::populateCastAwayVectorLeadingOneDimPatterns(rowPatterns);
      if (failed(applyPatternsGreedily(kernels, std::move(rowPatterns))))
        return WalkResult::interrupt();
      RewritePatternSet patterns(&getContext());
      patterns.add<ApproxToNVVM<math::Exp2Op>>(&getContext(),
                                               "llvm.nvvm.ex2.approx.ftz.f");
      patterns.add<ApproxToNVVM<math::Log2Op>>(&getContext(),
                                               "llvm.nvvm.lg2.approx.ftz.f");
      if (failed(lowerTileVectors(kernels, std::move(patterns))))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (res.wasInterrupted())
      return signalPassFailure();

    // Row transfers -> plain (guarded) vector loads and stores, 16 bytes
    // aligned where the access is a multiple of 16 bytes.
    if (failed(runTextualPipeline(
            module, "gpu.module(convert-vector-to-scf{full-unroll=true})",
            run)))
      return signalPassFailure();
    RewritePatternSet transfers(&getContext());
    vector::populateVectorTransferLoweringPatterns(transfers,
                                                   /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(module, std::move(transfers))))
      return signalPassFailure();
    module.walk([](gpu::GPUModuleOp kernels) { alignRowAccesses(kernels); });

    std::string target = "nvvm-attach-target{chip=" + chip +
                         " features=" + features + " O=3},";
    if (failed(runTextualPipeline(
            module,
            target + "gpu.module(lower-affine,convert-vector-to-llvm,"
                     "convert-scf-to-cf,"
                     "canonicalize,"
                     "convert-gpu-to-nvvm{index-bitwidth=64},"
                     "reconcile-unrealized-casts,canonicalize,cse)",
            run)))
      return signalPassFailure();
  }
};

} // namespace

//===- KernelVectors.cpp - a kernel's tile vectors -> 1-D code ------------===//

#include "attn/Conversion/Passes.h"

#include "VectorLowering.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-lower-kernel-vectors"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERKERNELVECTORS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// f32 `math.exp2` / `math.log2` -> the PTX approximations the FlashAttention
/// kernels use (ex2.approx.ftz.f32, lg2.approx.ftz.f32). Vectors are unrolled.
template <typename MathOp> struct ApproxToNVVM : OpRewritePattern<MathOp> {
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

/// Scalar f32 -> f8E4M3FN `arith.truncf` (attn-quantize-fp8's quantize
/// kernel) -> cvt.rn.satfinite.e4m3x2.f32 with the value in the low byte.
struct TruncFToE4M3 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<Float8E4M3FNType>(op.getType()) || !op.getIn().getType().isF32())
      return rewriter.notifyMatchFailure(op, "expected f32 -> f8E4M3FN");
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0));
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        rewriter, loc, rewriter.getI16Type(), zero, op.getIn(),
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, op.getType());
    Value byte =
        arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(), pair);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

struct AttnLowerKernelVectorsPass
    : attn::impl::AttnLowerKernelVectorsBase<AttnLowerKernelVectorsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp kernels = getOperation();
    MLIRContext *ctx = &getContext();
    // One row per thread: the unit row dimension goes first, on its own
    // (transfers were unrolled with their row bound already).
    RewritePatternSet rowPatterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(rowPatterns);
    if (failed(applyPatternsGreedily(kernels, std::move(rowPatterns))))
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs() << "unit row dimension dropped in "
                            << kernels.getName() << "\n");
    RewritePatternSet patterns(ctx);
    patterns.add<ApproxToNVVM<math::Exp2Op>>(ctx,
                                             "llvm.nvvm.ex2.approx.ftz.f");
    patterns.add<ApproxToNVVM<math::Log2Op>>(ctx,
                                             "llvm.nvvm.lg2.approx.ftz.f");
    patterns.add<TruncFToE4M3>(ctx);
    if (failed(lowerTileVectors(kernels, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

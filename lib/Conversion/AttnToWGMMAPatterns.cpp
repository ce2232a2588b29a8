//===- AttnToWGMMAPatterns.cpp - one conversion pattern per op ------------===//
//
// attn-lower-to-wgmma's patterns for the forward consumer. Each reads the
// decisions the pass left on its op (AttnToWGMMA.h) and the thread's
// fragments of the state from its adaptor; the lowering itself is in
// OnlineAttentionToWGMMA.cpp, OverlapToWGMMA.cpp and EpilogueToWGMMA.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToWGMMA.h"

#include "OnlineAttentionWGMMA.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-lower-to-wgmma"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::wgmma;

namespace {

/// The schedule of `step`'s lowering: the options, the pass's decisions on
/// the op and, in a software-pipelined loop without a mask, FP8's lazy max
/// (a masked loop, the causal diagonal or the key-length tail, is a block
/// or two). `turns` holds the ping-pong turns the schedule points to.
Schedule scheduleOf(OnlineAttentionMmaOp step, const WGMMAOptions &options,
                    Turns &turns, bool pipelined) {
  auto pingPong = step->getAttrOfType<IntegerAttr>(kPingPongTurnsAttr);
  if (pingPong)
    turns.warpgroups = pingPong.getInt();
  return Schedule{options.maxMmaN,
                  pingPong ? &turns : nullptr,
                  static_cast<double>(options.fp8PScaleLog2),
                  step->hasAttr(kTreeReductionsAttr),
                  options.fp8PolyExp2,
                  options.fp8LazyMax && pipelined &&
                      step.getMask() == MaskKind::none,
                  static_cast<double>(options.fp8LazyHeadroom)};
}

/// attn.to_wg_fragment of a splat -> the splat in every thread's registers
/// (where the splat is defined; the pass refuses any other source).
struct ToWgFragmentLowering : OpConversionPattern<ToWgFragmentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ToWgFragmentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto cst = op.getSource().getDefiningOp<arith::ConstantOp>();
    auto splat = cst ? dyn_cast<SplatElementsAttr>(cst.getValue()) : nullptr;
    if (!splat)
      return rewriter.notifyMatchFailure(op, "not a splat constant");
    auto type = cast<ShapedType>(getTypeConverter()->convertType(op.getType()));
    Value regs = arith::ConstantOp::create(
        rewriter, cst.getLoc(),
        DenseElementsAttr::get(type, splat.getSplatValue<Attribute>()));
    rewriter.replaceOp(op, regs);
    return success();
  }
};

/// attn.online_attention_mma outside a pipelined loop: lowerStep.
struct OnlineAttentionMmaLowering : OpConversionPattern<OnlineAttentionMmaOp> {
  OnlineAttentionMmaLowering(TypeConverter &converter, MLIRContext *ctx,
                             const WGMMAOptions &options)
      : OpConversionPattern(converter, ctx), options(options) {}
  LogicalResult
  matchAndRewrite(OnlineAttentionMmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Turns turns{0};
    Schedule sched = scheduleOf(op, options, turns, /*pipelined=*/false);
    LLVM_DEBUG(llvm::dbgs() << "step at " << op.getLoc() << ": serial\n");
    ImplicitLocOpBuilder b = builderAt(rewriter, op);
    rewriter.replaceOp(
        op, lowerStep(b, op,
                      ValueRange{adaptor.getM(), adaptor.getL(),
                                 adaptor.getAcc()},
                      sched));
    return success();
  }
  WGMMAOptions options;
};

/// A K/V loop the pass marked attn.pipelined: pipelineLoop. Rooted on the
/// loop, which it replaces; it goes before scf's structural conversion.
struct PipelinedLoopLowering : OpConversionPattern<scf::ForOp> {
  PipelinedLoopLowering(TypeConverter &converter, MLIRContext *ctx,
                        const WGMMAOptions &options)
      : OpConversionPattern(converter, ctx, /*benefit=*/2), options(options) {}
  LogicalResult
  matchAndRewrite(scf::ForOp loop, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!loop->hasAttr(kPipelinedLoopAttr))
      return failure();
    auto steps = loop.getBody()->getOps<OnlineAttentionMmaOp>();
    std::optional<KVLoop> kv =
        steps.empty() ? std::nullopt : matchKVLoop(*steps.begin());
    if (!kv)
      return rewriter.notifyMatchFailure(loop, "not a K/V loop");
    Turns turns{0};
    Schedule sched = scheduleOf(kv->step, options, turns, /*pipelined=*/true);
    LLVM_DEBUG(llvm::dbgs() << "step at " << kv->step.getLoc()
                            << ": K/V loop pipelined"
                            << (sched.fp8LazyMax ? ", lazy max" : "") << "\n");
    pipelineLoop(rewriter, *kv, adaptor.getInitArgs(), sched);
    return success();
  }
  WGMMAOptions options;
};

/// attn.epilogue of warpgroup fragments: lowerEpilogue.
struct EpilogueLowering : OpConversionPattern<EpilogueOp> {
  EpilogueLowering(TypeConverter &converter, MLIRContext *ctx,
                   const WGMMAOptions &options)
      : OpConversionPattern(converter, ctx), options(options) {}
  LogicalResult
  matchAndRewrite(EpilogueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b = builderAt(rewriter, op);
    lowerEpilogue(b, op,
                  ValueRange{adaptor.getM(), adaptor.getL(), adaptor.getAcc()},
                  static_cast<double>(options.fp8PScaleLog2));
    rewriter.eraseOp(op);
    return success();
  }
  WGMMAOptions options;
};

/// attn.warp_specialize: lowerWarpSpecialize; with ping-pong the last
/// consumer warpgroup hands the first turn to warpgroup 0 (Turns::start).
struct WarpSpecializeLowering : OpConversionPattern<WarpSpecializeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WarpSpecializeOp ws, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Turns turns{static_cast<int64_t>(ws.getConsumerWarpgroups())};
    LLVM_DEBUG(llvm::dbgs() << "warp_specialize at " << ws.getLoc() << "\n");
    if (!ws.getPingPong()) {
      lowerWarpSpecialize(rewriter, ws);
      return success();
    }
    lowerWarpSpecialize(rewriter, ws,
                        [&](ImplicitLocOpBuilder &b) { turns.start(b); });
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnToWGMMAPatterns(RewritePatternSet &patterns,
                                             TypeConverter &converter,
                                             const WGMMAOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ToWgFragmentLowering, WarpSpecializeLowering>(converter, ctx);
  patterns.add<OnlineAttentionMmaLowering, PipelinedLoopLowering,
               EpilogueLowering>(converter, ctx, options);
  scf::populateSCFStructuralTypeConversions(converter, patterns);
}

void mlir::attn::configureAttnToWGMMA(TypeConverter &converter,
                                      ConversionTarget &target) {
  addFragmentConversion(converter);
  // What the patterns create is legal (they create no op of this list).
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addIllegalOp<ToWgFragmentOp, OnlineAttentionMmaOp, GradDKDVMmaOp,
                      WarpSpecializeOp>();
  // The FMA path's epilogue and tile stores (vectors) are not this pass's.
  target.addDynamicallyLegalOp<EpilogueOp, StoreTileOp>(
      [&converter](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionTarget(converter, target);
}

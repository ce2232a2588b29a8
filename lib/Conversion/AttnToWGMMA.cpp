//===- AttnToWGMMA.cpp - Hopper tile ops -> warpgroup MMA (sm_90a) --------===//
//
// Lowers what attn-async-pipeline produced inside each CTA:
//  * the consumer's online-softmax state, warpgroup fragments
//    (!attn.wg_fragment<BLOCK_M x f32> m, l and <BLOCK_M x D x f32> acc,
//    typed by attn-tma-ring), becomes each consumer thread's part of the
//    wgmma accumulator layout (m, l: vector<2>, acc: vector<D / 2>) by a
//    type conversion, carried through scf by its structural patterns;
//  * attn.online_attention_mma becomes S = Q K^T (wgmma, both operands in
//    shared memory), the exp2-domain softmax on the S registers and
//    O += P V (wgmma with P as the register A operand, via inline PTX:
//    MLIR 22 has no op for it);
//  * attn.epilogue normalizes O and stores it through shared memory with
//    16-byte coalesced stores; LSE from the quad leaders;
//  * attn.warp_specialize becomes a branch on the warpgroup with setmaxnreg;
//  * the backward's consumer (attn-grad-async-pipeline): its dK/dV
//    accumulators (!attn.wg_fragment<BLOCK_N x D x f32>) convert as acc
//    does, attn.grad_dkdv_mma and the dK/dV attn.store_tile are lowered by
//    GradToWGMMA.cpp.
//
// The pass checks each consumer and decides once what holds for all its
// steps (tree reductions, ping-pong turns, which K/V loops are pipelined,
// where the backward waits for its last dQ reductions), as attributes on
// the ops (attn/Conversion/AttnToWGMMA.h); one conversion pattern per op
// then lowers them (AttnToWGMMAPatterns.cpp, GradToWGMMA.cpp) in one
// applyPartialConversion.
//
// The accumulator layout and the building blocks are in WarpgroupMMA.h; the
// bf16/f16 A operand of the next wgmma has the accumulator's pattern, so P
// goes from S's registers to A's with no data movement. FP8 (e4m3, k32;
// FlashAttention-3 section 3.3) takes four consecutive k positions per A
// register: P is quantized in registers and packed in the accumulator's
// key order, which attn-async-pipeline has given V^T's keys too (packP8);
// V is V^T in shared memory (K-major), the descales scale the exp2
// argument and O, and P carries a 2^s factor (fp8-p-scale-log2) so that
// small probabilities survive e4m3. One in fp8-poly-exp2 exponentials can
// be a polynomial on the FMA pipe (FlashAttention-4's exp2 emulation;
// polyExp2; off by default). Unmasked K/V loops take FP8's row max lazily
// (fp8-lazy-max; lazySoftmax), two blocks per iteration
// (unrolledSteadyBlocks).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "attn/Conversion/AttnToWGMMA.h"

#include "OnlineAttentionWGMMA.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-lower-to-wgmma"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOWGMMA
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using namespace mlir::attn::wgmma;

struct AttnLowerToWGMMAPass
    : StrictOptions<attn::impl::AttnLowerToWGMMABase<AttnLowerToWGMMAPass>> {
  using StrictOptions::StrictOptions;

  /// The nest attn-async-pipeline builds: warp_specialize in a CTA loop,
  /// steps and epilogues in its consumer region. Anything else would be
  /// left behind or lowered without its warpgroups.
  static LogicalResult checkNesting(Operation *root) {
    WalkResult res = root->walk([](Operation *op) {
      if (auto ws = dyn_cast<WarpSpecializeOp>(op)) {
        if (!ws->getParentOfType<scf::ForallOp>())
          return WalkResult(emitError(
              ws.getLoc(), "attn-lower-to-wgmma needs the warp-specialized "
                           "CTA inside the CTA loop (scf.forall) that "
                           "attn-async-pipeline builds"));
        return WalkResult::advance();
      }
      if (isa<GradDKDVMmaOp>(op))
        return checkGradNesting(op);
      if (!isa<OnlineAttentionMmaOp, EpilogueOp>(op))
        return WalkResult::advance();
      auto ws = op->getParentOfType<WarpSpecializeOp>();
      if (isa<EpilogueOp>(op) && !ws)
        return WalkResult::advance(); // the FMA path's epilogue
      if (!ws || !ws.getConsumer().isAncestor(op->getParentRegion()))
        return WalkResult(
            emitError(op->getLoc(),
                      "attn-lower-to-wgmma needs the tile steps and "
                      "epilogues in the consumer region of an "
                      "attn.warp_specialize (built by attn-async-pipeline)"));
      return WalkResult::advance();
    });
    return failure(res.wasInterrupted());
  }

  /// A backward step outside a consumer region would be left unlowered.
  static WalkResult checkGradNesting(Operation *op) {
    auto ws = op->getParentOfType<WarpSpecializeOp>();
    if (ws && ws.getConsumer().isAncestor(op->getParentRegion()))
      return WalkResult::advance();
    return WalkResult(emitError(
        op->getLoc(), "attn-lower-to-wgmma needs attn.grad_dkdv_mma in the "
                      "consumer region of an attn.warp_specialize (built by "
                      "attn-grad-async-pipeline)"));
  }

  /// The fragments of a consumer's `state` start from splat constants
  /// (attn.to_wg_fragment's lowering takes no other source).
  static LogicalResult checkSplats(Region &consumer, StringRef state) {
    WalkResult splats = consumer.walk([&](ToWgFragmentOp op) {
      SplatElementsAttr splat;
      if (matchPattern(op.getSource(), m_Constant(&splat)))
        return WalkResult::advance();
      return WalkResult(emitError(op.getLoc(), "attn-lower-to-wgmma: the ")
                        << state << " must start from splat constants");
    });
    return failure(splats.wasInterrupted());
  }

  /// Whether the state of `op` (a step or an epilogue) is warpgroup
  /// fragments, as attn-tma-ring types it.
  static LogicalResult checkFragments(Operation *op, Value m) {
    if (isa<WgFragmentType>(m.getType()))
      return success();
    return emitError(op->getLoc(),
                     "attn-lower-to-wgmma: the online-softmax state must be "
                     "warpgroup fragments (!attn.wg_fragment, as "
                     "attn-tma-ring types it), but got ")
           << m.getType();
  }

  /// Checks the forward consumer of `ws` and leaves the decisions made
  /// over all its steps on them (AttnToWGMMA.h): tree reductions, ping-pong
  /// turns, which K/V loops are software-pipelined.
  static LogicalResult decide(WarpSpecializeOp ws) {
    Region &consumer = ws.getConsumer();
    SmallVector<OnlineAttentionMmaOp> steps;
    SmallVector<EpilogueOp> epilogues;
    consumer.walk([&](OnlineAttentionMmaOp op) { steps.push_back(op); });
    consumer.walk([&](EpilogueOp op) { epilogues.push_back(op); });
    if (epilogues.size() != 1)
      return emitError(ws.getLoc(),
                       "attn-lower-to-wgmma: expected one attn.epilogue "
                       "in the consumer region");
    EpilogueOp epi = epilogues.front();
    if (failed(checkFragments(epi, epi.getM())))
      return failure();
    for (OnlineAttentionMmaOp op : steps)
      if (failed(checkFragments(op, op.getM())))
        return failure();
    int64_t blockM = cast<WgFragmentType>(epi.getAcc().getType()).getShape()[0];
    int64_t groups = ws.getConsumerWarpgroups();
    if (blockM != kWarpgroupRows * groups)
      return emitError(ws.getLoc(), "attn-lower-to-wgmma: BLOCK_M (")
             << blockM << ") must be 64 rows per consumer warpgroup";
    if (failed(checkSplats(consumer, "online-softmax state")) ||
        failed(checkEpilogue(epi)))
      return failure();
    bool trees = groups <= 2 && llvm::all_of(steps, [](OnlineAttentionMmaOp op) {
                   return !op.isFP8() && op.getHeadDim() > 64;
                 });
    Builder b(ws.getContext());
    for (OnlineAttentionMmaOp op : steps) {
      if (trees)
        op->setAttr(kTreeReductionsAttr, b.getUnitAttr());
      if (ws.getPingPong())
        op->setAttr(kPingPongTurnsAttr, b.getI64IntegerAttr(groups));
      if (std::optional<KVLoop> kv =
              ws.getOverlap() ? matchKVLoop(op) : std::nullopt)
        kv->loop->setAttr(kPipelinedLoopAttr, b.getUnitAttr());
    }
    LLVM_DEBUG(llvm::dbgs() << "warp_specialize at " << ws.getLoc() << ": "
                            << groups << " consumer warpgroup(s), "
                            << steps.size() << " step(s)"
                            << (ws.getPingPong() ? ", ping-pong" : "")
                            << (ws.getOverlap() ? ", overlap" : "")
                            << (trees ? ", tree reductions" : "") << "\n");
    return success();
  }

  /// Whether `ws`'s consumer region runs the backward (attn.grad_dkdv_mma).
  static bool isGradConsumer(WarpSpecializeOp ws) {
    return ws.getConsumer()
        .walk([](GradDKDVMmaOp) { return WalkResult::interrupt(); })
        .wasInterrupted();
  }

  /// Checks the backward consumer of `ws` (64 keys per consumer warpgroup,
  /// dK and dV starting from splat constants) and marks its first dK/dV
  /// store to wait for the last bulk reductions of dQ: they read the
  /// CTA's shared memory, which must outlive them.
  static LogicalResult decideGrad(WarpSpecializeOp ws) {
    Region &consumer = ws.getConsumer();
    int64_t blockN = 0;
    consumer.walk([&](GradDKDVMmaOp op) { blockN = op.getBlockN(); });
    int64_t groups = ws.getConsumerWarpgroups();
    if (blockN != kWarpgroupRows * groups)
      return emitError(ws.getLoc(),
                       "attn-lower-to-wgmma: the backward needs 64 keys "
                       "per consumer warpgroup, but BLOCK_N is ")
             << blockN;
    if (failed(checkSplats(consumer, "dK/dV accumulators")))
      return failure();
    consumer.walk([](StoreTileOp op) {
      if (!isa<WgFragmentType>(op.getValue().getType()))
        return WalkResult::advance();
      op->setAttr(kWaitDQReductionsAttr, UnitAttr::get(op.getContext()));
      return WalkResult::interrupt();
    });
    LLVM_DEBUG(llvm::dbgs() << "warp_specialize at " << ws.getLoc()
                            << ": backward, BLOCK_N " << blockN << "\n");
    return success();
  }

  /// Whether option `name` lies in [lo, hi] (hi: none, no upper bound);
  /// else an error naming the range and `why`.
  static LogicalResult checkRange(MLIRContext *ctx, StringRef name,
                                  int64_t value, int64_t lo,
                                  std::optional<int64_t> hi, StringRef why) {
    if (value >= lo && (!hi || value <= *hi))
      return success();
    InFlightDiagnostic diag =
        emitError(UnknownLoc::get(ctx), "attn-lower-to-wgmma: ")
        << name << " must be ";
    if (hi)
      diag << "in [" << lo << ", " << *hi << "]";
    else
      diag << ">= " << lo;
    return diag << " (" << why << "), but got " << value;
  }

  /// Options are checked once, before any function (no location: they
  /// are not in the input).
  LogicalResult initialize(MLIRContext *ctx) override {
    if (maxMmaN < 64 || maxMmaN > 256 || maxMmaN % 64 != 0)
      return emitError(UnknownLoc::get(ctx),
                       "attn-lower-to-wgmma: max-mma-n must be 64, 128, 192 "
                       "or 256, but got ")
             << static_cast<int64_t>(maxMmaN);
    if (failed(checkRange(ctx, "fp8-p-scale-log2", fp8PScaleLog2, 0,
                          kMaxFP8PScaleLog2,
                          "P * 2^8 <= 256 stays below e4m3's 448")) ||
        failed(checkRange(ctx, "fp8-poly-exp2", fp8PolyExp2, 0, std::nullopt,
                          "0: every exponential on MUFU")))
      return failure();
    return checkRange(ctx, "fp8-lazy-headroom", fp8LazyHeadroom, 0,
                      kMaxFP8PScaleLog2, "log2 units, at most P's scale");
  }

  /// Per-channel V descales lower to the host only (as HostOnly.h's).
  static LogicalResult checkChannelDescales(Operation *root) {
    WalkResult res = root->walk([](EpilogueOp op) {
      if (!op.getChannelDescale())
        return WalkResult::advance();
      return WalkResult(emitError(
          op.getLoc(), "attn-lower-to-wgmma: per-channel V descales "
                       "(channel_descale) have no GPU lowering (the "
                       "tensor-core path takes fp32 [B, Hkv] descales); they "
                       "lower to the host only: --attn-to-cpu"));
    });
    return failure(res.wasInterrupted());
  }

  /// Checks and decides for each consumer, forward or backward.
  static LogicalResult decideAll(Operation *root) {
    WalkResult res = root->walk([](WarpSpecializeOp ws) {
      return WalkResult(isGradConsumer(ws) ? decideGrad(ws) : decide(ws));
    });
    return failure(res.wasInterrupted());
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkNesting(root)) || failed(checkChannelDescales(root)) ||
        failed(decideAll(root)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    ConversionTarget target(*ctx);
    configureAttnToWGMMA(converter, target);
    RewritePatternSet patterns(ctx);
    populateAttnToWGMMAPatterns(
        patterns, converter,
        WGMMAOptions{maxMmaN, fp8PScaleLog2, fp8PolyExp2, fp8LazyMax,
                     fp8LazyHeadroom});
    populateGradToWGMMAPatterns(patterns, converter);
    ConversionConfig config;
    config.allowPatternRollback = false; // lowerings that rewrite in place
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(applyPartialConversion(root, target, std::move(patterns),
                                      config)))
      signalPassFailure();
  }
};

} // namespace

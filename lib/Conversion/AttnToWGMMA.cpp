//===- AttnToWGMMA.cpp - Hopper tile ops -> warpgroup MMA (sm_90a) --------===//
//
// Lowers what attn-async-pipeline produced inside each CTA:
//  * the CTA-level online-softmax state (m, l: vector<BLOCK_M>, acc:
//    vector<BLOCK_M x D>) becomes each consumer thread's part of the wgmma
//    accumulator layout (m, l: vector<2>, acc: vector<D / 2>);
//  * attn.online_attention_mma becomes S = Q K^T (wgmma, both operands in
//    shared memory), the exp2-domain softmax on the S registers and
//    O += P V (wgmma with P as the register A operand, via inline PTX:
//    MLIR 22 has no op for it);
//  * attn.epilogue normalizes O and stores it through shared memory with
//    16-byte coalesced stores; LSE from the quad leaders;
//  * attn.warp_specialize becomes a branch on the warpgroup with setmaxnreg.
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

#include "GradToWGMMA.h"
#include "OnlineAttentionWGMMA.h"
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

  LogicalResult lower(WarpSpecializeOp ws) {
    LLVM_DEBUG(llvm::dbgs() << "warp_specialize at " << ws.getLoc() << ": "
                            << ws.getConsumerWarpgroups()
                            << " consumer warpgroup(s)"
                            << (ws.getPingPong() ? ", ping-pong" : "")
                            << (ws.getOverlap() ? ", overlap" : "") << "\n");
    if (isGradConsumer(ws))
      return lowerGradConsumer(ws);
    Region &consumer = ws.getConsumer();
    SmallVector<OnlineAttentionMmaOp> steps;
    SmallVector<EpilogueOp> epilogues;
    consumer.walk([&](OnlineAttentionMmaOp op) { steps.push_back(op); });
    consumer.walk([&](EpilogueOp op) { epilogues.push_back(op); });
    if (epilogues.size() != 1)
      return emitError(ws.getLoc(),
                       "attn-lower-to-wgmma: expected one attn.epilogue "
                       "in the consumer region");
    int64_t blockM =
        cast<VectorType>(epilogues.front().getAcc().getType()).getDimSize(0);
    if (blockM != 64 * static_cast<int64_t>(ws.getConsumerWarpgroups()))
      return emitError(ws.getLoc(), "attn-lower-to-wgmma: BLOCK_M (")
             << blockM << ") must be 64 rows per consumer warpgroup";
    if (failed(retypeState(consumer, blockM)))
      return failure();
    std::optional<Turns> turns;
    if (ws.getPingPong()) {
      turns.emplace(Turns{static_cast<int64_t>(ws.getConsumerWarpgroups())});
      ImplicitLocOpBuilder b = ImplicitLocOpBuilder::atBlockBegin(
          ws.getLoc(), &consumer.front());
      turns->start(b);
    }
    bool trees = llvm::all_of(steps, [](OnlineAttentionMmaOp op) {
      return !op.isFP8() && op.getHeadDim() > 64;
    });
    Schedule sched{maxMmaN, turns ? &*turns : nullptr,
                   static_cast<double>(fp8PScaleLog2),
                   /*treeReductions=*/trees && ws.getConsumerWarpgroups() <= 2,
                   fp8PolyExp2, fp8LazyMax,
                   static_cast<double>(fp8LazyHeadroom)};
    for (OnlineAttentionMmaOp op : steps) {
      std::optional<KVLoop> kv =
          ws.getOverlap() ? matchKVLoop(op) : std::nullopt;
      // The lazy max only in pipelined K/V loops without a mask: a masked
      // loop (the causal diagonal, the key-length tail) is a block or two.
      Schedule stepSched = sched;
      stepSched.fp8LazyMax &= kv && op.getMask() == MaskKind::none;
      LLVM_DEBUG(llvm::dbgs() << "  step at " << op.getLoc()
                              << (kv ? ": K/V loop pipelined" : ": serial")
                              << (stepSched.fp8LazyMax ? ", lazy max" : "")
                              << "\n");
      if (kv)
        pipelineLoop(*kv, stepSched);
      else
        lowerStep(op, stepSched);
    }
    if (failed(lowerEpilogue(epilogues.front(), fp8PScaleLog2)))
      return failure();
    lowerWarpSpecialize(ws);
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

  void runOnOperation() override {
    if (failed(checkNesting(getOperation())))
      return signalPassFailure();
    // Per-channel V descales lower to the host only (as HostOnly.h's).
    WalkResult fine = getOperation().walk([](EpilogueOp op) {
      if (!op.getChannelDescale())
        return WalkResult::advance();
      emitError(op.getLoc(),
                "attn-lower-to-wgmma: per-channel V descales "
                "(channel_descale) have no GPU lowering (the "
                "tensor-core path takes fp32 [B, Hkv] descales); they "
                "lower to the host only: --attn-to-cpu");
      return WalkResult::interrupt();
    });
    if (fine.wasInterrupted())
      return signalPassFailure();
    SmallVector<WarpSpecializeOp> ops;
    getOperation().walk([&](WarpSpecializeOp ws) { ops.push_back(ws); });
    for (WarpSpecializeOp ws : ops)
      if (failed(lower(ws)))
        return signalPassFailure();
  }
};

} // namespace

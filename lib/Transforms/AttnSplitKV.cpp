//===- AttnSplitKV.cpp - attn.attention -> split-KV partials + combine ----===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSPLITKV
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// splits=0: at least this many keys per split (a static Nk), at most
/// kMaxAutoSplits splits, and query rows per CTA counted as 64.
constexpr int64_t kMinKeysPerSplit = 256;
constexpr int64_t kMaxAutoSplits = 128;
constexpr int64_t kRowsPerCta = 64;

/// splits=0: enough splits for the (batch, head, Q block) CTAs to fill
/// `smCount` SMs, unless they fill 80% already (FlashAttention-2's idea,
/// with a simpler rule). Needs static B, Hq and Nq; 1 otherwise.
int64_t chooseSplits(AttentionOp op, int64_t smCount) {
  ArrayRef<int64_t> q = cast<MemRefType>(op.getQ().getType()).getShape();
  // Paged K/V: the sequences' lengths are values.
  int64_t nk = op.isPaged()
                   ? ShapedType::kDynamic
                   : cast<MemRefType>(op.getK().getType()).getDimSize(2);
  if (ShapedType::isDynamic(q[0]) || ShapedType::isDynamic(q[1]) ||
      ShapedType::isDynamic(q[2]))
    return 1;
  int64_t ctas = q[0] * q[1] * llvm::divideCeil(q[2], kRowsPerCta);
  if (ctas == 0 || ctas * 5 >= smCount * 4)
    return 1;
  int64_t splits =
      std::min<int64_t>(llvm::divideCeil(smCount, ctas), kMaxAutoSplits);
  if (!ShapedType::isDynamic(nk))
    splits = std::min(splits, std::max<int64_t>(nk / kMinKeysPerSplit, 1));
  return splits;
}

/// An fp32 buffer [S, dims of `like` in `order`], sized from `like` where
/// dynamic.
Value allocWorkspace(OpBuilder &b, Location loc, int64_t splits, Value like,
                     ArrayRef<int64_t> order) {
  ArrayRef<int64_t> likeShape = cast<MemRefType>(like.getType()).getShape();
  SmallVector<int64_t> shape = {splits};
  SmallVector<Value> dynamicSizes;
  for (int64_t i : order) {
    shape.push_back(likeShape[i]);
    if (ShapedType::isDynamic(likeShape[i]))
      dynamicSizes.push_back(memref::DimOp::create(b, loc, like, i));
  }
  auto type = MemRefType::get(shape, b.getF32Type());
  return memref::AllocOp::create(b, loc, type, dynamicSizes);
}

void splitAttention(AttentionOp op, int64_t splits) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // [S, B, Hq, Nq, D] and [S, B, Hq, Nq].
  Value oPartial = allocWorkspace(b, loc, splits, op.getQ(), {0, 1, 2, 3});
  Value lsePartial = allocWorkspace(b, loc, splits, op.getQ(), {0, 1, 2});
  PartialAttentionOp::create(b, loc, op.getQ(), op.getK(), op.getV(), oPartial,
                             lsePartial, op.getBlockTable(),
                             op.getCacheSeqlens(), op.getAlibiSlopes(),
                             op.getScaleAttr(), op.getCausal(),
                             op.getKeyMaskAttr(), op.getSoftcapAttr());
  DecodeCombineOp::create(b, loc, oPartial, lsePartial, op.getO(), op.getLse(),
                          op.getSinks());
  memref::DeallocOp::create(b, loc, oPartial);
  memref::DeallocOp::create(b, loc, lsePartial);
  op.erase();
}

/// Varlen: the op keeps its form and computes through a workspace
/// ([S, total_q, Hq, D] and [S, Hq, total_q]); attn-tile builds the partial
/// and combine grids from it.
void splitVarlen(VarlenAttentionOp op, int64_t splits) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value oPartial = allocWorkspace(b, loc, splits, op.getQ(), {0, 1, 2});
  Value lsePartial = allocWorkspace(b, loc, splits, op.getQ(), {1, 0});
  op.getOPartialMutable().assign(oPartial);
  op.getLsePartialMutable().assign(lsePartial);
  b.setInsertionPointAfter(op);
  memref::DeallocOp::create(b, loc, oPartial);
  memref::DeallocOp::create(b, loc, lsePartial);
}

struct AttnSplitKVPass
    : StrictOptions<attn::impl::AttnSplitKVBase<AttnSplitKVPass>> {
  using StrictOptions::StrictOptions;
  /// Options are checked once, before any function (no location: they
  /// are not in the input).
  LogicalResult initialize(MLIRContext *ctx) override {
    if (splits >= 0 && splits <= kMaxSplits && smCount >= 1)
      return success();
    return emitError(UnknownLoc::get(ctx))
           << "attn-split-kv: splits must be in [0, " << kMaxSplits
           << "] (0: chosen per shape) and sm-count at least 1, but got "
              "splits="
           << static_cast<int64_t>(splits)
           << " sm-count=" << static_cast<int64_t>(smCount);
  }

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.isFP8())
        ops.push_back(op);
    });
    for (AttentionOp op : ops) {
      // An empty O (a static B, Hq or Nq of 0) has nothing to split.
      if (llvm::is_contained(
              cast<MemRefType>(op.getO().getType()).getShape(), 0))
        continue;
      int64_t s = splits ? int64_t(splits) : chooseSplits(op, smCount);
      if (s > 1)
        splitAttention(op, s);
    }
    // Varlen lengths are values: only an explicit split count applies.
    if (splits > 1)
      getOperation().walk([&](VarlenAttentionOp op) {
        if (!op.getOPartial())
          splitVarlen(op, splits);
      });
  }
};

} // namespace

//===- AttnSplitKV.cpp - attn.attention -> split-KV partials + combine ----===//

#include "attn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSPLITKV
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The option's range: FlashAttention-2 uses at most 128 splits; 256 leaves
/// room to test more splits than K/V blocks.
constexpr int64_t kMaxSplits = 256;
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

/// An fp32 buffer of `shape`, sized from `like`'s dimensions where dynamic.
Value allocWorkspace(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                     Value like) {
  SmallVector<Value> dynamicSizes;
  for (auto [i, d] : llvm::enumerate(shape.drop_front()))
    if (ShapedType::isDynamic(d))
      dynamicSizes.push_back(memref::DimOp::create(b, loc, like, i));
  auto type = MemRefType::get(shape, b.getF32Type());
  return memref::AllocOp::create(b, loc, type, dynamicSizes);
}

void splitAttention(AttentionOp op, int64_t splits) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> shape = {splits};
  llvm::append_range(shape, cast<MemRefType>(op.getQ().getType()).getShape());
  Value oPartial = allocWorkspace(b, loc, shape, op.getQ());
  Value lsePartial =
      allocWorkspace(b, loc, ArrayRef(shape).drop_back(), op.getQ());
  PartialAttentionOp::create(b, loc, op.getQ(), op.getK(), op.getV(), oPartial,
                             lsePartial, op.getBlockTable(),
                             op.getCacheSeqlens(), op.getScaleAttr(),
                             op.getCausal());
  DecodeCombineOp::create(b, loc, oPartial, lsePartial, op.getO(), op.getLse());
  memref::DeallocOp::create(b, loc, oPartial);
  memref::DeallocOp::create(b, loc, lsePartial);
  op.erase();
}

struct AttnSplitKVPass : attn::impl::AttnSplitKVBase<AttnSplitKVPass> {
  using AttnSplitKVBase::AttnSplitKVBase;
  void runOnOperation() override {
    if (splits < 0 || splits > kMaxSplits || smCount < 1) {
      getOperation().emitError()
          << "attn-split-kv: splits must be in [0, " << kMaxSplits
          << "] (0: chosen per shape) and sm-count at least 1, but got "
             "splits="
          << static_cast<int64_t>(splits)
          << " sm-count=" << static_cast<int64_t>(smCount);
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.isFP8())
        ops.push_back(op);
    });
    for (AttentionOp op : ops) {
      int64_t s = splits ? int64_t(splits) : chooseSplits(op, smCount);
      if (s > 1)
        splitAttention(op, s);
    }
  }
};

} // namespace

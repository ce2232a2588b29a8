//===- AttnPrintBlockMap.cpp - print the block classification -------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "CausalBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPRINTBLOCKMAP
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The mask attn-tile gives the op's steps: its key mask under `causal`,
/// or causal alone as the mask with right = 0; null if unmasked.
KeyMaskAttr maskOf(AttentionOp op) {
  KeyMaskAttr mask = op.getKeyMaskAttr();
  if (!op.getCausal())
    return mask;
  return mask ? mask.withCausal()
              : KeyMaskAttr::get(op.getContext(), /*left=*/-1, /*right=*/0,
                                 std::nullopt, std::nullopt);
}

struct AttnPrintBlockMapPass
    : StrictOptions<attn::impl::AttnPrintBlockMapBase<AttnPrintBlockMapPass>> {
  using StrictOptions::StrictOptions;

  void runOnOperation() override {
    if (!isValidBlockM(blockM) || !isValidBlockN(blockN)) {
      emitError(getOperation().getLoc())
          << "attn-print-block-map needs block-m in [1, " << kMaxBlockM
          << "] and block-n in [1, " << kMaxBlockN << "], but got "
          << static_cast<int64_t>(blockM) << " and "
          << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    WalkResult res = getOperation().walk([&](AttentionOp op) {
      KeyMaskAttr mask = maskOf(op);
      if (!mask)
        return WalkResult::advance();
      int64_t nq = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
      int64_t nk = cast<MemRefType>(op.getK().getType()).getDimSize(2);
      if (ShapedType::isDynamic(nq) || ShapedType::isDynamic(nk)) {
        op.emitError("attn-print-block-map needs static Nq and Nk");
        return WalkResult::interrupt();
      }
      return WalkResult(print(op, mask, nq, nk));
    });
    if (res.wasInterrupted())
      signalPassFailure();
  }

  /// One line per Q block, then the totals; the bounds fold in a scratch
  /// module that is dropped afterwards.
  LogicalResult print(AttentionOp op, KeyMaskAttr mask, int64_t nq,
                      int64_t nk) {
    llvm::raw_ostream &os = llvm::outs();
    os << "block map of " << op->getName() << " at " << op.getLoc() << ": Nq "
       << nq << ", Nk " << nk << ", BLOCK_M " << blockM << ", BLOCK_N "
       << blockN << ", " << mask << "\n";
    Location loc = op.getLoc();
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
    auto b = OpBuilder::atBlockBegin(scratch->getBody());
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t numKeyBlocks = (nk + blockN - 1) / blockN;
    int64_t visited = 0, masked = 0;
    for (int64_t qb = 0; qb * blockM < nq; ++qb) {
      KeyBlockRange r = keyBlockRange(
          b, loc, mask, index(nk), index(qb * blockM), index(nk - nq), index(0),
          index(numKeyBlocks), blockM, blockN);
      std::optional<int64_t> begin = getConstantIntValue(r.begin),
                             fullBegin = getConstantIntValue(r.fullBegin),
                             fullEnd = getConstantIntValue(r.fullEnd),
                             end = getConstantIntValue(r.end);
      if (!begin || !fullBegin || !fullEnd || !end)
        return op.emitError("attn-print-block-map: the block bounds did not "
                            "fold to constants");
      os << "q_block " << qb << ": visit [" << *begin << ", " << *end
         << ") full [" << *fullBegin << ", " << *fullEnd << ")\n";
      visited += *end - *begin;
      masked += (*end - *begin) - (*fullEnd - *fullBegin);
    }
    int64_t numQBlocks = (nq + blockM - 1) / blockM;
    os << "visited " << visited << " of " << numQBlocks * numKeyBlocks
       << " block pairs, " << masked << " masked\n";
    return success();
  }
};

} // namespace

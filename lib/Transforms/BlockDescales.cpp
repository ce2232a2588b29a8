//===- BlockDescales.cpp - per-block FP8 descales as scalars --------------===//

#include "BlockDescales.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The descale of the scale block holding row `rows.getRow()`: one scalar,
/// loaded where `rows` is (once: the causal split's loops share Q's).
Value loadBlockDescale(LoadRowsOp rows, DenseMap<Operation *, Value> &loaded) {
  Value &scalar = loaded[rows];
  if (scalar)
    return scalar;
  OpBuilder b(rows);
  Location loc = rows.getLoc();
  Value block = arith::ConstantIndexOp::create(b, loc, rows.getRowBlock());
  Value entry = arith::DivUIOp::create(b, loc, rows.getRow(), block);
  scalar = memref::LoadOp::create(
      b, loc, rows.getSource(),
      ValueRange{rows.getBatch(), rows.getHead(), entry});
  return scalar;
}

/// The per-block load of a step's row or key descales, checked to be one
/// scale block of `tile` rows (`option`: attn-quantize-fp8's block size).
FailureOr<LoadRowsOp> blockLoad(OnlineAttentionOp step, Value descales,
                                int64_t tile, StringRef option,
                                StringRef tileName, StringRef pass) {
  auto rows = descales.getDefiningOp<LoadRowsOp>();
  if (!rows)
    return emitError(step.getLoc()) << pass
                                    << ": per-block descales must come from "
                                       "attn.load_rows (attn-tile's form)";
  if (rows.getGqaPack() != 1)
    return emitError(step.getLoc())
           << pass
           << ": per-block Q descales with GQA packing have no tensor-core "
              "lowering (a packed tile's rows are "
           << rows.getGqaPack()
           << " query heads, each with its own descale); leave attn-tile's "
              "pack-gqa off";
  if (static_cast<int64_t>(rows.getRowBlock()) != tile)
    return emitError(step.getLoc())
           << pass << ": per-block FP8 descales on tensor cores need "
           << "attn-quantize-fp8's " << option << " equal to the tile's "
           << tileName << " (one descale per tile), but got " << option << "="
           << rows.getRowBlock() << " and " << tileName << "=" << tile;
  return rows;
}

LogicalResult scalarize(OnlineAttentionOp step, StringRef pass,
                        DenseMap<Operation *, Value> &loaded) {
  int64_t blockM = cast<VectorType>(step.getQ().getType()).getDimSize(0);
  int64_t blockN = static_cast<int64_t>(step.getBlockN());
  OpBuilder b(step);
  Value qk = step.getQkDescale();
  auto times = [&](Value x) {
    qk = qk ? arith::MulFOp::create(b, step.getLoc(), qk, x).getResult() : x;
  };
  if (Value rowDescale = step.getRowDescale()) {
    FailureOr<LoadRowsOp> rows =
        blockLoad(step, rowDescale, blockM, "block-m", "BLOCK_M", pass);
    if (failed(rows))
      return failure();
    times(loadBlockDescale(*rows, loaded));
  }
  if (Value keyDescale = step.getKeyDescale()) {
    FailureOr<LoadRowsOp> keys =
        blockLoad(step, keyDescale, blockN, "block-n", "BLOCK_N", pass);
    if (failed(keys))
      return failure();
    times(loadBlockDescale(*keys, loaded));
  }
  step.getQkDescaleMutable().assign(qk);
  step.getRowDescaleMutable().clear();
  step.getKeyDescaleMutable().clear();
  return success();
}

} // namespace

LogicalResult attn::scalarizeBlockDescales(Operation *root, StringRef pass) {
  SmallVector<OnlineAttentionOp> steps;
  root->walk([&](OnlineAttentionOp step) {
    if (step.getRowDescale() || step.getKeyDescale())
      steps.push_back(step);
  });
  DenseMap<Operation *, Value> loaded;
  for (OnlineAttentionOp step : steps)
    if (failed(scalarize(step, pass, loaded)))
      return failure();
  // The per-row loads are left without users.
  for (auto [rows, scalar] : loaded)
    if (rows->use_empty())
      rows->erase();
  return success();
}

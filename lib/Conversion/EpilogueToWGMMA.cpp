//===- EpilogueToWGMMA.cpp - attn.epilogue from wgmma fragments -------------===//
//
// O = acc / l from the accumulator fragments, staged in shared memory and
// written with 16-byte stores or TMA; LSE from the quad leaders; split-KV's
// fp32 O straight from the registers.
//
//===----------------------------------------------------------------------===//

#include "OnlineAttentionWGMMA.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace mlir::attn::wgmma {

/// Where tile row `row` of an epilogue goes in O and LSE: query q_pos + row
/// of `head`, or with GQA packing (G > 1, rows packed query-major) query
/// (q_pos + row) / G of head `head` + (q_pos + row) % G.
struct RowTarget {
  Value head, query;
};

RowTarget rowTarget(ImplicitLocOpBuilder &b, EpilogueOp op, Value row) {
  Value packed = arith::AddIOp::create(b, op.getQPos(), row);
  int64_t g = op.getGqaPack();
  if (g == 1)
    return {op.getHead(), packed};
  return {arith::AddIOp::create(
              b, op.getHead(), arith::RemUIOp::create(b, packed, cIndex(b, g))),
          queryOf(b, packed, g)};
}

/// Element index, within a 64-column chunk row, of column `col` of tile row
/// `row` under the 128-byte swizzle: 16-byte unit u moves to u ^ (row % 8).
Value swizzled(ImplicitLocOpBuilder &b, Value col, Value rowMod8) {
  Value unit = arith::DivUIOp::create(b, col, cIndex(b, 8));
  Value within = arith::RemUIOp::create(b, col, cIndex(b, 8));
  Value moved = arith::XOrIOp::create(b, unit, rowMod8);
  return arith::AddIOp::create(b, arith::MulIOp::create(b, moved, cIndex(b, 8)),
                               within);
}

/// Writes the warpgroup's normalized O (element type) into its rows of the
/// staging tile, swizzled so the 8 rows of a quad group hit distinct banks.
void stageO(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
            ArrayRef<Value> o, Type elt) {
  Value staging = op.getStaging();
  for (int64_t j = 0; j < int64_t(o.size()); j += 2) {
    int64_t h = halfOf(j), col = colOf(j); // j even: the pair (j, j + 1)
    Value pair = vector::FromElementsOp::create(
        b, VectorType::get({2}, b.getF32Type()), ValueRange{o[j], o[j + 1]});
    Value narrow = arith::TruncFOp::create(b, VectorType::get({2}, elt), pair);
    Value c = arith::AddIOp::create(b, tl.twoQ, cIndex(b, col % 64));
    // rows 16 w + g + 8 h: row % 8 == g.
    Value at = swizzled(b, c, tl.g);
    vector::StoreOp::create(b, narrow, staging,
                            ValueRange{cIndex(b, col / 64), tl.row[h], at});
  }
}

/// Copies the warpgroup's 64 staged rows to O with 16-byte stores; rows at
/// or past Nq are not written.
void copyOut(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
             int64_t d, Type elt) {
  int64_t unitsPerRow = d / 8, units = kWarpgroupRows * unitsPerRow;
  Value numRows = memref::DimOp::create(b, op.getO(), 2);
  Value wgRow =
      arith::MulIOp::create(b, tl.warpgroup, cIndex(b, kWarpgroupRows));
  auto loop =
      scf::ForOp::create(b, cIndex(b, 0), cIndex(b, units), cIndex(b, 128));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value idx = arith::AddIOp::create(b, loop.getInductionVar(), tl.thread);
  Value row = arith::DivUIOp::create(b, idx, cIndex(b, unitsPerRow));
  Value unit = arith::RemUIOp::create(b, idx, cIndex(b, unitsPerRow));
  Value col = arith::MulIOp::create(b, unit, cIndex(b, 8));
  Value inChunk = arith::RemUIOp::create(b, col, cIndex(b, 64));
  Value tileRow = arith::AddIOp::create(b, wgRow, row);
  Value at = swizzled(b, inChunk, arith::RemUIOp::create(b, row, cIndex(b, 8)));
  Value chunk = arith::DivUIOp::create(b, col, cIndex(b, 64));
  // The last round may run past the warpgroup's units (64 D / 8 need not
  // be a multiple of 128) and past Nq.
  RowTarget to = rowTarget(b, op, tileRow);
  Value inside = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, idx,
                            cIndex(b, units)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query, numRows));
  auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value v =
      vector::LoadOp::create(b, VectorType::get({8}, elt), op.getStaging(),
                             ValueRange{chunk, tileRow, at});
  vector::StoreOp::create(b, v, op.getO(),
                          ValueRange{op.getBatch(), to.head, to.query, col});
}

/// Writes the warpgroup's 64 staged rows to O with one TMA store per
/// 64-column chunk (which clips rows past Nq and columns past D), issued by
/// its thread 0; with GQA packing (G > 1) each box is 64 / G queries of
/// the G heads from `head`, on O's [B, N, H, D] view. That thread then waits until TMA has read the staging
/// tile, which a persistent CTA's next Q overwrites; the global writes
/// complete in the background.
void storeOut(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              int64_t chunks) {
  Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tl.thread,
                                      cIndex(b, 0));
  auto ifOp = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value wgRow =
      arith::MulIOp::create(b, tl.warpgroup, cIndex(b, kWarpgroupRows));
  Value row = arith::AddIOp::create(b, op.getQPos(), wgRow);
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(kWarpgroupRows),
                                     b.getIndexAttr(64)};
  SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
  int64_t g = op.getGqaPack();
  SmallVector<ReassociationIndices> toBox = {{0, 1}, {2}, {3}};
  SmallVector<int64_t> boxShape = {1, 1, kWarpgroupRows, 64};
  SmallVector<Value> at = {Value(), row, op.getHead(), op.getBatch()};
  if (g > 1) {
    toBox = {{0}, {1, 2}, {3}};
    boxShape = {1, kWarpgroupRows / g, g, 64};
    at = {Value(), op.getHead(), queryOf(b, row, g), op.getBatch()};
  }
  for (int64_t c = 0; c < chunks; ++c) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(c), wgRow,
                                         b.getIndexAttr(0)};
    Value rows = memref::SubViewOp::create(b, op.getStaging(), offsets, sizes,
                                           ones);
    Value box = memref::ExpandShapeOp::create(b, boxShape, rows, toBox);
    at[0] = cIndex(b, c * 64);
    nvgpu::TmaAsyncStoreOp::create(b, box, op.getOMap(), at, Value());
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
  NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
}

/// Nq (dim 2 of `out`) for the fp32 epilogue's row guards, a run-time value
/// even where it is static: a static Nq <= 8 lets LLVM fold away every
/// thread's second row (g + 8) and merge the rest under one branch, and
/// ptxas 13.0 then serializes the kernel's wgmmas (C7511) and spills 96 B
/// (decode: Nq = 1 with split-KV). A run-time Nq assembles clean.
Value rowBound(ImplicitLocOpBuilder &b, Value out) {
  Value n = memref::DimOp::create(b, out, 2);
  return cast<MemRefType>(out.getType()).isDynamicDim(2) ? n : opaque(b, n);
}

/// Split-KV's fp32 O (a split of the workspace): each thread stores its
/// normalized accumulator pairs straight from the registers, two floats per
/// store, for rows below Nq and columns below D (no staging: fp32 rows are
/// twice as wide as the bf16 tile they would be staged in).
void storeF32(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              ArrayRef<Value> o, int64_t d) {
  Value numRows = rowBound(b, op.getO());
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t j = 0; j < int64_t(o.size()); j += 2) {
    int64_t h = halfOf(j), col = colOf(j); // j even: the pair (j, j + 1)
    if (col >= d)
      continue; // a group of padding columns past D
    Value c = arith::AddIOp::create(b, tl.twoQ, cIndex(b, col));
    RowTarget to = rowTarget(b, op, tl.row[h]);
    Value write =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query, numRows);
    if (col + 8 > d) // a partial group of 8 columns: this thread's pair?
      write = arith::AndIOp::create(
          b, write,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c,
                                cIndex(b, d)));
    auto ifOp = scf::IfOp::create(b, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value pair = vector::FromElementsOp::create(b, pairType,
                                                ValueRange{o[j], o[j + 1]});
    // 8-byte aligned: the workspace is, D and the column are even.
    vector::StoreOp::create(b, pair, op.getO(),
                            ValueRange{op.getBatch(), to.head, to.query, c},
                            /*nontemporal=*/false, llvm::MaybeAlign(8));
  }
}

/// LSE = (m + log2 l - pOffset) * ln 2 (-inf where l == 0), by the quad
/// leaders, for rows below `numRows`; pOffset is log2 of FP8's P scale (0
/// otherwise).
void storeLse(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              ArrayRef<Value> m, ArrayRef<Value> l, ArrayRef<Value> noKey,
              double pOffset, Value numRows) {
  for (int h = 0; h < 2; ++h) {
    Value log2Sum = arith::AddFOp::create(b, m[h], log2(b, l[h]));
    if (pOffset)
      log2Sum = arith::SubFOp::create(b, log2Sum, cF32(b, pOffset));
    Value lse = arith::MulFOp::create(b, log2Sum, cF32(b, M_LN2));
    lse = arith::SelectOp::create(b, noKey[h], cF32(b, -INFINITY), lse);
    RowTarget to = rowTarget(b, op, tl.row[h]);
    Value write = arith::AndIOp::create(
        b, tl.quadLeader,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query,
                              numRows));
    auto ifOp = scf::IfOp::create(b, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, lse, op.getLse(),
                            ValueRange{op.getBatch(), to.head, to.query});
  }
}

LogicalResult checkEpilogue(EpilogueOp op) {
  auto oType = cast<MemRefType>(op.getO().getType());
  if (!op.getStaging() && !oType.getElementType().isF32())
    return emitError(op.getLoc(),
                     "attn-lower-to-wgmma needs the staging tile that "
                     "attn-async-pipeline attaches");
  return success();
}

void lowerEpilogue(ImplicitLocOpBuilder &b, EpilogueOp op, ValueRange state,
                   double fp8PScaleLog2) {
  auto oType = cast<MemRefType>(op.getO().getType());
  ThreadLayout tl = threadLayout(b);
  SmallVector<Value> m = unpack(b, state[0]), l = unpack(b, state[1]);
  SmallVector<Value> inv(2), noKey(2);
  for (int h = 0; h < 2; ++h) {
    l[h] = quadReduce<arith::AddFOp>(b, l[h]);
    // A row that saw no key has l == 0 and acc == 0: O = 0.
    noKey[h] =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l[h], cF32(b, 0));
    inv[h] = arith::SelectOp::create(
        b, noKey[h], cF32(b, 0), arith::DivFOp::create(b, cF32(b, 1), l[h]));
  }
  if (Value descale = op.getVDescale()) // FP8: P V is linear in V
    for (Value &x : inv)
      x = arith::MulFOp::create(b, x, descale);
  SmallVector<Value> o = unpack(b, state[2]);
  for (auto [j, x] : llvm::enumerate(o))
    x = arith::MulFOp::create(b, x, inv[halfOf(j)]);
  Type elt = oType.getElementType();
  int64_t d = oType.getDimSize(3); // static: attn-tile requires it
  double pOffset = op.getVDescale() ? fp8PScaleLog2 : 0;
  if (elt.isF32()) {
    storeF32(b, op, tl, o, d);
    if (op.getLse())
      storeLse(b, op, tl, m, l, noKey, pOffset, rowBound(b, op.getLse()));
    return;
  }
  stageO(b, op, tl, o, elt); // includes the zero padding columns
  if (op.getOMap()) // the staged O is read by TMA (the async proxy)
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  // Warpgroup-local barrier.
  Value barrierId = arith::IndexCastOp::create(
      b, b.getI32Type(),
      arith::AddIOp::create(b, tl.warpgroup, cIndex(b, kEpilogueBarrier)));
  NVVM::BarrierOp::create(b, Type(), barrierId, cI32(b, 128),
                          NVVM::BarrierReductionAttr(), Value());
  if (op.getOMap())
    storeOut(b, op, tl, llvm::divideCeil(d, 64));
  else
    copyOut(b, op, tl, d, elt);
  if (op.getLse())
    storeLse(b, op, tl, m, l, noKey, pOffset,
             memref::DimOp::create(b, op.getLse(), 2));
}

} // namespace mlir::attn::wgmma

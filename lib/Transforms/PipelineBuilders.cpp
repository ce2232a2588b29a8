//===- PipelineBuilders.cpp - TMA, shared memory and mbarrier rings -------===//

#include "PipelineBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn::pipeline {

int64_t chunkCols(Type elt) {
  return chunkColsOfBits(elt.getIntOrFloatBitWidth());
}

SmallVector<int64_t> boxShape(Type elt, int64_t rows, int64_t pack) {
  if (pack > 1)
    return {1, rows / pack, pack, chunkCols(elt)};
  return {1, 1, rows, chunkCols(elt)};
}

nvgpu::TensorMapDescriptorType descriptorType(Type elt,
                                              ArrayRef<int64_t> boxDims) {
  MLIRContext *ctx = elt.getContext();
  auto box = MemRefType::get(
      boxDims, elt, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  return nvgpu::TensorMapDescriptorType::get(
      ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

Value permuted(OpBuilder &b, Location loc, Value t,
               ArrayRef<unsigned> perm) {
  return memref::TransposeOp::create(
      b, loc, t,
      AffineMapAttr::get(AffineMap::getPermutationMap(perm, b.getContext())));
}

Value createDescriptor(OpBuilder &b, Location loc, Value tensor, int64_t rows,
                       int64_t pack) {
  if (pack > 1)
    tensor = permuted(b, loc, tensor, {0, 2, 1, 3});
  Type elt = cast<MemRefType>(tensor.getType()).getElementType();
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(elt, 0), tensor);
  SmallVector<int64_t> boxDims = boxShape(elt, rows, pack);
  SmallVector<Value> box;
  for (int64_t extent : boxDims)
    box.push_back(arith::ConstantIndexOp::create(b, loc, extent));
  return nvgpu::TmaCreateDescriptorOp::create(
      b, loc, descriptorType(elt, boxDims), unranked, box);
}

MemRefType sharedType(ArrayRef<int64_t> shape, Type elt) {
  return MemRefType::get(shape, elt, MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(
                             elt.getContext(), gpu::AddressSpace::Workgroup));
}

std::pair<Value, Value> slotAndParity(OpBuilder &b, Location loc, Value kb,
                                      int64_t stages) {
  Value n = arith::ConstantIndexOp::create(b, loc, stages);
  Value slot = arith::RemUIOp::create(b, loc, kb, n);
  Value round = arith::DivUIOp::create(b, loc, kb, n);
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI1Type(),
      arith::RemUIOp::create(b, loc, round,
                             arith::ConstantIndexOp::create(b, loc, 2)));
  return {slot, parity};
}

Value boxView(OpBuilder &b, Location loc, Value buffer, Value slot,
              int64_t chunk) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets = {slot, b.getIndexAttr(chunk),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(2)),
                                     b.getIndexAttr(type.getDimSize(3))};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, ones);
}

Value packedBox(OpBuilder &b, Location loc, Value box, int64_t pack) {
  auto type = cast<MemRefType>(box.getType());
  int64_t rows = type.getDimSize(2), cols = type.getDimSize(3);
  Value flat = memref::CollapseShapeOp::create(
      b, loc, box, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  return memref::ExpandShapeOp::create(
      b, loc, ArrayRef<int64_t>{1, rows / pack, pack, cols}, flat,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
}

void copyTile(OpBuilder &b, Location loc, Value desc, Value buffer, Value slot,
              Value bars, Value barId, Value row, Value head, Value batch,
              int64_t chunks, int64_t pack) {
  int64_t cols = cast<MemRefType>(buffer.getType()).getDimSize(3);
  SmallVector<Value> at = {Value(), row, head, batch};
  if (pack > 1)
    at = {Value(), head,
          arith::DivUIOp::create(b, loc, row,
                                 arith::ConstantIndexOp::create(b, loc, pack)),
          batch};
  for (int64_t c = 0; c < chunks; ++c) {
    at[0] = arith::ConstantIndexOp::create(b, loc, c * cols);
    Value box = boxView(b, loc, buffer, slot, c);
    if (pack > 1)
      box = packedBox(b, loc, box, pack);
    nvgpu::TmaAsyncLoadOp::create(b, loc, box, bars, desc, at, barId, Value(),
                                  Value());
  }
}

Value stageTile(OpBuilder &b, Location loc, Value ring, Value slot) {
  auto type = cast<MemRefType>(ring.getType());
  SmallVector<OpFoldResult> offsets = {slot, b.getIndexAttr(0),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(1), b.getIndexAttr(type.getDimSize(1)),
      b.getIndexAttr(type.getDimSize(2)), b.getIndexAttr(type.getDimSize(3))};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  auto tileType = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().drop_front(), type, offsets, sizes, ones);
  return memref::SubViewOp::create(b, loc, tileType, ring, offsets, sizes,
                                   ones);
}

/// CTA `cta`'s position in round `round`: cta, or ctas - 1 - cta when the
/// round is odd.
static Value dealtPosition(OpBuilder &b, Location loc, Value round, Value cta,
                           Value ctas) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value odd = b.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ne,
      b.createOrFold<arith::AndIOp>(loc, round, c1), c0);
  Value mirrored = b.createOrFold<arith::SubIOp>(
      loc, b.createOrFold<arith::SubIOp>(loc, ctas, c1), cta);
  return b.createOrFold<arith::SelectOp>(loc, odd, mirrored, cta);
}

Value dealtRounds(OpBuilder &b, Location loc, Value numTiles, Value cta,
                  Value ctas) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value full = b.createOrFold<arith::DivUIOp>(loc, numTiles, ctas);
  Value rest = b.createOrFold<arith::RemUIOp>(loc, numTiles, ctas);
  Value inLast = b.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ult, dealtPosition(b, loc, full, cta, ctas),
      rest);
  return b.createOrFold<arith::AddIOp>(
      loc, full, b.createOrFold<arith::SelectOp>(loc, inLast, c1, c0));
}

Value dealtTile(OpBuilder &b, Location loc, Value round, Value cta,
                Value ctas) {
  return b.createOrFold<arith::AddIOp>(
      loc, b.createOrFold<arith::MulIOp>(loc, round, ctas),
      dealtPosition(b, loc, round, cta, ctas));
}

Value ringBlock(OpBuilder &b, Location loc, Value kb, Value first,
                Value blocksBefore) {
  if (!matchPattern(first, m_Zero()))
    kb = arith::SubIOp::create(b, loc, kb, first);
  if (!blocksBefore || matchPattern(blocksBefore, m_Zero()))
    return kb;
  return arith::AddIOp::create(b, loc, kb, blocksBefore);
}

Value phaseParity(OpBuilder &b, Location loc, Value ordinal) {
  if (!ordinal || matchPattern(ordinal, m_Zero()))
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  return arith::IndexCastOp::create(
      b, loc, b.getI1Type(),
      arith::RemUIOp::create(b, loc, ordinal,
                             arith::ConstantIndexOp::create(b, loc, 2)));
}

SmallVector<Value> decodeTile(OpBuilder &b, Location loc, Value t,
                              ArrayRef<Value> ub, bool heaviestFirst) {
  Value qBlock, rest;
  if (heaviestFirst) {
    Value pairs = arith::MulIOp::create(b, loc, ub[1], ub[2]);
    Value last = arith::SubIOp::create(
        b, loc, ub[0], arith::ConstantIndexOp::create(b, loc, 1));
    qBlock = arith::SubIOp::create(b, loc, last,
                                   arith::DivUIOp::create(b, loc, t, pairs));
    rest = arith::RemUIOp::create(b, loc, t, pairs);
  } else {
    qBlock = arith::RemUIOp::create(b, loc, t, ub[0]);
    rest = arith::DivUIOp::create(b, loc, t, ub[0]);
  }
  return {qBlock, arith::RemUIOp::create(b, loc, rest, ub[1]),
          arith::DivUIOp::create(b, loc, rest, ub[1])};
}

} // namespace mlir::attn::pipeline

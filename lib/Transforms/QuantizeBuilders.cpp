//===- QuantizeBuilders.cpp - FP8 scale groups and CTA helpers ------------===//
//
// QuantizeBuilders.h's definitions: the scale groups' boxes and descale
// entries, RowValue's loads and Hadamard rotation (signs from a fixed
// seed), and the CTA pieces that the quantize grids share.
//
//===----------------------------------------------------------------------===//

#include "QuantizeBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace mlir::attn::quantize {

/// Largest finite f8E4M3FN value: amax maps to it.
constexpr double kE4M3Max = 448.0;
/// Seed of the Hadamard rotation's random signs (fixed: the rotation must be
/// the same for Q and K, and reproducible).
constexpr unsigned kSignSeed = 0x5eed;

Value index(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value f32(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

Value RowValue::build(ImplicitLocOpBuilder &b, ValueRange bhn,
                      Value j) const {
  auto load = [&](Value col) -> Value {
    Value x = memref::LoadOp::create(
        b, src, ValueRange{bhn[0], bhn[1], bhn[2], col});
    return arith::ExtFOp::create(b, b.getF32Type(), x);
  };
  if (!rotate)
    return load(j);
  // y_j = sum_i x_i * s_i * (-1)^popcount(i & j) / sqrt(D)
  Value ji = arith::IndexCastOp::create(b, b.getI32Type(), j);
  auto loop = scf::ForOp::create(b, index(b, 0), index(b, d), index(b, 1),
                                 ValueRange{f32(b, 0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value ii = arith::IndexCastOp::create(b, b.getI32Type(), i);
    Value parity = arith::AndIOp::create(
        b, foldBits(b, arith::AndIOp::create(b, ii, ji)),
        arith::ConstantOp::create(b, b.getI32IntegerAttr(1)));
    Value odd = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne, parity,
        arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
    // s_i * (-1)^parity: -1 where exactly one of them is negative.
    Value h = arith::SelectOp::create(
        b, arith::XOrIOp::create(b, odd, negativeSign(b, ii)), f32(b, -1.0),
        f32(b, 1.0));
    Value term = arith::MulFOp::create(b, load(i), h);
    scf::YieldOp::create(
        b, ValueRange{arith::AddFOp::create(b, loop.getRegionIterArgs()[0],
                                            term)});
  }
  return arith::MulFOp::create(b, loop.getResult(0),
                               f32(b, 1.0 / std::sqrt(double(d))));
}

SmallVector<Value> RowValue::buildChunk(ImplicitLocOpBuilder &b,
                                        ValueRange bhn, Value j,
                                        int64_t w) const {
  return extendChunk(b, loadChunk(b, bhn, j, w));
}

SmallVector<Value> RowValue::loadChunk(ImplicitLocOpBuilder &b,
                                       ValueRange bhn, Value j,
                                       int64_t w) const {
  SmallVector<Value> out;
  if (rotate) {
    for (int64_t k = 0; k < w; ++k)
      out.push_back(build(
          b, bhn, k ? arith::AddIOp::create(b, j, index(b, k)) : j));
    return out;
  }
  Type elt = cast<MemRefType>(src.getType()).getElementType();
  out.push_back(vector::LoadOp::create(b, VectorType::get({w}, elt), src,
                                       ValueRange{bhn[0], bhn[1], bhn[2], j}));
  return out;
}

SmallVector<Value> RowValue::extendChunk(ImplicitLocOpBuilder &b,
                                         ValueRange loaded) const {
  if (rotate)
    return SmallVector<Value>(loaded);
  auto type = cast<VectorType>(loaded[0].getType());
  Value f = arith::ExtFOp::create(
      b, VectorType::get(type.getShape(), b.getF32Type()), loaded[0]);
  SmallVector<Value> out;
  for (int64_t k = 0; k < type.getNumElements(); ++k)
    out.push_back(vector::ExtractOp::create(b, f, k));
  return out;
}

Value RowValue::foldBits(ImplicitLocOpBuilder &b, Value x) const {
  unsigned bits = llvm::Log2_64(d);
  for (unsigned s = llvm::PowerOf2Ceil(bits) / 2; s >= 1; s /= 2)
    x = arith::XOrIOp::create(
        b, x,
        arith::ShRUIOp::create(
            b, x, arith::ConstantOp::create(b, b.getI32IntegerAttr(s))));
  return x;
}

Value RowValue::negativeSign(ImplicitLocOpBuilder &b, Value i) const {
  std::mt19937 rng(kSignSeed);
  SmallVector<uint64_t> words(llvm::divideCeil(d, 64), 0);
  for (int64_t k = 0; k < d; ++k)
    if (rng() & 1)
      words[k / 64] |= uint64_t(1) << (k % 64);
  auto i64 = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  };
  Value word = i64(words[0]);
  for (size_t k = 1; k < words.size(); ++k) {
    Value w = arith::ShRUIOp::create(
        b, i, arith::ConstantOp::create(b, b.getI32IntegerAttr(6)));
    word = arith::SelectOp::create(
        b,
        arith::CmpIOp::create(
            b, arith::CmpIPredicate::eq, w,
            arith::ConstantOp::create(b, b.getI32IntegerAttr(k))),
        i64(words[k]), word);
  }
  Value bit = arith::ExtUIOp::create(
      b, b.getI64Type(),
      arith::AndIOp::create(
          b, i, arith::ConstantOp::create(b, b.getI32IntegerAttr(63))));
  Value set =
      arith::AndIOp::create(b, arith::ShRUIOp::create(b, word, bit), i64(1));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, set, i64(0));
}

/// Descale entries that are their group's index.
static SmallVector<Value> same(ImplicitLocOpBuilder &, ValueRange idx) {
  return SmallVector<Value>(idx);
}

Groups perTensor(ArrayRef<int64_t> s, int64_t group) {
  SmallVector<int64_t> full(s);
  return {{1, 1},
          0,
          s[0] * s[1] * s[2] * s[3],
          [full](ImplicitLocOpBuilder &b, ValueRange) {
            Value c0 = index(b, 0);
            return Box{{c0, c0, c0, c0},
                       {index(b, full[0]), index(b, full[1]), index(b, full[2]),
                        index(b, full[3])}};
          },
          {s[0], s[1] / group},
          [](ImplicitLocOpBuilder &b, ValueRange) {
            return SmallVector<Value>(2, index(b, 0));
          },
          [group](ImplicitLocOpBuilder &b, ValueRange bhnj) {
            return SmallVector<Value>{
                bhnj[0], arith::DivUIOp::create(b, bhnj[1], index(b, group))};
          }};
}

Groups perHead(ArrayRef<int64_t> s, int64_t group) {
  Groups g = perTensor(s, group);
  SmallVector<int64_t> full(s);
  g.shape = g.descaleShape;
  g.elements = group * s[2] * s[3];
  g.box = [full, group](ImplicitLocOpBuilder &b, ValueRange idx) {
    Value c0 = index(b, 0), c1 = index(b, 1);
    Value h0 = arith::MulIOp::create(b, idx[1], index(b, group));
    return Box{{idx[0], h0, c0, c0},
               {arith::AddIOp::create(b, idx[0], c1),
                arith::AddIOp::create(b, h0, index(b, group)),
                index(b, full[2]), index(b, full[3])}};
  };
  g.group = same;
  return g;
}

Groups perBlock(ArrayRef<int64_t> s, int64_t block) {
  SmallVector<int64_t> full(s);
  SmallVector<int64_t> shape{
      s[0], s[1], static_cast<int64_t>(llvm::divideCeil(s[2], block))};
  return {shape,
          block,
          std::min(block, s[2]) * s[3],
          [full, block](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value c0 = index(b, 0), c1 = index(b, 1);
            auto [n0, n1] = blockRows(b, idx[2], block, full[2]);
            return Box{{idx[0], idx[1], n0, c0},
                       {arith::AddIOp::create(b, idx[0], c1),
                        arith::AddIOp::create(b, idx[1], c1), n1,
                        index(b, full[3])}};
          },
          shape,
          same,
          [block](ImplicitLocOpBuilder &b, ValueRange bhnj) {
            return SmallVector<Value>{
                bhnj[0], bhnj[1],
                arith::DivUIOp::create(b, bhnj[2], index(b, block))};
          }};
}

Groups perChannel(ArrayRef<int64_t> s) {
  SmallVector<int64_t> full(s);
  SmallVector<int64_t> shape{s[0], s[1], s[3]};
  return {shape,
          0,
          s[2],
          [full](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value c1 = index(b, 1);
            return Box{{idx[0], idx[1], index(b, 0), idx[2]},
                       {arith::AddIOp::create(b, idx[0], c1),
                        arith::AddIOp::create(b, idx[1], c1), index(b, full[2]),
                        arith::AddIOp::create(b, idx[2], c1)}};
          },
          shape,
          same,
          [](ImplicitLocOpBuilder &, ValueRange bhnj) {
            return SmallVector<Value>{bhnj[0], bhnj[1], bhnj[3]};
          },
          /*wholeRows=*/false};
}

void buildCtaGrid(ImplicitLocOpBuilder &b, ArrayRef<int64_t> blocks,
                  function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Attribute> mapping;
  for (size_t i = 0; i < blocks.size(); ++i)
    mapping.push_back(gpu::GPUBlockMappingAttr::get(
        ctx, blocks.size() <= 3
                 ? static_cast<gpu::MappingId>(i)
                 : static_cast<gpu::MappingId>(
                       static_cast<int64_t>(gpu::MappingId::LinearDim0) + i)));
  OpBuilder::InsertionGuard guard(b);
  auto grid = scf::ForallOp::create(b, getAsIndexOpFoldResult(ctx, blocks),
                                    ValueRange{}, b.getArrayAttr(mapping));
  b.setInsertionPointToStart(grid.getBody());
  body(b, grid.getInductionVars());
}

void buildThreadLoop(ImplicitLocOpBuilder &b, int64_t threads,
                     function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  auto loop = scf::ForallOp::create(
      b, getAsIndexOpFoldResult(ctx, {threads}), ValueRange{},
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVars()[0]);
}

Value workgroupBuffer(ImplicitLocOpBuilder &b, int64_t n) {
  return memref::AllocaOp::create(
      b, MemRefType::get({n}, b.getF32Type(), MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(
                             b.getContext(), gpu::AddressSpace::Workgroup)));
}

SmallVector<Value> delinearize(ImplicitLocOpBuilder &b, Value linear,
                               ArrayRef<int64_t> shape) {
  SmallVector<Value> idx;
  for (int64_t extent : shape) {
    idx.push_back(arith::RemUIOp::create(b, linear, index(b, extent)));
    linear = arith::DivUIOp::create(b, linear, index(b, extent));
  }
  return idx;
}

SmallVector<Value> boxElement(ImplicitLocOpBuilder &b, const Box &box,
                              Value e) {
  SmallVector<Value> at(4);
  for (int i = 3; i >= 0; --i) {
    Value extent = arith::SubIOp::create(b, box.hi[i], box.lo[i]);
    at[i] = arith::AddIOp::create(
        b, box.lo[i], i ? arith::RemUIOp::create(b, e, extent) : e);
    if (i)
      e = arith::DivUIOp::create(b, e, extent);
  }
  return at;
}

Value descaleOf(ImplicitLocOpBuilder &b, Value amax) {
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, amax, f32(b, 0.0));
  return arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, amax, f32(b, kE4M3Max)),
      f32(b, 1.0));
}

std::pair<Value, Value> blockRows(ImplicitLocOpBuilder &b, Value blk,
                                  int64_t block, int64_t n) {
  Value n0 = arith::MulIOp::create(b, blk, index(b, block));
  Value n1 = arith::MinUIOp::create(
      b, arith::AddIOp::create(b, n0, index(b, block)), index(b, n));
  return {n0, n1};
}

Value isZero(ImplicitLocOpBuilder &b, Value v) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, v, index(b, 0));
}

void storeIf(ImplicitLocOpBuilder &b, Value cond, Value value, Value memref,
             ValueRange at) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  memref::StoreOp::create(b, value, memref, at);
}

Value descaleOfGroup(ImplicitLocOpBuilder &b, Value partials,
                     ValueRange group, int64_t ctas) {
  auto loop = scf::ForOp::create(b, index(b, 0), index(b, ctas), index(b, 1),
                                 ValueRange{f32(b, 0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> at(group);
    at.push_back(loop.getInductionVar());
    scf::YieldOp::create(
        b, ValueRange{arith::MaximumFOp::create(
               b, loop.getRegionIterArgs()[0],
               memref::LoadOp::create(b, partials, at))});
  }
  return descaleOf(b, loop.getResult(0));
}

Value SharedDivisor::divide(ImplicitLocOpBuilder &b, Value x) const {
  if (!r)
    return arith::DivFOp::create(b, x, d);
  Value q = arith::MulFOp::create(b, x, r);
  Value residual = math::FmaOp::create(b, negD, q, x);
  Value corrected = math::FmaOp::create(b, residual, r, q);
  // x = -0 gives residual +0 and +0 here; x / d is -0.
  Value zero = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x,
                                     f32(b, 0.0));
  return arith::SelectOp::create(b, zero, x, corrected);
}

void withSharedDivisor(
    ImplicitLocOpBuilder &b, Value d,
    function_ref<void(ImplicitLocOpBuilder &, const SharedDivisor &)> body) {
  Value inRange = arith::AndIOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, d,
                               f32(b, 0x1p-88)),
      arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, d,
                            f32(b, 0x1p126)));
  auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body(b, SharedDivisor{arith::NegFOp::create(b, d),
                        arith::DivFOp::create(b, f32(b, 1.0), d), d});
  b.setInsertionPointToStart(ifOp.elseBlock());
  body(b, SharedDivisor{Value(), Value(), d});
}

void forEachChunk(ImplicitLocOpBuilder &b, Value t, Value n0, Value n1,
                  int64_t cols, int64_t w, ValueRange iterArgs, ChunkLoad load,
                  ChunkBody body, SmallVector<Value> *results,
                  std::optional<int64_t> wholeRows) {
  // Chunk c: row n0 + c / cols, columns from (c % cols) * w.
  auto at = [&](ImplicitLocOpBuilder &lb, Value c) -> std::pair<Value, Value> {
    return {arith::AddIOp::create(
                lb, n0, arith::DivUIOp::create(lb, c, index(lb, cols))),
            arith::MulIOp::create(
                lb, arith::RemUIOp::create(lb, c, index(lb, cols)),
                index(lb, w))};
  };
  auto chunk = [&](ImplicitLocOpBuilder &lb, Value c, ValueRange state) {
    auto [row, j] = at(lb, c);
    return body(lb, row, j, load(lb, row, j), state);
  };
  auto loop = [&](ImplicitLocOpBuilder &lb) -> SmallVector<Value> {
    Value chunks = arith::MulIOp::create(
        lb, arith::SubIOp::create(lb, n1, n0), index(lb, cols));
    auto forOp = scf::ForOp::create(lb, t, chunks, index(lb, kBlockThreads),
                                    iterArgs);
    OpBuilder::InsertionGuard guard(lb);
    if (iterArgs.empty()) // the builder's yield, replaced below
      forOp.getBody()->getTerminator()->erase();
    lb.setInsertionPointToStart(forOp.getBody());
    scf::YieldOp::create(lb, chunk(lb, forOp.getInductionVar(),
                                   forOp.getRegionIterArgs()));
    return SmallVector<Value>(forOp.getResults());
  };
  auto straightLine = [&](ImplicitLocOpBuilder &lb, int64_t trips) {
    SmallVector<std::pair<Value, Value>> where;
    SmallVector<SmallVector<Value>> loaded;
    for (int64_t i = 0; i < trips; ++i) {
      where.push_back(at(
          lb, i ? arith::AddIOp::create(lb, t, index(lb, i * kBlockThreads))
                : t));
      loaded.push_back(load(lb, where.back().first, where.back().second));
    }
    SmallVector<Value> state(iterArgs);
    for (int64_t i = 0; i < trips; ++i)
      state = body(lb, where[i].first, where[i].second, loaded[i], state);
    return state;
  };
  int64_t total = wholeRows ? *wholeRows * cols : 0;
  SmallVector<Value> out;
  if (!wholeRows || total % kBlockThreads != 0 ||
      total / kBlockThreads > kMaxUnrolledChunks) {
    out = loop(b);
  } else {
    Value whole = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, arith::SubIOp::create(b, n1, n0),
        index(b, *wholeRows));
    auto ifOp = scf::IfOp::create(b, ValueRange(iterArgs).getTypes(), whole,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    if (iterArgs.empty()) { // the builder's yields, replaced below
      ifOp.thenBlock()->getTerminator()->erase();
      ifOp.elseBlock()->getTerminator()->erase();
    }
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, straightLine(b, total / kBlockThreads));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loop(b));
    out = SmallVector<Value>(ifOp.getResults());
  }
  if (results)
    *results = out;
}

/// Inputs of one max in buildMaxTree: kBlockThreads = kTreeFanIn^2.
constexpr int64_t kTreeFanIn = 16;

void buildMaxTree(ImplicitLocOpBuilder &b, Value part) {
  static_assert(kTreeFanIn * kTreeFanIn == kBlockThreads);
  for (int64_t span = 1; span < kBlockThreads; span *= kTreeFanIn)
    buildThreadLoop(b, kBlockThreads / (span * kTreeFanIn),
                    [&](ImplicitLocOpBuilder &tb, Value t) {
                      Value base = arith::MulIOp::create(
                          tb, t, index(tb, span * kTreeFanIn));
                      Value m = memref::LoadOp::create(tb, part, base);
                      for (int64_t i = 1; i < kTreeFanIn; ++i)
                        m = arith::MaximumFOp::create(
                            tb, m,
                            memref::LoadOp::create(
                                tb, part,
                                ValueRange{arith::AddIOp::create(
                                    tb, base, index(tb, i * span))}));
                      memref::StoreOp::create(tb, m, part, base);
                    });
}

void forEachItem(ImplicitLocOpBuilder &b, Value t, int64_t total,
                 function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  auto loop =
      scf::ForOp::create(b, t, index(b, total), index(b, kBlockThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

} // namespace mlir::attn::quantize

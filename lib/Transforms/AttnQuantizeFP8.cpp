//===- AttnQuantizeFP8.cpp - bf16 attn.attention -> quantize + FP8 --------===//
//
// Rewrites a bf16 attn.attention into a quantize step (block/thread grids
// over the [B, H, N, D] buffers that lower as loops on the host and as
// kernels on the GPU) and the FP8 attn.attention with descales. Each
// scale group (per tensor, per (batch, KV head), per block of rows of one
// head, or per column of D of one KV head) is a box of the source: amax
// over the box, descale = amax / 448, x_fp8 = satfinite(x / descale). With
// `hadamard`, Q and K rows are first rotated along D by (1/sqrt(D)) H S:
// H the Sylvester-Hadamard matrix (H_ij = (-1)^popcount(i & j)), S a fixed
// random diagonal of signs; (Q R)(K R)^T = Q K^T since R R^T = I.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNQUANTIZEFP8
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Largest finite f8E4M3FN value: amax maps to it.
constexpr double kE4M3Max = 448.0;
/// Threads of a per-block quantize CTA, and the bf16 elements a thread
/// loads at once (16 bytes; D is a multiple of 8, the op verifier's rule).
constexpr int64_t kBlockThreads = 256;
constexpr int64_t kChunk = 8;
/// Seed of the Hadamard rotation's random signs (fixed: the rotation must be
/// the same for Q and K, and reproducible).
constexpr unsigned kSignSeed = 0x5eed;

/// One quantized operand: its FP8 copy and its descales.
struct Quantized {
  Value fp8, descale;
  Value storage; // the buffer under fp8 (fp8 itself or what it views)
};

Value index(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value f32(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

/// Builds element (b, h, n, j) of the rotated (or plain) row, in f32.
class RowValue {
public:
  RowValue(Value src, int64_t d, bool rotate) : src(src), d(d), rotate(rotate) {}

  int64_t rowLength() const { return d; }

  Value build(ImplicitLocOpBuilder &b, ValueRange bhn, Value j) const {
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

  /// Elements (b, h, n, j .. j + w - 1) in f32: one w-wide vector load
  /// when the row is not rotated (unit stride on D).
  SmallVector<Value> buildChunk(ImplicitLocOpBuilder &b, ValueRange bhn,
                                Value j, int64_t w) const {
    SmallVector<Value> out;
    if (rotate) {
      for (int64_t k = 0; k < w; ++k)
        out.push_back(build(
            b, bhn, k ? arith::AddIOp::create(b, j, index(b, k)) : j));
      return out;
    }
    Type elt = cast<MemRefType>(src.getType()).getElementType();
    Value x = vector::LoadOp::create(b, VectorType::get({w}, elt), src,
                                     ValueRange{bhn[0], bhn[1], bhn[2], j});
    Value f = arith::ExtFOp::create(
        b, VectorType::get({w}, b.getF32Type()), x);
    for (int64_t k = 0; k < w; ++k)
      out.push_back(vector::ExtractOp::create(b, f, k));
    return out;
  }

private:
  /// x ^= x >> s for s = .., 2, 1 over the log2(D) low bits of x: bit 0
  /// becomes their parity (math.ctpop has no NVVM lowering in the GPU
  /// pipeline; shifts and xors lower everywhere).
  Value foldBits(ImplicitLocOpBuilder &b, Value x) const {
    unsigned bits = llvm::Log2_64(d);
    for (unsigned s = llvm::PowerOf2Ceil(bits) / 2; s >= 1; s /= 2)
      x = arith::XOrIOp::create(
          b, x,
          arith::ShRUIOp::create(
              b, x, arith::ConstantOp::create(b, b.getI32IntegerAttr(s))));
    return x;
  }

  /// Whether s_i = -1: bit i % 64 of the i / 64-th 64-bit word of the
  /// signs (integer constants and selects: no vector constant indexed at
  /// run time, which a GPU thread would keep in local memory).
  Value negativeSign(ImplicitLocOpBuilder &b, Value i) const {
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

  Value src;
  int64_t d;
  bool rotate;
};

/// The box [lo, hi) of a [B, H, N, D] source that one scale covers.
struct Box {
  SmallVector<Value> lo, hi;
};

/// How an operand is cut into scale groups: the shape of the group grid,
/// the box of the source each group covers (at most `elements` elements),
/// the shape of the descale operand with the group of each of its entries,
/// and the descale entry of each source element (b, h, n, j).
struct Groups {
  SmallVector<int64_t> shape;
  /// Rows of a group that is one block of rows of one head (0: other
  /// groups), which one CTA quantizes alone.
  int64_t blockRows = 0;
  int64_t elements;
  std::function<Box(ImplicitLocOpBuilder &, ValueRange)> box;
  SmallVector<int64_t> descaleShape;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)> group;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)> entry;
  /// Whether a group's box spans whole rows (all of D), so one descale
  /// serves every column (not so per channel).
  bool wholeRows = true;
};

/// Descale entries that are their group's index.
SmallVector<Value> same(ImplicitLocOpBuilder &, ValueRange idx) {
  return SmallVector<Value>(idx);
}

/// Everything: one scale, repeated into the [B, H / group] operand.
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

/// [B, H / group]: the `group` heads that share a KV head, all rows.
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

/// [B, H, ceil(N / block)]: `block` rows of one head (the last block is
/// cut at N).
Groups perBlock(ArrayRef<int64_t> s, int64_t block) {
  SmallVector<int64_t> full(s);
  SmallVector<int64_t> shape{
      s[0], s[1], static_cast<int64_t>(llvm::divideCeil(s[2], block))};
  return {shape,
          block,
          std::min(block, s[2]) * s[3],
          [full, block](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value c0 = index(b, 0), c1 = index(b, 1);
            Value n0 = arith::MulIOp::create(b, idx[2], index(b, block));
            Value n1 = arith::MinUIOp::create(
                b, arith::AddIOp::create(b, n0, index(b, block)),
                index(b, full[2]));
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

/// [B, H, D]: one column of D of one head, all rows.
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

/// Threads of an amax CTA, and the elements each should at least get
/// before a group is cut across more CTAs (at most kMaxAmaxCtas).
constexpr int64_t kAmaxThreads = 256;
constexpr int64_t kAmaxPerThread = 64;
constexpr int64_t kMaxAmaxCtas = 128;

/// An scf.forall over `blocks` mapped to GPU blocks (x, y, z, or linear
/// ids past three dimensions), as attn-tile's CTA loops; `body` fills it
/// given the block indices.
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

/// An scf.forall over `threads` mapped to GPU threads x at `b`; `body`
/// fills it given the thread index. In a CTA several of them run one
/// after another (the GPU lowering puts a barrier between them).
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

/// A grid: `blocks` CTAs of one thread loop over `threads`, as attn-tile's
/// grids (the host runs both as loops; attn-lower-to-nvvm makes the pair a
/// kernel). `body` gets the block indices and the thread index.
void buildGrid(ImplicitLocOpBuilder &b, ArrayRef<int64_t> blocks,
               int64_t threads,
               function_ref<void(ImplicitLocOpBuilder &, ValueRange, Value)>
                   body) {
  buildCtaGrid(b, blocks, [&](ImplicitLocOpBuilder &cb, ValueRange idx) {
    buildThreadLoop(cb, threads, [&](ImplicitLocOpBuilder &tb, Value t) {
      body(tb, idx, t);
    });
  });
}

/// (b, h, n, j) of element `e` of `box` (row-major over its extents).
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

/// amax over each group into `amax` (f32 bits as i32: |x| >= 0 orders as
/// its bits, so an integer atomic max combines the threads' partial
/// maxima exactly, in any order). Each group is cut across `ctas` CTAs
/// whose threads stride over its elements, 16-byte chunks of kChunk
/// where the group spans whole rows.
void buildAmaxGrids(ImplicitLocOpBuilder &b, Value amax, const Groups &groups,
                    const RowValue &value) {
  buildGrid(b, groups.shape, 1,
            [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value) {
              memref::StoreOp::create(
                  ib, arith::ConstantOp::create(ib, ib.getI32IntegerAttr(0)),
                  amax, idx);
            });
  int64_t ctas = std::clamp<int64_t>(
      llvm::divideCeil(groups.elements, kAmaxThreads * kAmaxPerThread), 1,
      kMaxAmaxCtas);
  int64_t w = groups.wholeRows ? kChunk : 1;
  SmallVector<int64_t> blocks(groups.shape);
  blocks.push_back(ctas);
  buildGrid(b, blocks, kAmaxThreads,
            [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value t) {
              ValueRange group = idx.drop_back();
              Box box = groups.box(ib, group);
              if (w > 1) // whole rows: D / w chunks per row
                box.hi[3] = index(ib, value.rowLength() / w);
              Value size = index(ib, 1);
              for (int i = 0; i < 4; ++i)
                size = arith::MulIOp::create(
                    ib, size, arith::SubIOp::create(ib, box.hi[i], box.lo[i]));
              Value first = arith::AddIOp::create(
                  ib, arith::MulIOp::create(ib, idx.back(),
                                            index(ib, kAmaxThreads)),
                  t);
              auto loop = scf::ForOp::create(
                  ib, first, size, index(ib, ctas * kAmaxThreads),
                  ValueRange{f32(ib, 0.0)});
              {
                OpBuilder::InsertionGuard guard(ib);
                ib.setInsertionPointToStart(loop.getBody());
                SmallVector<Value> bhnj =
                    boxElement(ib, box, loop.getInductionVar());
                ValueRange bhn = ArrayRef(bhnj).take_front(3);
                SmallVector<Value> ys =
                    w > 1 ? value.buildChunk(
                                ib, bhn,
                                arith::MulIOp::create(ib, bhnj[3], index(ib, w)),
                                w)
                          : SmallVector<Value>{value.build(ib, bhn, bhnj[3])};
                Value m = loop.getRegionIterArgs()[0];
                for (Value y : ys)
                  m = arith::MaximumFOp::create(ib, m,
                                                math::AbsFOp::create(ib, y));
                scf::YieldOp::create(ib, ValueRange{m});
              }
              Value bits = arith::BitcastOp::create(ib, ib.getI32Type(),
                                                    loop.getResult(0));
              memref::AtomicRMWOp::create(ib, arith::AtomicRMWKind::maxs, bits,
                                          amax, group);
            });
}

/// descale = amax / 448 (1 for an all-zero group).
Value descaleOf(ImplicitLocOpBuilder &b, Value amax) {
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, amax, f32(b, 0.0));
  return arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, amax, f32(b, kE4M3Max)),
      f32(b, 1.0));
}

/// x / d, correctly rounded, for a divisor d shared by many x, at a
/// multiply and two fmas per x instead of a division: with r = RN(1 / d)
/// computed once, q = RN(x r) lies within an ulp of x / d, the residual
/// x - d q is exact as an fma, and RN(q + (x - d q) r) is the correctly
/// rounded x / d (Markstein's theorem; Muller et al., Handbook of
/// Floating-Point Arithmetic, 2nd ed., section 4.7). It holds for d and r
/// normal (withSharedDivisor checks it) and quotients that do not
/// underflow; the quantize step's are at most 448, and one below 2^-126
/// rounds to e4m3's zero of x's sign either way. Zeros keep their sign.
struct SharedDivisor {
  Value negD, r; // null: plain division by d
  Value d;

  Value divide(ImplicitLocOpBuilder &b, Value x) const {
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
};

/// Builds `body` twice under a branch on d (uniform across the threads
/// that share it): with SharedDivisor's division where d lies in
/// [2^-126, 2^126] (so r = 1 / d is normal too), with plain division
/// otherwise (a descale below 2^-126, inf or NaN: amax tiny or not finite).
void withSharedDivisor(
    ImplicitLocOpBuilder &b, Value d,
    function_ref<void(ImplicitLocOpBuilder &, const SharedDivisor &)> body) {
  Value inRange = arith::AndIOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, d,
                               f32(b, 0x1p-126)),
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

/// descale = amax / 448 (1 for an all-zero group), per descale entry.
void buildDescaleGrid(ImplicitLocOpBuilder &b, Value amax, Value descale,
                      const Groups &groups) {
  buildGrid(b, groups.descaleShape, 1,
            [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value) {
              Value bits =
                  memref::LoadOp::create(ib, amax, groups.group(ib, idx));
              Value x = arith::BitcastOp::create(ib, ib.getF32Type(), bits);
              memref::StoreOp::create(ib, descaleOf(ib, x), descale, idx);
            });
}

/// Rows of a row-major FP8 copy per quantize CTA.
constexpr int64_t kQuantizeRows = 16;

/// x_fp8[b, h, n, j] = truncf(x / descale) for a row-major copy, stored in
/// its memory order: CTAs of kQuantizeRows rows (b, h, n block), one thread
/// per column j looping over the rows, so consecutive threads write
/// consecutive bytes. (V^T: buildTransposedQuantizeGrid.)
void buildQuantizeGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                       const Groups &groups, const RowValue &value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  buildGrid(
      b,
      {shape[0], shape[1],
       static_cast<int64_t>(llvm::divideCeil(n, kQuantizeRows))},
      d, [&](ImplicitLocOpBuilder &ib, ValueRange bhc, Value t) {
        Value first = arith::MulIOp::create(ib, bhc[2], index(ib, kQuantizeRows));
        Value last = arith::MinUIOp::create(
            ib, arith::AddIOp::create(ib, first, index(ib, kQuantizeRows)),
            index(ib, n));
        scf::buildLoopNest(
            ib, ib.getLoc(), first, last, index(ib, 1),
            [&](OpBuilder &nb, Location loc, ValueRange iv) {
              ImplicitLocOpBuilder eb(loc, nb);
              SmallVector<Value> bhnj = {bhc[0], bhc[1], iv[0], t};
              Value y = value.build(eb, ValueRange{bhc[0], bhc[1], iv[0]}, t);
              Value scale =
                  memref::LoadOp::create(eb, descale, groups.entry(eb, bhnj));
              Value q = arith::TruncFOp::create(
                  eb, eb.getType<Float8E4M3FNType>(),
                  arith::DivFOp::create(eb, y, scale));
              memref::StoreOp::create(eb, q, fp8, bhnj);
            });
      });
}

/// Calls `body(row, j)` for chunks t, t + kBlockThreads, .. of the `w`-wide
/// column chunks of rows [n0, n1) (row-major: consecutive threads take
/// consecutive chunks of a row).
void forEachChunk(ImplicitLocOpBuilder &b, Value t, Value n0, Value n1,
                  int64_t cols, int64_t w, ValueRange iterArgs,
                  function_ref<SmallVector<Value>(ImplicitLocOpBuilder &,
                                                  Value, Value, ValueRange)>
                      body,
                  SmallVector<Value> *results = nullptr) {
  Value chunks = arith::MulIOp::create(
      b, arith::SubIOp::create(b, n1, n0), index(b, cols));
  auto loop = scf::ForOp::create(b, t, chunks, index(b, kBlockThreads),
                                 iterArgs);
  {
    OpBuilder::InsertionGuard guard(b);
    if (iterArgs.empty()) // the builder's yield, replaced below
      loop.getBody()->getTerminator()->erase();
    b.setInsertionPointToStart(loop.getBody());
    Value c = loop.getInductionVar();
    Value row = arith::AddIOp::create(
        b, n0, arith::DivUIOp::create(b, c, index(b, cols)));
    Value j = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, c, index(b, cols)), index(b, w));
    scf::YieldOp::create(b, body(b, row, j, loop.getRegionIterArgs()));
  }
  if (results)
    *results = SmallVector<Value>(loop.getResults());
}

/// Inputs of one max in buildMaxTree: kBlockThreads = kTreeFanIn^2.
constexpr int64_t kTreeFanIn = 16;

/// part[0] = max of part[0 .. kBlockThreads): part[16 t] = max of
/// part[16 t .. 16 t + 15] for t < 16, then part[0] = max of part[16 i],
/// i < 16 (two barriers on the GPU instead of log2(kBlockThreads)).
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

/// Per-block Q or K in one kernel: a CTA of kBlockThreads threads per
/// scale block (rows [n0, n1) of one head, whole: the amax is CTA-local,
/// so neither atomics nor other kernels are needed). In order, separated
/// by barriers on the GPU:
///   part[t] = max |x| over thread t's chunks      (16-byte loads)
///   part[0] = max over part                       (buildMaxTree)
///   descale = part[0] > 0 ? part[0] / 448 : 1     (thread 0 stores it)
///   x_fp8   = truncf(x / descale)                 (8-byte stores;
///                                                  SharedDivisor)
/// `part` is a workgroup buffer of the CTA (shared memory on the GPU).
void buildBlockQuantizeGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                            int64_t block, const RowValue &value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  int64_t w = kChunk, cols = d / w;
  auto f8 = b.getType<Float8E4M3FNType>();
  auto partType = MemRefType::get(
      {kBlockThreads}, b.getF32Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  // Blocks x = the row block (consecutive CTAs read consecutive rows).
  buildCtaGrid(
      b, {static_cast<int64_t>(llvm::divideCeil(n, block)), shape[1], shape[0]},
      [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
        Value blk = ids[0], h = ids[1], bb = ids[2];
        Value part = memref::AllocaOp::create(cb, partType);
        Value n0 = arith::MulIOp::create(cb, blk, index(cb, block));
        Value n1 = arith::MinUIOp::create(
            cb, arith::AddIOp::create(cb, n0, index(cb, block)), index(cb, n));
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          SmallVector<Value> amax;
          forEachChunk(
              tb, t, n0, n1, cols, w, ValueRange{f32(tb, 0.0)},
              [&](ImplicitLocOpBuilder &lb, Value row, Value j,
                  ValueRange acc) -> SmallVector<Value> {
                Value m = acc[0];
                for (Value x : value.buildChunk(lb, {bb, h, row}, j, w))
                  m = arith::MaximumFOp::create(lb, m,
                                                math::AbsFOp::create(lb, x));
                return {m};
              },
              &amax);
          memref::StoreOp::create(tb, amax[0], part, t);
        });
        buildMaxTree(cb, part);
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          Value scale = descaleOf(
              tb, memref::LoadOp::create(tb, part, index(tb, 0)));
          auto first = scf::IfOp::create(
              tb, arith::CmpIOp::create(tb, arith::CmpIPredicate::eq, t,
                                        index(tb, 0)),
              /*withElseRegion=*/false);
          {
            OpBuilder::InsertionGuard guard(tb);
            tb.setInsertionPointToStart(first.thenBlock());
            memref::StoreOp::create(tb, scale, descale,
                                    ValueRange{bb, h, blk});
          }
          withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                            const SharedDivisor &div) {
            forEachChunk(
                db, t, n0, n1, cols, w, ValueRange{},
                [&](ImplicitLocOpBuilder &lb, Value row, Value j,
                    ValueRange) -> SmallVector<Value> {
                  SmallVector<Value> q;
                  for (Value x : value.buildChunk(lb, {bb, h, row}, j, w))
                    q.push_back(
                        arith::TruncFOp::create(lb, f8, div.divide(lb, x)));
                  // w bytes at a multiple of w: aligned.
                  vector::StoreOp::create(
                      lb,
                      vector::FromElementsOp::create(
                          lb, VectorType::get({w}, f8), q),
                      fp8, ValueRange{bb, h, row, j})
                      ->setAttr("alignment", lb.getI64IntegerAttr(w));
                  return {};
                });
          });
        });
      });
}

/// Keys of V per V^T quantize CTA: a row of V^T's tile is 128 bytes.
constexpr int64_t kTransposeKeys = 128;
/// e4m3 bytes a thread stores at once (16: TMA's row alignment).
constexpr int64_t kStoreBytes = 16;

/// Calls `body(c)` for c = t, t + kBlockThreads, .. below `total`: thread
/// t's share of its CTA's `total` work items.
void forEachItem(ImplicitLocOpBuilder &b, Value t, int64_t total,
                 function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, t, index(b, total), index(b, kBlockThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

/// Where a V^T quantize CTA works: its batch, head and first key, the
/// keys N (rows of V) and V^T's row length (N padded to 16).
struct KeyBlock {
  Value b, h, n0;
  int64_t n, padded;
};

/// Phase 1 of a V^T quantize CTA, item c: keys n0 + c % 128, columns
/// j = 8 (c / 128) .. j + 7: tile[j + k][key] = truncf(v / descale), 0
/// for keys past N. `shared`: the CTA's one descale (else each element's).
void quantizeIntoTile(ImplicitLocOpBuilder &b, const KeyBlock &kb, Value c,
                      Value tile, Value descale, const Groups &groups,
                      const RowValue &value, const SharedDivisor *shared) {
  auto f8 = b.getType<Float8E4M3FNType>();
  auto chunkType = VectorType::get({kChunk}, f8);
  Value key = arith::RemUIOp::create(b, c, index(b, kTransposeKeys));
  Value j = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, c, index(b, kTransposeKeys)),
      index(b, kChunk));
  Value row = arith::AddIOp::create(b, kb.n0, key);
  Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row,
                                       index(b, kb.n));
  auto ifOp = scf::IfOp::create(b, TypeRange(chunkType), inside,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> q;
    for (auto [k, x] : llvm::enumerate(
             value.buildChunk(b, {kb.b, kb.h, row}, j, kChunk))) {
      Value y;
      if (shared) {
        y = shared->divide(b, x);
      } else {
        SmallVector<Value> at = {kb.b, kb.h, row,
                                 arith::AddIOp::create(b, j, index(b, k))};
        y = arith::DivFOp::create(
            b, x, memref::LoadOp::create(b, descale, groups.entry(b, at)));
      }
      q.push_back(arith::TruncFOp::create(b, f8, y));
    }
    scf::YieldOp::create(b, ValueRange{vector::FromElementsOp::create(
                                b, chunkType, q)});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, ValueRange{arith::ConstantOp::create(
               b, DenseElementsAttr::get(chunkType, b.getFloatAttr(f8, 0.0)))});
  }
  for (int64_t k = 0; k < kChunk; ++k)
    memref::StoreOp::create(
        b, vector::ExtractOp::create(b, ifOp.getResult(0), k), tile,
        ValueRange{arith::AddIOp::create(b, j, index(b, k)), key});
}

/// Phase 2 of a V^T quantize CTA, item c: 16 bytes of tile row
/// j = c / 8 to V^T's row j at key n0 + 16 (c % 8), if below its padded
/// length.
void copyTileRow(ImplicitLocOpBuilder &b, const KeyBlock &kb, Value c,
                 Value tile, Value storage) {
  int64_t units = kTransposeKeys / kStoreBytes;
  Value j = arith::DivUIOp::create(b, c, index(b, units));
  Value at = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, c, index(b, units)), index(b, kStoreBytes));
  Value col = arith::AddIOp::create(b, kb.n0, at);
  auto ifOp = scf::IfOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                            index(b, kb.padded)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto bytes = VectorType::get({kStoreBytes}, b.getType<Float8E4M3FNType>());
  auto load = vector::LoadOp::create(b, bytes, tile, ValueRange{j, at});
  load->setAttr("alignment", b.getI64IntegerAttr(kStoreBytes));
  vector::StoreOp::create(b, load, storage, ValueRange{kb.b, kb.h, j, col})
      ->setAttr("alignment", b.getI64IntegerAttr(kStoreBytes));
}

/// The V^T copy through a tile in shared memory: a CTA of kBlockThreads
/// threads per kTransposeKeys keys of one head, in two phases separated by
/// a barrier on the GPU: quantizeIntoTile (16-byte loads of V's rows; a
/// warp takes 32 keys of one chunk, so its byte stores to the tile fill
/// whole words), then copyTileRow (16-byte loads and stores). `storage` is
/// V^T's [B, H, D, N padded to 16] buffer; its padding gets zeros.
void buildTransposedQuantizeGrid(ImplicitLocOpBuilder &b, Value storage,
                                 Value descale, const Groups &groups,
                                 const RowValue &value, int64_t n) {
  ArrayRef<int64_t> shape = cast<MemRefType>(storage.getType()).getShape();
  int64_t d = shape[2];
  auto tileType = MemRefType::get(
      {d, kTransposeKeys}, b.getType<Float8E4M3FNType>(),
      MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  buildCtaGrid(
      b,
      {static_cast<int64_t>(llvm::divideCeil(n, kTransposeKeys)), shape[1],
       shape[0]},
      [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
        // 16-byte aligned: phase 2 moves 16-byte vectors (on the host too).
        Value tile = memref::AllocaOp::create(
            cb, tileType, cb.getI64IntegerAttr(kStoreBytes));
        KeyBlock kb{ids[2], ids[1],
                    arith::MulIOp::create(cb, ids[0], index(cb, kTransposeKeys)),
                    n, shape[3]};
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          auto items = [&](ImplicitLocOpBuilder &ib,
                           const SharedDivisor *shared) {
            forEachItem(ib, t, kTransposeKeys * (d / kChunk),
                        [&](ImplicitLocOpBuilder &eb, Value c) {
                          quantizeIntoTile(eb, kb, c, tile, descale, groups,
                                           value, shared);
                        });
          };
          if (!groups.wholeRows || groups.blockRows)
            return items(tb, nullptr);
          // V per head or tensor: one descale for the CTA's keys.
          Value scale = memref::LoadOp::create(
              tb, descale,
              groups.entry(tb, ValueRange{kb.b, kb.h, kb.n0, index(tb, 0)}));
          withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                           const SharedDivisor &div) {
            items(db, &div);
          });
        });
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          forEachItem(tb, t, d * (kTransposeKeys / kStoreBytes),
                      [&](ImplicitLocOpBuilder &ib, Value c) {
                        copyTileRow(ib, kb, c, tile, storage);
                      });
        });
      });
}

/// Quantizes `src` ([B, H, N, D]) with one scale per group of `groups`;
/// `transposed`: the FP8 copy is stored as [B, H, D, N] (V^T, as the
/// tensor cores read FP8 V; rows padded to 16 bytes) and returned as its
/// [B, H, N, D] view.
Quantized quantize(ImplicitLocOpBuilder &b, Value src, const Groups &groups,
                   bool rotate, bool transposed = false) {
  SmallVector<int64_t> shape(cast<MemRefType>(src.getType()).getShape());
  Type f8 = b.getType<Float8E4M3FNType>();
  Quantized out;
  if (transposed) {
    // [B, H, D, N] with rows padded to 16 bytes (TMA's stride rule), the
    // first N keys of each row viewed as [B, H, N, D].
    std::swap(shape[2], shape[3]);
    SmallVector<int64_t> padded(shape);
    padded[3] = llvm::alignTo(shape[3], 16);
    out.storage = memref::AllocOp::create(b, MemRefType::get(padded, f8));
    Value rows = out.storage;
    if (padded[3] != shape[3])
      rows = memref::SubViewOp::create(
          b, out.storage, SmallVector<OpFoldResult>(4, b.getIndexAttr(0)),
          getAsIndexOpFoldResult(b.getContext(), shape),
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    auto perm = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 1, 3, 2},
                                             b.getContext());
    out.fp8 = memref::TransposeOp::create(b, rows, AffineMapAttr::get(perm));
  } else {
    out.storage = out.fp8 =
        memref::AllocOp::create(b, MemRefType::get(shape, f8));
  }
  out.descale = memref::AllocOp::create(
      b, MemRefType::get(groups.descaleShape, b.getF32Type()));
  RowValue value(src, cast<MemRefType>(src.getType()).getDimSize(3), rotate);
  if (groups.blockRows && !transposed) {
    buildBlockQuantizeGrid(b, out.fp8, out.descale, groups.blockRows, value);
    return out;
  }
  Value amax =
      memref::AllocOp::create(b, MemRefType::get(groups.shape, b.getI32Type()));
  buildAmaxGrids(b, amax, groups, value);
  buildDescaleGrid(b, amax, out.descale, groups);
  memref::DeallocOp::create(b, amax);
  if (transposed)
    buildTransposedQuantizeGrid(b, out.storage, out.descale, groups, value,
                                shape[3]);
  else
    buildQuantizeGrid(b, out.fp8, out.descale, groups, value);
  return out;
}

/// What the pass options ask for, with block sizes resolved.
struct QuantizeOptions {
  bool hadamard;
  QkGranularity qk;
  VGranularity v;
  int64_t blockM, blockN;
};

LogicalResult quantizeAttention(AttentionOp op, QuantizeOptions opts) {
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto kType = cast<MemRefType>(op.getK().getType());
  if (!qType.getElementType().isBF16())
    return op.emitOpError() << "attn-quantize-fp8 takes bf16 inputs (the FP8 "
                               "attention writes a bf16 O), but got "
                            << qType.getElementType();
  if (op.isPaged())
    return op.emitOpError("attn-quantize-fp8 does not take paged K/V (FP8 "
                          "attention has no paged form)");
  if (!qType.hasStaticShape() || !kType.hasStaticShape())
    return op.emitOpError("attn-quantize-fp8 needs static shapes");
  int64_t d = qType.getDimSize(3);
  if (opts.hadamard && !llvm::isPowerOf2_64(d))
    return op.emitOpError() << "attn-quantize-fp8 hadamard=true needs a "
                               "power-of-two head dim D, but got "
                            << d;
  // Block sizes 0: the tensor-core FP8 tile's.
  int64_t bn = opts.blockN ? opts.blockN : tensorCoreBlockN(d, /*fp8=*/true);
  int64_t bm =
      opts.blockM ? opts.blockM : tensorCoreBlockM(d, bn, qType.getDimSize(2));
  ImplicitLocOpBuilder b(op.getLoc(), op);
  ArrayRef<int64_t> qs = qType.getShape(), ks = kType.getShape();
  int64_t group = qs[1] / ks[1];
  Groups qGroups = perHead(qs, group), kGroups = perHead(ks, 1);
  if (opts.qk == QkGranularity::tensor) {
    qGroups = perTensor(qs, group);
    kGroups = perTensor(ks, 1);
  } else if (opts.qk == QkGranularity::block) {
    qGroups = perBlock(qs, bm);
    kGroups = perBlock(ks, bn);
  }
  Quantized q = quantize(b, op.getQ(), qGroups, opts.hadamard);
  Quantized k = quantize(b, op.getK(), kGroups, opts.hadamard);
  Quantized v = quantize(b, op.getV(),
                         opts.v == VGranularity::channel ? perChannel(ks)
                                                         : perHead(ks, 1),
                         /*rotate=*/false, /*transposed=*/true);
  auto fp8 = AttentionOp::create(b, q.fp8, k.fp8, v.fp8, op.getO(), op.getLse(),
                                 q.descale, k.descale, v.descale,
                                 /*block_table=*/Value(),
                                 /*cache_seqlens=*/Value(), op.getScaleAttr(), op.getCausalAttr(),
                                 /*q_descale_block=*/nullptr,
                                 /*k_descale_block=*/nullptr);
  if (opts.qk == QkGranularity::block) {
    fp8.setQDescaleBlock(bm);
    fp8.setKDescaleBlock(bn);
  }
  for (Value buf :
       {q.storage, k.storage, v.storage, q.descale, k.descale, v.descale})
    memref::DeallocOp::create(b, buf);
  op.erase();
  return success();
}

struct AttnQuantizeFP8Pass
    : attn::impl::AttnQuantizeFP8Base<AttnQuantizeFP8Pass> {
  using AttnQuantizeFP8Base::AttnQuantizeFP8Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.isFP8())
        ops.push_back(op);
    });
    if (blockM < 0 || blockN < 0) {
      getOperation().emitError()
          << "attn-quantize-fp8: block-m and block-n must be >= 0 (0: the "
             "tensor-core tile's), but got block-m="
          << static_cast<int64_t>(blockM)
          << " block-n=" << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    QuantizeOptions opts{hadamard, qkGranularity, vGranularity, blockM, blockN};
    for (AttentionOp op : ops)
      if (failed(quantizeAttention(op, opts)))
        return signalPassFailure();
  }
};

} // namespace

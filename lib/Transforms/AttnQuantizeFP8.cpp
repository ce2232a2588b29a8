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
// random diagonal of signs; (Q R)(K R)^T = Q K^T since R R^T = I. The
// step is one grid of every amax (buildAmaxLaunch; per-block Q and K
// finish there), then one copy grid per other operand: two GPU launches
// with the defaults, no atomics.
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
#include <numeric>
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
/// Threads of a quantize CTA, and the bf16 elements a thread
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

  /// Whether s_i = -1: bit i % 64 of the i / 64-th 64-bit word of the
  /// signs (integer constants and selects: no vector constant indexed at
  /// run time, which a GPU thread would keep in local memory). `i` is i32.
  Value negativeSign(ImplicitLocOpBuilder &b, Value i) const;

  Value source() const { return src; }

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

  Value src;
  int64_t d;
  bool rotate;
};

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

/// Elements each amax thread should at least get before a group is cut
/// across more CTAs (at most kMaxAmaxCtas).
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

/// A workgroup buffer of `n` f32 (shared memory on the GPU).
Value workgroupBuffer(ImplicitLocOpBuilder &b, int64_t n) {
  return memref::AllocaOp::create(
      b, MemRefType::get({n}, b.getF32Type(), MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(
                             b.getContext(), gpu::AddressSpace::Workgroup)));
}

/// Indices of `linear` in `shape`, the first dimension fastest.
SmallVector<Value> delinearize(ImplicitLocOpBuilder &b, Value linear,
                               ArrayRef<int64_t> shape) {
  SmallVector<Value> idx;
  for (int64_t extent : shape) {
    idx.push_back(arith::RemUIOp::create(b, linear, index(b, extent)));
    linear = arith::DivUIOp::create(b, linear, index(b, extent));
  }
  return idx;
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

/// descale = amax / 448 (1 for an all-zero group).
Value descaleOf(ImplicitLocOpBuilder &b, Value amax) {
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, amax, f32(b, 0.0));
  return arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, amax, f32(b, kE4M3Max)),
      f32(b, 1.0));
}

/// The descale of `group` from its `ctas` CTAs' maxima in `partials`
/// ([groups.shape..., ctas]).
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

/// x / d, correctly rounded, for a divisor d shared by many x, at a
/// multiply and two fmas per x instead of a division: with r = RN(1 / d)
/// computed once, q = RN(x r) lies within an ulp of x / d, the residual
/// x - d q is exact as an fma, and RN(q + (x - d q) r) is the correctly
/// rounded x / d (Markstein's theorem; Muller et al., Handbook of
/// Floating-Point Arithmetic, 2nd ed., section 4.7). It needs d and r
/// normal, a quotient that does not underflow and a residual that does
/// not either, which holds for |x| >= 2^-100. withSharedDivisor takes
/// d >= 2^-88, so a smaller x gives |x / d| < 2^-12 and an underflowing
/// quotient is below 2^-126: both round to e4m3's zero of x's sign either
/// way (the quantize step's quotients are at most 448). Zeros keep their
/// sign.
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
/// [2^-88, 2^126] (so r = 1 / d is normal too), with plain division
/// otherwise (a descale below 2^-88, inf or NaN: amax below 2^-79, or
/// not finite).
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

/// Chunks a thread takes straight-line in a whole block (forEachChunk).
constexpr int64_t kMaxUnrolledChunks = 16;

/// Calls `body(row, j)` for chunks t, t + kBlockThreads, .. of the `w`-wide
/// column chunks of rows [n0, n1) (row-major: consecutive threads take
/// consecutive chunks of a row). With `wholeRows` (R), a block of exactly R
/// rows whose R * cols chunks give every thread the same number, at most
/// kMaxUnrolledChunks, takes them straight-line, so that the thread's loads
/// issue together; other blocks (the tail) take a loop up to n1.
void forEachChunk(ImplicitLocOpBuilder &b, Value t, Value n0, Value n1,
                  int64_t cols, int64_t w, ValueRange iterArgs,
                  function_ref<SmallVector<Value>(ImplicitLocOpBuilder &,
                                                  Value, Value, ValueRange)>
                      body,
                  SmallVector<Value> *results = nullptr,
                  std::optional<int64_t> wholeRows = std::nullopt) {
  // body at chunk c: row n0 + c / cols, columns from (c % cols) * w.
  auto chunk = [&](ImplicitLocOpBuilder &lb, Value c, ValueRange state) {
    Value row = arith::AddIOp::create(
        lb, n0, arith::DivUIOp::create(lb, c, index(lb, cols)));
    Value j = arith::MulIOp::create(
        lb, arith::RemUIOp::create(lb, c, index(lb, cols)), index(lb, w));
    return body(lb, row, j, state);
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
    SmallVector<Value> state(iterArgs);
    for (int64_t i = 0; i < trips; ++i)
      state = chunk(lb,
                    i ? arith::AddIOp::create(lb, t,
                                              index(lb, i * kBlockThreads))
                      : t,
                    state);
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

//===----------------------------------------------------------------------===//
// The first launch: every amax
//===----------------------------------------------------------------------===//

/// One operand's CTAs in the quantize step's first launch (buildAmaxLaunch):
/// `ctas` CTAs of kBlockThreads threads; thread t's max |x| over its share
/// of CTA `cta` (numbered from 0 in the program), and what the CTA does
/// with the max of those (thread t).
struct AmaxProgram {
  int64_t ctas;
  std::function<Value(ImplicitLocOpBuilder &, Value cta, Value t)> partial;
  std::function<void(ImplicitLocOpBuilder &, Value cta, Value t, Value amax)>
      finish;
};

/// Builds `body` for the program that CTA `id` of a grid of consecutive
/// programs (`ctas` CTAs each, from `first` on, starting at CTA `start`)
/// belongs to, given the CTA's index in that program: a chain of scf.if.
void dispatch(ImplicitLocOpBuilder &b, Value id, ArrayRef<int64_t> ctas,
              function_ref<void(ImplicitLocOpBuilder &, size_t, Value)> body,
              size_t first = 0, int64_t start = 0) {
  Value cta = start ? arith::SubIOp::create(b, id, index(b, start)) : id;
  if (first + 1 == ctas.size())
    return body(b, first, cta);
  int64_t end = start + ctas[first];
  auto ifOp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, id, index(b, end)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body(b, first, cta);
  b.setInsertionPointToStart(ifOp.elseBlock());
  dispatch(b, id, ctas, body, first + 1, end);
}

/// The quantize step's first launch: one grid of every program's CTAs
/// (kBlockThreads threads each), each CTA, in order, separated by barriers
/// on the GPU:
///   part[t] = its program's partial(t)
///   part[0] = max over part                 (buildMaxTree)
///   its program's finish(t, part[0])
/// `part` is a workgroup buffer (shared memory on the GPU). One launch
/// instead of one or more per operand: no launch gaps between them, and
/// one operand's CTAs fill the tail of another's.
void buildAmaxLaunch(ImplicitLocOpBuilder &b, ArrayRef<AmaxProgram> programs) {
  SmallVector<int64_t> ctas = llvm::map_to_vector(
      programs, [](const AmaxProgram &p) { return p.ctas; });
  int64_t total = std::accumulate(ctas.begin(), ctas.end(), int64_t{0});
  buildCtaGrid(b, {total}, [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
    Value part = workgroupBuffer(cb, kBlockThreads);
    buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      dispatch(tb, ids[0], ctas,
               [&](ImplicitLocOpBuilder &pb, size_t i, Value cta) {
                 memref::StoreOp::create(pb, programs[i].partial(pb, cta, t),
                                         part, t);
               });
    });
    buildMaxTree(cb, part);
    buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value amax = memref::LoadOp::create(tb, part, ValueRange{index(tb, 0)});
      dispatch(tb, ids[0], ctas,
               [&](ImplicitLocOpBuilder &pb, size_t i, Value cta) {
                 programs[i].finish(pb, cta, t, amax);
               });
    });
  });
}

/// Where a per-block CTA works: the block `blk` of rows [n0, n1) of head h
/// of batch bb.
struct RowBlock {
  Value blk, h, bb, n0, n1;
};

/// Per-block Q or K: one CTA per scale block (rows [n0, n1) of one head,
/// whole: its amax is the CTA's). Partial maxima over 16-byte chunks; then
/// descale = amax > 0 ? amax / 448 : 1 (thread 0 stores it) and x_fp8 =
/// truncf(x / descale) in 8-byte stores (SharedDivisor): amax, descale and
/// copy in one kernel, without atomics.
AmaxProgram blockProgram(Value fp8, Value descale, int64_t block,
                         RowValue value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], w = kChunk, cols = shape[3] / w;
  // Row blocks fastest: consecutive CTAs read consecutive rows.
  SmallVector<int64_t> grid = {
      static_cast<int64_t>(llvm::divideCeil(n, block)), shape[1], shape[0]};
  auto rowsOf = [=](ImplicitLocOpBuilder &b, Value cta) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    Value n0 = arith::MulIOp::create(b, idx[0], index(b, block));
    Value n1 = arith::MinUIOp::create(
        b, arith::AddIOp::create(b, n0, index(b, block)), index(b, n));
    return RowBlock{idx[0], idx[1], idx[2], n0, n1};
  };
  AmaxProgram p;
  p.ctas = grid[0] * grid[1] * grid[2];
  p.partial = [=](ImplicitLocOpBuilder &b, Value cta, Value t) {
    RowBlock rb = rowsOf(b, cta);
    SmallVector<Value> amax;
    forEachChunk(
        b, t, rb.n0, rb.n1, cols, w, ValueRange{f32(b, 0.0)},
        [&](ImplicitLocOpBuilder &lb, Value row, Value j,
            ValueRange acc) -> SmallVector<Value> {
          Value m = acc[0];
          for (Value x : value.buildChunk(lb, {rb.bb, rb.h, row}, j, w))
            m = arith::MaximumFOp::create(lb, m, math::AbsFOp::create(lb, x));
          return {m};
        },
        &amax, block);
    return amax[0];
  };
  p.finish = [=](ImplicitLocOpBuilder &b, Value cta, Value t, Value amax) {
    RowBlock rb = rowsOf(b, cta);
    auto f8 = b.getType<Float8E4M3FNType>();
    Value scale = descaleOf(b, amax);
    auto first = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, index(b, 0)),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(first.thenBlock());
      memref::StoreOp::create(b, scale, descale,
                              ValueRange{rb.bb, rb.h, rb.blk});
    }
    withSharedDivisor(b, scale, [&](ImplicitLocOpBuilder &db,
                                    const SharedDivisor &div) {
      forEachChunk(
          db, t, rb.n0, rb.n1, cols, w, ValueRange{},
          [&](ImplicitLocOpBuilder &lb, Value row, Value j,
              ValueRange) -> SmallVector<Value> {
            SmallVector<Value> q;
            for (Value x : value.buildChunk(lb, {rb.bb, rb.h, row}, j, w))
              q.push_back(arith::TruncFOp::create(lb, f8, div.divide(lb, x)));
            // w bytes at a multiple of w: aligned.
            vector::StoreOp::create(
                lb,
                vector::FromElementsOp::create(lb, VectorType::get({w}, f8),
                                               q),
                fp8, ValueRange{rb.bb, rb.h, row, j})
                ->setAttr("alignment", lb.getI64IntegerAttr(w));
            return {};
          },
          /*results=*/nullptr, block);
    });
  };
  return p;
}

/// CTAs per group of `groups` for partialAmaxProgram.
int64_t amaxCtasPerGroup(const Groups &groups) {
  return std::clamp<int64_t>(
      llvm::divideCeil(groups.elements, kBlockThreads * kAmaxPerThread), 1,
      kMaxAmaxCtas);
}

/// Groups that are not blocks of rows: each cut across `ctas` CTAs whose
/// threads stride over its elements (16-byte chunks of kChunk where the
/// group spans whole rows); a CTA's max goes to partials[group, c]
/// ([groups.shape..., ctas], reduced by the second launch: no atomics and
/// no zero fill).
AmaxProgram partialAmaxProgram(Value partials, Groups groups, RowValue value,
                               int64_t ctas) {
  SmallVector<int64_t> grid = {ctas};
  llvm::append_range(grid, groups.shape);
  int64_t w = groups.wholeRows ? kChunk : 1;
  AmaxProgram p;
  p.ctas = 1;
  for (int64_t extent : grid)
    p.ctas *= extent;
  p.partial = [=](ImplicitLocOpBuilder &b, Value cta, Value t) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    Box box = groups.box(b, ArrayRef(idx).drop_front());
    if (w > 1) // whole rows: D / w chunks per row
      box.hi[3] = index(b, value.rowLength() / w);
    Value size = index(b, 1);
    for (int i = 0; i < 4; ++i)
      size = arith::MulIOp::create(
          b, size, arith::SubIOp::create(b, box.hi[i], box.lo[i]));
    Value first = arith::AddIOp::create(
        b, arith::MulIOp::create(b, idx[0], index(b, kBlockThreads)), t);
    auto loop = scf::ForOp::create(b, first, size,
                                   index(b, ctas * kBlockThreads),
                                   ValueRange{f32(b, 0.0)});
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> bhnj = boxElement(b, box, loop.getInductionVar());
    ValueRange bhn = ArrayRef(bhnj).take_front(3);
    SmallVector<Value> ys =
        w > 1 ? value.buildChunk(
                    b, bhn, arith::MulIOp::create(b, bhnj[3], index(b, w)), w)
              : SmallVector<Value>{value.build(b, bhn, bhnj[3])};
    Value m = loop.getRegionIterArgs()[0];
    for (Value y : ys)
      m = arith::MaximumFOp::create(b, m, math::AbsFOp::create(b, y));
    scf::YieldOp::create(b, ValueRange{m});
    b.setInsertionPointAfter(loop);
    return loop.getResult(0);
  };
  p.finish = [=](ImplicitLocOpBuilder &b, Value cta, Value t, Value amax) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    SmallVector<Value> at(ArrayRef<Value>(idx).drop_front());
    at.push_back(idx[0]);
    auto first = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, index(b, 0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(b, amax, partials, at);
  };
  return p;
}

//===----------------------------------------------------------------------===//
// The second launch: copies of operands whose groups are not blocks
//===----------------------------------------------------------------------===//

/// Rows of a row-major FP8 copy per quantize CTA.
constexpr int64_t kQuantizeRows = 16;

/// x_fp8[b, h, n, j] = truncf(x / descale) for a row-major copy whose
/// groups span whole heads (per tensor or KV head), stored in its memory
/// order: CTAs of kQuantizeRows rows (b, h, n block). First one thread
/// takes the descale of the CTA's group from the partial maxima into a
/// workgroup buffer and, in row block 0 of the first head of its descale
/// entry, stores it; then one thread per column j loops over the rows
/// (SharedDivisor), so consecutive threads write consecutive bytes.
void buildQuantizeGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                       Value partials, const Groups &groups,
                       const RowValue &value, int64_t ctasPerGroup) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  int64_t headsPerEntry = shape[1] / groups.descaleShape[1];
  auto f8 = b.getType<Float8E4M3FNType>();
  buildCtaGrid(
      b,
      {shape[0], shape[1],
       static_cast<int64_t>(llvm::divideCeil(n, kQuantizeRows))},
      [&](ImplicitLocOpBuilder &cb, ValueRange bhc) {
        Value scales = workgroupBuffer(cb, 1);
        Value first = arith::MulIOp::create(cb, bhc[2], index(cb, kQuantizeRows));
        Value last = arith::MinUIOp::create(
            cb, arith::AddIOp::create(cb, first, index(cb, kQuantizeRows)),
            index(cb, n));
        buildThreadLoop(cb, 1, [&](ImplicitLocOpBuilder &tb, Value) {
          SmallVector<Value> entry =
              groups.entry(tb, ValueRange{bhc[0], bhc[1], first, index(tb, 0)});
          Value scale = descaleOfGroup(tb, partials, groups.group(tb, entry),
                                       ctasPerGroup);
          memref::StoreOp::create(tb, scale, scales, ValueRange{index(tb, 0)});
          Value writer = arith::AndIOp::create(
              tb,
              arith::CmpIOp::create(tb, arith::CmpIPredicate::eq, bhc[2],
                                    index(tb, 0)),
              arith::CmpIOp::create(
                  tb, arith::CmpIPredicate::eq,
                  arith::RemUIOp::create(tb, bhc[1], index(tb, headsPerEntry)),
                  index(tb, 0)));
          auto ifOp = scf::IfOp::create(tb, writer, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(tb);
          tb.setInsertionPointToStart(ifOp.thenBlock());
          memref::StoreOp::create(tb, scale, descale, entry);
        });
        buildThreadLoop(cb, d, [&](ImplicitLocOpBuilder &tb, Value t) {
          Value scale =
              memref::LoadOp::create(tb, scales, ValueRange{index(tb, 0)});
          withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                           const SharedDivisor &div) {
            scf::buildLoopNest(
                db, db.getLoc(), first, last, index(db, 1),
                [&](OpBuilder &nb, Location loc, ValueRange iv) {
                  ImplicitLocOpBuilder eb(loc, nb);
                  Value y = value.build(
                      eb, ValueRange{bhc[0], bhc[1], iv[0]}, t);
                  memref::StoreOp::create(
                      eb, arith::TruncFOp::create(eb, f8, div.divide(eb, y)),
                      fp8, ValueRange{bhc[0], bhc[1], iv[0], t});
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
/// for keys past N. `shared`: the CTA's one descale; else column j's is
/// scales[j] (per channel).
void quantizeIntoTile(ImplicitLocOpBuilder &b, const KeyBlock &kb, Value c,
                      Value tile, Value scales, const RowValue &value,
                      const SharedDivisor *shared) {
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
      Value y =
          shared ? shared->divide(b, x)
                 : arith::DivFOp::create(
                       b, x,
                       memref::LoadOp::create(
                           b, scales,
                           ValueRange{arith::AddIOp::create(b, j,
                                                            index(b, k))}));
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
/// threads per kTransposeKeys keys of one head, in three phases separated
/// by barriers on the GPU: the descales of the CTA's groups (one, or one
/// per column of D) from the partial maxima into `scales` (stored to the
/// descale operand by the head's first CTA); quantizeIntoTile (16-byte
/// loads of V's rows; a warp takes 32 keys of one chunk, so its byte
/// stores to the tile fill whole words); copyTileRow (16-byte loads and
/// stores). `storage` is V^T's [B, H, D, N padded to 16] buffer; its
/// padding gets zeros.
void buildTransposedQuantizeGrid(ImplicitLocOpBuilder &b, Value storage,
                                 Value descale, Value partials,
                                 const Groups &groups, const RowValue &value,
                                 int64_t n, int64_t ctasPerGroup) {
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
        // V per head: one descale for the CTA's keys; per channel: D.
        bool oneScale = groups.wholeRows;
        Value scales = workgroupBuffer(cb, oneScale ? 1 : d);
        buildThreadLoop(cb, oneScale ? 1 : d, [&](ImplicitLocOpBuilder &tb,
                                                  Value t) {
          SmallVector<Value> entry = groups.entry(
              tb, ValueRange{kb.b, kb.h, kb.n0, oneScale ? index(tb, 0) : t});
          Value scale = descaleOfGroup(tb, partials, groups.group(tb, entry),
                                       ctasPerGroup);
          memref::StoreOp::create(tb, scale, scales, t);
          auto ifOp = scf::IfOp::create(
              tb,
              arith::CmpIOp::create(tb, arith::CmpIPredicate::eq, ids[0],
                                    index(tb, 0)),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(tb);
          tb.setInsertionPointToStart(ifOp.thenBlock());
          memref::StoreOp::create(tb, scale, descale, entry);
        });
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          auto items = [&](ImplicitLocOpBuilder &ib,
                           const SharedDivisor *shared) {
            forEachItem(ib, t, kTransposeKeys * (d / kChunk),
                        [&](ImplicitLocOpBuilder &eb, Value c) {
                          quantizeIntoTile(eb, kb, c, tile, scales, value,
                                           shared);
                        });
          };
          if (!oneScale)
            return items(tb, nullptr);
          Value scale =
              memref::LoadOp::create(tb, scales, ValueRange{index(tb, 0)});
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

/// f32 elements of a rotated block staged in shared memory at once (32 KB;
/// a kernel's static shared memory is at most 48 KB).
constexpr int64_t kRotateTileFloats = 8192;

/// One CTA of buildRotatedBlockGrid: rows [n0, n1) of head h of batch bb
/// (scale block `blk`), staged `rows` at a time in the f32 workgroup tile
/// [rows * D], with `part` for the CTA's max. Each method builds thread
/// loops of the CTA (barriers between them on the GPU).
class RotatedBlockCta {
public:
  RotatedBlockCta(ImplicitLocOpBuilder &b, ValueRange ids, int64_t n,
                  int64_t d, int64_t block, int64_t rows, RowValue value)
      : b(b), blk(ids[0]), h(ids[1]), bb(ids[2]), d(d), rows(rows),
        value(value), plain(value.source(), d, /*rotate=*/false) {
    tile = workgroupBuffer(b, rows * d);
    part = workgroupBuffer(b, kBlockThreads);
    n0 = arith::MulIOp::create(b, blk, index(b, block));
    n1 = arith::MinUIOp::create(
        b, arith::AddIOp::create(b, n0, index(b, block)), index(b, n));
  }

  /// Rows [r0, r0 + rows) of the block, r0 = n0 + batch * rows, into the
  /// tile as H S x (rows past n1: zeros); returns r0.
  Value rotateBatch(int64_t batch) {
    Value r0 = arith::AddIOp::create(b, n0, index(b, batch * rows));
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      forEachItem(tb, t, rows * (d / kChunk),
                  [&](ImplicitLocOpBuilder &ib, Value c) { loadChunk(ib, r0, c); });
    });
    for (int64_t span = kChunk; span < d; span *= 2)
      buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
        forEachItem(tb, t, rows * d / 2, [&](ImplicitLocOpBuilder &ib, Value p) {
          butterfly(ib, p, span);
        });
      });
    return r0;
  }

  /// part[t] = max(part[t] (after the first batch), |tile| / sqrt(D) over
  /// thread t's elements).
  void maxOfBatch(int64_t batch) {
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value m = batch ? Value(memref::LoadOp::create(tb, part, t)) : f32(tb, 0.0);
      auto loop = scf::ForOp::create(tb, t, index(tb, rows * d),
                                     index(tb, kBlockThreads), ValueRange{m});
      {
        OpBuilder::InsertionGuard guard(tb);
        tb.setInsertionPointToStart(loop.getBody());
        Value x = element(tb, loop.getInductionVar());
        scf::YieldOp::create(
            tb, ValueRange{arith::MaximumFOp::create(
                    tb, loop.getRegionIterArgs()[0], math::AbsFOp::create(tb, x))});
      }
      memref::StoreOp::create(tb, loop.getResult(0), part, t);
    });
  }

  /// The batch at r0 quantized by descale = part[0] / 448 (1 for 0) into
  /// `fp8` in 8-byte stores; with `storeDescale`, thread 0 stores it.
  void copyBatch(Value r0, Value fp8, Value descale, bool storeDescale) {
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value scale = descaleOf(
          tb, memref::LoadOp::create(tb, part, ValueRange{index(tb, 0)}));
      if (storeDescale) {
        auto first = scf::IfOp::create(
            tb, arith::CmpIOp::create(tb, arith::CmpIPredicate::eq, t,
                                      index(tb, 0)),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(tb);
        tb.setInsertionPointToStart(first.thenBlock());
        memref::StoreOp::create(tb, scale, descale, ValueRange{bb, h, blk});
      }
      withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                       const SharedDivisor &div) {
        forEachItem(db, t, rows * (d / kChunk),
                    [&](ImplicitLocOpBuilder &ib, Value c) {
                      storeChunk(ib, r0, c, fp8, div);
                    });
      });
    });
  }

  Value maxBuffer() const { return part; }

private:
  /// Item c of a batch: its row in the tile and first column.
  std::pair<Value, Value> chunkOf(ImplicitLocOpBuilder &ib, Value c) const {
    int64_t chunks = d / kChunk;
    return {arith::DivUIOp::create(ib, c, index(ib, chunks)),
            arith::MulIOp::create(
                ib, arith::RemUIOp::create(ib, c, index(ib, chunks)),
                index(ib, kChunk))};
  }

  Value at(ImplicitLocOpBuilder &ib, Value row, Value col) const {
    return arith::AddIOp::create(
        ib, arith::MulIOp::create(ib, row, index(ib, d)), col);
  }

  /// Tile element e, scaled by 1 / sqrt(D).
  Value element(ImplicitLocOpBuilder &ib, Value e) const {
    return arith::MulFOp::create(
        ib, memref::LoadOp::create(ib, tile, ValueRange{e}),
        f32(ib, 1.0 / std::sqrt(double(d))));
  }

  /// 16 bytes of row r0 + row (zeros past n1) times the signs, with the
  /// butterflies over columns 1, 2 and 4 apart done in registers.
  void loadChunk(ImplicitLocOpBuilder &ib, Value r0, Value c) const {
    auto [row, j] = chunkOf(ib, c);
    auto chunkType = VectorType::get({kChunk}, ib.getF32Type());
    Value src = arith::AddIOp::create(ib, r0, row);
    auto ifOp = scf::IfOp::create(
        ib, TypeRange(chunkType),
        arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, src, n1),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(ib);
      ib.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> x;
      for (auto [k, v] :
           llvm::enumerate(plain.buildChunk(ib, {bb, h, src}, j, kChunk))) {
        Value col = arith::IndexCastOp::create(
            ib, ib.getI32Type(), arith::AddIOp::create(ib, j, index(ib, k)));
        x.push_back(arith::SelectOp::create(ib, value.negativeSign(ib, col),
                                            arith::NegFOp::create(ib, v), v));
      }
      for (int64_t span = 1; span < kChunk; span *= 2)
        for (int64_t k = 0; k < kChunk; ++k) {
          if (k & span)
            continue;
          Value sum = arith::AddFOp::create(ib, x[k], x[k + span]);
          x[k + span] = arith::SubFOp::create(ib, x[k], x[k + span]);
          x[k] = sum;
        }
      scf::YieldOp::create(
          ib, ValueRange{vector::FromElementsOp::create(ib, chunkType, x)});
      ib.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(ib, ValueRange{arith::ConstantOp::create(
                                   ib, DenseElementsAttr::get(chunkType, 0.0f))});
    }
    for (int64_t k = 0; k < kChunk; ++k)
      memref::StoreOp::create(
          ib, vector::ExtractOp::create(ib, ifOp.getResult(0), k), tile,
          ValueRange{at(ib, row, arith::AddIOp::create(ib, j, index(ib, k)))});
  }

  /// Pair p of a pass over columns `span` apart: column i of its row with
  /// bit `span` clear and i + span become (x + y, x - y).
  void butterfly(ImplicitLocOpBuilder &ib, Value p, int64_t span) const {
    Value row = arith::DivUIOp::create(ib, p, index(ib, d / 2));
    Value k = arith::RemUIOp::create(ib, p, index(ib, d / 2));
    Value col = arith::AddIOp::create(
        ib,
        arith::MulIOp::create(ib, arith::DivUIOp::create(ib, k, index(ib, span)),
                              index(ib, 2 * span)),
        arith::RemUIOp::create(ib, k, index(ib, span)));
    Value i = at(ib, row, col);
    Value partner = arith::AddIOp::create(ib, i, index(ib, span));
    Value x = memref::LoadOp::create(ib, tile, ValueRange{i});
    Value y = memref::LoadOp::create(ib, tile, ValueRange{partner});
    memref::StoreOp::create(ib, arith::AddFOp::create(ib, x, y), tile,
                            ValueRange{i});
    memref::StoreOp::create(ib, arith::SubFOp::create(ib, x, y), tile,
                            ValueRange{partner});
  }

  /// Chunk c of the batch at r0 (if inside the block) as e4m3 into `fp8`.
  void storeChunk(ImplicitLocOpBuilder &ib, Value r0, Value c, Value fp8,
                  const SharedDivisor &div) const {
    auto [row, j] = chunkOf(ib, c);
    auto f8 = ib.getType<Float8E4M3FNType>();
    Value dst = arith::AddIOp::create(ib, r0, row);
    auto inside = scf::IfOp::create(
        ib, arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, dst, n1),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPointToStart(inside.thenBlock());
    SmallVector<Value> q;
    for (int64_t k = 0; k < kChunk; ++k) {
      Value e = at(ib, row, arith::AddIOp::create(ib, j, index(ib, k)));
      q.push_back(arith::TruncFOp::create(ib, f8, div.divide(ib, element(ib, e))));
    }
    vector::StoreOp::create(
        ib, vector::FromElementsOp::create(ib, VectorType::get({kChunk}, f8), q),
        fp8, ValueRange{bb, h, dst, j})
        ->setAttr("alignment", ib.getI64IntegerAttr(kChunk));
  }

  ImplicitLocOpBuilder &b;
  Value blk, h, bb, n0, n1, tile, part;
  int64_t d, rows;
  RowValue value, plain;
};

/// Per-block Q or K with `hadamard`: the rotation as a fast Walsh-Hadamard
/// transform in shared memory, O(log D) work per element instead of the
/// O(D) of RowValue's sums. One CTA of kBlockThreads threads per scale
/// block takes it in batches of R = kRotateTileFloats / D rows: the batch
/// with S's signs into an f32 tile (rows past N: zeros), then log2(D)
/// butterfly passes, (a, b) -> (a + b, a - b) over columns h apart (h < 8
/// in registers as the 16-byte chunks are loaded, the others in the tile),
/// which leave H S x in each row (H_ij = (-1)^popcount(i & j)); elements
/// are read as tile / sqrt(D). Once for the amax (per-thread maxima,
/// buildMaxTree) and once for the copy (descale stored by thread 0,
/// truncf(x / descale) in 8-byte stores, SharedDivisor). A launch of its
/// own: its tile and barriers would burden the other programs' CTAs.
void buildRotatedBlockGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                           int64_t block, const RowValue &value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  int64_t rows = std::clamp<int64_t>(kRotateTileFloats / d, 1, block);
  int64_t batches = llvm::divideCeil(block, rows);
  buildCtaGrid(b,
               {static_cast<int64_t>(llvm::divideCeil(n, block)), shape[1],
                shape[0]},
               [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
                 RotatedBlockCta cta(cb, ids, n, d, block, rows, value);
                 for (int64_t batch = 0; batch < batches; ++batch) {
                   cta.rotateBatch(batch);
                   cta.maxOfBatch(batch);
                 }
                 buildMaxTree(cb, cta.maxBuffer());
                 for (int64_t batch = 0; batch < batches; ++batch)
                   cta.copyBatch(cta.rotateBatch(batch), fp8, descale,
                                 /*storeDescale=*/batch == 0);
               });
}

/// The quantize step of one operand: its source, scale groups, rotation
/// and layout; what it writes; and for groups that are not blocks of rows,
/// their CTAs' partial maxima between the two launches.
struct OperandStep {
  Value src;
  Groups groups;
  bool rotate, transposed;
  Quantized out;
  Value partials;
  int64_t ctasPerGroup = 0;
};

/// Allocates the FP8 copy of `src` ([B, H, N, D]) and its descales;
/// `transposed`: the copy is stored as [B, H, D, N] (V^T, as the tensor
/// cores read FP8 V; rows padded to 16 bytes) and viewed as [B, H, N, D].
Quantized allocateCopy(ImplicitLocOpBuilder &b, Value src,
                       const Groups &groups, bool transposed) {
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
  return out;
}

/// The quantize step of every operand in at most 1 + (operands whose
/// groups are not blocks) launches: one grid of every amax
/// (buildAmaxLaunch: per-block operands finish there), then the copy of
/// each other operand, its descales taken from the partial maxima.
void buildQuantizeStep(ImplicitLocOpBuilder &b,
                       MutableArrayRef<OperandStep> steps) {
  SmallVector<AmaxProgram> programs;
  for (OperandStep &s : steps) {
    s.out = allocateCopy(b, s.src, s.groups, s.transposed);
    RowValue value(s.src, cast<MemRefType>(s.src.getType()).getDimSize(3),
                   s.rotate);
    if (s.groups.blockRows && !s.transposed) {
      if (s.rotate)
        buildRotatedBlockGrid(b, s.out.fp8, s.out.descale, s.groups.blockRows,
                              value);
      else
        programs.push_back(blockProgram(s.out.fp8, s.out.descale,
                                        s.groups.blockRows, value));
      continue;
    }
    s.ctasPerGroup = amaxCtasPerGroup(s.groups);
    SmallVector<int64_t> shape(s.groups.shape);
    shape.push_back(s.ctasPerGroup);
    s.partials =
        memref::AllocOp::create(b, MemRefType::get(shape, b.getF32Type()));
    programs.push_back(
        partialAmaxProgram(s.partials, s.groups, value, s.ctasPerGroup));
  }
  buildAmaxLaunch(b, programs);
  for (OperandStep &s : steps) {
    if (!s.partials)
      continue;
    RowValue value(s.src, cast<MemRefType>(s.src.getType()).getDimSize(3),
                   s.rotate);
    if (s.transposed)
      buildTransposedQuantizeGrid(
          b, s.out.storage, s.out.descale, s.partials, s.groups, value,
          cast<MemRefType>(s.src.getType()).getDimSize(2), s.ctasPerGroup);
    else
      buildQuantizeGrid(b, s.out.fp8, s.out.descale, s.partials, s.groups,
                        value, s.ctasPerGroup);
    memref::DeallocOp::create(b, s.partials);
  }
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
  OperandStep steps[] = {
      {op.getQ(), qGroups, opts.hadamard, /*transposed=*/false, {}, {}},
      {op.getK(), kGroups, opts.hadamard, /*transposed=*/false, {}, {}},
      {op.getV(),
       opts.v == VGranularity::channel ? perChannel(ks) : perHead(ks, 1),
       /*rotate=*/false, /*transposed=*/true, {}, {}}};
  buildQuantizeStep(b, steps);
  const Quantized &q = steps[0].out, &k = steps[1].out, &v = steps[2].out;
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

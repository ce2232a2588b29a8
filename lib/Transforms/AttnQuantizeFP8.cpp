//===- AttnQuantizeFP8.cpp - bf16 attn.attention -> quantize + FP8 --------===//
//
// Rewrites a bf16 attn.attention into a quantize step (scalar scf loops over
// the [B, H, N, D] buffers) and the FP8 attn.attention with descales: per
// (batch, KV head), amax over the slice (Q: over the query heads of that KV
// head), descale = amax / 448, x_fp8 = satfinite(x / descale). With
// `hadamard`, Q and K rows are first rotated along D by (1/sqrt(D)) H S:
// H the Sylvester-Hadamard matrix (H_ij = (-1)^popcount(i & j)), S a fixed
// random diagonal of signs; (Q R)(K R)^T = Q K^T since R R^T = I.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
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
/// Seed of the Hadamard rotation's random signs (fixed: the rotation must be
/// the same for Q and K, and reproducible).
constexpr unsigned kSignSeed = 0x5eed;

/// One quantized operand: the source, its FP8 copy and its [B, Hkv] descale.
struct Quantized {
  Value fp8, descale;
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

  Value build(ImplicitLocOpBuilder &b, ValueRange bhn, Value j) const {
    auto load = [&](Value col) -> Value {
      Value x = memref::LoadOp::create(
          b, src, ValueRange{bhn[0], bhn[1], bhn[2], col});
      return arith::ExtFOp::create(b, b.getF32Type(), x);
    };
    if (!rotate)
      return load(j);
    // y_j = sum_i x_i * s_i * (-1)^popcount(i & j) / sqrt(D)
    Value signs = arith::ConstantOp::create(b, signVector(b));
    Value ji = arith::IndexCastOp::create(b, b.getI32Type(), j);
    auto loop = scf::ForOp::create(b, index(b, 0), index(b, d), index(b, 1),
                                   ValueRange{f32(b, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      Value ii = arith::IndexCastOp::create(b, b.getI32Type(), i);
      Value parity = arith::AndIOp::create(
          b, math::CtPopOp::create(b, arith::AndIOp::create(b, ii, ji)),
          arith::ConstantOp::create(b, b.getI32IntegerAttr(1)));
      Value odd = arith::CmpIOp::create(
          b, arith::CmpIPredicate::ne, parity,
          arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
      Value s = vector::ExtractOp::create(b, signs, OpFoldResult(i));
      Value h = arith::SelectOp::create(b, odd, arith::NegFOp::create(b, s), s);
      Value term = arith::MulFOp::create(b, load(i), h);
      scf::YieldOp::create(
          b, ValueRange{arith::AddFOp::create(b, loop.getRegionIterArgs()[0],
                                              term)});
    }
    return arith::MulFOp::create(b, loop.getResult(0),
                                 f32(b, 1.0 / std::sqrt(double(d))));
  }

private:
  DenseElementsAttr signVector(ImplicitLocOpBuilder &b) const {
    std::mt19937 rng(kSignSeed);
    SmallVector<float> signs(d);
    for (float &s : signs)
      s = (rng() & 1) ? -1.0f : 1.0f;
    return DenseElementsAttr::get(VectorType::get({d}, b.getF32Type()),
                                  ArrayRef<float>(signs));
  }

  Value src;
  int64_t d;
  bool rotate;
};

/// Quantizes `src` ([B, H, N, D], H = Hkv * group) per (batch, KV head).
Quantized quantize(ImplicitLocOpBuilder &b, Value src, int64_t group,
                   bool rotate) {
  auto type = cast<MemRefType>(src.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t d = shape[3];
  auto fp8Type = MemRefType::get(shape, b.getType<Float8E4M3FNType>());
  Value fp8 = memref::AllocOp::create(b, fp8Type);
  Value descale = memref::AllocOp::create(
      b, MemRefType::get({shape[0], shape[1] / group}, b.getF32Type()));
  RowValue value(src, d, rotate);
  Value c0 = index(b, 0), c1 = index(b, 1);
  scf::buildLoopNest(
      b, b.getLoc(), {c0, c0}, {index(b, shape[0]), index(b, shape[1] / group)},
      {c1, c1}, [&](OpBuilder &nb, Location loc, ValueRange bk) {
        ImplicitLocOpBuilder ib(loc, nb);
        Value h0 = arith::MulIOp::create(ib, bk[1], index(ib, group));
        SmallVector<Value> lbs = {h0, c0, c0};
        SmallVector<Value> ubs = {
            arith::AddIOp::create(ib, h0, index(ib, group)),
            index(ib, shape[2]), index(ib, d)};
        SmallVector<Value> steps(3, c1);
        // amax over the slice of (b, kv_head).
        scf::LoopNest amaxLoop = scf::buildLoopNest(
            ib, loc, lbs, ubs, steps, ValueRange{f32(ib, 0.0)},
            [&](OpBuilder &lb, Location l, ValueRange hnj, ValueRange acc) {
              ImplicitLocOpBuilder eb(l, lb);
              Value y = value.build(eb, {bk[0], hnj[0], hnj[1]}, hnj[2]);
              return scf::ValueVector{arith::MaximumFOp::create(
                  eb, acc[0], math::AbsFOp::create(eb, y))};
            });
        Value amax = amaxLoop.results[0];
        // descale = amax / 448 (1 for an all-zero slice).
        Value positive = arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT,
                                               amax, f32(ib, 0.0));
        Value scale = arith::SelectOp::create(
            ib, positive, arith::DivFOp::create(ib, amax, f32(ib, kE4M3Max)),
            f32(ib, 1.0));
        memref::StoreOp::create(ib, scale, descale, bk);
        scf::buildLoopNest(
            ib, loc, lbs, ubs, steps,
            [&](OpBuilder &lb, Location l, ValueRange hnj) {
              ImplicitLocOpBuilder eb(l, lb);
              Value y = value.build(eb, {bk[0], hnj[0], hnj[1]}, hnj[2]);
              Value q = arith::TruncFOp::create(
                  eb, eb.getType<Float8E4M3FNType>(),
                  arith::DivFOp::create(eb, y, scale));
              memref::StoreOp::create(eb, q, fp8,
                                      ValueRange{bk[0], hnj[0], hnj[1], hnj[2]});
            });
      });
  return {fp8, descale};
}

LogicalResult quantizeAttention(AttentionOp op, bool hadamard) {
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto kType = cast<MemRefType>(op.getK().getType());
  if (!qType.getElementType().isBF16())
    return op.emitOpError() << "attn-quantize-fp8 takes bf16 inputs (the FP8 "
                               "attention writes a bf16 O), but got "
                            << qType.getElementType();
  if (!qType.hasStaticShape() || !kType.hasStaticShape())
    return op.emitOpError("attn-quantize-fp8 needs static shapes");
  int64_t d = qType.getDimSize(3);
  if (hadamard && !llvm::isPowerOf2_64(d))
    return op.emitOpError() << "attn-quantize-fp8 hadamard=true needs a "
                               "power-of-two head dim D, but got "
                            << d;
  ImplicitLocOpBuilder b(op.getLoc(), op);
  int64_t group = qType.getDimSize(1) / kType.getDimSize(1);
  Quantized q = quantize(b, op.getQ(), group, hadamard);
  Quantized k = quantize(b, op.getK(), 1, hadamard);
  Quantized v = quantize(b, op.getV(), 1, /*rotate=*/false);
  AttentionOp::create(b, q.fp8, k.fp8, v.fp8, op.getO(), op.getLse(),
                      q.descale, k.descale, v.descale, op.getScaleAttr(),
                      op.getCausalAttr());
  for (Value buf : {q.fp8, k.fp8, v.fp8, q.descale, k.descale, v.descale})
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
    for (AttentionOp op : ops)
      if (failed(quantizeAttention(op, hadamard)))
        return signalPassFailure();
  }
};

} // namespace

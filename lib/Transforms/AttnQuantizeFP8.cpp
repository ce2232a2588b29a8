//===- AttnQuantizeFP8.cpp - bf16 attn.attention -> quantize + FP8 --------===//
//
// Rewrites a bf16 attn.attention into a quantize step (scalar scf loops over
// the [B, H, N, D] buffers) and the FP8 attn.attention with descales. Each
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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

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
/// Seed of the Hadamard rotation's random signs (fixed: the rotation must be
/// the same for Q and K, and reproducible).
constexpr unsigned kSignSeed = 0x5eed;

/// One quantized operand: its FP8 copy and its descales.
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

/// The box [lo, hi) of a [B, H, N, D] source that one scale covers.
struct Box {
  SmallVector<Value> lo, hi;
};

/// How an operand is cut into scale groups: the shape of its descale
/// memref, and the box of the source each descale entry covers.
struct Groups {
  SmallVector<int64_t> shape;
  std::function<Box(ImplicitLocOpBuilder &, ValueRange)> box;
};

/// Everything: one scale ([1, 1]).
Groups perTensor(ArrayRef<int64_t> s) {
  SmallVector<int64_t> full(s);
  return {{1, 1}, [full](ImplicitLocOpBuilder &b, ValueRange) {
            Value c0 = index(b, 0);
            return Box{{c0, c0, c0, c0},
                       {index(b, full[0]), index(b, full[1]), index(b, full[2]),
                        index(b, full[3])}};
          }};
}

/// [B, H / group]: the `group` heads that share a KV head, all rows.
Groups perHead(ArrayRef<int64_t> s, int64_t group) {
  SmallVector<int64_t> full(s);
  return {{s[0], s[1] / group},
          [full, group](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value c0 = index(b, 0), c1 = index(b, 1);
            Value h0 = arith::MulIOp::create(b, idx[1], index(b, group));
            return Box{{idx[0], h0, c0, c0},
                       {arith::AddIOp::create(b, idx[0], c1),
                        arith::AddIOp::create(b, h0, index(b, group)),
                        index(b, full[2]), index(b, full[3])}};
          }};
}

/// [B, H, ceil(N / block)]: `block` rows of one head (the last block is
/// cut at N).
Groups perBlock(ArrayRef<int64_t> s, int64_t block) {
  SmallVector<int64_t> full(s);
  return {{s[0], s[1], static_cast<int64_t>(llvm::divideCeil(s[2], block))},
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
          }};
}

/// [B, H, D]: one column of D of one head, all rows.
Groups perChannel(ArrayRef<int64_t> s) {
  SmallVector<int64_t> full(s);
  return {{s[0], s[1], s[3]}, [full](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value c1 = index(b, 1);
            return Box{{idx[0], idx[1], index(b, 0), idx[2]},
                       {arith::AddIOp::create(b, idx[0], c1),
                        arith::AddIOp::create(b, idx[1], c1), index(b, full[2]),
                        arith::AddIOp::create(b, idx[2], c1)}};
          }};
}

/// Calls `body` with (b, h, n, j) for every element of `box`.
void forEach(ImplicitLocOpBuilder &b, const Box &box,
             function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body) {
  SmallVector<Value> steps(4, index(b, 1));
  scf::buildLoopNest(b, b.getLoc(), box.lo, box.hi, steps,
                     [&](OpBuilder &nb, Location loc, ValueRange ivs) {
                       ImplicitLocOpBuilder eb(loc, nb);
                       body(eb, ivs);
                     });
}

/// Quantizes `src` ([B, H, N, D]) with one scale per group of `groups`.
Quantized quantize(ImplicitLocOpBuilder &b, Value src, const Groups &groups,
                   bool rotate) {
  auto type = cast<MemRefType>(src.getType());
  ArrayRef<int64_t> shape = type.getShape();
  auto fp8Type = MemRefType::get(shape, b.getType<Float8E4M3FNType>());
  Value fp8 = memref::AllocOp::create(b, fp8Type);
  Value descale =
      memref::AllocOp::create(b, MemRefType::get(groups.shape, b.getF32Type()));
  RowValue value(src, shape[3], rotate);
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t n : groups.shape) {
    lbs.push_back(index(b, 0));
    ubs.push_back(index(b, n));
    steps.push_back(index(b, 1));
  }
  scf::buildLoopNest(
      b, b.getLoc(), lbs, ubs, steps,
      [&](OpBuilder &nb, Location loc, ValueRange idx) {
        ImplicitLocOpBuilder ib(loc, nb);
        Box box = groups.box(ib, idx);
        SmallVector<Value> steps(4, index(ib, 1));
        // amax over the group's box.
        scf::LoopNest amaxLoop = scf::buildLoopNest(
            ib, loc, box.lo, box.hi, steps, ValueRange{f32(ib, 0.0)},
            [&](OpBuilder &lb, Location l, ValueRange bhnj, ValueRange acc) {
              ImplicitLocOpBuilder eb(l, lb);
              Value y = value.build(eb, bhnj.take_front(3), bhnj[3]);
              return scf::ValueVector{arith::MaximumFOp::create(
                  eb, acc[0], math::AbsFOp::create(eb, y))};
            });
        Value amax = amaxLoop.results[0];
        // descale = amax / 448 (1 for an all-zero group).
        Value positive = arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT,
                                               amax, f32(ib, 0.0));
        Value scale = arith::SelectOp::create(
            ib, positive, arith::DivFOp::create(ib, amax, f32(ib, kE4M3Max)),
            f32(ib, 1.0));
        memref::StoreOp::create(ib, scale, descale, idx);
        forEach(ib, box, [&](ImplicitLocOpBuilder &eb, ValueRange bhnj) {
          Value y = value.build(eb, bhnj.take_front(3), bhnj[3]);
          Value q =
              arith::TruncFOp::create(eb, eb.getType<Float8E4M3FNType>(),
                                      arith::DivFOp::create(eb, y, scale));
          memref::StoreOp::create(eb, q, fp8, bhnj);
        });
      });
  return {fp8, descale};
}

/// A per-tensor descale ([1, 1]) repeated into the [B, Hkv] operand.
Value broadcastToHeads(ImplicitLocOpBuilder &b, Value one, int64_t batch,
                       int64_t heads) {
  Value perHead = memref::AllocOp::create(
      b, MemRefType::get({batch, heads}, b.getF32Type()));
  Value c0 = index(b, 0), c1 = index(b, 1);
  Value x = memref::LoadOp::create(b, one, ValueRange{c0, c0});
  scf::buildLoopNest(b, b.getLoc(), {c0, c0},
                     {index(b, batch), index(b, heads)}, {c1, c1},
                     [&](OpBuilder &nb, Location loc, ValueRange idx) {
                       memref::StoreOp::create(nb, loc, x, perHead, idx);
                     });
  memref::DeallocOp::create(b, one);
  return perHead;
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
    qGroups = perTensor(qs);
    kGroups = perTensor(ks);
  } else if (opts.qk == QkGranularity::block) {
    qGroups = perBlock(qs, bm);
    kGroups = perBlock(ks, bn);
  }
  Quantized q = quantize(b, op.getQ(), qGroups, opts.hadamard);
  Quantized k = quantize(b, op.getK(), kGroups, opts.hadamard);
  if (opts.qk == QkGranularity::tensor) {
    q.descale = broadcastToHeads(b, q.descale, qs[0], ks[1]);
    k.descale = broadcastToHeads(b, k.descale, ks[0], ks[1]);
  }
  Quantized v = quantize(b, op.getV(),
                         opts.v == VGranularity::channel ? perChannel(ks)
                                                         : perHead(ks, 1),
                         /*rotate=*/false);
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

//===- AttnQuantizeFP8.cpp - bf16 attn.attention -> quantize + FP8 --------===//
//
// Rewrites a bf16 attn.attention into a quantize step (block/thread grids
// over the [B, H, N, D] buffers that lower as loops on the host and as
// kernels on the GPU) and the FP8 attn.attention with descales. The scale
// groups and the Hadamard rotation are QuantizeBuilders.h's; the step is
// one grid of every amax (buildAmaxLaunch; per-block Q and K finish there),
// then one copy grid per other operand (QuantizeGrids.h): two GPU launches
// with the defaults, no atomics.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"
#include "attn/Transforms/SelectConfig.h"
#include "attn/Transforms/StrictOptions.h"

#include "QuantizeGrids.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <utility>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNQUANTIZEFP8
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::quantize;

namespace {

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

  /// What the step reads: src's rows, rotated or not.
  RowValue value() const {
    return RowValue(src, cast<MemRefType>(src.getType()).getDimSize(3),
                    rotate);
  }
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
    RowValue value = s.value();
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
    RowValue value = s.value();
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
  // Every operand's shape sizes the quantize grids and the copies.
  for (auto [name, v] : {std::pair<StringRef, Value>{"Q", op.getQ()},
                         {"K", op.getK()}, {"V", op.getV()}, {"O", op.getO()},
                         {"LSE", op.getLse()}})
    if (v && !cast<MemRefType>(v.getType()).hasStaticShape())
      return op.emitOpError() << "attn-quantize-fp8 needs static shapes, but "
                              << name << " is " << v.getType();
  int64_t d = qType.getDimSize(3);
  if (opts.hadamard && !llvm::isPowerOf2_64(d))
    return op.emitOpError() << "attn-quantize-fp8 hadamard=true needs a "
                               "power-of-two head dim D, but got "
                            << d;
  // Block sizes 0: the tile attn-select-config chooses for the FP8
  // attention (given ones are the scales' blocks, any size).
  int64_t bm = opts.blockM, bn = opts.blockN;
  if (!bm || !bn) {
    ConfigRequest request;
    request.blockM = bm;
    request.blockN = bn;
    request.computeType = Float8E4M3FNType::get(op.getContext());
    FailureOr<ConfigAttr> config = selectConfig(op, request);
    if (failed(config))
      return failure();
    bm = config->getBlockM();
    bn = config->getBlockN();
  }
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
  auto fp8 = AttentionOp::create(
      b, q.fp8, k.fp8, v.fp8, op.getO(), op.getLse(), q.descale, k.descale,
      v.descale,
      /*block_table=*/Value(),
      /*cache_seqlens=*/Value(), op.getSinks(), op.getAlibiSlopes(),
      op.getScaleAttr(), op.getCausalAttr(), op.getKeyMaskAttr(),
      /*q_descale_block=*/nullptr,
      /*k_descale_block=*/nullptr, op.getSoftcapAttr());
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
    : StrictOptions<attn::impl::AttnQuantizeFP8Base<AttnQuantizeFP8Pass>> {
  using StrictOptions::StrictOptions;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.isFP8())
        ops.push_back(op);
    });
    if (blockM < 0 || blockN < 0) {
      // An option, not in the input: no location.
      emitError(UnknownLoc::get(&getContext()))
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

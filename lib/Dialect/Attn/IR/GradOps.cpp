//===- GradOps.cpp - backward ops -------------------------------------------===//
//
// attn.attention_grad, its tile ops and the Hopper dK/dV op.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "OpChecks.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/InterleavedRange.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::checks;

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

int64_t AttentionGradOp::getHeadDim() {
  return cast<MemRefType>(getQ().getType()).getDimSize(3);
}

float AttentionGradOp::getScaleOrDefault() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}


LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  if (failed(checkNotLowered(op)))
    return failure();
  // Rank, memory space, layout, D stride and extent, in operand order.
  StringRef qLayout = "[B, Hq, Nq, D]", kLayout = "[B, Hkv, Nk, D]";
  SmallVector<std::tuple<StringRef, Value, StringRef>> tensors = {
      {"q", getQ(), qLayout},   {"k", getK(), kLayout},
      {"v", getV(), kLayout},   {"o", getO(), qLayout},
      {"dO", getDO(), qLayout}, {"dQ", getDQ(), qLayout},
      {"dK", getDK(), kLayout}, {"dV", getDV(), kLayout}};
  SmallVector<MemRefType> types;
  for (auto [name, value, layout] : tensors) {
    FailureOr<MemRefType> t = checkRank(op, value, name, 4, layout);
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  FailureOr<MemRefType> lse = checkRank(op, getLse(), "lse", 3, "[B, Hq, Nq]");
  if (failed(lse))
    return failure();

  // dK/dV are written before the dQ nest reads K and V.
  if (failed(
          checkNoAliasing(op,
                          {{"q", getQ()},
                           {"k", getK()},
                           {"v", getV()},
                           {"o", getO()},
                           {"dO", getDO()},
                           {"lse", getLse()}},
                          {{"dQ", getDQ()}, {"dK", getDK()}, {"dV", getDV()}})))
    return failure();

  // Element types: one of f16, bf16, f32 for all eight; LSE is f32.
  Type qElt = types[0].getElementType();
  if (!isGradElement(qElt))
    return emitOpError() << "operand 'q' element type must be f16, bf16 or "
                            "f32 (there is no FP8 backward), but got "
                         << qElt;
  for (auto [i, t] : llvm::enumerate(types))
    if (t.getElementType() != qElt)
      return emitOpError() << "operand '" << std::get<0>(tensors[i])
                           << "' element type must match 'q' (" << qElt
                           << "), but got " << t.getElementType();
  if (!lse->getElementType().isF32())
    return emitOpError() << "operand 'lse' element type must be f32, but got "
                         << lse->getElementType();

  // Shapes: K agrees with Q on B and D; the rest match Q or K.
  ArrayRef<int64_t> qs = types[0].getShape(), ks = types[1].getShape();
  if (failed(checkDim(op, types[1], "k", 0, "batch B", qs[0], "q")) ||
      failed(checkDim(op, types[1], "k", 3, "head dim D", qs[3], "q")))
    return failure();
  for (auto [i, t] : llvm::enumerate(types)) {
    StringRef layout = std::get<2>(tensors[i]);
    if (i > 1 && failed(checkSameShape(op, t, std::get<0>(tensors[i]),
                                       layout == qLayout ? qs : ks,
                                       layout == qLayout ? "q" : "k")))
      return failure();
  }
  int64_t hq = qs[1], hkv = ks[1], d = qs[3];
  if (failed(checkHeadsAndDim(op, hq, hkv, d)))
    return failure();
  SmallVector<int64_t> lseShape = {qs[0], qs[1], qs[2]};
  for (auto [got, want] : llvm::zip_equal(lse->getShape(), lseShape))
    if (dimsDiffer(got, want))
      return emitOpError() << "operand 'lse' shape must be [B, Hq, Nq] = "
                           << shapeStr(lseShape) << ", but got "
                           << shapeStr(lse->getShape());
  if (failed(checkScaleAttr(*this, getScaleAttr())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Backward tile ops
//===----------------------------------------------------------------------===//

namespace {
/// An fp32 [B, H, N] memref (LSE, Delta).
LogicalResult checkRowsMemRef(Operation *op, Value v, StringRef name) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() != 3 || !t.getElementType().isF32())
    return op->emitOpError()
           << "operand '" << name
           << "' must be an f32 [B, H, N] memref, but got " << t;
  return checkMemRef(op, t, name);
}

/// A [rows, D] tile of f16, bf16 or f32 (rows or D given: must match).
FailureOr<VectorType> checkGradTile(Operation *op, Value v, StringRef name,
                                    int64_t rows, int64_t d, Type elt) {
  auto t = cast<VectorType>(v.getType());
  bool ok = t.getRank() == 2 && isGradElement(t.getElementType()) &&
            (!elt || t.getElementType() == elt) &&
            (rows < 0 || t.getDimSize(0) == rows) &&
            (d < 0 || t.getDimSize(1) == d);
  if (!ok) {
    auto diag = op->emitOpError() << "operand '" << name << "' must be a [";
    diag << (rows < 0 ? "ROWS" : std::to_string(rows)) << ", "
         << (d < 0 ? "D" : std::to_string(d)) << "] tile of ";
    if (elt)
      diag << elt;
    else
      diag << "f16, bf16 or f32";
    diag << ", but got " << t;
    return failure();
  }
  return t;
}

/// What the two backward steps share: Q, dO [BLOCK_M, D] of one element
/// type, LSE and Delta rows, scale, and causal_offset with the causal mask.
FailureOr<VectorType> checkGradStep(Operation *op, Value q, Value dO, Value lse,
                                    Value delta, APFloat scale, MaskKind mask,
                                    Value causalOffset) {
  FailureOr<VectorType> qt = checkGradTile(op, q, "q", -1, -1, Type());
  if (failed(qt))
    return failure();
  int64_t blockM = qt->getDimSize(0), d = qt->getDimSize(1);
  if (failed(checkGradTile(op, dO, "dO", blockM, d, qt->getElementType())) ||
      failed(checkF32Vector(op, lse.getType(), "lse", {blockM})) ||
      failed(checkF32Vector(op, delta.getType(), "delta", {blockM})) ||
      failed(checkScale(op, scale.convertToDouble())))
    return failure();
  if ((mask == MaskKind::causal) != static_cast<bool>(causalOffset))
    return op->emitOpError() << "operand 'causal_offset' must be present "
                                "exactly when mask is causal";
  return qt;
}
} // namespace

LogicalResult LoadRowsOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkRowsMemRef(*this, getSource(), "source")) ||
      failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  if (int64_t block = getRowBlock(); block < 1)
    return emitOpError() << "attribute 'row_block' must be at least 1, but got "
                         << block;
  auto res = cast<VectorType>(getResult().getType());
  if (res.getRank() != 1 || !res.getElementType().isF32())
    return emitOpError() << "result must be vector<BLOCK_M x f32>, but got "
                         << res;
  return success();
}

LogicalResult StoreRowsOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkRowsMemRef(*this, getDest(), "dest")))
    return failure();
  auto value = cast<VectorType>(getValue().getType());
  if (value.getRank() != 1 || !value.getElementType().isF32())
    return emitOpError() << "operand 'value' must be vector<BLOCK_M x f32>, "
                            "but got "
                         << value;
  return success();
}

LogicalResult StoreTileOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  // A vector, or the warpgroup fragments of the tensor-core backward.
  Type type = getValue().getType();
  auto frag = dyn_cast<WgFragmentType>(type);
  auto value = frag ? frag.getTileType() : cast<VectorType>(type);
  if (value.getRank() != 2 || !value.getElementType().isF32())
    return emitOpError() << "operand 'value' must be a [ROWS, D] f32 tile, "
                            "but got "
                         << type;
  auto dest = cast<MemRefType>(getDest().getType());
  if (dest.getRank() != 4 || !isGradElement(dest.getElementType()) ||
      dimsDiffer(dest.getDimSize(3), value.getDimSize(1)))
    return emitOpError() << "operand 'dest' must be a [B, H, N, "
                         << value.getDimSize(1)
                         << "] memref of f16, bf16 or f32, but got " << dest;
  return checkMemRef(*this, dest, "dest");
}

LogicalResult GradDeltaOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> o = checkGradTile(*this, getO(), "o", -1, -1, Type());
  if (failed(o) || failed(checkGradTile(*this, getDO(), "dO", o->getDimSize(0),
                                        o->getDimSize(1), o->getElementType())))
    return failure();
  if (getDelta().getType() !=
      VectorType::get({o->getDimSize(0)}, Float32Type::get(getContext())))
    return emitOpError() << "result must be vector<" << o->getDimSize(0)
                         << "xf32>, but got " << getDelta().getType();
  return success();
}

LogicalResult GradDKDVOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> q =
      checkGradStep(*this, getQ(), getDO(), getLse(), getDelta(), getScale(),
                    getMask(), getCausalOffset());
  if (failed(q))
    return failure();
  int64_t d = q->getDimSize(1);
  FailureOr<VectorType> k =
      checkGradTile(*this, getK(), "k", -1, d, q->getElementType());
  if (failed(k))
    return failure();
  int64_t blockN = k->getDimSize(0);
  if (!isValidBlockN(blockN))
    return emitOpError() << "operand 'k' must have BLOCK_N in [1, "
                         << kMaxBlockN << "] rows, but got " << blockN;
  if (failed(
          checkGradTile(*this, getV(), "v", blockN, d, q->getElementType())) ||
      failed(checkF32Vector(*this, getDK().getType(), "dK", {blockN, d})) ||
      failed(checkF32Vector(*this, getDV().getType(), "dV", {blockN, d})))
    return failure();
  if (getMask() == MaskKind::bounds)
    return emitOpError() << "attribute 'mask' must be none or causal (rows "
                            "past Nq load as zero and contribute nothing), "
                            "but got bounds";
  return success();
}

LogicalResult GradDQOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  FailureOr<VectorType> q =
      checkGradStep(*this, getQ(), getDO(), getLse(), getDelta(), getScale(),
                    getMask(), getCausalOffset());
  if (failed(q))
    return failure();
  int64_t d = q->getDimSize(1);
  for (auto [name, val] : {std::pair<StringRef, Value>{"k", getK()},
                           std::pair<StringRef, Value>{"v", getV()}}) {
    auto t = cast<MemRefType>(val.getType());
    if (t.getRank() != 4 || dimsDiffer(t.getDimSize(3), d) ||
        t.getElementType() != q->getElementType())
      return emitOpError() << "operand '" << name << "' must be a [B, Hkv, "
                           << "Nk, " << d << "] memref of "
                           << q->getElementType() << ", but got " << t;
    if (failed(checkMemRef(*this, t, name)))
      return failure();
  }
  if (!isValidBlockN(getBlockN()))
    return emitOpError() << "attribute 'block_n' must be in [1, " << kMaxBlockN
                         << "], but got " << getBlockN();
  return checkF32Vector(*this, getDQ().getType(), "dQ", {q->getDimSize(0), d});
}

//===----------------------------------------------------------------------===//
// GradDKDVMmaOp
//===----------------------------------------------------------------------===//

int64_t GradDKDVMmaOp::getBlockM() {
  return cast<MemRefType>(getQ().getType()).getDimSize(1);
}

int64_t GradDKDVMmaOp::getBlockN() {
  return cast<MemRefType>(getK().getType()).getDimSize(1);
}

namespace {
/// Checks that `v` is an fp32 memref of `rank` (LSE, Delta: 3; dQ: 4).
LogicalResult checkF32MemRef(Operation *op, Value v, StringRef name,
                             int64_t rank) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == rank && t.getElementType().isF32())
    return success();
  return op->emitOpError() << "operand '" << name << "' must be a rank-"
                           << rank << " f32 memref, but got " << t;
}
} // namespace

LogicalResult GradDKDVMmaOp::verify() {
  int64_t d = getHeadDim();
  if (d != 64 && d != 128)
    return emitOpError() << "attribute 'head_dim' must be 64 or 128 (dK and "
                            "dV stay in registers), but got "
                         << d;
  Type elt = cast<MemRefType>(getQ().getType()).getElementType();
  if (!elt.isF16() && !elt.isBF16())
    return emitOpError() << "operand 'q' element type must be f16 or bf16, "
                            "but got "
                         << elt;
  Operation *op = getOperation();
  int64_t blockM = 64, blockN = 128;
  if (failed(checkSharedTile(op, getQ(), "q", blockM, d, elt)) ||
      failed(checkSharedTile(op, getDO(), "dO", blockM, d, elt)) ||
      failed(checkSharedTile(op, getK(), "k", blockN, d, elt)) ||
      failed(checkSharedTile(op, getV(), "v", blockN, d, elt)) ||
      failed(checkSharedTile(op, getDs(), "ds", blockM, blockN, elt)) ||
      failed(checkF32MemRef(op, getLseLog2(), "lse_log2", 3)) ||
      failed(checkF32MemRef(op, getDelta(), "delta", 3)) ||
      failed(checkF32MemRef(op, getDqAcc(), "dq_acc", 6)) ||
      failed(checkWgFragment(op, getDK().getType(), "dK", {blockN, d})) ||
      failed(checkWgFragment(op, getDV().getType(), "dV", {blockN, d})))
    return failure();
  // Read unguarded, a whole Q block at a time.
  for (auto [rows, name] :
       {std::pair<Value, StringRef>{getLseLog2(), "lse_log2"},
        {getDelta(), "delta"}}) {
    auto type = cast<MemRefType>(rows.getType());
    if (type.isDynamicDim(2) || type.getDimSize(2) % blockM != 0)
      return emitOpError() << "operand '" << name << "' must hold whole Q "
                           << "blocks (rows a multiple of " << blockM
                           << ", +inf and 0 past Nq), but got " << type;
  }
  auto stage = cast<MemRefType>(getDqStage().getType());
  auto space =
      dyn_cast_if_present<gpu::AddressSpaceAttr>(stage.getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !stage.getElementType().isF32() ||
      stage.getShape() != ArrayRef<int64_t>{2, blockM, d / 2})
    return emitOpError() << "operand 'dq_stage' must be a workgroup-memory "
                            "[2, 64, "
                         << d / 2 << "] f32 buffer, but got " << stage;
  auto acc = cast<MemRefType>(getDqAcc().getType());
  if (acc.getDimSize(3) != 2 || acc.getDimSize(4) != blockM ||
      acc.getDimSize(5) != d / 2)
    return emitOpError() << "operand 'dq_acc' must be [B, Hq, Q blocks, 2, "
                            "64, "
                         << d / 2 << "] tiles, but got " << acc;
  if (failed(checkScale(*this, getScale().convertToDouble())))
    return failure();
  if (getMask() == MaskKind::bounds)
    return emitOpError() << "attribute 'mask' must be none or causal, but "
                            "got bounds";
  if ((getMask() == MaskKind::causal) != static_cast<bool>(getCausalOffset()))
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  return success();
}


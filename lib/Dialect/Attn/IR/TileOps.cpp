//===- TileOps.cpp - forward tile and Hopper ops ----------------------------===//
//
// The ops attn-tile, attn-online-softmax and attn-async-pipeline produce.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "OpChecks.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/InterleavedRange.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::checks;

//===----------------------------------------------------------------------===//
// Tile ops
//===----------------------------------------------------------------------===//

namespace {
/// O's TMA descriptor: [1, 1, 64, 64] boxes (one warpgroup's rows, one
/// 128-byte chunk of D) of O's element type, 128-byte swizzled, used with
/// the staging tile it is stored from.
LogicalResult checkStoreMap(EpilogueOp op, Value map, Type elt) {
  auto type = dyn_cast<nvgpu::TensorMapDescriptorType>(map.getType());
  MemRefType box = type ? type.getTensor() : MemRefType();
  // GQA packing: 64 / G queries of G heads, on O's [B, N, H, D] view.
  int64_t g = op.getGqaPack();
  SmallVector<int64_t> shape = {1, 1, kWarpgroupRows, 64};
  if (g > 1)
    shape = {1, kWarpgroupRows / g, g, 64};
  if (!box || box.getShape() != ArrayRef<int64_t>(shape) ||
      box.getElementType() != elt ||
      type.getSwizzle() != nvgpu::TensorMapSwizzleKind::SWIZZLE_128B)
    return op.emitOpError() << "operand 'o_map' must be a 128-byte swizzled "
                               "!nvgpu.tensormap.descriptor of ["
                            << llvm::interleaved(shape, ", ") << "] boxes of "
                            << elt << ", but got " << map.getType();
  if (!op.getStaging())
    return op.emitOpError() << "operand 'o_map' needs the 'staging' tile the "
                               "TMA stores read";
  return success();
}

/// The shape of a state value: a vector's, or a warpgroup fragment's.
ArrayRef<int64_t> stateShape(Type t) {
  if (auto frag = dyn_cast<WgFragmentType>(t))
    return frag.getShape();
  return cast<VectorType>(t).getShape();
}

/// m, l: !attn.wg_fragment<BLOCK_M x f32>; acc: !attn.wg_fragment<BLOCK_M x
/// D x f32>: all three fragments (or none: checkState).
LogicalResult checkFragments(Operation *op, Type m, Type l, Type acc,
                             int64_t blockM, int64_t d) {
  if (failed(checkWgFragment(op, m, "m", {blockM})) ||
      failed(checkWgFragment(op, l, "l", {blockM})) ||
      failed(checkWgFragment(op, acc, "acc", {blockM, d})))
    return failure();
  return success();
}

/// m, l: vector<BLOCK_M x f32>; acc: vector<BLOCK_M x D x f32>; or the
/// three as warpgroup fragments (checkFragments).
LogicalResult checkState(Operation *op, Type m, Type l, Type acc,
                         int64_t blockM, int64_t d) {
  if (isa<WgFragmentType>(m) || isa<WgFragmentType>(l) ||
      isa<WgFragmentType>(acc))
    return checkFragments(op, m, l, acc, blockM, d);
  if (failed(checkF32Vector(op, m, "m", {blockM})) ||
      failed(checkF32Vector(op, l, "l", {blockM})) ||
      failed(checkF32Vector(op, acc, "acc", {blockM, d})))
    return failure();
  return success();
}

} // namespace

LogicalResult LoadTileOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  if (failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<VectorType>(getResult().getType());
  if (src.getRank() != 4)
    return emitOpError() << "operand 'source' must be a rank-4 memref, but "
                            "got rank "
                         << src.getRank();
  if (failed(checkMemRef(*this, src, "source")))
    return failure();
  // f32: the backward's inputs (attn-tile-grad) may be f32.
  if (!isSupportedInput(src.getElementType()) && !src.getElementType().isF32())
    return emitOpError() << "operand 'source' element type must be f16, "
                            "bf16, f32 or f8E4M3FN, but got "
                         << src.getElementType();
  if (res.getRank() != 2 || res.getElementType() != src.getElementType() ||
      tileExceeds(res.getDimSize(1), src.getDimSize(3)))
    return emitOpError() << "result must be a [BLOCK_M, Dt] vector of the "
                            "source element type with Dt <= D ("
                         << dimStr(src.getDimSize(3)) << "), but got " << res;
  return success();
}

Value OnlineAttentionOp::getKeyCount(OpBuilder &b) {
  if (Value n = getNumKeys())
    return n;
  return b.createOrFold<memref::DimOp>(getLoc(), getK(), 2);
}

LogicalResult OnlineAttentionOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  auto q = cast<VectorType>(getQ().getType());
  if (q.getRank() != 2)
    return emitOpError() << "operand 'q' must be a [BLOCK_M, D] tile, but got "
                         << q;
  int64_t blockM = q.getDimSize(0), d = q.getDimSize(1);
  // The decomposition widens Q, K and V to f32 (arith.extf).
  if (!isSupportedInput(q.getElementType()) && !q.getElementType().isF32())
    return emitOpError() << "operand 'q' element type must be f16, bf16, f32 "
                            "or f8E4M3FN, but got "
                         << q.getElementType();
  for (auto [name, val] : {std::pair<StringRef, Value>{"k", getK()},
                           std::pair<StringRef, Value>{"v", getV()}}) {
    auto t = cast<MemRefType>(val.getType());
    if (t.getRank() != 4 || tileExceeds(d, t.getDimSize(3)) ||
        t.getElementType() != q.getElementType())
      return emitOpError() << "operand '" << name
                           << "' must be a [B, Hkv, Nk, D >= " << d
                           << "] memref of " << q.getElementType()
                           << ", but got " << t;
    if (failed(checkMemRef(*this, t, name,
                           /*vt=*/name == "v" &&
                               isFP8(t.getElementType()))))
      return failure();
  }
  if (!isValidBlockN(getBlockN()))
    return emitOpError() << "attribute 'block_n' must be in [1, " << kMaxBlockN
                         << "], but got " << getBlockN();
  if (failed(checkScale(*this, getScale().convertToDouble())))
    return failure();
  int64_t lanes = getRowLanes();
  if (lanes < 1 || lanes > 32 || !llvm::isPowerOf2_64(lanes))
    return emitOpError() << "attribute 'row_lanes' must be a power of two in "
                            "[1, 32], but got "
                         << lanes;
  if (lanes > 1 && blockM != 1)
    return emitOpError() << "attribute 'row_lanes' > 1 requires a one-row "
                            "tile, but 'q' has "
                         << blockM << " rows";
  bool causal = getMask() == MaskKind::causal;
  if (Value slopes = getAlibiSlopes()) {
    if (!getCausalOffset())
      return emitOpError() << "operand 'causal_offset' (the rows' key "
                              "positions) is required with alibi_slopes";
    if (failed(
            checkF32Vector(*this, slopes.getType(), "alibi_slopes", {blockM})))
      return failure();
  } else if (causal != static_cast<bool>(getCausalOffset())) {
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  }
  if (getKeyMask() && !causal)
    return emitOpError() << "attribute 'key_mask' needs mask causal (its "
                            "interval is placed by causal_offset)";
  if (failed(checks::checkSoftcapAttr(*this, getSoftcapAttr(),
                                      /*allowOff=*/false)))
    return failure();
  if (failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  for (auto [name, val] :
       {std::pair<StringRef, Value>{"qk_descale", getQkDescale()},
        {"row_descale", getRowDescale()},
        {"key_descale", getKeyDescale()}})
    if (val && !isFP8(q.getElementType()))
      return emitOpError() << "operand '" << name
                           << "' is only valid for an f8E4M3FN tile, but 'q' "
                              "is "
                           << q.getElementType();
  if (Value rows = getRowDescale())
    if (failed(checkF32Vector(*this, rows.getType(), "row_descale", {blockM})))
      return failure();
  if (Value keys = getKeyDescale())
    if (failed(checkF32Vector(*this, keys.getType(), "key_descale",
                              {int64_t(getBlockN())})))
      return failure();
  if (Value table = getBlockTable()) {
    auto t = cast<MemRefType>(table.getType());
    if (t.getRank() != 2 || !t.getElementType().isInteger(32))
      return emitOpError() << "operand 'block_table' must be an i32 "
                              "[B, max_pages] memref, but got "
                           << t;
    if (!getNumKeys())
      return emitOpError() << "operand 'num_keys' is required with "
                              "'block_table' (the sequence's key count)";
    if (getKeyOffset())
      return emitOpError() << "operand 'key_offset' (varlen) cannot be "
                              "combined with 'block_table' (paged K/V)";
  }
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}

LogicalResult EpilogueOp::verify() {
  if (failed(checkNotLowered(*this)) ||
      failed(checkGqaPack(*this, getGqaPack())))
    return failure();
  ArrayRef<int64_t> acc = stateShape(getAcc().getType());
  if (acc.size() != 2)
    return emitOpError() << "operand 'acc' must be a [BLOCK_M, D] f32 tile";
  int64_t blockM = acc[0], d = acc[1];
  if (failed(checkState(getOperation(), getM().getType(), getL().getType(),
                        getAcc().getType(), blockM, d)))
    return failure();
  auto o = cast<MemRefType>(getO().getType());
  if (o.getRank() != 4 || tileExceeds(d, o.getDimSize(3)))
    return emitOpError() << "operand 'o' must be a [B, Hq, Nq, D >= " << d
                         << "] memref, but got " << o;
  if (failed(checkMemRef(*this, o, "o")))
    return failure();
  // O is the f32 accumulator, narrowed (arith.truncf) unless f32 (the
  // split-KV workspace).
  Type oElt = o.getElementType();
  if (!oElt.isF16() && !oElt.isBF16() && !oElt.isF32())
    return emitOpError() << "operand 'o' element type must be f16, bf16 or "
                            "f32, but got "
                         << o.getElementType();
  if (Value lse = getLse()) {
    auto lt = cast<MemRefType>(lse.getType());
    if (lt.getRank() != 3 || !lt.getElementType().isF32())
      return emitOpError() << "operand 'lse' must be an f32 [B, Hq, Nq] "
                              "memref, but got "
                           << lt;
    if (failed(checkMemRef(*this, lt, "lse")))
      return failure();
  }
  if (Value staging = getStaging()) {
    if (oElt.isF32())
      return emitOpError() << "operand 'staging' needs an f16 or bf16 'o', "
                              "but 'o' is f32";
    // Each consumer warpgroup stores its 64 rows as whole queries.
    if (kWarpgroupRows % getGqaPack() != 0)
      return emitOpError() << "operand 'staging' (the tensor-core epilogue) "
                              "needs gqa_pack to divide 64 (a warpgroup's "
                              "rows hold whole queries), but got "
                           << getGqaPack();
    if (failed(checkSharedTile(getOperation(), staging, "staging", blockM, d,
                               o.getElementType())))
      return failure();
  }
  if (Value channels = getChannelDescale())
    if (failed(
            checkF32Vector(*this, channels.getType(), "channel_descale", {d})))
      return failure();
  if (Value map = getOMap())
    return checkStoreMap(*this, map, o.getElementType());
  return success();
}

LogicalResult ToWgFragmentOp::verify() {
  if (getResult().getType().getTileType() != getSource().getType())
    return emitOpError() << "result must hold the source's tile, "
                         << getSource().getType() << ", but got "
                         << getResult().getType();
  return success();
}

LogicalResult CombineStepOp::verify() {
  if (failed(checkNotLowered(*this)))
    return failure();
  auto o = cast<VectorType>(getOS().getType());
  if (o.getRank() != 2 || !o.getElementType().isF32())
    return emitOpError() << "operand 'o_s' must be a [BLOCK_M, D] f32 tile, "
                            "but got "
                         << o;
  int64_t blockM = o.getDimSize(0), d = o.getDimSize(1);
  if (failed(checkF32Vector(*this, getLseS().getType(), "lse_s", {blockM})))
    return failure();
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}

//===----------------------------------------------------------------------===//
// Hopper pipeline ops
//===----------------------------------------------------------------------===//

LogicalResult WarpSpecializeOp::verify() {
  int64_t groups = getConsumerWarpgroups();
  if (groups < 1 || groups > kMaxConsumerWarpgroups)
    return emitOpError() << "attribute 'consumer_warpgroups' must be 1, 2 or "
                            "3, but got "
                         << groups;
  for (auto [name, regs] : {std::pair<StringRef, int64_t>{
                                "producer_registers", getProducerRegisters()},
                            {"consumer_registers", getConsumerRegisters()}})
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      return emitOpError() << "attribute '" << name
                           << "' must be a multiple of 8 in [24, 256] "
                              "(setmaxnreg), but got "
                           << regs;
  if (getPingPong() && groups < 2)
    return emitOpError() << "ping_pong needs two or three consumer "
                            "warpgroups, but got "
                         << groups;
  int64_t total =
      128 * (getProducerRegisters() + groups * getConsumerRegisters());
  if (total > kRegistersPerSM)
    return emitOpError() << "register budgets need " << total
                         << " registers per CTA, but an SM has "
                         << kRegistersPerSM;
  return success();
}

int64_t OnlineAttentionMmaOp::getBlockM() {
  return cast<MemRefType>(getQ().getType()).getDimSize(1);
}

int64_t OnlineAttentionMmaOp::getBlockN() {
  return cast<MemRefType>(getK().getType()).getDimSize(1);
}

bool OnlineAttentionMmaOp::isFP8() {
  return checks::isFP8(cast<MemRefType>(getQ().getType()).getElementType());
}

LogicalResult OnlineAttentionMmaOp::verify() {
  int64_t d = getHeadDim();
  if (d <= 0 || d > 256 || d % 8 != 0)
    return emitOpError() << "attribute 'head_dim' must be a multiple of 8 in "
                            "[8, 256], but got "
                         << d;
  auto q = cast<MemRefType>(getQ().getType());
  Type elt = q.getElementType();
  bool fp8 = checks::isFP8(elt);
  if (!elt.isF16() && !elt.isBF16() && !fp8)
    return emitOpError() << "operand 'q' element type must be f16, bf16 or "
                            "f8E4M3FN, but got "
                         << elt;
  if (q.getRank() != 3 || ShapedType::isDynamic(q.getDimSize(1)) ||
      q.getDimSize(1) % 64 != 0)
    return emitOpError() << "operand 'q' must be a [C, BLOCK_M, 128 bytes] "
                            "tile with BLOCK_M a multiple of 64, but got "
                         << q;
  int64_t blockM = getBlockM();
  if (failed(checkSharedTile(getOperation(), getQ(), "q", blockM, d, elt)))
    return failure();
  auto k = cast<MemRefType>(getK().getType());
  int64_t blockN = k.getRank() == 3 ? k.getDimSize(1) : 0;
  int64_t blockNStep = fp8 ? 32 : 16; // FP8: k32 steps of P V
  if (ShapedType::isDynamic(blockN) || blockN <= 0 ||
      blockN % blockNStep != 0 || blockN > 256)
    return emitOpError() << "operand 'k' must be a [C, BLOCK_N, 128 bytes] "
                            "tile with BLOCK_N a multiple of "
                         << blockNStep << " in [" << blockNStep
                         << ", 256], but got " << k;
  if (failed(checkSharedTile(getOperation(), getK(), "k", blockN, d, elt)))
    return failure();
  if (fp8 ? failed(checkSharedTile(getOperation(), getV(), "v", d, blockN,
                                   elt))
          : failed(checkSharedTile(getOperation(), getV(), "v", blockN, d,
                                   elt)))
    return failure();
  if (fp8 != static_cast<bool>(getQkDescale()))
    return emitOpError() << "operand 'qk_descale' must be present exactly "
                            "when the tiles are f8E4M3FN";
  if (failed(checkScale(*this, getScale().convertToDouble())))
    return failure();
  if ((getMask() == MaskKind::causal) != static_cast<bool>(getCausalOffset()))
    return emitOpError() << "operand 'causal_offset' must be present exactly "
                            "when mask is causal";
  if (getKeyMask() && getMask() != MaskKind::causal)
    return emitOpError() << "attribute 'key_mask' needs mask causal (its "
                            "interval is placed by causal_offset)";
  if (getUnfilledTail() && (fp8 || getMask() == MaskKind::none))
    return emitOpError() << "attribute 'unfilled_tail' needs f16 or bf16 "
                            "tiles and a mask (rows past Nk are masked and "
                            "V's zeroed)";
  if (failed(checkGqaPack(getOperation(), getGqaPack())))
    return failure();
  return checkState(getOperation(), getM().getType(), getL().getType(),
                    getAcc().getType(), blockM, d);
}


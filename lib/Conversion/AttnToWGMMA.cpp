//===- AttnToWGMMA.cpp - Hopper tile ops -> warpgroup MMA (sm_90a) --------===//
//
// Lowers what attn-async-pipeline produced inside each CTA:
//  * the CTA-level online-softmax state (m, l: vector<BLOCK_M>, acc:
//    vector<BLOCK_M x D>) becomes each consumer thread's part of the wgmma
//    accumulator layout (m, l: vector<2>, acc: vector<D / 2>);
//  * attn.online_attention_mma becomes S = Q K^T (wgmma, both operands in
//    shared memory), the exp2-domain softmax on the S registers and
//    O += P V (wgmma with P as the register A operand, via inline PTX:
//    MLIR 22 has no op for it);
//  * attn.epilogue normalizes O and stores it through shared memory with
//    16-byte coalesced stores; LSE from the quad leaders;
//  * attn.warp_specialize becomes a branch on the warpgroup with setmaxnreg.
//
// The accumulator layout and the building blocks are in WarpgroupMMA.h; the
// bf16/f16 A operand of the next wgmma has the accumulator's pattern, so P
// goes from S's registers to A's with no data movement.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "WarpgroupMMA.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOWGMMA
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using namespace mlir::attn::wgmma;

/// Width of the O += P V accumulator for head dim D (wgmma takes any N
/// that is a multiple of 8).
int64_t paddedN(int64_t d) { return llvm::alignTo(d, 8); }

//===----------------------------------------------------------------------===//
// attn.online_attention_mma
//===----------------------------------------------------------------------===//

/// Ping-pong of two consumer warpgroups (FlashAttention-3 section 3.1):
/// named barrier 3 + w is warpgroup w's turn to issue its S GEMM; a
/// warpgroup waits for its turn, issues, and hands the turn to the other,
/// whose softmax then overlaps this one's GEMMs. Each barrier counts 256
/// threads: the 128 that wait and the 128 that hand over.
struct Turns {
  static constexpr int64_t kFirstBarrier = 3; // 0: CTA; 1, 2: epilogue
  Value id(ImplicitLocOpBuilder &b, Value warpgroup) const {
    return arith::IndexCastOp::create(
        b, b.getI32Type(),
        arith::AddIOp::create(b, warpgroup, cIndex(b, kFirstBarrier)));
  }
  void wait(ImplicitLocOpBuilder &b, const ThreadLayout &tl) const {
    NVVM::BarrierOp::create(b, Type(), id(b, tl.warpgroup), cI32(b, 256),
                            NVVM::BarrierReductionAttr(), Value());
  }
  void handOver(ImplicitLocOpBuilder &b, const ThreadLayout &tl) const {
    Value other = arith::SubIOp::create(b, cIndex(b, 1), tl.warpgroup);
    NVVM::BarrierArriveOp::create(b, id(b, other), cI32(b, 256));
  }
  /// Warpgroup 1 hands the first turn to warpgroup 0.
  void start(ImplicitLocOpBuilder &b) const {
    ThreadLayout tl = threadLayout(b);
    Value second = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         tl.warpgroup, cIndex(b, 1));
    auto ifOp = scf::IfOp::create(b, second, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::BarrierArriveOp::create(b, cI32(b, kFirstBarrier), cI32(b, 256));
  }
};

/// S = Q K^T for the warpgroup's 64 rows: ceil(D / 16) wgmma k16 steps, A
/// (Q) and B (K) K-major in shared memory. Returns the BLOCK_N / 2
/// accumulator registers.
SmallVector<Value> scoresGemm(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                              const ThreadLayout &tl, const Turns *turns) {
  MLIRContext *ctx = b.getContext();
  int64_t bm = op.getBlockM(), bn = op.getBlockN();
  Type elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  Value qAddr = arith::AddIOp::create(
      b, sharedAddress(b, op.getQ()),
      arith::IndexCastOp::create(
          b, b.getI64Type(),
          arith::MulIOp::create(b, tl.warpgroup,
                                cIndex(b, kWarpgroupRows * kChunkBytes))));
  Value kAddr = sharedAddress(b, op.getK());
  auto type = accStruct(ctx, bn / 2);
  Value acc = LLVM::ZeroOp::create(b, type);
  // Every operand is ready before the fence: a register written between
  // two wgmmas of a group makes ptxas serialize them (C7519).
  int64_t kSteps = llvm::divideCeil(op.getHeadDim(), 16);
  SmallVector<Value> descA, descB;
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    // k-step kk: chunk kk / 4, 32 bytes per step inside the 128-byte row.
    int64_t inRow = (kk % 4) * 32;
    descA.push_back(
        descriptor(b, qAddr, (kk / 4) * bm * kChunkBytes + inRow, 16, 1024));
    descB.push_back(
        descriptor(b, kAddr, (kk / 4) * bn * kChunkBytes + inRow, 16, 1024));
  }
  if (turns)
    turns->wait(b, tl);
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, type, acc, descA[kk], descB[kk],
        NVVM::MMAShapeAttr::get(ctx, 64, bn, 16),
        NVVM::WGMMATypesAttr::get(ctx, wgmmaType(elt)),
        NVVM::WGMMATypesAttr::get(ctx, wgmmaType(elt)),
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, kk == 0 ? NVVM::WGMMAScaleOut::zero
                                                  : NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col),
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  if (turns)
    turns->handOver(b, tl);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return unpackStruct(b, acc, bn / 2);
}

/// Sets scores of keys a row may not see to -inf. Key of register i is
/// k_pos + 2q + colOf(i); row h sees keys < limit_h, with limit_h = Nk, or
/// for causal min(Nk, q_pos + row_h + causal_offset + 1).
void maskScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                const ThreadLayout &tl, MutableArrayRef<Value> s) {
  if (op.getMask() == MaskKind::none)
    return;
  int64_t bn = op.getBlockN();
  Value limits[2];
  for (int h = 0; h < 2; ++h) {
    Value limit = op.getNumKeys();
    if (op.getMask() == MaskKind::causal) {
      Value last = arith::AddIOp::create(
          b, arith::AddIOp::create(b, op.getQPos(), tl.row[h]),
          arith::AddIOp::create(b, op.getCausalOffset(), cIndex(b, 1)));
      limit = arith::MinSIOp::create(b, limit, last);
    }
    // Column bound relative to this thread's 2q, clamped to [0, BLOCK_N]
    // so it fits 32 bits.
    Value rel = arith::SubIOp::create(
        b, arith::SubIOp::create(b, limit, op.getKPos()), tl.twoQ);
    rel = arith::MaxSIOp::create(b, rel, cIndex(b, -1));
    rel = arith::MinSIOp::create(b, rel, cIndex(b, bn));
    limits[h] = arith::IndexCastOp::create(b, b.getI32Type(), rel);
  }
  Value negInf = cF32(b, -INFINITY);
  for (auto [i, score] : llvm::enumerate(s)) {
    Value visible = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                          cI32(b, colOf(i)), limits[halfOf(i)]);
    score = arith::SelectOp::create(b, visible, score, negInf);
  }
}

/// The online-softmax update on the S registers (exp2 domain):
///   m' = max(m, rowmax(S) * c),  c = scale * log2(e)
///   m_safe = m' == -inf ? 0 : m'  (rows that saw no key yet)
///   alpha = exp2(m - m_safe),  P = exp2(S * c - m_safe)
///   l' = alpha * l + rowsum(P)   (this thread's part; summed in the epilogue)
/// Overwrites `s` with P and returns alpha per half.
std::array<Value, 2> softmax(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                             MutableArrayRef<Value> s, SmallVector<Value> &m,
                             SmallVector<Value> &l) {
  double c = op.getScale().convertToDouble() * M_LOG2E;
  Value scale = cF32(b, c);
  std::array<Value, 2> alpha;
  for (int h = 0; h < 2; ++h) {
    Value rowMax;
    for (auto [i, score] : llvm::enumerate(s))
      if (halfOf(i) == h)
        rowMax = rowMax ? LLVM::MaxNumOp::create(b, rowMax, score) : score;
    rowMax = quadReduce<LLVM::MaxNumOp>(b, rowMax);
    Value mNew = LLVM::MaxNumOp::create(
        b, m[h], arith::MulFOp::create(b, rowMax, scale));
    Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                        cF32(b, -INFINITY));
    Value mSafe = arith::SelectOp::create(b, noKey, cF32(b, 0), mNew);
    alpha[h] = exp2(b, arith::SubFOp::create(b, m[h], mSafe));
    Value negSafe = arith::NegFOp::create(b, mSafe);
    Value sum = arith::MulFOp::create(b, l[h], alpha[h]);
    for (auto [i, score] : llvm::enumerate(s)) {
      if (halfOf(i) != h)
        continue;
      score = exp2(b, LLVM::FMAOp::create(b, score, scale, negSafe));
      sum = arith::AddFOp::create(b, sum, score);
    }
    m[h] = mNew;
    l[h] = sum;
  }
  return alpha;
}

/// P (f32 registers) -> the A operand of k-step kk: four 32-bit registers,
/// register r packing P[8 kk + 2 r] (low half) and P[8 kk + 2 r + 1].
SmallVector<Value> packP(ImplicitLocOpBuilder &b, ArrayRef<Value> p, int64_t kk,
                         Type elt) {
  SmallVector<Value> regs;
  for (int64_t r = 0; r < 4; ++r) {
    Value pair = vector::FromElementsOp::create(
        b, VectorType::get({2}, b.getF32Type()),
        ValueRange{p[8 * kk + 2 * r], p[8 * kk + 2 * r + 1]});
    Value narrow = arith::TruncFOp::create(b, VectorType::get({2}, elt), pair);
    regs.push_back(vector::BitCastOp::create(
        b, VectorType::get({1}, b.getI32Type()), narrow));
    regs.back() = vector::ExtractOp::create(b, regs.back(), 0);
  }
  return regs;
}

/// O += P V: BLOCK_N / 16 k-steps. V is [keys, D] row-major in shared memory
/// (MN-major for the MMA, transpose flag set): 16 keys = 2048 bytes per
/// k-step, 1024 bytes per 8 keys (stride byte offset), BLOCK_N * 128 bytes
/// between 64-column chunks (leading byte offset). Instructions are at
/// most `maxN` columns wide.
void valuesGemm(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                ArrayRef<Value> p, MutableArrayRef<Value> o, int64_t maxN) {
  int64_t bn = op.getBlockN(), d = paddedN(op.getHeadDim());
  Type elt = cast<MemRefType>(op.getV().getType()).getElementType();
  Value vAddr = sharedAddress(b, op.getV());
  int64_t chunkBytes = bn * kChunkBytes;
  SmallVector<SmallVector<Value>> a;
  SmallVector<SmallVector<Value>> desc;
  for (int64_t kk = 0; kk < bn / 16; ++kk) {
    a.push_back(packP(b, p, kk, elt));
    desc.emplace_back();
    for (int64_t col = 0; col < d; col += maxN)
      desc.back().push_back(descriptor(
          b, vAddr, kk * 2048 + (col / 64) * chunkBytes, chunkBytes, 1024));
  }
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t kk = 0; kk < bn / 16; ++kk) {
    for (int64_t col = 0; col < d; col += maxN) {
      int64_t n = std::min(maxN, d - col);
      MutableArrayRef<Value> part = o.slice(col / 2, n / 2);
      SmallVector<Value> out =
          wgmmaRegisterA(b, part, a[kk], desc[kk][col / maxN], n, elt);
      llvm::copy(out, part.begin());
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
}

void lowerStep(OnlineAttentionMmaOp op, int64_t maxN, const Turns *turns) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  ThreadLayout tl = threadLayout(b);
  SmallVector<Value> s = scoresGemm(b, op, tl, turns);
  maskScores(b, op, tl, s);
  SmallVector<Value> m = unpack(b, op.getM()), l = unpack(b, op.getL());
  std::array<Value, 2> alpha = softmax(b, op, s, m, l);
  SmallVector<Value> o = unpack(b, op.getAcc());
  for (auto [j, x] : llvm::enumerate(o))
    x = arith::MulFOp::create(b, x, alpha[halfOf(j)]);
  valuesGemm(b, op, s, o, maxN);
  op.replaceAllUsesWith(ValueRange{pack(b, m), pack(b, l), pack(b, o)});
  op.erase();
}

//===----------------------------------------------------------------------===//
// attn.epilogue
//===----------------------------------------------------------------------===//

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
  Value qRow = arith::AddIOp::create(b, op.getQPos(), tileRow);
  Value inside = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, idx,
                            cIndex(b, units)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, qRow, numRows));
  auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value v =
      vector::LoadOp::create(b, VectorType::get({8}, elt), op.getStaging(),
                             ValueRange{chunk, tileRow, at});
  vector::StoreOp::create(b, v, op.getO(),
                          ValueRange{op.getBatch(), op.getHead(), qRow, col});
}

/// LSE = (m + log2 l) * ln 2 (-inf where l == 0), by the quad leaders.
void storeLse(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              ArrayRef<Value> m, ArrayRef<Value> l, ArrayRef<Value> noKey) {
  Value numRows = memref::DimOp::create(b, op.getLse(), 2);
  for (int h = 0; h < 2; ++h) {
    Value lse = arith::MulFOp::create(
        b, arith::AddFOp::create(b, m[h], log2(b, l[h])), cF32(b, M_LN2));
    lse = arith::SelectOp::create(b, noKey[h], cF32(b, -INFINITY), lse);
    Value qRow = arith::AddIOp::create(b, op.getQPos(), tl.row[h]);
    Value write = arith::AndIOp::create(
        b, tl.quadLeader,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, qRow, numRows));
    auto ifOp = scf::IfOp::create(b, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, lse, op.getLse(),
                            ValueRange{op.getBatch(), op.getHead(), qRow});
  }
}

LogicalResult lowerEpilogue(EpilogueOp op) {
  if (!op.getStaging())
    return op.emitOpError("attn-lower-to-wgmma needs the staging tile that "
                          "attn-async-pipeline attaches");
  ImplicitLocOpBuilder b(op.getLoc(), op);
  ThreadLayout tl = threadLayout(b);
  SmallVector<Value> m = unpack(b, op.getM()), l = unpack(b, op.getL());
  SmallVector<Value> inv(2), noKey(2);
  for (int h = 0; h < 2; ++h) {
    l[h] = quadReduce<arith::AddFOp>(b, l[h]);
    // A row that saw no key has l == 0 and acc == 0: O = 0.
    noKey[h] =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l[h], cF32(b, 0));
    inv[h] = arith::SelectOp::create(
        b, noKey[h], cF32(b, 0), arith::DivFOp::create(b, cF32(b, 1), l[h]));
  }
  SmallVector<Value> o = unpack(b, op.getAcc());
  for (auto [j, x] : llvm::enumerate(o))
    x = arith::MulFOp::create(b, x, inv[halfOf(j)]);
  auto oType = cast<MemRefType>(op.getO().getType());
  Type elt = oType.getElementType();
  int64_t d = oType.getDimSize(3); // static: attn-tile requires it
  stageO(b, op, tl, o, elt);       // includes the zero padding columns
  // Warpgroup-local barrier (ids 1, 2; 0 is the CTA's).
  Value barrierId = arith::IndexCastOp::create(
      b, b.getI32Type(), arith::AddIOp::create(b, tl.warpgroup, cIndex(b, 1)));
  NVVM::BarrierOp::create(b, Type(), barrierId, cI32(b, 128),
                          NVVM::BarrierReductionAttr(), Value());
  copyOut(b, op, tl, d, elt);
  if (op.getLse())
    storeLse(b, op, tl, m, l, noKey);
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// State fragments and warp specialization
//===----------------------------------------------------------------------===//

/// CTA state type -> the consumer thread's fragment: vector<BLOCK_M> ->
/// vector<2> (two rows), vector<BLOCK_M x D> -> vector<paddedN(D) / 2>.
Type fragmentType(Type t, int64_t blockM) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt || !vt.getElementType().isF32() || vt.getDimSize(0) != blockM)
    return t;
  if (vt.getRank() == 1)
    return VectorType::get({2}, vt.getElementType());
  if (vt.getRank() == 2)
    return VectorType::get({paddedN(vt.getDimSize(1)) / 2},
                           vt.getElementType());
  return t;
}

/// Retypes the state flowing through the consumer region to fragments.
/// Initial values (splat constants defined before the region) are
/// re-created inside it.
LogicalResult retypeState(Region &consumer, int64_t blockM) {
  Block &entry = consumer.front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  DenseMap<Value, Value> inner;
  WalkResult res = consumer.walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      Type frag = fragmentType(v.getType(), blockM);
      if (frag == v.getType() || consumer.isAncestor(v.getParentRegion()))
        continue;
      auto cst = v.getDefiningOp<arith::ConstantOp>();
      auto splat = cst ? dyn_cast<SplatElementsAttr>(cst.getValue()) : nullptr;
      if (!splat)
        return WalkResult(op->emitOpError(
            "attn-lower-to-wgmma: the online-softmax state must start from "
            "splat constants"));
      Value &copy = inner[v];
      if (!copy)
        copy = arith::ConstantOp::create(
            b, cst.getLoc(),
            DenseElementsAttr::get(cast<ShapedType>(frag),
                                   splat.getSplatValue<Attribute>()));
      use.set(copy);
    }
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        arg.setType(fragmentType(arg.getType(), blockM));
    for (OpResult r : op->getResults())
      r.setType(fragmentType(r.getType(), blockM));
    return WalkResult::advance();
  });
  return failure(res.wasInterrupted());
}

/// attn.warp_specialize -> if (warpgroup 0) { setmaxnreg.dec; producer }
/// else { setmaxnreg.inc; consumer }.
void lowerWarpSpecialize(WarpSpecializeOp ws) {
  ImplicitLocOpBuilder b(ws.getLoc(), ws);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value isProducer =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, cIndex(b, 128));
  auto ifOp = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  auto inlineInto = [&](Region &region, Block *dest, int64_t regs,
                        NVVM::SetMaxRegisterAction action) {
    OpBuilder ib = OpBuilder::atBlockBegin(dest);
    NVVM::SetMaxRegisterOp::create(ib, ws.getLoc(), regs, action);
    dest->getOperations().splice(std::prev(dest->end()),
                                 region.front().getOperations());
  };
  inlineInto(ws.getProducer(), ifOp.thenBlock(), ws.getProducerRegisters(),
             NVVM::SetMaxRegisterAction::decrease);
  inlineInto(ws.getConsumer(), ifOp.elseBlock(), ws.getConsumerRegisters(),
             NVVM::SetMaxRegisterAction::increase);
  if (auto cta = ws->getParentOfType<scf::ForallOp>())
    cta->setAttr("attn.threads", b.getI64IntegerAttr(ws.getNumThreads()));
  ws.erase();
}

struct AttnLowerToWGMMAPass
    : attn::impl::AttnLowerToWGMMABase<AttnLowerToWGMMAPass> {
  using AttnLowerToWGMMABase::AttnLowerToWGMMABase;

  /// The nest attn-async-pipeline builds: warp_specialize in a CTA loop,
  /// steps and epilogues in its consumer region. Anything else would be
  /// left behind or lowered without its warpgroups.
  static LogicalResult checkNesting(Operation *root) {
    WalkResult res = root->walk([](Operation *op) {
      if (auto ws = dyn_cast<WarpSpecializeOp>(op)) {
        if (!ws->getParentOfType<scf::ForallOp>())
          return WalkResult(ws.emitOpError(
              "attn-lower-to-wgmma needs it inside the CTA loop (scf.forall) "
              "that attn-async-pipeline builds"));
        return WalkResult::advance();
      }
      if (!isa<OnlineAttentionMmaOp, EpilogueOp>(op))
        return WalkResult::advance();
      auto ws = op->getParentOfType<WarpSpecializeOp>();
      if (isa<EpilogueOp>(op) && !ws)
        return WalkResult::advance(); // the FMA path's epilogue
      if (!ws || !ws.getConsumer().isAncestor(op->getParentRegion()))
        return WalkResult(op->emitOpError(
            "attn-lower-to-wgmma needs it in the consumer region of an "
            "attn.warp_specialize (built by attn-async-pipeline)"));
      return WalkResult::advance();
    });
    return failure(res.wasInterrupted());
  }

  LogicalResult lower(WarpSpecializeOp ws) {
    Region &consumer = ws.getConsumer();
    SmallVector<OnlineAttentionMmaOp> steps;
    SmallVector<EpilogueOp> epilogues;
    consumer.walk([&](OnlineAttentionMmaOp op) { steps.push_back(op); });
    consumer.walk([&](EpilogueOp op) { epilogues.push_back(op); });
    if (epilogues.size() != 1)
      return ws.emitOpError("attn-lower-to-wgmma: expected one attn.epilogue "
                            "in the consumer region");
    int64_t blockM =
        cast<VectorType>(epilogues.front().getAcc().getType()).getDimSize(0);
    if (blockM != 64 * static_cast<int64_t>(ws.getConsumerWarpgroups()))
      return ws.emitOpError("attn-lower-to-wgmma: BLOCK_M (")
             << blockM << ") must be 64 rows per consumer warpgroup";
    if (failed(retypeState(consumer, blockM)))
      return failure();
    std::optional<Turns> turns;
    if (ws.getPingPong()) {
      turns.emplace();
      ImplicitLocOpBuilder b = ImplicitLocOpBuilder::atBlockBegin(
          ws.getLoc(), &consumer.front());
      turns->start(b);
    }
    for (OnlineAttentionMmaOp op : steps)
      lowerStep(op, maxMmaN, turns ? &*turns : nullptr);
    if (failed(lowerEpilogue(epilogues.front())))
      return failure();
    lowerWarpSpecialize(ws);
    return success();
  }

  void runOnOperation() override {
    if (maxMmaN < 64 || maxMmaN > 256 || maxMmaN % 64 != 0) {
      getOperation().emitError("attn-lower-to-wgmma: max-mma-n must be 64, "
                               "128, 192 or 256");
      return signalPassFailure();
    }
    if (failed(checkNesting(getOperation())))
      return signalPassFailure();
    SmallVector<WarpSpecializeOp> ops;
    getOperation().walk([&](WarpSpecializeOp ws) { ops.push_back(ws); });
    for (WarpSpecializeOp ws : ops)
      if (failed(lower(ws)))
        return signalPassFailure();
  }
};

} // namespace

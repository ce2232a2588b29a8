//===- OnlineAttentionToWGMMA.cpp - one online-softmax step on wgmma --------===//
//
// attn.online_attention_mma, serially: S = Q K^T (wgmma, both operands in
// shared memory), the mask, the exp2-domain online softmax on the S
// registers (FP8: quantized P, the lazy row max, the polynomial exp2), and
// O += P V with P as the register A operand (FlashAttention-3 section 3).
//
//===----------------------------------------------------------------------===//

#include "OnlineAttentionWGMMA.h"
#include "attn/Transforms/KeyInterval.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace mlir::attn::wgmma {




/// bf16, f16 or f8E4M3FN: the element type of the Q, K and V tiles.
Type elementType(OnlineAttentionMmaOp op) {
  return cast<MemRefType>(op.getQ().getType()).getElementType();
}

ScoreDescriptors scoreDescriptors(ImplicitLocOpBuilder &b,
                                  OnlineAttentionMmaOp op,
                                  const ThreadLayout &tl) {
  int64_t bm = op.getBlockM(), bn = op.getBlockN();
  Value qAddr = arith::AddIOp::create(
      b, sharedAddress(b, op.getQ()),
      arith::IndexCastOp::create(
          b, b.getI64Type(),
          arith::MulIOp::create(b, tl.warpgroup,
                                cIndex(b, kWarpgroupRows * kChunkBytes))));
  Value kAddr = sharedAddress(b, op.getK());
  ScoreDescriptors d;
  d.zero = LLVM::ZeroOp::create(b, accStruct(b.getContext(), bn / 2));
  int64_t kSteps =
      llvm::divideCeil(op.getHeadDim(), wgmmaK(elementType(op)));
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    int64_t inRow = (kk % 4) * 32;
    d.a.push_back(
        descriptor(b, qAddr, (kk / 4) * bm * kChunkBytes + inRow, 16, 1024));
    d.b.push_back(
        descriptor(b, kAddr, (kk / 4) * bn * kChunkBytes + inRow, 16, 1024));
  }
  return d;
}

/// Issues S = Q K^T (between a fence and a commit): one wgmma
/// m64nBLOCK_NkK per k-step, the first overwriting the accumulator.
/// Returns the accumulator struct (BLOCK_N / 2 f32), valid after the wait.
Value issueScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                  const ScoreDescriptors &d) {
  return issueShared(b, d.zero, d.a, d.b, op.getBlockN(), elementType(op));
}

/// GQA packing (G = `pack` > 1): packed row r is query r / G of head
/// r % G of the group (query-major, as attn.load_tile packs them).
Value queryOf(ImplicitLocOpBuilder &b, Value packedRow, int64_t pack) {
  if (pack == 1)
    return packedRow;
  return arith::DivUIOp::create(b, packedRow, cIndex(b, pack));
}

/// A key bound relative to this thread's first column k_pos + 2q, clamped
/// to [-1, BLOCK_N] so that it fits 32 bits.
Value relativeColumn(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                     const ThreadLayout &tl, Value key) {
  Value rel = arith::SubIOp::create(
      b, arith::SubIOp::create(b, key, op.getKPos()), tl.twoQ);
  rel = arith::MaxSIOp::create(b, rel, cIndex(b, -1));
  rel = arith::MinSIOp::create(b, rel, cIndex(b, op.getBlockN()));
  return arith::IndexCastOp::create(b, b.getI32Type(), rel);
}

/// Sets scores of keys a row may not see to -inf. Key of register i is
/// k_pos + 2q + colOf(i); row h sees keys in [first_h, limit_h), with
/// limit_h = Nk, or for causal min(Nk, query_h + causal_offset + 1),
/// query_h = q_pos + row_h (with GQA packing G: (q_pos + row_h) / G); under
/// a key mask [lo, end) of its interval at p = query_h + causal_offset
/// (limit_h at most Nk).
void maskScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                const ThreadLayout &tl, MutableArrayRef<Value> s) {
  if (op.getMask() == MaskKind::none)
    return;
  KeyMaskAttr keyMask = op.getKeyMaskAttr();
  Value limits[2], firsts[2];
  for (int h = 0; h < 2; ++h) {
    Value limit = op.getNumKeys();
    if (op.getMask() == MaskKind::causal) {
      Value query = queryOf(
          b, arith::AddIOp::create(b, op.getQPos(), tl.row[h]),
          op.getGqaPack());
      KeyInterval keys =
          keyMask
              ? keyInterval(
                    b, b.getLoc(), keyMask,
                    arith::AddIOp::create(b, query, op.getCausalOffset()))
              : KeyInterval{Value(),
                            arith::AddIOp::create(
                                b, query,
                                arith::AddIOp::create(b, op.getCausalOffset(),
                                                      cIndex(b, 1)))};
      if (keys.end)
        limit = arith::MinSIOp::create(b, limit, keys.end);
      if (keys.lo)
        firsts[h] = relativeColumn(b, op, tl, keys.lo);
    }
    limits[h] = relativeColumn(b, op, tl, limit);
  }
  Value negInf = cF32(b, -INFINITY);
  for (auto [i, score] : llvm::enumerate(s)) {
    Value col = cI32(b, colOf(i));
    Value visible = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                          limits[halfOf(i)]);
    if (Value first = firsts[halfOf(i)])
      visible = arith::AndIOp::create(
          b, visible,
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, col, first));
    score = arith::SelectOp::create(b, visible, score, negInf);
  }
}

/// A thread's part of a row's max: a tree or a chain (Schedule).
Value rowMaxOf(ImplicitLocOpBuilder &b, const Schedule &sched,
               SmallVector<Value> values) {
  if (sched.treeReductions)
    return treeReduce<LLVM::MaxNumOp>(b, std::move(values));
  Value acc = values.front();
  for (Value v : ArrayRef(values).drop_front())
    acc = LLVM::MaxNumOp::create(b, acc, v);
  return acc;
}

/// 2^x on the FMA pipe (FlashAttention-4's exp2 emulation), for P only:
/// x (clamped to -126 and above) = j + f with j = rint(x), by the
/// 1.5 * 2^23 rounding trick, and f in [-0.5, 0.5]; 2^f by a degree-2
/// minimax polynomial (relative error 1.7e-3, far below the 2^-4 spacing
/// of the e4m3 P it feeds), and j added to the exponent field. A masked
/// key (x = -inf) gives 2^-126, not 0: it rounds to 0 in e4m3, so O is
/// unchanged, and adds at most BLOCK_N * 2^-126 to l per block, so l of a
/// row without keys stays tiny but normal: O = acc / l is 0 (acc is 0) and
/// LSE is -inf (from m), as bench/fp8_check.py's empty-row case checks.
/// `clampHigh` also clamps x to 127 and below: without it x >= 128 would
/// carry into the sign bit (the lazy max's P may be that large).
Value polyExp2(ImplicitLocOpBuilder &b, Value x, bool clampHigh = false) {
  Value clamped = LLVM::MaxNumOp::create(b, x, cF32(b, -126));
  if (clampHigh)
    clamped = LLVM::MinNumOp::create(b, clamped, cF32(b, 127));
  Value magic = cF32(b, 12582912.0f);
  Value t = arith::AddFOp::create(b, clamped, magic);
  Value f = arith::SubFOp::create(b, clamped,
                                  arith::SubFOp::create(b, t, magic));
  Value p = LLVM::FMAOp::create(b, f, cF32(b, 0.238428936f),
                                cF32(b, 0.703448006f));
  p = LLVM::FMAOp::create(b, p, f, cF32(b, 1.00044314f));
  Type i32 = b.getI32Type();
  Value exponent = arith::ShLIOp::create(
      b, arith::BitcastOp::create(b, i32, t), cI32(b, 23));
  Value bits =
      arith::AddIOp::create(b, arith::BitcastOp::create(b, i32, p), exponent);
  return arith::BitcastOp::create(b, b.getF32Type(), bits);
}

/// c = scale * log2(e) [* qk_descale]: S's factor in the exp2 domain.
Value exp2Scale(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op) {
  Value scale = cF32(b, op.getScale().convertToDouble() * M_LOG2E);
  if (Value descale = op.getQkDescale())
    scale = arith::MulFOp::create(b, scale, descale);
  return scale;
}

/// P = exp2(S c + bias_h) in place, on half h's registers, and returns
/// `sum` + rowsum(P) (this thread's part): a chain interleaved with the
/// exp2s, or a tree after them (Schedule). FP8 computes one in
/// fp8-poly-exp2 of them by polyExp2; `unbounded`: x may exceed 127.
Value exponentiate(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                   const Schedule &sched, MutableArrayRef<Value> s, int h,
                   Value scale, Value bias, Value sum,
                   bool unbounded = false) {
  SmallVector<Value> probs;
  int64_t every = op.isFP8() ? sched.fp8PolyExp2 : 0;
  for (auto [i, score] : llvm::enumerate(s)) {
    if (halfOf(i) != h)
      continue;
    Value arg = LLVM::FMAOp::create(b, score, scale, bias);
    score = every && int64_t(i) % every == every - 1
                ? polyExp2(b, arg, unbounded)
                : exp2(b, arg);
    if (sched.treeReductions)
      probs.push_back(score);
    else
      sum = arith::AddFOp::create(b, sum, score);
  }
  return sched.treeReductions
             ? arith::AddFOp::create(b, sum, treeReduce<arith::AddFOp>(b, probs))
             : sum;
}

/// P's exp2 bias against a running max m (m = -inf: 0, rows that saw no
/// key yet): pOffset - m, with FP8's 2^pOffset factor on P.
Value pBias(ImplicitLocOpBuilder &b, Value mSafe, double pOffset) {
  if (pOffset)
    return arith::SubFOp::create(b, cF32(b, pOffset), mSafe);
  return arith::NegFOp::create(b, mSafe);
}

double pOffsetOf(OnlineAttentionMmaOp op, const Schedule &sched) {
  return op.isFP8() ? sched.fp8PScaleLog2 : 0;
}

/// The online-softmax update on the S registers (exp2 domain; row max and
/// sum as trees or chains, Schedule):
///   m' = max(m, rowmax(S) * c),  c = scale * log2(e) [* qk_descale]
///   m_safe = m' == -inf ? 0 : m'  (rows that saw no key yet)
///   alpha = exp2(m - m_safe),  P = exp2(S * c - m_safe + pOffset)
///   l' = alpha * l + rowsum(P)   (this thread's part; summed in the epilogue)
/// Overwrites `s` with P and returns alpha per half.
std::array<Value, 2> softmax(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                             const Schedule &sched, MutableArrayRef<Value> s,
                             SmallVector<Value> &m, SmallVector<Value> &l,
                             double headroom) {
  Value scale = exp2Scale(b, op);
  std::array<Value, 2> alpha;
  for (int h = 0; h < 2; ++h) {
    SmallVector<Value> half;
    for (auto [i, score] : llvm::enumerate(s))
      if (halfOf(i) == h)
        half.push_back(score);
    Value rowMax =
        quadReduce<LLVM::MaxNumOp>(b, rowMaxOf(b, sched, half));
    Value scaled = arith::MulFOp::create(b, rowMax, scale);
    if (headroom)
      scaled = arith::AddFOp::create(b, scaled, cF32(b, headroom));
    Value mNew = LLVM::MaxNumOp::create(b, m[h], scaled);
    Value noKey = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                        cF32(b, -INFINITY));
    Value mSafe = arith::SelectOp::create(b, noKey, cF32(b, 0), mNew);
    alpha[h] = exp2(b, arith::SubFOp::create(b, m[h], mSafe));
    Value bias = pBias(b, mSafe, pOffsetOf(op, sched));
    l[h] = exponentiate(b, op, sched, s, h, scale, bias,
                        arith::MulFOp::create(b, l[h], alpha[h]));
    m[h] = mNew;
  }
  return alpha;
}

/// FP8 P (BLOCK_N / 2 f32 registers) -> the e4m3 A operands of O += P V:
/// BLOCK_N / 8 32-bit registers, four per k32 step. Register r of a step
/// holds row half r % 2 and k positions 16 (r / 2) + 4q .. + 3, four bytes;
/// the accumulator gives this thread keys 2q, 2q + 1, 8 + 2q, 9 + 2q of
/// each 16 (PTX ISA, wgmma register fragments), and they are packed as they are: k position 4q + b
/// holds key 8 (b >> 1) + 2q + (b & 1). attn-async-pipeline has permuted
/// V^T's keys the same way inside every 16-key unit, so P V is unchanged
/// and no data crosses threads.
SmallVector<Value> packP8(ImplicitLocOpBuilder &b, ArrayRef<Value> p) {
  MLIRContext *ctx = b.getContext();
  auto toE4M3 = [&](Value hi, Value lo) {
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        Float8E4M3FNType::get(ctx));
    return arith::ExtUIOp::create(b, b.getI32Type(), pair);
  };
  SmallVector<Value> regs;
  for (int64_t g = 0; 8 * g < int64_t(p.size()); ++g) { // 16 keys
    for (int64_t h = 0; h < 2; ++h) {
      int64_t i = 8 * g + 2 * h; // keys 2q, 2q + 1 of the first 8
      Value low = toE4M3(p[i + 1], p[i]);
      Value high = toE4M3(p[i + 5], p[i + 4]);
      regs.push_back(arith::OrIOp::create(
          b, low, arith::ShLIOp::create(b, high, cI32(b, 16))));
    }
  }
  return regs;
}

/// P (BLOCK_N / 2 f32 registers) -> the A operands of O += P V: BLOCK_N / 4
/// 32-bit registers, four per k-step kk; register 4 kk + r packs
/// P[8 kk + 2 r] (low half) and P[8 kk + 2 r + 1]. FP8: packP8.
SmallVector<Value> packP(ImplicitLocOpBuilder &b, ArrayRef<Value> p,
                         Type elt) {
  if (isa<Float8E4M3FNType>(elt))
    return packP8(b, p);
  return packPairs(b, p, elt);
}

/// Whether some byte of the packed e4m3 P is 0x7E (448, e4m3's largest
/// finite value, which satfinite also gives any larger P) or 0x7F (NaN).
/// P >= 0, so its bytes are at most 0x7F: adding 2 to each sets its top
/// bit exactly then and never carries into the next byte.
Value anyPAtTop(ImplicitLocOpBuilder &b, ArrayRef<Value> packed) {
  Value bits;
  for (Value r : packed) {
    Value x = arith::AddIOp::create(b, r, cI32(b, 0x02020202));
    bits = bits ? arith::OrIOp::create(b, bits, x) : x;
  }
  Value top = arith::AndIOp::create(
      b, bits, cI32(b, static_cast<int32_t>(0x80808080u)));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, top, cI32(b, 0));
}


LazyBlock lazySoftmax(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                      const Schedule &sched, ArrayRef<Value> s,
                      ArrayRef<Value> m, ArrayRef<Value> l) {
  Value scale = exp2Scale(b, op);
  SmallVector<Value> p(s);
  LazyBlock lazy;
  Value redo;
  for (int h = 0; h < 2; ++h) {
    Value bias = pBias(b, m[h], pOffsetOf(op, sched));
    lazy.l.push_back(exponentiate(b, op, sched, p, h, scale, bias, l[h],
                                  /*unbounded=*/true));
    Value noMax = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m[h],
                                        cF32(b, -INFINITY));
    redo = redo ? arith::OrIOp::create(b, redo, noMax) : noMax;
  }
  lazy.packed = packP8(b, p);
  redo = arith::OrIOp::create(b, redo, anyPAtTop(b, lazy.packed));
  lazy.redo = NVVM::VoteSyncOp::create(b, b.getI1Type(), cI32(b, -1), redo,
                                       NVVM::VoteSyncKind::any);
  return lazy;
}


ValuesGemm::ValuesGemm(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op, Value vAddr,
           ArrayRef<Value> packedP, int64_t maxN)
    : blockN(op.getBlockN()), n(paddedN(op.getHeadDim())), maxN(maxN),
      k(wgmmaK(elementType(op))), elt(elementType(op)), a(packedP) {
  bool fp8 = op.isFP8();
  int64_t chunkBytes = (fp8 ? op.getHeadDim() : blockN) * kChunkBytes;
  for (int64_t kk = 0; kk < blockN / k; ++kk) {
    descV.emplace_back();
    for (int64_t col = 0; col < n; col += maxN) {
      int64_t offset =
          fp8 ? (kk / 4) * chunkBytes + (kk % 4) * 32 + col * kChunkBytes
              : kk * 2048 + (col / 64) * chunkBytes;
      descV.back().push_back(
          descriptor(b, vAddr, offset, fp8 ? 16 : chunkBytes, 1024));
    }
  }
}

/// Issues the register-A wgmmas (between a fence and a commit) and
/// updates `o` to their results, valid after the wait.
void ValuesGemm::issue(ImplicitLocOpBuilder &b, MutableArrayRef<Value> o) const {
  for (int64_t kk = 0; kk < blockN / k; ++kk) {
    for (int64_t col = 0; col < n; col += maxN) {
      int64_t width = std::min(maxN, n - col);
      MutableArrayRef<Value> part = o.slice(col / 2, width / 2);
      SmallVector<Value> out =
          wgmmaRegisterA(b, part, ArrayRef(a).slice(4 * kk, 4),
                         descV[kk][col / maxN], width, elt);
      llvm::copy(out, part.begin());
    }
  }
}

/// Waits for all but the newest `pending` wgmma groups; `regs` (results of
/// the groups waited for) are pinned after the wait.
void waitGroups(ImplicitLocOpBuilder &b, int64_t pending,
                MutableArrayRef<Value> regs) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
  SmallVector<Value> pinned = pinAfterWait(b, regs);
  llvm::copy(pinned, regs.begin());
}

/// Waits for all but the newest `pending` groups and returns S's `regs`
/// registers from the accumulator struct, pinned after the wait.
SmallVector<Value> waitForScores(ImplicitLocOpBuilder &b, int64_t pending,
                                 Value acc, int64_t regs) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
  return pinAfterWait(b, unpackStruct(b, acc, regs));
}

/// S for `op`: issued (taking the warpgroup's turn with ping-pong), waited
/// for, masked and turned into P by the online softmax (m set `headroom`
/// above the row max). Updates m, l; returns alpha.
std::array<Value, 2> scoresAndSoftmax(ImplicitLocOpBuilder &b,
                                      OnlineAttentionMmaOp op,
                                      const ThreadLayout &tl,
                                      const Schedule &sched,
                                      SmallVector<Value> &p,
                                      SmallVector<Value> &m,
                                      SmallVector<Value> &l,
                                      double headroom) {
  const Turns *turns = sched.turns;
  ScoreDescriptors d = scoreDescriptors(b, op, tl);
  if (turns)
    turns->wait(b, tl);
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value acc = issueScores(b, op, d);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  if (turns)
    turns->handOver(b, tl);
  p = waitForScores(b, 0, acc, op.getBlockN() / 2);
  maskScores(b, op, tl, p);
  return softmax(b, op, sched, p, m, l, headroom);
}

void rescale(ImplicitLocOpBuilder &b, MutableArrayRef<Value> o,
             std::array<Value, 2> alpha) {
  for (auto [j, x] : llvm::enumerate(o))
    x = arith::MulFOp::create(b, x, alpha[halfOf(j)]);
}

/// `unfilled_tail`: Nk - k_pos, the keys of the block inside the sequence
/// (null without the attribute).
Value keysInBlock(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op) {
  if (!op.getUnfilledTail())
    return Value();
  return arith::SubIOp::create(b, op.getNumKeys(), op.getKPos());
}

/// `unfilled_tail`: a block with fewer than BLOCK_N keys inside the sequence
/// (`keys`, keysInBlock) zeroes V's rows past them, at shared address
/// `vAddr`, before its P V reads them (their P is 0, but 0 * NaN is NaN).
/// Only the tail block takes the branch, which is uniform over the
/// warpgroup.
void zeroValueTail(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                   Value vAddr, Value keys, const ThreadLayout &tl) {
  if (!keys)
    return;
  int64_t blockN = op.getBlockN();
  Value pastNk = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, keys,
                                       cIndex(b, blockN));
  auto ifOp = scf::IfOp::create(b, pastNk, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  int64_t chunks = cast<MemRefType>(op.getV().getType()).getDimSize(0);
  zeroRowsFrom(b, vAddr, chunks, blockN,
               arith::MaxSIOp::create(b, keys, cIndex(b, 0)), tl);
  Value barrierId = arith::IndexCastOp::create(
      b, b.getI32Type(),
      arith::AddIOp::create(b, tl.warpgroup, cIndex(b, kEpilogueBarrier)));
  NVVM::BarrierOp::create(b, Type(), barrierId, cI32(b, 128),
                          NVVM::BarrierReductionAttr(), Value());
}

/// Serial schedule: S, softmax, O *= alpha, O += P V, each waited for.
SmallVector<Value> lowerStep(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                             ValueRange state, const Schedule &sched) {
  ThreadLayout tl = threadLayout(b);
  zeroValueTail(b, op, sharedAddress(b, op.getV()), keysInBlock(b, op), tl);
  SmallVector<Value> p, m = unpack(b, state[0]), l = unpack(b, state[1]);
  std::array<Value, 2> alpha = scoresAndSoftmax(b, op, tl, sched, p, m, l);
  SmallVector<Value> o = unpack(b, state[2]);
  rescale(b, o, alpha);
  ValuesGemm pv(b, op, sharedAddress(b, op.getV()),
                packP(b, p, elementType(op)), sched.maxN);
  NVVM::WgmmaFenceAlignedOp::create(b);
  pv.issue(b, o);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  waitGroups(b, 0, o);
  return {pack(b, m), pack(b, l), pack(b, o)};
}

} // namespace mlir::attn::wgmma

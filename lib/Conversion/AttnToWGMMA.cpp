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
// goes from S's registers to A's with no data movement. FP8 (e4m3, k32;
// FlashAttention-3 section 3.3) takes four consecutive k positions per A
// register: P is quantized in registers and packed in the accumulator's
// key order, which attn-async-pipeline has given V^T's keys too (packP8);
// V is V^T in shared memory (K-major), the descales scale the exp2
// argument and O, and P carries a 2^s factor (fp8-p-scale-log2) so that
// small probabilities survive e4m3. One in fp8-poly-exp2 exponentials can
// be a polynomial on the FMA pipe (FlashAttention-4's exp2 emulation;
// polyExp2; off by default). Unmasked K/V loops take FP8's row max lazily
// (fp8-lazy-max; lazySoftmax), two blocks per iteration
// (unrolledSteadyBlocks).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "GradToWGMMA.h"
#include "WarpgroupMMA.h"
#include "attn/Dialect/Attn/IR/Attn.h"
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

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOWGMMA
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using namespace mlir::attn::wgmma;


//===----------------------------------------------------------------------===//
// attn.online_attention_mma
//===----------------------------------------------------------------------===//

/// Named barriers: 0 is the CTA's; 1 + w is consumer warpgroup w's for the
/// epilogue; the ping-pong turns follow.
constexpr int64_t kEpilogueBarrier = 1;

/// Ping-pong of the consumer warpgroups (FlashAttention-3 section 3.1):
/// named barrier kFirstBarrier + w is warpgroup w's turn to issue its
/// GEMMs; a warpgroup waits for its turn, issues, and hands the turn to
/// the next (w + 1 mod n), whose GEMMs then overlap this one's softmax.
/// Each barrier counts 256 threads: the 128 that wait and the 128 that hand
/// over.
struct Turns {
  static constexpr int64_t kFirstBarrier =
      kEpilogueBarrier + kMaxConsumerWarpgroups;
  int64_t warpgroups; // 2 or 3
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
    Value next = arith::RemUIOp::create(
        b, arith::AddIOp::create(b, tl.warpgroup, cIndex(b, 1)),
        cIndex(b, warpgroups));
    NVVM::BarrierArriveOp::create(b, id(b, next), cI32(b, 256));
  }
  /// The last warpgroup hands the first turn to warpgroup 0.
  void start(ImplicitLocOpBuilder &b) const {
    ThreadLayout tl = threadLayout(b);
    Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                       tl.warpgroup, cIndex(b, warpgroups - 1));
    auto ifOp = scf::IfOp::create(b, last, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::BarrierArriveOp::create(b, cI32(b, kFirstBarrier), cI32(b, 256));
  }
};

/// How the steps of a warp_specialize are lowered: the widest P V wgmma,
/// the ping-pong turns (null: none), the log2 of FP8's P scale, and
/// whether the row max and sum are trees (treeReduce) or chains. Trees
/// shorten the softmax's dependency chains but keep more values live: on
/// the H200 they gained 2-3% for bf16 D128 with two consumer warpgroups
/// (240 registers) and lost 2-3% at D64 (two or three warpgroups) and 1-4%
/// for FP8 (docs/perf-notes.md).
struct Schedule {
  int64_t maxN;
  const Turns *turns;
  double fp8PScaleLog2;
  bool treeReductions;
  int64_t fp8PolyExp2; // FP8: one in this many exponentials by polyExp2
  bool fp8LazyMax;     // FP8 steady state: lazySoftmax
  double fp8LazyHeadroom; // FP8: log2 units m starts above a row max
};

/// bf16, f16 or f8E4M3FN: the element type of the Q, K and V tiles.
Type elementType(OnlineAttentionMmaOp op) {
  return cast<MemRefType>(op.getQ().getType()).getElementType();
}

/// FP8's P is quantized as P * 2^s, s = the pass's fp8-p-scale-log2
/// (folded into the exp2 argument; l carries the same factor, so O = acc /
/// l is unchanged and LSE subtracts it). With s = 8 (the default)
/// probabilities down to 2^-17 stay above e4m3's smallest subnormal (2^-9)
/// instead of flushing to zero beside a large one (an attention sink), and
/// P <= 256 stays below e4m3's 448.
constexpr int64_t kMaxFP8PScaleLog2 = 8;

/// Shared-memory descriptors of S = Q K^T per k-step (32 bytes of the
/// 128-byte row: k16 for f16/bf16, k32 for e4m3): A is the warpgroup's 64
/// rows of Q, B is K, both K-major (chunk kk / 4).
struct ScoreDescriptors {
  SmallVector<Value> a, b;
  Value zero; // the accumulator's input, created before the fence (C7513)
};

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

/// Sets scores of keys a row may not see to -inf. Key of register i is
/// k_pos + 2q + colOf(i); row h sees keys < limit_h, with limit_h = Nk, or
/// for causal min(Nk, query_h + causal_offset + 1), query_h = q_pos +
/// row_h (with GQA packing G: (q_pos + row_h) / G).
void maskScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                const ThreadLayout &tl, MutableArrayRef<Value> s) {
  if (op.getMask() == MaskKind::none)
    return;
  int64_t bn = op.getBlockN();
  Value limits[2];
  for (int h = 0; h < 2; ++h) {
    Value limit = op.getNumKeys();
    if (op.getMask() == MaskKind::causal) {
      Value query = queryOf(
          b, arith::AddIOp::create(b, op.getQPos(), tl.row[h]),
          op.getGqaPack());
      Value last = arith::AddIOp::create(
          b, query,
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
                             double headroom = 0) {
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
/// each 16 (HOPPER.md), and they are packed as they are: k position 4q + b
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

/// FP8's softmax with a lazy row max (fp8-lazy-max; FlashAttention-4's
/// rescale only when the max has risen enough, taken one step further):
/// P = exp2(S c - m + pOffset) against the running max m as it stands,
/// quantized and summed into l, with no row max and no rescale of O. Any
/// reference m gives the same O = acc / l and LSE = m + log2 l as long as
/// P stays finite in e4m3, so the block is exact unless some P reached
/// e4m3's top (S c more than log2(432) - pOffset above m, 0.75 at pOffset
/// 8; m itself is fp8-lazy-headroom above the row max that set it) or a
/// row has no max yet (m = -inf). Returns the packed P, its l and whether
/// this warp (vote.any: its 16 rows) must redo the block with softmax.
struct LazyBlock {
  SmallVector<Value> packed, l;
  Value redo;
};

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

/// The operands of O += P V: BLOCK_N / K k-steps of packed P and, per
/// k-step, the descriptors of V's column blocks of at most `maxN`
/// columns. f16/bf16: V is [keys, D] row-major at byte address `vAddr`
/// (MN-major for the MMA, transpose flag set): 16 keys = 2048 bytes per
/// k-step, 1024 bytes per 8 keys (stride byte offset), BLOCK_N * 128 bytes
/// between 64-column chunks (leading byte offset). FP8: V^T, [BLOCK_N /
/// 128, D, 128] (K-major): 32 bytes per k-step inside a row, D * 128 bytes
/// per 128 keys, 128 bytes per column of O, 1024 per 8.
struct ValuesGemm {
  int64_t blockN, n, maxN, k;
  Type elt;
  SmallVector<Value> a;                  // packed P
  SmallVector<SmallVector<Value>> descV; // [k-step][column block]

  ValuesGemm(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op, Value vAddr,
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
  void issue(ImplicitLocOpBuilder &b, MutableArrayRef<Value> o) const {
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
};

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
                                      double headroom = 0) {
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
void lowerStep(OnlineAttentionMmaOp op, const Schedule &sched) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  ThreadLayout tl = threadLayout(b);
  zeroValueTail(b, op, sharedAddress(b, op.getV()), keysInBlock(b, op), tl);
  SmallVector<Value> p, m = unpack(b, op.getM()), l = unpack(b, op.getL());
  std::array<Value, 2> alpha = scoresAndSoftmax(b, op, tl, sched, p, m, l);
  SmallVector<Value> o = unpack(b, op.getAcc());
  rescale(b, o, alpha);
  ValuesGemm pv(b, op, sharedAddress(b, op.getV()),
                packP(b, p, elementType(op)), sched.maxN);
  NVVM::WgmmaFenceAlignedOp::create(b);
  pv.issue(b, o);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  waitGroups(b, 0, o);
  op.replaceAllUsesWith(ValueRange{pack(b, m), pack(b, l), pack(b, o)});
  op.erase();
}

//===----------------------------------------------------------------------===//
// Intra-warpgroup overlap (FlashAttention-3 section 3.2)
//===----------------------------------------------------------------------===//

/// A K/V loop as attn-async-pipeline builds it: one step whose state is the
/// loop's (m, l, acc) and, with the ring, one release of the block's slot
/// after it.
struct KVLoop {
  scf::ForOp loop;
  OnlineAttentionMmaOp step;
  nvgpu::MBarrierArriveOp release; // null without the ring (unit tests)
};

std::optional<KVLoop> matchKVLoop(OnlineAttentionMmaOp step) {
  auto loop = dyn_cast<scf::ForOp>(step->getParentOp());
  if (!loop || loop.getNumRegionIterArgs() != 3)
    return std::nullopt;
  Block *body = loop.getBody();
  ValueRange state = loop.getRegionIterArgs();
  if (step.getM() != state[0] || step.getL() != state[1] ||
      step.getAcc() != state[2] ||
      !llvm::equal(body->getTerminator()->getOperands(), step.getResults()) ||
      llvm::count_if(*body, llvm::IsaPred<OnlineAttentionMmaOp>) != 1)
    return std::nullopt;
  KVLoop kv{loop, step, nullptr};
  for (auto arrive : body->getOps<nvgpu::MBarrierArriveOp>()) {
    if (kv.release || !step->isBeforeInBlock(arrive))
      return std::nullopt;
    kv.release = arrive;
  }
  return kv;
}

/// What a block leaves to the next iteration: P as the A registers of its
/// P V, the byte address of its V tile, the ring slot to release after, and
/// with `unfilled_tail` its keys inside the sequence (keysInBlock). Only a
/// loop's last block can reach past Nk (the loops end at the block holding
/// key Nk - 1), and its P V is the drain's: only drainBlock zeroes V.
struct Pending {
  SmallVector<Value> p;
  Value vAddr, slot, keys;
};

/// Whether nextBlock takes the lazy max (lazySoftmax).
bool lazyMax(OnlineAttentionMmaOp op, const Schedule &sched) {
  return sched.fp8LazyMax && op.isFP8();
}

/// The first block: S, softmax, O *= alpha; its P V is left pending. With
/// the lazy max, m starts fp8-lazy-headroom above the row max, as after a
/// redone block.
Pending firstBlock(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                   const Schedule &sched, SmallVector<Value> &m,
                   SmallVector<Value> &l, MutableArrayRef<Value> o) {
  ThreadLayout tl = threadLayout(b);
  SmallVector<Value> p;
  double headroom = lazyMax(op, sched) ? sched.fp8LazyHeadroom : 0;
  rescale(b, o, scoresAndSoftmax(b, op, tl, sched, p, m, l, headroom));
  return {packP(b, p, elementType(op)), sharedAddress(b, op.getV()), {},
          keysInBlock(b, op)};
}

/// Waits for the pending P_{j-1} V_{j-1}. P_{j-1} stays in its registers
/// until then: the new P must not be given them while the wgmmas read them
/// (C7513 serializes otherwise).
void waitForValues(ImplicitLocOpBuilder &b, const Pending &prev,
                   MutableArrayRef<Value> o) {
  SmallVector<Value> inFlight(o);
  llvm::append_range(inFlight, prev.p);
  waitGroups(b, 0, inFlight);
  llvm::copy(ArrayRef(inFlight).take_front(o.size()), o.begin());
}

/// A lazy block's outcome, after P V (no wgmma in flight across the
/// branch): the warps that voted to redo it run the exact softmax on the
/// masked S and rescale O; the others keep the lazy P and l. Updates m, l
/// and o; returns the packed P.
SmallVector<Value> resolveLazy(ImplicitLocOpBuilder &b,
                               OnlineAttentionMmaOp op, const Schedule &sched,
                               const LazyBlock &lazy, ArrayRef<Value> s,
                               SmallVector<Value> &m, SmallVector<Value> &l,
                               MutableArrayRef<Value> o) {
  int64_t numP = lazy.packed.size();
  SmallVector<Type> types(numP, b.getI32Type());
  types.append(m.size() + l.size() + o.size(), b.getF32Type());
  auto ifOp = scf::IfOp::create(b, types, lazy.redo, /*withElseRegion=*/true);
  auto yield = [&](Block *block, ArrayRef<Value> p, ArrayRef<Value> mm,
                   ArrayRef<Value> ll, ArrayRef<Value> oo) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    SmallVector<Value> values(p);
    llvm::append_range(values, llvm::concat<const Value>(mm, ll, oo));
    scf::YieldOp::create(b, values);
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> p(s), mExact(m), lExact(l), oExact(o);
    rescale(b, oExact, softmax(b, op, sched, p, mExact, lExact,
                               sched.fp8LazyHeadroom));
    yield(ifOp.thenBlock(), packP8(b, p), mExact, lExact, oExact);
  }
  yield(ifOp.elseBlock(), lazy.packed, m, lazy.l, o);
  ValueRange r = ifOp.getResults();
  auto take = [&](int64_t n) {
    SmallVector<Value> part(r.take_front(n));
    r = r.drop_front(n);
    return part;
  };
  SmallVector<Value> packed = take(numP);
  m = take(m.size());
  l = take(l.size());
  llvm::copy(take(o.size()), o.begin());
  return packed;
}

/// Block j: S_j and the pending P_{j-1} V_{j-1} are issued as two groups;
/// the softmax of S_j runs while P V is in flight; O *= alpha_j after it.
Pending nextBlock(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                  const Schedule &sched, const Pending &prev,
                  SmallVector<Value> &m, SmallVector<Value> &l,
                  MutableArrayRef<Value> o) {
  const Turns *turns = sched.turns;
  ThreadLayout tl = threadLayout(b);
  ScoreDescriptors d = scoreDescriptors(b, op, tl);
  ValuesGemm pv(b, op, prev.vAddr, prev.p, sched.maxN);
  if (turns)
    turns->wait(b, tl);
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value acc = issueScores(b, op, d);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  pv.issue(b, o);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  if (turns)
    turns->handOver(b, tl);
  SmallVector<Value> s = waitForScores(b, 1, acc, op.getBlockN() / 2);
  maskScores(b, op, tl, s);
  Value vAddr = sharedAddress(b, op.getV());
  if (lazyMax(op, sched)) {
    LazyBlock lazy = lazySoftmax(b, op, sched, s, m, l);
    waitForValues(b, prev, o);
    return {resolveLazy(b, op, sched, lazy, s, m, l, o), vAddr, {},
            keysInBlock(b, op)};
  }
  std::array<Value, 2> alpha = softmax(b, op, sched, s, m, l);
  Pending next{packP(b, s, elementType(op)), vAddr, {}, keysInBlock(b, op)};
  waitForValues(b, prev, o);
  rescale(b, o, alpha);
  return next;
}

/// The last block's P V, its V zeroed past Nk first (zeroValueTail).
void drainBlock(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                const Pending &last, int64_t maxN, MutableArrayRef<Value> o) {
  zeroValueTail(b, op, last.vAddr, last.keys, threadLayout(b));
  ValuesGemm pv(b, op, last.vAddr, last.p, maxN);
  NVVM::WgmmaFenceAlignedOp::create(b);
  pv.issue(b, o);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  waitGroups(b, 0, o);
}

/// Clones the loop body (without its yield) at `b` with the induction
/// variable and state given; returns the clones of the step and release.
KVLoop cloneBody(ImplicitLocOpBuilder &b, KVLoop kv, Value iv,
                 ValueRange state) {
  IRMapping map;
  map.map(kv.loop.getInductionVar(), iv);
  map.map(kv.loop.getRegionIterArgs(), state);
  for (Operation &op : kv.loop.getBody()->without_terminator())
    b.clone(op, map);
  auto release = kv.release ? cast<nvgpu::MBarrierArriveOp>(
                                  map.lookup(kv.release.getOperation()))
                            : nullptr;
  return {kv.loop, cast<OnlineAttentionMmaOp>(map.lookup(kv.step.getOperation())),
          release};
}

/// One steady-state block of a pipelined K/V loop at `iv`: clones the body
/// and runs nextBlock on the carried state (m, l, acc, P, V address[, ring
/// slot to release][, keys in the block]); returns the state it leaves.
SmallVector<Value> steadyBlock(ImplicitLocOpBuilder &b, KVLoop kv,
                               const Schedule &sched, Value iv,
                               ValueRange state) {
  OpBuilder::InsertionGuard guard(b);
  KVLoop it = cloneBody(b, kv, iv, state.take_front(3));
  b.setInsertionPoint(it.step);
  Pending prev{unpack(b, state[3]), state[4], {}, {}};
  SmallVector<Value> m = unpack(b, it.step.getM()),
                     l = unpack(b, it.step.getL()),
                     o = unpack(b, it.step.getAcc());
  Pending next = nextBlock(b, it.step, sched, prev, m, l, o);
  SmallVector<Value> out = {
      pack(b, m), pack(b, l), pack(b, o),
      vector::FromElementsOp::create(b, state[3].getType(), next.p),
      next.vAddr};
  if (it.release) {
    out.push_back(it.release.getMbarId());
    it.release.getMbarIdMutable().assign(state[5]);
  }
  if (next.keys)
    out.push_back(next.keys);
  it.step.erase();
  return out;
}

/// The steady blocks [lb + step, ub), one per iteration.
SmallVector<Value> steadyBlocks(ImplicitLocOpBuilder &b, KVLoop kv,
                                const Schedule &sched, ArrayRef<Value> state) {
  scf::ForOp loop = kv.loop;
  Value second = arith::AddIOp::create(b, loop.getLowerBound(), loop.getStep());
  auto steady = scf::ForOp::create(b, second, loop.getUpperBound(),
                                   loop.getStep(), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(steady.getBody());
  scf::YieldOp::create(b, steadyBlock(b, kv, sched, steady.getInductionVar(),
                                      steady.getRegionIterArgs()));
  return llvm::to_vector_of<Value>(steady.getResults());
}

/// The steady blocks [lb + step, ub) two per iteration, an odd one last:
///   for j in [lb + step, end) step 2 step: block j, block j + step
///   if (end < ub) block end
/// For the lazy max. Its P is packed before P V's wait (the vote reads it),
/// so it cannot take the registers of the P in flight, and in a loop of one
/// block per iteration the back edge copies it into them. With a runtime
/// trip count ptxas (CUDA 13.0) then serializes every wgmma (C7513); two
/// blocks per iteration alternate between two register sets. The odd block
/// goes last: peeled before the loop it leaves ptxas short of registers
/// (C7511, spills).
SmallVector<Value> unrolledSteadyBlocks(ImplicitLocOpBuilder &b, KVLoop kv,
                                        const Schedule &sched,
                                        ArrayRef<Value> state) {
  scf::ForOp loop = kv.loop;
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value second = arith::AddIOp::create(b, lb, step);
  Value two = arith::ConstantIndexOp::create(b, 2);
  // Steady blocks: ceil((ub - lb) / step) - 1; pairs of them end at `end`.
  Value blocks = arith::SubIOp::create(
      b, arith::CeilDivSIOp::create(b, arith::SubIOp::create(b, ub, lb), step),
      arith::ConstantIndexOp::create(b, 1));
  Value pairs = arith::DivSIOp::create(b, blocks, two);
  Value pairStep = arith::MulIOp::create(b, step, two);
  Value end = arith::AddIOp::create(b, second,
                                    arith::MulIOp::create(b, pairs, pairStep));
  auto steady = scf::ForOp::create(b, second, end, pairStep, state);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(steady.getBody());
    Value iv = steady.getInductionVar();
    SmallVector<Value> mid =
        steadyBlock(b, kv, sched, iv, steady.getRegionIterArgs());
    scf::YieldOp::create(
        b, steadyBlock(b, kv, sched, arith::AddIOp::create(b, iv, step), mid));
  }
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, end, ub);
  auto last = scf::IfOp::create(b, steady.getResultTypes(), odd,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(last.thenBlock());
  scf::YieldOp::create(b, steadyBlock(b, kv, sched, end, steady.getResults()));
  b.setInsertionPointToStart(last.elseBlock());
  scf::YieldOp::create(b, steady.getResults());
  return llvm::to_vector_of<Value>(last.getResults());
}

/// Software-pipelines a K/V loop by one block:
///   if (lb < ub) {
///     first block (S_lb, softmax)
///     for j in [lb + step, ub): S_j + P_{j-1} V_{j-1}, softmax_j, release j-1
///     P_last V_last, release last
///   }
/// (with the lazy max the steady blocks go two per iteration:
/// unrolledSteadyBlocks). Each block keeps its ring slot one iteration
/// longer (V is read by the next iteration's P V), so the ring needs a stage
/// more to keep TMA ahead.
void pipelineLoop(KVLoop kv, const Schedule &sched) {
  scf::ForOp loop = kv.loop;
  ImplicitLocOpBuilder b(loop.getLoc(), loop);
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                    loop.getLowerBound(), loop.getUpperBound());
  auto ifOp = scf::IfOp::create(b, loop.getResultTypes(), any,
                                /*withElseRegion=*/true);
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loop.getInitArgs());

  // First block.
  b.setInsertionPointToStart(ifOp.thenBlock());
  KVLoop first = cloneBody(b, kv, loop.getLowerBound(), loop.getInitArgs());
  b.setInsertionPoint(first.step);
  SmallVector<Value> m = unpack(b, first.step.getM()),
                     l = unpack(b, first.step.getL()),
                     o = unpack(b, first.step.getAcc());
  Pending pending = firstBlock(b, first.step, sched, m, l, o);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  Value emptyBarriers;
  if (first.release) {
    emptyBarriers = first.release.getBarriers();
    pending.slot = first.release.getMbarId();
    first.release.erase();
  }
  first.step.erase();

  // Steady state: (m, l, acc, P, V address[, slot]) carried.
  auto pType = VectorType::get({int64_t(pending.p.size())}, b.getI32Type());
  SmallVector<Value> state = {
      pack(b, m), pack(b, l), pack(b, o),
      vector::FromElementsOp::create(b, pType, pending.p), pending.vAddr};
  if (pending.slot)
    state.push_back(pending.slot);
  if (pending.keys)
    state.push_back(pending.keys);
  state = lazyMax(kv.step, sched) ? unrolledSteadyBlocks(b, kv, sched, state)
                                  : steadyBlocks(b, kv, sched, state);

  // The last block's P V and release.
  ValueRange results = state;
  o = unpack(b, results[2]);
  drainBlock(b, kv.step,
             {unpack(b, results[3]), results[4], {},
              pending.keys ? results.back() : Value()},
             sched.maxN, o);
  if (emptyBarriers)
    nvgpu::MBarrierArriveOp::create(
        b, nvgpu::MBarrierTokenType::get(b.getContext()), emptyBarriers,
        results[5]);
  scf::YieldOp::create(b, ValueRange{results[0], results[1], pack(b, o)});
  loop.replaceAllUsesWith(ifOp.getResults());
  loop.erase();
}

//===----------------------------------------------------------------------===//
// attn.epilogue
//===----------------------------------------------------------------------===//

/// Where tile row `row` of an epilogue goes in O and LSE: query q_pos + row
/// of `head`, or with GQA packing (G > 1, rows packed query-major) query
/// (q_pos + row) / G of head `head` + (q_pos + row) % G.
struct RowTarget {
  Value head, query;
};

RowTarget rowTarget(ImplicitLocOpBuilder &b, EpilogueOp op, Value row) {
  Value packed = arith::AddIOp::create(b, op.getQPos(), row);
  int64_t g = op.getGqaPack();
  if (g == 1)
    return {op.getHead(), packed};
  return {arith::AddIOp::create(
              b, op.getHead(), arith::RemUIOp::create(b, packed, cIndex(b, g))),
          queryOf(b, packed, g)};
}

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
  RowTarget to = rowTarget(b, op, tileRow);
  Value inside = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, idx,
                            cIndex(b, units)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query, numRows));
  auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value v =
      vector::LoadOp::create(b, VectorType::get({8}, elt), op.getStaging(),
                             ValueRange{chunk, tileRow, at});
  vector::StoreOp::create(b, v, op.getO(),
                          ValueRange{op.getBatch(), to.head, to.query, col});
}

/// Writes the warpgroup's 64 staged rows to O with one TMA store per
/// 64-column chunk (which clips rows past Nq and columns past D), issued by
/// its thread 0; with GQA packing (G > 1) each box is 64 / G queries of
/// the G heads from `head`, on O's [B, N, H, D] view. That thread then waits until TMA has read the staging
/// tile, which a persistent CTA's next Q overwrites; the global writes
/// complete in the background.
void storeOut(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              int64_t chunks) {
  Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tl.thread,
                                      cIndex(b, 0));
  auto ifOp = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value wgRow =
      arith::MulIOp::create(b, tl.warpgroup, cIndex(b, kWarpgroupRows));
  Value row = arith::AddIOp::create(b, op.getQPos(), wgRow);
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(kWarpgroupRows),
                                     b.getIndexAttr(64)};
  SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
  int64_t g = op.getGqaPack();
  SmallVector<ReassociationIndices> toBox = {{0, 1}, {2}, {3}};
  SmallVector<int64_t> boxShape = {1, 1, kWarpgroupRows, 64};
  SmallVector<Value> at = {Value(), row, op.getHead(), op.getBatch()};
  if (g > 1) {
    toBox = {{0}, {1, 2}, {3}};
    boxShape = {1, kWarpgroupRows / g, g, 64};
    at = {Value(), op.getHead(), queryOf(b, row, g), op.getBatch()};
  }
  for (int64_t c = 0; c < chunks; ++c) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(c), wgRow,
                                         b.getIndexAttr(0)};
    Value rows = memref::SubViewOp::create(b, op.getStaging(), offsets, sizes,
                                           ones);
    Value box = memref::ExpandShapeOp::create(b, boxShape, rows, toBox);
    at[0] = cIndex(b, c * 64);
    nvgpu::TmaAsyncStoreOp::create(b, box, op.getOMap(), at, Value());
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
  NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
}

/// Nq (dim 2 of `out`) for the fp32 epilogue's row guards, a run-time value
/// even where it is static: a static Nq <= 8 lets LLVM fold away every
/// thread's second row (g + 8) and merge the rest under one branch, and
/// ptxas 13.0 then serializes the kernel's wgmmas (C7511) and spills 96 B
/// (decode: Nq = 1 with split-KV). A run-time Nq assembles clean.
Value rowBound(ImplicitLocOpBuilder &b, Value out) {
  Value n = memref::DimOp::create(b, out, 2);
  return cast<MemRefType>(out.getType()).isDynamicDim(2) ? n : opaque(b, n);
}

/// Split-KV's fp32 O (a split of the workspace): each thread stores its
/// normalized accumulator pairs straight from the registers, two floats per
/// store, for rows below Nq and columns below D (no staging: fp32 rows are
/// twice as wide as the bf16 tile they would be staged in).
void storeF32(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              ArrayRef<Value> o, int64_t d) {
  Value numRows = rowBound(b, op.getO());
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t j = 0; j < int64_t(o.size()); j += 2) {
    int64_t h = halfOf(j), col = colOf(j); // j even: the pair (j, j + 1)
    if (col >= d)
      continue; // a group of padding columns past D
    Value c = arith::AddIOp::create(b, tl.twoQ, cIndex(b, col));
    RowTarget to = rowTarget(b, op, tl.row[h]);
    Value write =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query, numRows);
    if (col + 8 > d) // a partial group of 8 columns: this thread's pair?
      write = arith::AndIOp::create(
          b, write,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c,
                                cIndex(b, d)));
    auto ifOp = scf::IfOp::create(b, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value pair = vector::FromElementsOp::create(b, pairType,
                                                ValueRange{o[j], o[j + 1]});
    // 8-byte aligned: the workspace is, D and the column are even.
    vector::StoreOp::create(b, pair, op.getO(),
                            ValueRange{op.getBatch(), to.head, to.query, c},
                            /*nontemporal=*/false, llvm::MaybeAlign(8));
  }
}

/// LSE = (m + log2 l - pOffset) * ln 2 (-inf where l == 0), by the quad
/// leaders, for rows below `numRows`; pOffset is log2 of FP8's P scale (0
/// otherwise).
void storeLse(ImplicitLocOpBuilder &b, EpilogueOp op, const ThreadLayout &tl,
              ArrayRef<Value> m, ArrayRef<Value> l, ArrayRef<Value> noKey,
              double pOffset, Value numRows) {
  for (int h = 0; h < 2; ++h) {
    Value log2Sum = arith::AddFOp::create(b, m[h], log2(b, l[h]));
    if (pOffset)
      log2Sum = arith::SubFOp::create(b, log2Sum, cF32(b, pOffset));
    Value lse = arith::MulFOp::create(b, log2Sum, cF32(b, M_LN2));
    lse = arith::SelectOp::create(b, noKey[h], cF32(b, -INFINITY), lse);
    RowTarget to = rowTarget(b, op, tl.row[h]);
    Value write = arith::AndIOp::create(
        b, tl.quadLeader,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, to.query,
                              numRows));
    auto ifOp = scf::IfOp::create(b, write, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, lse, op.getLse(),
                            ValueRange{op.getBatch(), to.head, to.query});
  }
}

LogicalResult lowerEpilogue(EpilogueOp op, double fp8PScaleLog2) {
  auto oType = cast<MemRefType>(op.getO().getType());
  if (!op.getStaging() && !oType.getElementType().isF32())
    return emitError(op.getLoc(),
                     "attn-lower-to-wgmma needs the staging tile that "
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
  if (Value descale = op.getVDescale()) // FP8: P V is linear in V
    for (Value &x : inv)
      x = arith::MulFOp::create(b, x, descale);
  SmallVector<Value> o = unpack(b, op.getAcc());
  for (auto [j, x] : llvm::enumerate(o))
    x = arith::MulFOp::create(b, x, inv[halfOf(j)]);
  Type elt = oType.getElementType();
  int64_t d = oType.getDimSize(3); // static: attn-tile requires it
  double pOffset = op.getVDescale() ? fp8PScaleLog2 : 0;
  if (elt.isF32()) {
    storeF32(b, op, tl, o, d);
    if (op.getLse())
      storeLse(b, op, tl, m, l, noKey, pOffset, rowBound(b, op.getLse()));
    op.erase();
    return success();
  }
  stageO(b, op, tl, o, elt); // includes the zero padding columns
  if (op.getOMap()) // the staged O is read by TMA (the async proxy)
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  // Warpgroup-local barrier.
  Value barrierId = arith::IndexCastOp::create(
      b, b.getI32Type(),
      arith::AddIOp::create(b, tl.warpgroup, cIndex(b, kEpilogueBarrier)));
  NVVM::BarrierOp::create(b, Type(), barrierId, cI32(b, 128),
                          NVVM::BarrierReductionAttr(), Value());
  if (op.getOMap())
    storeOut(b, op, tl, llvm::divideCeil(d, 64));
  else
    copyOut(b, op, tl, d, elt);
  if (op.getLse())
    storeLse(b, op, tl, m, l, noKey, pOffset,
             memref::DimOp::create(b, op.getLse(), 2));
  op.erase();
  return success();
}

struct AttnLowerToWGMMAPass
    : StrictOptions<attn::impl::AttnLowerToWGMMABase<AttnLowerToWGMMAPass>> {
  using StrictOptions::StrictOptions;

  /// The nest attn-async-pipeline builds: warp_specialize in a CTA loop,
  /// steps and epilogues in its consumer region. Anything else would be
  /// left behind or lowered without its warpgroups.
  static LogicalResult checkNesting(Operation *root) {
    WalkResult res = root->walk([](Operation *op) {
      if (auto ws = dyn_cast<WarpSpecializeOp>(op)) {
        if (!ws->getParentOfType<scf::ForallOp>())
          return WalkResult(emitError(
              ws.getLoc(), "attn-lower-to-wgmma needs the warp-specialized "
                           "CTA inside the CTA loop (scf.forall) that "
                           "attn-async-pipeline builds"));
        return WalkResult::advance();
      }
      if (!isa<OnlineAttentionMmaOp, EpilogueOp>(op))
        return WalkResult::advance();
      auto ws = op->getParentOfType<WarpSpecializeOp>();
      if (isa<EpilogueOp>(op) && !ws)
        return WalkResult::advance(); // the FMA path's epilogue
      if (!ws || !ws.getConsumer().isAncestor(op->getParentRegion()))
        return WalkResult(
            emitError(op->getLoc(),
                      "attn-lower-to-wgmma needs the tile steps and "
                      "epilogues in the consumer region of an "
                      "attn.warp_specialize (built by attn-async-pipeline)"));
      return WalkResult::advance();
    });
    return failure(res.wasInterrupted());
  }

  LogicalResult lower(WarpSpecializeOp ws) {
    if (isGradConsumer(ws))
      return lowerGradConsumer(ws);
    Region &consumer = ws.getConsumer();
    SmallVector<OnlineAttentionMmaOp> steps;
    SmallVector<EpilogueOp> epilogues;
    consumer.walk([&](OnlineAttentionMmaOp op) { steps.push_back(op); });
    consumer.walk([&](EpilogueOp op) { epilogues.push_back(op); });
    if (epilogues.size() != 1)
      return emitError(ws.getLoc(),
                       "attn-lower-to-wgmma: expected one attn.epilogue "
                       "in the consumer region");
    int64_t blockM =
        cast<VectorType>(epilogues.front().getAcc().getType()).getDimSize(0);
    if (blockM != 64 * static_cast<int64_t>(ws.getConsumerWarpgroups()))
      return emitError(ws.getLoc(), "attn-lower-to-wgmma: BLOCK_M (")
             << blockM << ") must be 64 rows per consumer warpgroup";
    if (failed(retypeState(consumer, blockM)))
      return failure();
    std::optional<Turns> turns;
    if (ws.getPingPong()) {
      turns.emplace(Turns{static_cast<int64_t>(ws.getConsumerWarpgroups())});
      ImplicitLocOpBuilder b = ImplicitLocOpBuilder::atBlockBegin(
          ws.getLoc(), &consumer.front());
      turns->start(b);
    }
    bool trees = llvm::all_of(steps, [](OnlineAttentionMmaOp op) {
      return !op.isFP8() && op.getHeadDim() > 64;
    });
    Schedule sched{maxMmaN, turns ? &*turns : nullptr,
                   static_cast<double>(fp8PScaleLog2),
                   /*treeReductions=*/trees && ws.getConsumerWarpgroups() <= 2,
                   fp8PolyExp2, fp8LazyMax,
                   static_cast<double>(fp8LazyHeadroom)};
    for (OnlineAttentionMmaOp op : steps) {
      std::optional<KVLoop> kv =
          ws.getOverlap() ? matchKVLoop(op) : std::nullopt;
      // The lazy max only in pipelined K/V loops without a mask: a masked
      // loop (the causal diagonal, the key-length tail) is a block or two.
      Schedule stepSched = sched;
      stepSched.fp8LazyMax &= kv && op.getMask() == MaskKind::none;
      if (kv)
        pipelineLoop(*kv, stepSched);
      else
        lowerStep(op, stepSched);
    }
    if (failed(lowerEpilogue(epilogues.front(), fp8PScaleLog2)))
      return failure();
    lowerWarpSpecialize(ws);
    return success();
  }

  /// Whether option `name` lies in [lo, hi] (hi: none, no upper bound);
  /// else an error naming the range and `why`.
  static LogicalResult checkRange(MLIRContext *ctx, StringRef name,
                                  int64_t value, int64_t lo,
                                  std::optional<int64_t> hi, StringRef why) {
    if (value >= lo && (!hi || value <= *hi))
      return success();
    InFlightDiagnostic diag =
        emitError(UnknownLoc::get(ctx), "attn-lower-to-wgmma: ")
        << name << " must be ";
    if (hi)
      diag << "in [" << lo << ", " << *hi << "]";
    else
      diag << ">= " << lo;
    return diag << " (" << why << "), but got " << value;
  }

  /// Options are checked once, before any function (no location: they
  /// are not in the input).
  LogicalResult initialize(MLIRContext *ctx) override {
    if (maxMmaN < 64 || maxMmaN > 256 || maxMmaN % 64 != 0)
      return emitError(UnknownLoc::get(ctx),
                       "attn-lower-to-wgmma: max-mma-n must be 64, 128, 192 "
                       "or 256, but got ")
             << static_cast<int64_t>(maxMmaN);
    if (failed(checkRange(ctx, "fp8-p-scale-log2", fp8PScaleLog2, 0,
                          kMaxFP8PScaleLog2,
                          "P * 2^8 <= 256 stays below e4m3's 448")) ||
        failed(checkRange(ctx, "fp8-poly-exp2", fp8PolyExp2, 0, std::nullopt,
                          "0: every exponential on MUFU")))
      return failure();
    return checkRange(ctx, "fp8-lazy-headroom", fp8LazyHeadroom, 0,
                      kMaxFP8PScaleLog2, "log2 units, at most P's scale");
  }

  void runOnOperation() override {
    if (failed(checkNesting(getOperation())))
      return signalPassFailure();
    // Per-channel V descales lower to the host only (as HostOnly.h's).
    WalkResult fine = getOperation().walk([](EpilogueOp op) {
      if (!op.getChannelDescale())
        return WalkResult::advance();
      emitError(op.getLoc(),
                "attn-lower-to-wgmma: per-channel V descales "
                "(channel_descale) have no GPU lowering (the "
                "tensor-core path takes fp32 [B, Hkv] descales); they "
                "lower to the host only: --attn-to-cpu");
      return WalkResult::interrupt();
    });
    if (fine.wasInterrupted())
      return signalPassFailure();
    SmallVector<WarpSpecializeOp> ops;
    getOperation().walk([&](WarpSpecializeOp ws) { ops.push_back(ws); });
    for (WarpSpecializeOp ws : ops)
      if (failed(lower(ws)))
        return signalPassFailure();
  }
};

} // namespace

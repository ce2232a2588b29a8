//===- OnlineAttentionWGMMA.h - attn-lower-to-wgmma, by op ------*- C++ -*-===//
//
// What the files of attn-lower-to-wgmma share: the schedule of a
// warp_specialize's steps (ping-pong turns, reductions, FP8 choices), the
// pieces of the online-softmax step that the serial lowering
// (OnlineAttentionToWGMMA.cpp) and the software-pipelined K/V loop
// (OverlapToWGMMA.cpp) are built from, and the epilogue
// (EpilogueToWGMMA.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ONLINEATTENTIONWGMMA_H
#define ATTN_LIB_CONVERSION_ONLINEATTENTIONWGMMA_H

#include "WarpgroupMMA.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <array>
#include <optional>

namespace mlir::attn::wgmma {

/// Named barriers: 0 is the CTA's; 1 + w is consumer warpgroup w's for the
/// epilogue; the ping-pong turns follow.
constexpr int64_t kEpilogueBarrier = 1;

/// FP8's P is quantized as P * 2^s, s = the pass's fp8-p-scale-log2
/// (folded into the exp2 argument; l carries the same factor, so O = acc /
/// l is unchanged and LSE subtracts it). With s = 8 (the default)
/// probabilities down to 2^-17 stay above e4m3's smallest subnormal (2^-9)
/// instead of flushing to zero beside a large one (an attention sink), and
/// P <= 256 stays below e4m3's 448.
constexpr int64_t kMaxFP8PScaleLog2 = 8;

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

//===----------------------------------------------------------------------===//
// attn.online_attention_mma (OnlineAttentionToWGMMA.cpp)
//===----------------------------------------------------------------------===//

/// Shared-memory descriptors of S = Q K^T per k-step (32 bytes of the
/// 128-byte row: k16 for f16/bf16, k32 for e4m3): A is the warpgroup's 64
/// rows of Q, B is K, both K-major (chunk kk / 4).
struct ScoreDescriptors {
  SmallVector<Value> a, b;
  Value zero; // the accumulator's input, created before the fence (C7513)
};

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
             ArrayRef<Value> packedP, int64_t maxN);


  /// Issues the register-A wgmmas (between a fence and a commit) and
  /// updates `o` to their results, valid after the wait.
  void issue(ImplicitLocOpBuilder &b, MutableArrayRef<Value> o) const;
};

/// bf16, f16 or f8E4M3FN: the element type of the Q, K and V tiles.
Type elementType(OnlineAttentionMmaOp op);

/// GQA packing (G = `pack` > 1): packed row r is query r / G of head
/// r % G of the group (query-major, as attn.load_tile packs them).
Value queryOf(ImplicitLocOpBuilder &b, Value packedRow, int64_t pack);

ScoreDescriptors scoreDescriptors(ImplicitLocOpBuilder &b,
                                  OnlineAttentionMmaOp op,
                                  const ThreadLayout &tl);

/// Issues S = Q K^T (between a fence and a commit): one wgmma
/// m64nBLOCK_NkK per k-step, the first overwriting the accumulator.
/// Returns the accumulator struct (BLOCK_N / 2 f32), valid after the wait.
Value issueScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                  const ScoreDescriptors &d);

/// Sets scores of keys a row may not see to -inf. Key of register i is
/// k_pos + 2q + colOf(i); row h sees keys < limit_h, with limit_h = Nk, or
/// for causal min(Nk, query_h + causal_offset + 1), query_h = q_pos +
/// row_h (with GQA packing G: (q_pos + row_h) / G).
void maskScores(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                const ThreadLayout &tl, MutableArrayRef<Value> s);

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
                             double headroom = 0);

/// P (BLOCK_N / 2 f32 registers) -> the A operands of O += P V: BLOCK_N / 4
/// 32-bit registers, four per k-step kk; register 4 kk + r packs
/// P[8 kk + 2 r] (low half) and P[8 kk + 2 r + 1]. FP8: packP8.
/// FP8 P (BLOCK_N / 2 f32 registers) -> the e4m3 A operands of O += P V,
/// in the accumulator's key order (attn-async-pipeline permutes V^T's keys
/// to match).
SmallVector<Value> packP8(ImplicitLocOpBuilder &b, ArrayRef<Value> p);

SmallVector<Value> packP(ImplicitLocOpBuilder &b, ArrayRef<Value> p,
                         Type elt);

LazyBlock lazySoftmax(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                      const Schedule &sched, ArrayRef<Value> s,
                      ArrayRef<Value> m, ArrayRef<Value> l);

/// Waits for all but the newest `pending` wgmma groups; `regs` (results of
/// the groups waited for) are pinned after the wait.
void waitGroups(ImplicitLocOpBuilder &b, int64_t pending,
                MutableArrayRef<Value> regs);

/// Waits for all but the newest `pending` groups and returns S's `regs`
/// registers from the accumulator struct, pinned after the wait.
SmallVector<Value> waitForScores(ImplicitLocOpBuilder &b, int64_t pending,
                                 Value acc, int64_t regs);

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
                                      double headroom = 0);

void rescale(ImplicitLocOpBuilder &b, MutableArrayRef<Value> o,
             std::array<Value, 2> alpha);

/// `unfilled_tail`: Nk - k_pos, the keys of the block inside the sequence
/// (null without the attribute).
Value keysInBlock(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op);

/// `unfilled_tail`: a block with fewer than BLOCK_N keys inside the sequence
/// (`keys`, keysInBlock) zeroes V's rows past them, at shared address
/// `vAddr`, before its P V reads them (their P is 0, but 0 * NaN is NaN).
/// Only the tail block takes the branch, which is uniform over the
/// warpgroup.
void zeroValueTail(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                   Value vAddr, Value keys, const ThreadLayout &tl);

/// Serial schedule: S, softmax, O *= alpha, O += P V, each waited for, on
/// the thread's fragments `state` (m, l, acc); returns the new ones.
SmallVector<Value> lowerStep(ImplicitLocOpBuilder &b, OnlineAttentionMmaOp op,
                             ValueRange state, const Schedule &sched);

//===----------------------------------------------------------------------===//
// Intra-warpgroup overlap (OverlapToWGMMA.cpp)
//===----------------------------------------------------------------------===//

/// A K/V loop as attn-async-pipeline builds it: one step whose state is the
/// loop's (m, l, acc) and, with the ring, one release of the block's slot
/// after it.
struct KVLoop {
  scf::ForOp loop;
  OnlineAttentionMmaOp step;
  nvgpu::MBarrierArriveOp release; // null without the ring (unit tests)
};

std::optional<KVLoop> matchKVLoop(OnlineAttentionMmaOp step);

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
/// `init`: the thread's fragments of the loop's initial state (m, l, acc);
/// the loop is replaced through `rewriter`.
void pipelineLoop(RewriterBase &rewriter, KVLoop kv, ValueRange init,
                  const Schedule &sched);

//===----------------------------------------------------------------------===//
// attn.epilogue (EpilogueToWGMMA.cpp)
//===----------------------------------------------------------------------===//

/// The staging tile (f16/bf16 O): its error, before any rewrite.
LogicalResult checkEpilogue(EpilogueOp op);

/// Lowers `op` at `b` on the thread's fragments `state` (m, l, acc); the
/// caller erases it.
void lowerEpilogue(ImplicitLocOpBuilder &b, EpilogueOp op, ValueRange state,
                   double fp8PScaleLog2);

} // namespace mlir::attn::wgmma

#endif // ATTN_LIB_CONVERSION_ONLINEATTENTIONWGMMA_H

//===- OverlapToWGMMA.cpp - K/V loops pipelined by one block ----------------===//
//
// Intra-warpgroup overlap (FlashAttention-3 section 3.2): a K/V loop whose
// step is an attn.online_attention_mma issues S_j and P_{j-1} V_{j-1} as two
// wgmma groups and runs the softmax of S_j while P V is in flight.
//
//===----------------------------------------------------------------------===//

#include "OnlineAttentionWGMMA.h"
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
SmallVector<Value> steadyBlock(RewriterBase &rw, ImplicitLocOpBuilder &b,
                               KVLoop kv, const Schedule &sched, Value iv,
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
  rw.eraseOp(it.step);
  return out;
}

/// The steady blocks [lb + step, ub), one per iteration.
SmallVector<Value> steadyBlocks(RewriterBase &rw, ImplicitLocOpBuilder &b,
                                KVLoop kv, const Schedule &sched,
                                ArrayRef<Value> state) {
  scf::ForOp loop = kv.loop;
  Value second = arith::AddIOp::create(b, loop.getLowerBound(), loop.getStep());
  auto steady = scf::ForOp::create(b, second, loop.getUpperBound(),
                                   loop.getStep(), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(steady.getBody());
  scf::YieldOp::create(b, steadyBlock(rw, b, kv, sched,
                                      steady.getInductionVar(),
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
SmallVector<Value> unrolledSteadyBlocks(RewriterBase &rw,
                                        ImplicitLocOpBuilder &b, KVLoop kv,
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
        steadyBlock(rw, b, kv, sched, iv, steady.getRegionIterArgs());
    scf::YieldOp::create(b, steadyBlock(rw, b, kv, sched,
                                        arith::AddIOp::create(b, iv, step),
                                        mid));
  }
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, end, ub);
  auto last = scf::IfOp::create(b, steady.getResultTypes(), odd,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(last.thenBlock());
  scf::YieldOp::create(
      b, steadyBlock(rw, b, kv, sched, end, steady.getResults()));
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
void pipelineLoop(RewriterBase &rw, KVLoop kv, ValueRange init,
                  const Schedule &sched) {
  scf::ForOp loop = kv.loop;
  ImplicitLocOpBuilder b(loop.getLoc(), rw);
  b.setInsertionPoint(loop);
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                    loop.getLowerBound(), loop.getUpperBound());
  auto ifOp = scf::IfOp::create(b, init.getTypes(), any,
                                /*withElseRegion=*/true);
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, init);

  // First block.
  b.setInsertionPointToStart(ifOp.thenBlock());
  KVLoop first = cloneBody(b, kv, loop.getLowerBound(), init);
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
    rw.eraseOp(first.release);
  }
  rw.eraseOp(first.step);

  // Steady state: (m, l, acc, P, V address[, slot]) carried.
  auto pType = VectorType::get({int64_t(pending.p.size())}, b.getI32Type());
  SmallVector<Value> state = {
      pack(b, m), pack(b, l), pack(b, o),
      vector::FromElementsOp::create(b, pType, pending.p), pending.vAddr};
  if (pending.slot)
    state.push_back(pending.slot);
  if (pending.keys)
    state.push_back(pending.keys);
  state = lazyMax(kv.step, sched)
              ? unrolledSteadyBlocks(rw, b, kv, sched, state)
              : steadyBlocks(rw, b, kv, sched, state);

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
  rw.replaceOp(loop, ifOp.getResults());
}

} // namespace mlir::attn::wgmma

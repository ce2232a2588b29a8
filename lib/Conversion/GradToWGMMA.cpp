//===- GradToWGMMA.cpp - the backward step on warpgroup MMA ---------------===//
//
// attn-lower-to-wgmma's backward half: attn.grad_dkdv_mma and the dK/dV
// stores of a consumer region built by attn-grad-async-pipeline. Consumer
// warpgroup w owns keys [64 w, 64 w + 64) of the CTA's K/V block; per Q
// block of 64 queries it computes S^T and dP^T (64 keys x 64 queries, both
// operands K-major in shared memory), P^T and dS^T on the accumulator
// registers, dV += P^T dO and dK += dS^T Q with register-A wgmmas (dO and
// Q MN-major), stages dS in shared memory (stmatrix .trans) and computes
// columns [w D / 2, (w + 1) D / 2) of dQ = dS K, added to the fp32
// accumulator with bulk reductions. Source: FlashAttention-3 appendix B.
//
// One conversion pattern per op (populateGradToWGMMAPatterns): dK and dV
// are !attn.wg_fragment<BLOCK_N x D x f32>, whose keys are the rows of the
// wgmma accumulator layout, so the type converter gives each thread
// vector<D / 2> of them, as it does the forward's acc.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToWGMMA.h"

#include "WarpgroupMMA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::wgmma;

namespace {

/// Keys of a consumer warpgroup, queries of a Q block, and the named
/// barrier both consumer warpgroups meet at once dS is staged (0 is the
/// CTA's).
constexpr int64_t kKeys = 64;
constexpr int64_t kQueries = 64;
constexpr int64_t kStagedBarrier = 1;
/// Named barriers 2 + w: warpgroup w's dQ staged for its bulk reduction.
constexpr int64_t kStagedDQBarrier = 2;

Value offsetBy(ImplicitLocOpBuilder &b, Value addr, Value index,
               int64_t bytes) {
  return arith::AddIOp::create(
      b, addr,
      arith::IndexCastOp::create(
          b, b.getI64Type(), arith::MulIOp::create(b, index, cIndex(b, bytes))));
}

/// Descriptors of `rows`-row K-major operands per k16 step over D: the
/// tile at `addr` is [C, tileRows, 64] (128-byte rows, 64 columns a chunk).
SmallVector<Value> kMajor(ImplicitLocOpBuilder &b, Value addr,
                          int64_t tileRows, int64_t kSteps) {
  SmallVector<Value> d;
  for (int64_t kk = 0; kk < kSteps; ++kk)
    d.push_back(descriptor(b, addr, (kk / 4) * tileRows * kChunkBytes +
                                        (kk % 4) * 32,
                           16, 1024));
  return d;
}

/// Descriptors of an MN-major B (rows = the k dimension, 128-byte rows of
/// 64 columns, chunks of `tileRows` rows `chunkStride` apart) per k16 step
/// over `kSteps` * 16 rows.
SmallVector<Value> mnMajor(ImplicitLocOpBuilder &b, Value addr,
                           int64_t tileRows, int64_t kSteps) {
  SmallVector<Value> d;
  for (int64_t kk = 0; kk < kSteps; ++kk)
    d.push_back(
        descriptor(b, addr, kk * 16 * kChunkBytes, tileRows * kChunkBytes,
                   1024));
  return d;
}

/// LSE_log2 and Delta of query columns q_pos + 2 q + 8 j and + 1: one
/// 8-byte load each. The buffers hold whole Q blocks (+inf and 0 past Nq),
/// so the loads need no guard, and LLVM gives all of them one address per
/// step and buffer plus an immediate. (A guarded load per column, clamped
/// below Nq, had a 64-bit address of its own: ptxas issued the loads early
/// with ~30 of those live and spilled.)
std::pair<Value, Value> columnPair(ImplicitLocOpBuilder &b, GradDKDVMmaOp op,
                                   const ThreadLayout &tl, int64_t j) {
  Value col = arith::AddIOp::create(
      b, arith::AddIOp::create(b, op.getQPos(), tl.twoQ), cIndex(b, 8 * j));
  SmallVector<Value> at = {op.getBatch(), op.getHead(), col};
  auto pairType = VectorType::get({2}, b.getF32Type());
  auto load = [&](Value rows) -> Value {
    return vector::LoadOp::create(b, pairType, rows, at, /*nontemporal=*/false,
                                  llvm::MaybeAlign(8));
  };
  return {load(op.getLseLog2()), load(op.getDelta())};
}

/// P^T = exp2(S^T c - LSE_log2) (0 where masked) and dS^T = P^T (dP^T -
/// Delta) scale, in place on the S^T and dP^T registers. Register i is
/// key row(i) and query column 8 (i / 4) + 2 q + (i & 1); the LSE_log2
/// and Delta of a column pair are loaded next to its eight registers
/// (loaded all at once they would add 32 live registers and spill).
void gradients(ImplicitLocOpBuilder &b, GradDKDVMmaOp op,
               const ThreadLayout &tl, MutableArrayRef<Value> s,
               MutableArrayRef<Value> dp) {
  double scale = op.getScale().convertToDouble();
  Value c = cF32(b, scale * M_LOG2E);
  // Causal: key <= q_pos + 2 q + 8 j + e + offset, i.e. margin_h = key_h -
  // offset - q_pos - 2 q <= 8 j + e: two 32-bit values per step and an
  // immediate per column.
  Value offset = op.getCausalOffset();
  SmallVector<Value> margin;
  if (offset) {
    auto i32 = [&](Value x) {
      return arith::IndexCastOp::create(b, b.getI32Type(), x).getResult();
    };
    Value base = arith::AddIOp::create(
        b, arith::AddIOp::create(b, i32(offset), i32(op.getQPos())),
        i32(tl.twoQ));
    for (int h = 0; h < 2; ++h)
      margin.push_back(arith::SubIOp::create(
          b, i32(arith::AddIOp::create(b, op.getKPos(), tl.row[h])), base));
  }
  for (int64_t j = 0; j < kQueries / 8; ++j) {
    auto [lsePair, deltaPair] = columnPair(b, op, tl, j);
    for (int64_t e = 0; e < 2; ++e) {
      Value lse = vector::ExtractOp::create(b, lsePair, e);
      Value delta = vector::ExtractOp::create(b, deltaPair, e);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t i = 4 * j + 2 * h + e;
        Value p = exp2(b, LLVM::FMAOp::create(
                              b, s[i], c, arith::NegFOp::create(b, lse)));
        if (offset) {
          Value visible = arith::CmpIOp::create(b, arith::CmpIPredicate::sle,
                                                margin[h], cI32(b, 8 * j + e));
          p = arith::SelectOp::create(b, visible, p, cF32(b, 0));
        }
        Value ds = arith::MulFOp::create(
            b, p, arith::SubFOp::create(b, dp[i], delta));
        s[i] = p;
        dp[i] = arith::MulFOp::create(b, ds, cF32(b, scale));
      }
    }
  }
}

/// Writes the warpgroup's dS^T (packed pairs, 64 keys x 64 queries) as dS
/// into chunk w of the [2, 64 queries, 64 keys] tile at `dsAddr`: four
/// stmatrix .trans x4, each four 8x8 matrices (key half h, queries 8 j ..).
/// Lane L gives the row address of matrix L / 8, row L % 8: query row
/// 8 j + L % 8, 16-byte unit 2 warp + h of the 128-byte row, swizzled by
/// the row's index mod 8.
void stageDS(ImplicitLocOpBuilder &b, const ThreadLayout &tl, Value dsAddr,
             ArrayRef<Value> packed) {
  Value lane = arith::RemUIOp::create(b, tl.thread, cIndex(b, 32));
  Value warp = arith::DivUIOp::create(b, tl.thread, cIndex(b, 32));
  Value m = arith::DivUIOp::create(b, lane, cIndex(b, 8));
  Value r = arith::RemUIOp::create(b, lane, cIndex(b, 8));
  Value h = arith::RemUIOp::create(b, m, cIndex(b, 2));
  Value jHalf = arith::DivUIOp::create(b, m, cIndex(b, 2));
  Value unit = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIndex(b, 2)), h);
  Value swizzled = arith::XOrIOp::create(b, unit, r);
  Value chunk = offsetBy(b, dsAddr, tl.warpgroup, kQueries * kChunkBytes);
  Value row = arith::AddIOp::create(
      b, arith::MulIOp::create(b, jHalf, cIndex(b, 8)), r);
  // The matrices of step jj are 8 jj rows further. Opaque, so that only
  // this address's thread-dependent part is hoisted out of the Q-block
  // loop, not one 64-bit address per step.
  Value first = opaque(
      b, offsetBy(b, offsetBy(b, chunk, row, kChunkBytes), swizzled, 16));
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  for (int64_t jj = 0; jj < kQueries / 8; jj += 2) {
    Value addr = arith::AddIOp::create(b, first, cI64(b, jj * 8 * kChunkBytes));
    Value ptr = LLVM::IntToPtrOp::create(b, ptrType, addr);
    NVVM::StMatrixOp::create(
        b, ptr, ArrayRef(packed).slice(2 * jj, 4),
        NVVM::MMALayout::col,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
  }
}

/// An inline-PTX statement with side effects and no results.
void ptx(ImplicitLocOpBuilder &b, StringRef text, StringRef constraints,
         ValueRange operands) {
  LLVM::InlineAsmOp::create(
      b, TypeRange(), operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

/// Runs `body` in thread 0 of the warpgroup.
void inLeader(ImplicitLocOpBuilder &b, const ThreadLayout &tl,
              function_ref<void()> body) {
  Value leader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tl.thread,
                                       cIndex(b, 0));
  auto ifOp = scf::IfOp::create(b, leader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

/// dq_acc's tile (batch, head, q_pos / 64, w) += this warpgroup's half of
/// dQ (n = D / 2 columns): the registers go to dq_stage[w] (pairs as 8-byte
/// stores, 8-column groups XOR-swizzled by row as the tile is), are made
/// visible to the async proxy, and thread 0 adds the whole tile with one
/// bulk reduction, then waits until the previous one has read its buffer
/// (the buffer this warpgroup writes next).
void addDQ(ImplicitLocOpBuilder &b, GradDKDVMmaOp op, const ThreadLayout &tl,
           ArrayRef<Value> dq, int64_t n) {
  // Pair i goes to row r = 16 warp + g + 8 half(i), group (i / 4) ^ (r %
  // groups), i.e. byte 32 ((i / 4) ^ s) + 8 q of the row (s = r % groups,
  // the same for both halves). Rows are 32 groups bytes long and the
  // buffer is aligned to them, so that is (the row's byte 32 s + 8 q) XOR
  // 32 (i / 4): one address per step, made opaque, and a constant per pair.
  // (Offsets from the buffer, per pair, would be 14 loop-invariant 64-bit
  // values held across the whole Q-block loop.)
  int64_t groups = n / 8, rowBytes = n * 4;
  Value warp = arith::DivUIOp::create(b, tl.thread, cIndex(b, 32));
  Value firstRow = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIndex(b, 16)), tl.g);
  Value tileRow = arith::AddIOp::create(
      b, arith::MulIOp::create(b, tl.warpgroup, cIndex(b, kQueries)), firstRow);
  Value own = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b, arith::RemUIOp::create(b, firstRow, cIndex(b, groups)),
          cIndex(b, 32)),
      arith::MulIOp::create(b, tl.twoQ, cIndex(b, 4)));
  Value rowAddr =
      offsetBy(b, sharedAddress(b, op.getDqStage()), tileRow, rowBytes);
  Value base = opaque(b, offsetBy(b, rowAddr, own, 1));
  auto pairType = VectorType::get({2}, b.getF32Type());
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  for (size_t i = 0; i + 1 < dq.size(); i += 2) {
    Value addr = arith::AddIOp::create(
        b, arith::XOrIOp::create(b, base, cI64(b, 32 * (i / 4))),
        cI64(b, 8 * rowBytes * halfOf(i)));
    LLVM::StoreOp::create(b,
                          vector::FromElementsOp::create(
                              b, pairType, ValueRange{dq[i], dq[i + 1]}),
                          LLVM::IntToPtrOp::create(b, ptrType, addr),
                          /*alignment=*/8);
  }
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  NVVM::BarrierOp::create(
      b, Type(),
      arith::IndexCastOp::create(
          b, b.getI32Type(),
          arith::AddIOp::create(b, tl.warpgroup, cIndex(b, kStagedDQBarrier))),
      cI32(b, 128), NVVM::BarrierReductionAttr(), Value());
  auto acc = cast<MemRefType>(op.getDqAcc().getType());
  int64_t tileBytes = kQueries * n * 4;
  inLeader(b, tl, [&] {
    Value tile = arith::AddIOp::create(
        b, arith::MulIOp::create(b, op.getBatch(), cIndex(b, acc.getDimSize(1))),
        op.getHead());
    tile = arith::AddIOp::create(
        b, arith::MulIOp::create(b, tile, cIndex(b, acc.getDimSize(2))),
        arith::DivUIOp::create(b, op.getQPos(), cIndex(b, kQueries)));
    tile = arith::AddIOp::create(b, arith::MulIOp::create(b, tile, cIndex(b, 2)),
                                 tl.warpgroup);
    Value dst = offsetBy(b, sharedAddress(b, op.getDqAcc()), tile, tileBytes);
    Value src = offsetBy(b, sharedAddress(b, op.getDqStage()), tl.warpgroup,
                         tileBytes);
    ptx(b,
        "{ .reg .b64 g; cvta.to.global.u64 g, $0; "
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [g], "
        "[$1], $2; }",
        "l,r,n",
        ValueRange{dst, arith::TruncIOp::create(b, b.getI32Type(), src),
                   cI32(b, tileBytes)});
    ptx(b, "cp.async.bulk.commit_group;", "", {});
    ptx(b, "cp.async.bulk.wait_group.read 1;", "", {});
  });
}

/// The step at `b` on the thread's fragments `dkIn`, `dvIn` (vector<D / 2>
/// each); returns the new ones.
SmallVector<Value> lowerStep(ImplicitLocOpBuilder &b, GradDKDVMmaOp op,
                             Value dkIn, Value dvIn) {
  ThreadLayout tl = threadLayout(b);
  Type elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  int64_t d = op.getHeadDim(), kSteps = d / 16, blockN = op.getBlockN();
  Value qAddr = sharedAddress(b, op.getQ());
  Value doAddr = sharedAddress(b, op.getDO());
  // Opaque, so that the descriptors computed from them stay in the loop:
  // hoisted out of the Q-block loop they held ~50 registers for its whole
  // length (and spilled).
  Value kAddr = opaque(b, sharedAddress(b, op.getK()));
  Value vAddr = opaque(b, sharedAddress(b, op.getV()));
  Value dsAddr = sharedAddress(b, op.getDs());
  // S^T = K_w Q^T and dP^T = V_w dO^T: the warpgroup's 64 rows of K, V.
  Value kRows = offsetBy(b, kAddr, tl.warpgroup, kKeys * kChunkBytes);
  Value vRows = offsetBy(b, vAddr, tl.warpgroup, kKeys * kChunkBytes);
  SmallVector<Value> descK = kMajor(b, kRows, blockN, kSteps);
  SmallVector<Value> descV = kMajor(b, vRows, blockN, kSteps);
  SmallVector<Value> descQ = kMajor(b, qAddr, kQueries, kSteps);
  SmallVector<Value> descDO = kMajor(b, doAddr, kQueries, kSteps);
  Value zeroS = LLVM::ZeroOp::create(b, accStruct(b.getContext(), kQueries / 2));

  NVVM::WgmmaFenceAlignedOp::create(b);
  Value s = issueShared(b, zeroS, descK, descQ, kQueries, elt, false);
  Value dp = issueShared(b, zeroS, descV, descDO, kQueries, elt, false);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  SmallVector<Value> sRegs = pinAfterWait(b, unpackStruct(b, s, kQueries / 2));
  SmallVector<Value> dpRegs =
      pinAfterWait(b, unpackStruct(b, dp, kQueries / 2));
  gradients(b, op, tl, sRegs, dpRegs);
  SmallVector<Value> p = packPairs(b, sRegs, elt);
  SmallVector<Value> ds = packPairs(b, dpRegs, elt);

  // dV += P^T dO, dK += dS^T Q: B MN-major, k over the 64 queries. (Each
  // group's descriptors are made just before it: made up front, they would
  // all be live across the first group and spill.)
  SmallVector<Value> descDOt = mnMajor(b, doAddr, kQueries, kQueries / 16);
  SmallVector<Value> descQt = mnMajor(b, qAddr, kQueries, kQueries / 16);
  SmallVector<Value> dk = unpack(b, dkIn), dv = unpack(b, dvIn);
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t kk = 0; kk < kQueries / 16; ++kk) {
    dv = wgmmaRegisterA(b, dv, ArrayRef(p).slice(4 * kk, 4), descDOt[kk], d,
                        elt);
    dk = wgmmaRegisterA(b, dk, ArrayRef(ds).slice(4 * kk, 4), descQt[kk], d,
                        elt);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);

  stageDS(b, tl, dsAddr, ds);
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  NVVM::BarrierOp::create(b, Type(), cI32(b, kStagedBarrier), cI32(b, 256),
                          NVVM::BarrierReductionAttr(), Value());
  // dQ[:, w n ..] = dS K[:, w n ..]: A = dS (K-major, 2 chunks of 64 keys),
  // B = K MN-major from column w n.
  int64_t n = d / 2;
  SmallVector<Value> descDS = kMajor(b, dsAddr, kQueries, blockN / 16);
  Value kCols = offsetBy(b, kAddr, tl.warpgroup,
                         n * 2 / 128 * blockN * kChunkBytes);
  if (n < 64) // D = 64: warpgroup 1's 32 columns start 64 bytes into a row
    kCols = offsetBy(b, kAddr, tl.warpgroup, n * 2);
  SmallVector<Value> descKt = mnMajor(b, kCols, blockN, blockN / 16);
  Value zeroDQ = LLVM::ZeroOp::create(b, accStruct(b.getContext(), n / 2));
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value dq = issueShared(b, zeroDQ, descDS, descKt, n, elt, true);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  SmallVector<Value> all(dk);
  llvm::append_range(all, dv);
  llvm::append_range(all, unpackStruct(b, dq, n / 2));
  all = pinAfterWait(b, all);
  ArrayRef<Value> pinned(all);
  addDQ(b, op, tl, pinned.drop_front(2 * dk.size()), n);
  return {pack(b, pinned.take_front(dk.size())),
          pack(b, pinned.slice(dk.size(), dv.size()))};
}

/// attn.store_tile of a dK or dV fragment (the thread's registers `value`):
/// each register pair as one 4-byte store of row k_pos + row (below Nk),
/// columns 8 (i / 4) + 2 q.
void lowerStore(ImplicitLocOpBuilder &b, StoreTileOp op, Value value) {
  ThreadLayout tl = threadLayout(b);
  auto type = cast<MemRefType>(op.getDest().getType());
  int64_t nk = type.getDimSize(2);
  SmallVector<Value> x = unpack(b, value);
  auto pairType = VectorType::get({2}, type.getElementType());
  for (int h = 0; h < 2; ++h) {
    Value key = arith::AddIOp::create(b, op.getRow(), tl.row[h]);
    Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, key,
                                         cIndex(b, nk));
    auto ifOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (size_t i = 0; i < x.size(); i += 2) {
      if (halfOf(i) != h)
        continue;
      Value pair = vector::FromElementsOp::create(
          b, VectorType::get({2}, b.getF32Type()), ValueRange{x[i], x[i + 1]});
      Value col = arith::AddIOp::create(b, tl.twoQ, cIndex(b, colOf(i)));
      vector::StoreOp::create(b, arith::TruncFOp::create(b, pairType, pair),
                              op.getDest(),
                              ValueRange{op.getBatch(), op.getHead(), key, col});
    }
  }
}

/// attn.grad_dkdv_mma: lowerStep on the thread's dK, dV fragments.
struct GradDKDVMmaLowering : OpConversionPattern<GradDKDVMmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GradDKDVMmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b = builderAt(rewriter, op);
    rewriter.replaceOp(op, lowerStep(b, op, adaptor.getDK(), adaptor.getDV()));
    return success();
  }
};

/// attn.store_tile of a dK or dV fragment: lowerStore, after the wait for
/// the last bulk reductions of dQ where the pass asked for it.
struct GradStoreTileLowering : OpConversionPattern<StoreTileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreTileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<WgFragmentType>(op.getValue().getType()))
      return rewriter.notifyMatchFailure(op, "not warpgroup fragments");
    ImplicitLocOpBuilder b = builderAt(rewriter, op);
    if (op->hasAttr(kWaitDQReductionsAttr)) {
      ThreadLayout tl = threadLayout(b);
      inLeader(b, tl, [&] { ptx(b, "cp.async.bulk.wait_group 0;", "", {}); });
    }
    lowerStore(b, op, adaptor.getValue());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::populateGradToWGMMAPatterns(RewritePatternSet &patterns,
                                             TypeConverter &converter) {
  patterns.add<GradDKDVMmaLowering, GradStoreTileLowering>(
      converter, patterns.getContext());
}

//===- CpuVarlenNumericsTest.cpp - varlen attention vs float64 ------------===//
//
// Compiles attn.varlen_attention (FlashAttention-2's varlen API: packed
// [total, H, D] operands, i32 cu_seqlens, LSE [Hq, total_q]) through
// attn-to-cpu once per configuration, with dynamic totals and batch size,
// and runs it on several batches of fresh random inputs against a float64
// reference that loops over the sequences. O and LSE are poisoned with NaN
// first: every row of a sequence must be written, and rows past
// cu_seqlens_q[B] (padding) must be left alone. Variants read K/V from
// paged caches (pages shuffled, NaN in every row no sequence uses, -1 in
// the table past a sequence's pages) and split the keys (split-KV through
// a workspace, combined by LSE). Sequence isolation: each sequence is run
// again with every Q, K and V row it does not own (its neighbours', the
// padding, cache rows of other sequences or of none) set to NaN, and its
// rows of O and LSE must still match.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "TypedBuffer.h"
#include "Variants.h"
#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

using namespace mlir;
using mlir::attn::test::Buffer;
using mlir::attn::test::CpuPipeline;
using mlir::attn::test::Elt;
using mlir::attn::test::eltName;
using mlir::attn::test::fillNormal;

namespace {

/// One batch: the (Nq_b, Nk_b) of its sequences, and padding rows after
/// the last sequence of Q/O and of K/V (total = sum + padding).
struct Batch {
  std::vector<std::pair<int64_t, int64_t>> lengths;
  int64_t padQ = 0, padK = 0;
  /// Added to the true max_seqlen_q: CTAs past every sequence do nothing.
  int64_t extraMaxQ = 0;
};

struct VarlenConfig {
  const char *name;
  int64_t hq, hkv, d;
  Elt elt;
  bool causal;
  int64_t blockM, blockN;
  std::vector<Batch> batches;
  bool packGqa = false;
  /// Q, K and V are slices of one [total, 3, H, D] buffer (self-attention
  /// with Hq = Hkv, Nq_b = Nk_b): strided views, as from a fused QKV GEMM.
  bool qkvPacked = false;
  /// Paged K/V: tokens per page (0: packed K/V).
  int64_t pageSize = 0;
  /// Split-KV splits (attn-split-kv; 1: unsplit).
  int64_t splits = 1;
  /// S of a workspace(...) the module allocates itself (0: none), as a
  /// hand-written module may (S = 1 included).
  int64_t handWorkspace = 0;
  /// Key mask, softcapping, sinks.
  attn::test::Variants variants = {};
};

constexpr auto withVariants = attn::test::withVariants<VarlenConfig>;

void PrintTo(const VarlenConfig &c, std::ostream *os) { *os << c.name; }

std::string buildModule(const VarlenConfig &c) {
  auto packed = [&](int64_t h, bool qkv) {
    std::string layout =
        qkv ? llvm::formatv(", strided<[{0}, {1}, 1], offset: ?>", 3 * h * c.d,
                            c.d)
                  .str()
            : "";
    return llvm::formatv("memref<?x{0}x{1}x{2}{3}>", h, c.d, eltName(c.elt),
                         layout)
        .str();
  };
  std::string q = packed(c.hq, c.qkvPacked), kv = packed(c.hkv, c.qkvPacked);
  if (c.pageSize)
    kv = llvm::formatv("memref<?x{0}x{1}x{2}x{3}>", c.pageSize, c.hkv, c.d,
                       eltName(c.elt));
  std::string lse = llvm::formatv("memref<{0}x?xf32>", c.hq);
  std::string paged =
      c.pageSize ? " paged(%table : memref<?x?xi32>)" : std::string();
  std::string alloc, workspace, dealloc;
  if (c.handWorkspace) {
    std::string op = llvm::formatv("memref<{0}x?x{1}x{2}xf32>",
                                   c.handWorkspace, c.hq, c.d),
                lp = llvm::formatv("memref<{0}x{1}x?xf32>", c.handWorkspace,
                                   c.hq);
    alloc = llvm::formatv(
        "  %c0 = arith.constant 0 : index\n"
        "  %tq = memref.dim %q, %c0 : {0}\n"
        "  %op = memref.alloc(%tq) : {1}\n"
        "  %lp = memref.alloc(%tq) : {2}\n",
        q, op, lp);
    workspace = llvm::formatv(" workspace(%op, %lp : {0}, {1})", op, lp);
    dealloc = llvm::formatv("  memref.dealloc %op : {0}\n"
                            "  memref.dealloc %lp : {1}\n",
                            op, lp);
  }
  std::vector<std::string> attrs = c.variants.attributes();
  if (c.causal)
    attrs.insert(attrs.begin(), "causal");
  return llvm::formatv(
             "func.func @varlen(%q: {0}, %k: {1}, %v: {1}, %cu_q: "
             "memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: "
             "index, %o: {4}, %lse: {2}, %table: memref<?x?xi32>{9}) "
             "{{\n{6}"
             "  attn.varlen_attention ins(%q, %k, %v : {0}, {1}, {1})\n"
             "      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)\n"
             "      max(%max_q, %max_k){5} outs(%o : {4}) lse(%lse : {2}){7}"
             "{10} {{{3}}\n{8}"
             "  return\n}\n",
             q, kv, lse, llvm::join(attrs, ", "), packed(c.hq, false), paged,
             alloc, workspace, dealloc, attn::test::Variants::arguments(c.hq),
             c.variants.clauses(c.hq))
      .str();
}

/// Prefix sums of one side's lengths (B + 1 entries).
std::vector<int32_t> prefixSums(const Batch &batch, bool keys) {
  std::vector<int32_t> cu = {0};
  for (auto [nq, nk] : batch.lengths)
    cu.push_back(cu.back() + int32_t(keys ? nk : nq));
  return cu;
}

/// A packed [total, H, D] operand: its descriptor and its values as
/// doubles in row-major order.
struct Input {
  StridedMemRefType<uint8_t, 3> desc;
  std::vector<double> values;
};

/// Q, K and V as separate row-major buffers, or as the three slices of
/// one [total, 3, H, D] buffer (`qkv`).
struct Inputs {
  std::vector<Buffer<3>> buffers;
  std::optional<Buffer<4>> qkv;
  Input q, k, v;

  Inputs(const VarlenConfig &c, int64_t totalQ, int64_t totalK,
         std::mt19937 &rng) {
    if (c.qkvPacked) {
      qkv.emplace(c.elt, std::array<int64_t, 4>{totalQ, 3, c.hq, c.d});
      std::vector<double> all = fillNormal(*qkv, rng);
      int64_t hd = c.hq * c.d;
      for (auto [slot, in] : llvm::enumerate(std::array{&q, &k, &v})) {
        in->desc = {qkv->desc.basePtr,
                    qkv->desc.data,
                    int64_t(slot) * hd,
                    {totalQ, c.hq, c.d},
                    {3 * hd, c.d, 1}};
        for (int64_t row = 0; row < totalQ; ++row)
          in->values.insert(in->values.end(),
                            all.begin() + (row * 3 + slot) * hd,
                            all.begin() + (row * 3 + slot + 1) * hd);
      }
      return;
    }
    buffers.reserve(3);
    for (auto [in, total, h] :
         {std::tuple{&q, totalQ, c.hq}, std::tuple{&k, totalK, c.hkv},
          std::tuple{&v, totalK, c.hkv}}) {
      Buffer<3> &buf = buffers.emplace_back(c.elt, std::array{total, h, c.d});
      in->values = fillNormal(buf, rng);
      in->desc = buf.desc;
    }
  }
};

/// Paged K/V: K and V moved into caches [num_pages, page_size, Hkv, D]
/// through a block table [B, max_pages] of shuffled pages; every cache row
/// no sequence uses is NaN and every table entry past a sequence's pages
/// is -1, so that reading either shows.
struct PagedKV {
  std::optional<Buffer<4>> k, v;
  attn::test::RowMajorBuffer<int32_t, 2> table{{0, 0}, 0};
  /// The sequence whose key each cache row holds (-1: none).
  std::vector<int64_t> owner;

  PagedKV(const VarlenConfig &c, const Batch &batch, const Inputs &in,
          std::mt19937 &rng) {
    int64_t ps = c.pageSize, numSeqs = batch.lengths.size(), maxPages = 1;
    for (auto [nq, nk] : batch.lengths)
      maxPages = std::max(maxPages, (nk + ps - 1) / ps);
    ++maxPages; // one entry past every sequence's pages
    int64_t numPages = numSeqs * maxPages + 1;
    std::vector<int32_t> pool(numPages);
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    table = attn::test::RowMajorBuffer<int32_t, 2>({numSeqs, maxPages}, -1);
    for (Buffer<4> *cache : {&k.emplace(c.elt, std::array{numPages, ps, c.hkv,
                                                           c.d}),
                             &v.emplace(c.elt, std::array{numPages, ps, c.hkv,
                                                          c.d})})
      cache->fill(NAN);
    std::vector<int32_t> cuK = prefixSums(batch, true);
    owner.assign(numPages * ps, -1);
    size_t next = 0;
    for (int64_t b = 0; b < numSeqs; ++b)
      for (int64_t j = 0; j < batch.lengths[b].second; ++j) {
        int32_t &entry = table.data[b * maxPages + j / ps];
        if (j % ps == 0)
          entry = pool[next++];
        int64_t row = int64_t(entry) * ps + j % ps;
        owner[row] = b;
        for (int64_t x = 0; x < c.hkv * c.d; ++x) {
          k->set(row * c.hkv * c.d + x, in.k.values[(cuK[b] + j) * c.hkv * c.d + x]);
          v->set(row * c.hkv * c.d + x, in.v.values[(cuK[b] + j) * c.hkv * c.d + x]);
        }
      }
  }
};

struct Result {
  std::vector<double> o, lse; // [total_q, Hq, D], [Hq, total_q]
};

/// float64 attention per sequence: bottom-right causal, GQA, the variants.
/// Padding rows stay NaN (never written).
Result reference(const VarlenConfig &c, const Batch &batch, int64_t totalQ,
                 const Input &q, const Input &k, const Input &v) {
  Result r;
  r.o.assign(totalQ * c.hq * c.d, NAN);
  r.lse.assign(c.hq * totalQ, NAN);
  std::vector<int32_t> cuQ = prefixSums(batch, false),
                       cuK = prefixSums(batch, true);
  double scale = 1.0 / std::sqrt(double(c.d));
  for (size_t b = 0; b < batch.lengths.size(); ++b) {
    auto [nq, nk] = batch.lengths[b];
    std::vector<double> s(nk);
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        int64_t row = cuQ[b] + i;
        double *o = &r.o[(row * c.hq + h) * c.d];
        auto kRow = [&](const Input &in, int64_t j) {
          return &in.values[((cuK[b] + j) * c.hkv + h / (c.hq / c.hkv)) * c.d];
        };
        std::fill(o, o + c.d, 0.0);
        for (int64_t j = 0; j < nk; ++j) {
          s[j] = -INFINITY;
          if (!c.variants.mask.sees(c.causal, i, j, nq, nk))
            continue;
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += q.values[(row * c.hq + h) * c.d + x] * kRow(k, j)[x];
          s[j] = c.variants.cap(dot * scale) + c.variants.bias(h, i, j, nq, nk);
        }
        attn::test::RowSoftmax soft =
            attn::test::rowSoftmax(s, c.variants.sink(h));
        for (int64_t j = 0; j < nk; ++j)
          for (int64_t x = 0; soft.p[j] != 0 && x < c.d; ++x)
            o[x] += soft.p[j] * kRow(v, j)[x];
        r.lse[h * totalQ + row] = soft.lse;
      }
  }
  return r;
}

/// Rounding O to the storage type alone gives ~2^-9 (bf16), 2^-12 (f16).
double boundFor(Elt elt) {
  return elt == Elt::bf16 ? 8e-3 : elt == Elt::f16 ? 1e-3 : 1e-5;
}

/// Compares sequence `b`'s O per head by ||O - ref|| / ||ref|| and its
/// LSE per row.
void expectSequenceClose(const VarlenConfig &c, const Batch &batch,
                         int64_t totalQ, const Result &got, const Result &want,
                         size_t b) {
  std::vector<int32_t> cuQ = prefixSums(batch, false);
  for (int64_t h = 0; h < c.hq; ++h) {
    double num = 0, den = 0;
    for (int64_t row = cuQ[b]; row < cuQ[b + 1]; ++row)
      for (int64_t x = 0; x < c.d; ++x) {
        int64_t i = (row * c.hq + h) * c.d + x;
        ASSERT_FALSE(std::isnan(got.o[i]))
            << "O of row " << row << " head " << h << " unwritten or NaN";
        num += (got.o[i] - want.o[i]) * (got.o[i] - want.o[i]);
        den += want.o[i] * want.o[i];
      }
    double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    EXPECT_LE(rel, boundFor(c.elt)) << "sequence " << b << " head " << h
                                    << ": ||O - ref|| / ||ref|| = " << rel;
    for (int64_t row = cuQ[b]; row < cuQ[b + 1]; ++row) {
      double g = got.lse[h * totalQ + row], w = want.lse[h * totalQ + row];
      if (std::isinf(w))
        EXPECT_TRUE(std::isinf(g) && g < 0) << "LSE of row " << row << " head "
                                            << h << " = " << g << ", want -inf";
      else
        EXPECT_NEAR(g, w, 1e-4 * std::max(1.0, std::fabs(w)))
            << "LSE of row " << row << " head " << h;
    }
  }
}

/// Every sequence against the reference; padding rows (past
/// cu_seqlens_q[B]) of O and LSE must still be NaN.
void expectClose(const VarlenConfig &c, const Batch &batch, int64_t totalQ,
                 const Result &got, const Result &want) {
  for (size_t b = 0; b < batch.lengths.size(); ++b)
    ASSERT_NO_FATAL_FAILURE(
        expectSequenceClose(c, batch, totalQ, got, want, b));
  int64_t usedQ = prefixSums(batch, false).back();
  for (int64_t row = usedQ; row < totalQ; ++row) {
    for (int64_t i = row * c.hq * c.d; i < (row + 1) * c.hq * c.d; ++i)
      ASSERT_TRUE(std::isnan(got.o[i])) << "padding row " << row << " written";
    for (int64_t h = 0; h < c.hq; ++h)
      EXPECT_TRUE(std::isnan(got.lse[h * totalQ + row]))
          << "padding LSE of row " << row << " head " << h << " written";
  }
}

/// Split-KV changes only the fp32 summation order: a split result rounds
/// to the unsplit one or a neighbour of it.
void expectSameAsUnsplit(const Result &split, const Result &unsplit) {
  for (size_t i = 0; i < unsplit.o.size(); ++i) {
    if (std::isnan(unsplit.o[i])) {
      ASSERT_TRUE(std::isnan(split.o[i])) << "padding O[" << i << "] written";
      continue;
    }
    EXPECT_NEAR(split.o[i], unsplit.o[i],
                1e-2 * std::fabs(unsplit.o[i]) + 1e-3)
        << "O[" << i << "] split vs unsplit";
  }
}

/// Sets every Q, K and V row that sequence `seq` does not own to NaN for
/// its lifetime (its neighbours', the padding, and for paged K/V every
/// cache row of another sequence or of none), then restores the inputs.
class Poisoned {
public:
  Poisoned(const VarlenConfig &c, const Batch &batch, Inputs &in,
           std::optional<PagedKV> &paged, size_t seq) {
    std::vector<int32_t> cuQ = prefixSums(batch, false),
                         cuK = prefixSums(batch, true);
    auto outside = [&](const std::vector<int32_t> &cu) {
      return [lo = cu[seq], hi = cu[seq + 1]](int64_t row) {
        return row < lo || row >= hi;
      };
    };
    int64_t qRow = c.hq * c.d, kvRow = c.hkv * c.d;
    if (in.qkv) { // rows of [total, 3, H, D]: Q, K and V slices
      poisonRows(*in.qkv, [&](int64_t i) {
        int64_t row = i / (3 * qRow), slot = i / qRow % 3;
        return outside(slot ? cuK : cuQ)(row);
      });
    } else {
      poisonRows(in.buffers[0],
                 [&](int64_t i) { return outside(cuQ)(i / qRow); });
    }
    if (paged) {
      for (Buffer<4> *cache : {&*paged->k, &*paged->v})
        poisonRows(*cache, [&](int64_t i) {
          return paged->owner[i / kvRow] != int64_t(seq);
        });
    } else if (!in.qkv) {
      for (Buffer<3> *kv : {&in.buffers[1], &in.buffers[2]})
        poisonRows(*kv, [&](int64_t i) { return outside(cuK)(i / kvRow); });
    }
  }
  ~Poisoned() {
    // Copied back in place: the descriptors point at these bytes.
    for (auto &[bytes, saved] : saved_)
      std::copy(saved.begin(), saved.end(), bytes->begin());
  }

private:
  /// NaN in every element `i` (row-major index) with `poison(i)`.
  template <int N, typename Pred> void poisonRows(Buffer<N> &buf, Pred poison) {
    saved_.emplace_back(&buf.bytes, buf.bytes);
    for (int64_t i = 0; i < buf.numElements; ++i)
      if (poison(i))
        buf.set(i, NAN);
  }
  std::vector<std::pair<std::vector<uint8_t> *, std::vector<uint8_t>>> saved_;
};

/// Runs each of `engines` on one batch of fresh inputs (outputs poisoned
/// each time) and checks it against float64; with several, each against
/// the first (the unsplit kernel).
void runBatch(ArrayRef<ExecutionEngine *> engines, const VarlenConfig &c,
              const Batch &batch) {
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(
      llvm::formatv("B = {0}, seed {1}", batch.lengths.size(), seed).str());
  std::mt19937 rng(seed);
  std::vector<int32_t> cuQ = prefixSums(batch, false),
                       cuK = prefixSums(batch, true);
  int64_t totalQ = cuQ.back() + batch.padQ, totalK = cuK.back() + batch.padK;
  int64_t maxQ = 0, maxK = 0;
  for (auto [nq, nk] : batch.lengths) {
    maxQ = std::max(maxQ, nq);
    maxK = std::max(maxK, nk);
  }
  maxQ += batch.extraMaxQ;
  ASSERT_TRUE(!c.qkvPacked || totalQ == totalK) << "QKV needs Nq_b = Nk_b";
  Inputs in(c, totalQ, totalK, rng);
  attn::test::RowMajorBuffer<int32_t, 1> cuQBuf({int64_t(cuQ.size())}, 0),
      cuKBuf({int64_t(cuK.size())}, 0);
  std::copy(cuQ.begin(), cuQ.end(), cuQBuf.data.begin());
  std::copy(cuK.begin(), cuK.end(), cuKBuf.data.begin());

  std::optional<PagedKV> paged;
  void *kp = &in.k.desc, *vp = &in.v.desc;
  if (c.pageSize) {
    paged.emplace(c, batch, in, rng);
    kp = &paged->k->desc;
    vp = &paged->v->desc;
  }
  attn::test::RowMajorBuffer<int32_t, 2> noTable({0, 0}, 0);
  auto *tp = paged ? &paged->table.desc : &noTable.desc;
  auto *qp = &in.q.desc;
  auto *cqp = &cuQBuf.desc, *ckp = &cuKBuf.desc;
  Buffer<1> alibi = attn::test::perHeadBuffer(c.variants.alibi, c.hq);
  Buffer<1> sinks = attn::test::perHeadBuffer(c.variants.sinks, c.hq);
  auto *ap = &alibi.desc, *sp = &sinks.desc;
  Result want = reference(c, batch, totalQ, in.q, in.k, in.v);
  auto run = [&](ExecutionEngine *engine, Result &got) {
    Buffer<3> o(c.elt, {totalQ, c.hq, c.d});
    Buffer<2> lse(Elt::f32, {c.hq, totalQ});
    o.fill(NAN);
    lse.fill(NAN);
    auto *op = &o.desc;
    auto *lp = &lse.desc;
    llvm::Error err = engine->invoke("varlen", qp, kp, vp, cqp, ckp, maxQ, maxK,
                                     op, lp, tp, ap, sp);
    ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
    for (int64_t i = 0; i < o.numElements; ++i)
      got.o.push_back(o.get(i));
    for (int64_t i = 0; i < lse.numElements; ++i)
      got.lse.push_back(lse.get(i));
  };
  std::vector<Result> results;
  for (ExecutionEngine *engine : engines) {
    Result &got = results.emplace_back();
    ASSERT_NO_FATAL_FAILURE(run(engine, got));
    ASSERT_NO_FATAL_FAILURE(expectClose(c, batch, totalQ, got, want));
    if (results.size() > 1) {
      ASSERT_NO_FATAL_FAILURE(expectSameAsUnsplit(got, results.front()));
    }
  }
  // Sequence isolation, one sequence at a time: NaN everywhere else.
  for (size_t seq = 0; seq < batch.lengths.size(); ++seq) {
    SCOPED_TRACE(llvm::formatv("isolated sequence {0}", seq).str());
    Poisoned poisoned(c, batch, in, paged, seq);
    for (ExecutionEngine *engine : engines) {
      Result got;
      ASSERT_NO_FATAL_FAILURE(run(engine, got));
      ASSERT_NO_FATAL_FAILURE(
          expectSequenceClose(c, batch, totalQ, got, want, seq));
    }
  }
}

class CpuVarlenNumerics : public ::testing::TestWithParam<VarlenConfig> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

// With split-KV the unsplit kernel runs first on the same inputs, and the
// split one must equal it up to rounding.
TEST_P(CpuVarlenNumerics, MatchesFloat64PerSequence) {
  const VarlenConfig &c = GetParam();
  std::vector<std::unique_ptr<ExecutionEngine>> engines;
  for (int64_t splits : c.splits > 1 ? std::vector<int64_t>{1, c.splits}
                                     : std::vector<int64_t>{1}) {
    auto engine = attn::test::compileOnCpu(
        buildModule(c), CpuPipeline{c.blockM, c.blockN, splits, c.packGqa});
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    engines.push_back(std::move(*engine));
  }
  std::vector<ExecutionEngine *> raw;
  for (auto &engine : engines)
    raw.push_back(engine.get());
  for (const Batch &batch : c.batches)
    ASSERT_NO_FATAL_FAILURE(runBatch(raw, c, batch));
}

// Lengths (Nq_b, Nk_b) with tails (not multiples of BLOCK_M / BLOCK_N),
// Nq_b != Nk_b both ways, empty sequences first, in the middle and last,
// Nk_b = 0 with Nq_b > 0 (O = 0, LSE = -inf), and all-empty batches.
const std::vector<Batch> kMixed = {
    {{{5, 7}, {0, 3}, {9, 9}, {3, 0}, {1, 12}}},
    {{{0, 0}, {12, 5}, {4, 11}, {0, 6}}, /*padQ=*/3, /*padK=*/2},
    {{{7, 7}, {2, 19}, {0, 0}}, 0, 0, /*extraMaxQ=*/9},
    {{{0, 0}, {0, 0}, {0, 0}}},
    {{{0, 4}, {0, 1}}, /*padQ=*/2},
    {{{13, 13}}},
    {{}}, // B = 0
};
// Self-attention batches (Nq_b = Nk_b) for a packed QKV buffer.
const std::vector<Batch> kSelf = {
    {{{6, 6}, {0, 0}, {11, 11}, {1, 1}}, /*padQ=*/2, /*padK=*/2},
    {{{0, 0}, {0, 0}}},
};
// Decode: one query per sequence (Nk_b = 1, tails, an empty cache).
const std::vector<Batch> kDecode = {
    {{{1, 1}, {1, 17}, {1, 33}, {1, 8}}},
    {{{1, 0}, {1, 5}, {0, 9}, {1, 2}}},
};

// clang-format would put a field per line.
// clang-format off
const VarlenConfig kConfigs[] = {
    // name, Hq, Hkv, D, type, causal, BLOCK_M, BLOCK_N, batches[, pack-gqa]
    {"mha_bf16", 2, 2, 16, Elt::bf16, false, 4, 4, kMixed},
    {"mha_causal_bf16", 2, 2, 16, Elt::bf16, true, 4, 4, kMixed},
    {"gqa_f16", 4, 2, 16, Elt::f16, false, 8, 4, kMixed},
    {"gqa_causal_f16", 4, 2, 16, Elt::f16, true, 4, 8, kMixed},
    {"mqa_causal_f32", 3, 1, 8, Elt::f32, true, 4, 4, kMixed},
    {"pack_gqa_causal_bf16", 4, 1, 16, Elt::bf16, true, 8, 4, kMixed, true},
    {"decode_gqa_bf16", 4, 2, 16, Elt::bf16, false, 1, 8, kDecode},
    {"decode_causal_f16", 4, 1, 16, Elt::f16, true, 1, 8, kDecode},
    {"qkv_packed_causal_bf16", 2, 2, 16, Elt::bf16, true, 4, 4, kSelf, false,
     true},
};
// clang-format on

// Paged K/V and split-KV, alone and together. Among them the case:
// B2, page size 256, 4 pages per sequence, H4 D64 bf16, one query per
// sequence, 2 splits, equal to the 1-split result.
const std::vector<Batch> kPagedDecode = {
    {{{1, 1024}, {1, 700}}},
    {{{1, 1}, {1, 256}}},
    {{{1, 0}, {1, 513}}},
};
// Chunked prefill on a paged cache: page tails, empty sequences, Nk_b = 0.
const std::vector<Batch> kPagedMixed = {
    {{{5, 7}, {0, 3}, {9, 9}, {3, 0}, {1, 12}}},
    {{{0, 0}, {12, 17}, {4, 11}, {0, 6}}, /*padQ=*/3},
    {{{0, 0}, {0, 0}}},
    {{}}, // B = 0
};
// clang-format off
const VarlenConfig kPagedConfigs[] = {
    // name, Hq, Hkv, D, type, causal, BLOCK_M, BLOCK_N, batches, pack-gqa,
    // qkv, page size, splits
    {"paged_decode_s1_bf16", 4, 4, 64, Elt::bf16, false, 1, 16, kPagedDecode,
     false, false, 256, 1},
    {"paged_decode_s2_bf16", 4, 4, 64, Elt::bf16, false, 1, 16, kPagedDecode,
     false, false, 256, 2},
    {"paged_causal_gqa_f16", 4, 2, 16, Elt::f16, true, 4, 4, kPagedMixed,
     false, false, 4, 1},
    {"paged_causal_s3_pack_bf16", 4, 2, 16, Elt::bf16, true, 4, 8,
     kPagedMixed, true, false, 8, 3},
    {"split_s5_causal_f16", 4, 2, 16, Elt::f16, true, 4, 4, kMixed, false,
     false, 0, 5},
    {"split_s2_decode_bf16", 4, 1, 16, Elt::bf16, false, 1, 8, kDecode, false,
     false, 0, 2},
    // Pages that are not powers of two and straddle K/V blocks (3 and 24
    // against BLOCK_N 8 and 16), pages of one row, f32 and D = 8, more
    // splits than K/V blocks, and a workspace of S = 1 written in the
    // module (no split: one partial and a combine of one).
    {"paged_page3_causal_gqa_f32_d8", 4, 2, 8, Elt::f32, true, 4, 8,
     kPagedMixed, false, false, 3, 1},
    {"paged_page3_s7_causal_pack_bf16", 4, 2, 16, Elt::bf16, true, 4, 8,
     kPagedMixed, true, false, 3, 7},
    {"paged_page24_f16", 4, 4, 16, Elt::f16, false, 4, 16, kPagedMixed,
     false, false, 24, 1},
    {"paged_page1_s2_causal_mqa_bf16", 2, 1, 16, Elt::bf16, true, 4, 4,
     kPagedMixed, false, false, 1, 2},
    {"paged_decode_page48_s256_f16", 4, 2, 16, Elt::f16, false, 1, 8,
     kPagedDecode, false, false, 48, 256},
    {"paged_hand_workspace_s1_bf16", 4, 2, 16, Elt::bf16, true, 4, 8,
     kPagedMixed, false, false, 8, 1, 1},
    {"hand_workspace_s1_f16", 4, 2, 16, Elt::f16, true, 4, 4, kMixed, false,
     false, 0, 1, 1},
};
// clang-format on

// The variants per sequence (each with its own Nq_b, Nk_b): a window with
// softcapping and sinks, chunks, and sinks through split-KV's combine
// (once, not per split) on a paged cache with GQA packing; ALiBi.
const VarlenConfig kVariantConfigs[] = {
    withVariants("window_softcap_sinks_bf16",
                 {"", 4, 2, 16, Elt::bf16, true, 4, 4, kMixed},
                 {{5}, 50.0, {0.5f, -1.0f, 30.0f, -INFINITY}}),
    withVariants("chunked_f16", {"", 2, 2, 16, Elt::f16, false, 4, 8, kMixed},
                 {{-1, -1, 6}}),
    withVariants(
        "paged_window_s3_pack_sinks_bf16",
        {"", 4, 2, 16, Elt::bf16, true, 4, 8, kPagedMixed, true, false, 8, 3},
        {{7}, std::nullopt, {1.0f, -2.0f, 0.0f, 3.0f}}),
    withVariants("alibi_f16", {"", 4, 2, 16, Elt::f16, true, 4, 4, kMixed},
                 {{}, std::nullopt, {}, {0.5f, 0.25f, 0.125f, 0.0625f}}),
};

INSTANTIATE_TEST_SUITE_P(Variants, CpuVarlenNumerics,
                         ::testing::ValuesIn(kVariantConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(PagedSplit, CpuVarlenNumerics,
                         ::testing::ValuesIn(kPagedConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(Varlen, CpuVarlenNumerics,
                         ::testing::ValuesIn(kConfigs), [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

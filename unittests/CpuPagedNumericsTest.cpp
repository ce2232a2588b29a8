//===- CpuPagedNumericsTest.cpp - paged K/V caches vs float64 -------------===//
//
// Compiles attn.attention with a paged K/V cache (the `paged` clause:
// caches [num_pages, page_size, Hkv, D], block_table [B, max_pages],
// cache_seqlens [B]) through attn-to-cpu, unsplit and with split-KV and GQA
// packing, and runs each on fresh random caches whose sequences own
// shuffled pages. Cache rows no sequence owns, and rows past a sequence's
// length, hold NaN: a read of one would show. O and LSE are poisoned with
// NaN first and checked against a float64 reference that gathers each
// sequence's keys through the table, and (variants) head by head against
// the unsplit output.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "HeadCompare.h"
#include "TypedBuffer.h"
#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using mlir::attn::test::Buffer;
using mlir::attn::test::boundFor;
using mlir::attn::test::expectHeadsClose;
using mlir::attn::test::Outputs;
using mlir::attn::test::readOutputs;
using mlir::attn::test::CpuPipeline;
using mlir::attn::test::Elt;
using mlir::attn::test::eltName;
using mlir::attn::test::RowMajorBuffer;

namespace {

struct PagedConfig {
  const char *name;
  int64_t b, hq, hkv, nq, d, pageSize, maxPages;
  Elt elt;
  bool causal;
  int64_t blockM, blockN;
  /// Split counts of the variants (1: unsplit), each compiled once.
  std::vector<int64_t> splits;
  bool packGqa;
  /// Sequence lengths Nk_b of each run (B entries each).
  std::vector<std::vector<int32_t>> lengths;
};

void PrintTo(const PagedConfig &c, std::ostream *os) { *os << c.name; }

std::string buildModule(const PagedConfig &c) {
  std::string q = llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}>", c.b, c.hq, c.nq,
                                c.d, eltName(c.elt));
  std::string cache = llvm::formatv("memref<?x{0}x{1}x{2}x{3}>", c.pageSize,
                                    c.hkv, c.d, eltName(c.elt));
  std::string table = llvm::formatv("memref<{0}x{1}xi32>", c.b, c.maxPages);
  std::string lens = llvm::formatv("memref<{0}xi32>", c.b);
  std::string lse = llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq, c.nq);
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {1}, %o: {0}, "
             "%lse: {2}, %table: {3}, %lens: {4}) {{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {1}) outs(%o : {0}) "
             "lse(%lse : {2}) paged(%table, %lens : {3}, {4}) {5}\n"
             "  return\n}\n",
             q, cache, lse, table, lens, c.causal ? "{causal}" : "")
      .str();
}

/// Random pages for one run: each sequence owns ceil(Nk_b / page_size)
/// pages of a shuffled pool with two spare pages; rows no sequence owns
/// are NaN.
struct Caches {
  int64_t numPages;
  std::vector<int32_t> table; // [B, max_pages], -1 past a sequence's pages
  Buffer<4> k, v;
  std::vector<double> kValues, vValues;
};

Caches randomCaches(const PagedConfig &c, const std::vector<int32_t> &lens,
                    std::mt19937 &rng) {
  int64_t used = 0;
  for (int32_t n : lens)
    used += (n + c.pageSize - 1) / c.pageSize;
  int64_t numPages = used + 2;
  std::vector<int32_t> pool(numPages);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::array<int64_t, 4> shape = {numPages, c.pageSize, c.hkv, c.d};
  Caches out{numPages, std::vector<int32_t>(c.b * c.maxPages, -1),
             Buffer<4>(c.elt, shape), Buffer<4>(c.elt, shape), {}, {}};
  out.k.fill(NAN);
  out.v.fill(NAN);
  int64_t next = 0;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t j = 0; j < lens[b]; ++j) {
      if (j % c.pageSize == 0)
        out.table[b * c.maxPages + j / c.pageSize] = pool[next++];
      int64_t page = out.table[b * c.maxPages + j / c.pageSize];
      for (int64_t h = 0; h < c.hkv; ++h)
        for (int64_t x = 0; x < c.d; ++x) {
          int64_t at = ((page * c.pageSize + j % c.pageSize) * c.hkv + h) * c.d + x;
          out.k.set(at, normal(rng));
          out.v.set(at, normal(rng));
        }
    }
  out.kValues.resize(out.k.numElements);
  out.vValues.resize(out.v.numElements);
  for (int64_t i = 0; i < out.k.numElements; ++i) {
    out.kValues[i] = out.k.get(i);
    out.vValues[i] = out.v.get(i);
  }
  return out;
}

/// float64 attention of each sequence over its keys, gathered through the
/// table: bottom-right causal with Nk_b, GQA.
Outputs reference(const PagedConfig &c, const std::vector<double> &q,
                 const Caches &kv, const std::vector<int32_t> &lens) {
  Outputs r;
  r.o.assign(c.b * c.hq * c.nq * c.d, 0.0);
  r.lse.assign(c.b * c.hq * c.nq, -INFINITY);
  double scale = 1.0 / std::sqrt(double(c.d));
  for (int64_t b = 0; b < c.b; ++b) {
    int64_t nk = lens[b];
    auto row = [&](int64_t j, int64_t g) {
      int64_t page = kv.table[b * c.maxPages + j / c.pageSize];
      return ((page * c.pageSize + j % c.pageSize) * c.hkv + g) * c.d;
    };
    std::vector<double> s(nk);
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < c.nq; ++i) {
        int64_t qi = ((b * c.hq + h) * c.nq + i) * c.d, g = h / (c.hq / c.hkv);
        double mx = -INFINITY;
        for (int64_t j = 0; j < nk; ++j) {
          s[j] = -INFINITY;
          if (c.causal && j > i + nk - c.nq)
            continue;
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += q[qi + x] * kv.kValues[row(j, g) + x];
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY)
          continue; // no key: O = 0, LSE = -inf
        double sum = 0;
        for (int64_t j = 0; j < nk; ++j) {
          if (s[j] == -INFINITY)
            continue;
          double p = std::exp(s[j] - mx);
          sum += p;
          for (int64_t x = 0; x < c.d; ++x)
            r.o[qi + x] += p * kv.vValues[row(j, g) + x];
        }
        for (int64_t x = 0; x < c.d; ++x)
          r.o[qi + x] /= sum;
        r.lse[(b * c.hq + h) * c.nq + i] = mx + std::log(sum);
      }
  }
  return r;
}

/// Runs `engine` with NaN-poisoned O and LSE; none may stay NaN.
void run(ExecutionEngine &engine, const PagedConfig &c, Buffer<4> &q,
         Caches &kv, const std::vector<int32_t> &lens, Outputs &out) {
  Buffer<4> o(c.elt, {c.b, c.hq, c.nq, c.d});
  Buffer<3> lse(Elt::f32, {c.b, c.hq, c.nq});
  o.fill(NAN);
  lse.fill(NAN);
  RowMajorBuffer<int32_t, 2> table({c.b, c.maxPages}, 0);
  RowMajorBuffer<int32_t, 1> seqlens({c.b}, 0);
  std::copy(kv.table.begin(), kv.table.end(), table.data.begin());
  std::copy(lens.begin(), lens.end(), seqlens.data.begin());
  auto *qp = &q.desc, *kp = &kv.k.desc, *vp = &kv.v.desc, *op = &o.desc;
  auto *lp = &lse.desc;
  auto *tp = &table.desc;
  auto *sp = &seqlens.desc;
  llvm::Error err = engine.invoke("attention", qp, kp, vp, op, lp, tp, sp);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  readOutputs(o, lse, out);
}


class CpuPagedNumerics : public ::testing::TestWithParam<PagedConfig> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

TEST_P(CpuPagedNumerics, MatchesFloat64AndUnsplit) {
  const PagedConfig c = GetParam();
  std::string source = buildModule(c);
  std::vector<std::unique_ptr<ExecutionEngine>> variants;
  for (int64_t s : c.splits) {
    auto engine = attn::test::compileOnCpu(
        source, CpuPipeline{c.blockM, c.blockN, s, c.packGqa});
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    variants.push_back(std::move(*engine));
  }
  for (const std::vector<int32_t> &lens : c.lengths) {
    unsigned seed = std::random_device{}();
    SCOPED_TRACE(llvm::formatv("Nk_0 = {0}, seed {1}", lens[0], seed).str());
    std::mt19937 rng(seed);
    Buffer<4> q(c.elt, {c.b, c.hq, c.nq, c.d});
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> qValues(q.numElements);
    for (int64_t i = 0; i < q.numElements; ++i) {
      q.set(i, normal(rng));
      qValues[i] = q.get(i);
    }
    Caches kv = randomCaches(c, lens, rng);
    Outputs ref = reference(c, qValues, kv, lens), first;
    for (auto [s, engine] : llvm::zip_equal(c.splits, variants)) {
      SCOPED_TRACE(llvm::formatv("splits={0}", s).str());
      Outputs got;
      ASSERT_NO_FATAL_FAILURE(run(*engine, c, q, kv, lens, got));
      expectHeadsClose(c.hq, c.nq * c.d, got, ref, boundFor(c.elt), "vs float64");
      if (first.o.empty())
        first = got;
      else
        expectHeadsClose(c.hq, c.nq * c.d, got, first, boundFor(c.elt) / 2, "vs the first");
    }
  }
}

// clang-format off
const PagedConfig kConfigs[] = {
    // name, B, Hq, Hkv, Nq, D, page_size, max_pages, type, causal, BLOCK_M,
    // BLOCK_N, splits, pack-gqa, lengths per run.
    // The case: B2, page size 256, 4 pages per sequence, H4 D64,
    // one query per sequence, 1 and 2 splits; with lengths that fill the
    // pages, end inside a page and inside a block.
    {"issue_page256_b2_h4_d64_bf16", 2, 4, 4, 1, 64, 256, 4, Elt::bf16, false,
     1, 64, {1, 2}, false, {{1024, 1024}, {1000, 517}}},
    // Pages smaller than BLOCK_N (a block spans pages) and larger; Nk not a
    // multiple of either, Nk = 1, Nk = 0 (O = 0, LSE = -inf), full capacity.
    {"page16_block32_gqa_f16", 3, 4, 2, 1, 16, 16, 6, Elt::f16, false, 1, 32,
     {1, 3, 7}, false, {{96, 1, 0}, {37, 95, 17}}},
    {"page8_block8_causal_chunked_bf16", 2, 2, 1, 5, 16, 8, 5, Elt::bf16, true,
     4, 8, {1, 2, 6}, false, {{40, 3}, {13, 0}}},
    {"page32_block8_causal_f32", 2, 4, 4, 3, 16, 32, 3, Elt::f32, true, 2, 8,
     {1, 4}, false, {{70, 96}, {2, 33}}},
    // GQA packing with paged K/V, alone and with split-KV.
    {"pack_group4_page16_bf16", 2, 8, 2, 1, 32, 16, 4, Elt::bf16, false, 4, 16,
     {1, 3}, true, {{64, 23}, {0, 1}}},
    {"pack_group2_causal_page8_f16", 1, 4, 2, 4, 16, 8, 4, Elt::f16, true, 4,
     16, {1, 2}, true, {{29}, {3}}},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Paged, CpuPagedNumerics, ::testing::ValuesIn(kConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

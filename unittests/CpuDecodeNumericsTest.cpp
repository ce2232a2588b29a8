//===- CpuDecodeNumericsTest.cpp - split-KV and GQA packing vs float64 ----===//
//
// Compiles attn.attention through attn-to-cpu with split-KV (splits=S:
// attn-split-kv, attn.partial_attention + attn.decode_combine) and GQA
// packing (pack-gqa), runs every variant on the same fresh random inputs
// and checks each O and LSE against a float64 reference and, head by head,
// against the unsplit, unpacked module's output (equal within rounding).
// Outputs are poisoned with NaN first. Each module is compiled once and run
// on several inputs; D is small except in the decode case.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "HeadCompare.h"
#include "TypedBuffer.h"
#include "Variants.h"
#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
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

namespace {

struct DecodeConfig {
  const char *name;
  int64_t b, hq, hkv, nq, nk, d;
  Elt elt;
  bool causal;
  int64_t blockM, blockN;
  /// Split counts of the variants (1: unsplit), each compiled once.
  std::vector<int64_t> splits;
  bool packGqa = false;
  /// Non-empty: Nq and Nk are dynamic; the modules also run at these
  /// (Nq, Nk) after (nq, nk).
  std::vector<std::pair<int64_t, int64_t>> moreLengths = {};
  /// Key mask, softcapping, sinks.
  attn::test::Variants variants = {};
};

constexpr auto withVariants = attn::test::withVariants<DecodeConfig>;

void PrintTo(const DecodeConfig &c, std::ostream *os) { *os << c.name; }

constexpr int kRunsPerModule = 2;

std::string buildModule(const DecodeConfig &c) {
  bool dynamic = !c.moreLengths.empty();
  auto len = [&](int64_t n) { return dynamic ? "?" : std::to_string(n); };
  auto type = [&](int64_t h, int64_t n) {
    return llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}>", c.b, h, len(n), c.d,
                         eltName(c.elt))
        .str();
  };
  std::string q = type(c.hq, c.nq), kv = type(c.hkv, c.nk);
  std::string lse =
      llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq, len(c.nq));
  std::vector<std::string> attrs = c.variants.attributes();
  if (c.causal)
    attrs.insert(attrs.begin(), "causal");
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {1}, %o: {0}, "
             "%lse: {2}{4}) {{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {1}) outs(%o : {0}) "
             "lse(%lse : {2}){5} {{{3}}\n  return\n}\n",
             q, kv, lse, llvm::join(attrs, ", "),
             attn::test::Variants::arguments(c.hq), c.variants.clauses(c.hq))
      .str();
}

/// float64 attention on the rounded inputs: bottom-right causal, GQA, the
/// variants.
Outputs reference(const DecodeConfig &c, const std::vector<double> &q,
                 const std::vector<double> &k, const std::vector<double> &v) {
  Outputs r;
  r.o.assign(c.b * c.hq * c.nq * c.d, 0.0);
  r.lse.assign(c.b * c.hq * c.nq, -INFINITY);
  double scale = 1.0 / std::sqrt(double(c.d));
  std::vector<double> s(c.nk);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < c.nq; ++i) {
        int64_t qi = ((b * c.hq + h) * c.nq + i) * c.d;
        int64_t kvBase = (b * c.hkv + h / (c.hq / c.hkv)) * c.nk;
        for (int64_t j = 0; j < c.nk; ++j) {
          s[j] = -INFINITY;
          if (!c.variants.mask.sees(c.causal, i, j, c.nq, c.nk))
            continue;
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += q[qi + x] * k[(kvBase + j) * c.d + x];
          s[j] = c.variants.cap(dot * scale) +
                 c.variants.bias(h, i, j, c.nq, c.nk);
        }
        attn::test::RowSoftmax row =
            attn::test::rowSoftmax(s, c.variants.sink(h));
        for (int64_t j = 0; j < c.nk; ++j)
          for (int64_t x = 0; row.p[j] != 0 && x < c.d; ++x)
            r.o[qi + x] += row.p[j] * v[(kvBase + j) * c.d + x];
        r.lse[(b * c.hq + h) * c.nq + i] = row.lse;
      }
  return r;
}

/// Runs `engine` on q, k, v with NaN-poisoned outputs; no output is NaN.
void run(ExecutionEngine &engine, const DecodeConfig &c, Buffer<4> &q,
         Buffer<4> &k, Buffer<4> &v, Outputs &out) {
  Buffer<4> o(c.elt, {c.b, c.hq, c.nq, c.d});
  Buffer<3> lse(Elt::f32, {c.b, c.hq, c.nq});
  o.fill(NAN);
  lse.fill(NAN);
  auto *qp = &q.desc, *kp = &k.desc, *vp = &v.desc, *op = &o.desc;
  auto *lp = &lse.desc;
  Buffer<1> alibi = attn::test::perHeadBuffer(c.variants.alibi, c.hq);
  Buffer<1> sinks = attn::test::perHeadBuffer(c.variants.sinks, c.hq);
  auto *ap = &alibi.desc, *sp = &sinks.desc;
  llvm::Error err = engine.invoke("attention", qp, kp, vp, op, lp, ap, sp);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  readOutputs(o, lse, out);
}


/// A random input: normal values rounded to the element type, and the same
/// values as doubles for the reference.
struct Input {
  Buffer<4> buf;
  std::vector<double> values;
};

/// Draws each element from a pool of fresh normal samples rounded once
/// (APFloat per element would dominate the test time at Nk = 4096).
Input randomInput(Elt elt, std::array<int64_t, 4> shape, std::mt19937 &rng) {
  constexpr int64_t kPool = 4096;
  Buffer<1> pool(elt, {kPool});
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = 0; i < kPool; ++i)
    pool.set(i, normal(rng));
  Input in{Buffer<4>(elt, shape), {}};
  in.values.resize(in.buf.numElements);
  size_t size = in.buf.size();
  std::uniform_int_distribution<int64_t> pick(0, kPool - 1);
  for (int64_t i = 0; i < in.buf.numElements; ++i) {
    int64_t p = pick(rng);
    std::memcpy(&in.buf.bytes[i * size], &pool.bytes[p * size], size);
    in.values[i] = pool.get(p);
  }
  return in;
}

class CpuDecodeNumerics : public ::testing::TestWithParam<DecodeConfig> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

/// Runs the unsplit module and every variant on the same fresh inputs and
/// compares them with float64 and (variants) with the unsplit output.
void compareVariants(
    const DecodeConfig &c, ExecutionEngine &unsplit,
    const std::vector<std::unique_ptr<ExecutionEngine>> &variants) {
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(
      llvm::formatv("Nq = {0}, Nk = {1}, seed {2}", c.nq, c.nk, seed).str());
  std::mt19937 rng(seed);
  Input q = randomInput(c.elt, {c.b, c.hq, c.nq, c.d}, rng);
  Input k = randomInput(c.elt, {c.b, c.hkv, c.nk, c.d}, rng);
  Input v = randomInput(c.elt, {c.b, c.hkv, c.nk, c.d}, rng);
  Outputs ref = reference(c, q.values, k.values, v.values), base;
  ASSERT_NO_FATAL_FAILURE(run(unsplit, c, q.buf, k.buf, v.buf, base));
  double bound = boundFor(c.elt);
  expectHeadsClose(c.hq, c.nq * c.d, base, ref, bound, "unsplit vs float64");
  for (auto [s, engine] : llvm::zip_equal(c.splits, variants)) {
    std::string what =
        llvm::formatv("splits={0}{1}", s, c.packGqa ? " pack-gqa" : "");
    SCOPED_TRACE(what);
    Outputs got;
    ASSERT_NO_FATAL_FAILURE(run(*engine, c, q.buf, k.buf, v.buf, got));
    expectHeadsClose(c.hq, c.nq * c.d, got, ref, bound, "vs float64");
    expectHeadsClose(c.hq, c.nq * c.d, got, base, bound / 2, "vs unsplit");
  }
}

TEST_P(CpuDecodeNumerics, SplitsEqualUnsplitAndFloat64) {
  const DecodeConfig c = GetParam();
  std::string source = buildModule(c);
  auto unsplit = attn::test::compileOnCpu(source, c.blockM, c.blockN);
  ASSERT_TRUE(bool(unsplit)) << llvm::toString(unsplit.takeError());
  std::vector<std::unique_ptr<ExecutionEngine>> variants;
  for (int64_t s : c.splits) {
    auto engine = attn::test::compileOnCpu(
        source, CpuPipeline{c.blockM, c.blockN, s, c.packGqa});
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    variants.push_back(std::move(*engine));
  }
  // Static shapes: fresh inputs per run; dynamic: also other lengths.
  std::vector<std::pair<int64_t, int64_t>> lengths(kRunsPerModule,
                                                   {c.nq, c.nk});
  if (!c.moreLengths.empty())
    lengths = {{c.nq, c.nk}};
  llvm::append_range(lengths, c.moreLengths);
  for (auto [nq, nk] : lengths) {
    DecodeConfig at = c;
    at.nq = nq;
    at.nk = nk;
    ASSERT_NO_FATAL_FAILURE(compareVariants(at, **unsplit, variants));
  }
}

// clang-format would put a field per line.
// clang-format off
const DecodeConfig kConfigs[] = {
    // name, B, Hq, Hkv, Nq, Nk, D, type, causal, BLOCK_M, BLOCK_N, splits
    // [, pack-gqa].
    // The case: 128 K/V blocks of 32 keys, so 160 splits leave 32
    // empty (weight zero).
    {"issue_gqa_nq1_nk4096_d128_bf16", 1, 16, 8, 1, 4096, 128, Elt::bf16,
     false, 1, 32, {16, 32, 160}},
    {"issue_gqa_nq1_nk4096_f16", 1, 16, 8, 1, 4096, 32, Elt::f16, false, 1,
     32, {16, 160}},
    {"issue_gqa_nq1_nk4096_f32", 1, 16, 8, 1, 4096, 32, Elt::f32, false, 1,
     32, {16, 160}},
    // Nk not a multiple of BLOCK_N (37 = 4 * 8 + 5) nor of the split size;
    // 7 splits > 5 blocks.
    {"nk_tail_bf16", 2, 4, 2, 1, 37, 16, Elt::bf16, false, 1, 8, {2, 3, 7}},
    {"nk_tail_causal_f32", 1, 4, 2, 1, 37, 16, Elt::f32, true, 1, 8, {3, 7}},
    // Nk = 1: every split but the first is empty (Nk < splits).
    {"nk1_f16", 1, 4, 2, 1, 1, 16, Elt::f16, false, 1, 8, {2, 4}},
    {"nk1_causal_bf16", 1, 2, 1, 1, 1, 16, Elt::bf16, true, 1, 8, {3}},
    // Chunked prefill: causal with Nq in 4..16, bottom-right per split.
    {"chunked_prefill_causal_bf16", 1, 4, 2, 7, 45, 16, Elt::bf16, true, 4, 8,
     {2, 3, 5}},
    {"chunked_prefill_causal_f16", 2, 2, 2, 16, 40, 16, Elt::f16, true, 8, 8,
     {3, 6}},
    // Nq > Nk: rows 0 .. Nq - Nk - 1 see no key in any split.
    {"causal_nq_gt_nk_bf16", 1, 4, 2, 12, 5, 16, Elt::bf16, true, 4, 2,
     {2, 4}},
    {"causal_nq_gt_nk_f32", 1, 2, 1, 9, 3, 16, Elt::f32, true, 4, 2, {2, 3}},
    // GQA packing (rows = (query, head in group)), alone and with split-KV:
    // Hq / Hkv = 1 (nothing to pack), 4, and 8 (MQA).
    {"pack_group1_f16", 1, 2, 2, 5, 29, 16, Elt::f16, true, 4, 8, {1, 3},
     true},
    {"pack_group4_causal_bf16", 1, 8, 2, 5, 29, 16, Elt::bf16, true, 8, 8,
     {1, 3}, true},
    {"pack_group4_f32", 2, 4, 1, 3, 21, 16, Elt::f32, false, 4, 4, {1, 2},
     true},
    {"pack_mqa_decode_bf16", 1, 8, 1, 1, 50, 32, Elt::bf16, false, 8, 8,
     {1, 4, 9}, true},
    {"pack_mqa_causal_nq_gt_nk_f16", 1, 8, 1, 6, 4, 16, Elt::f16, true, 8, 2,
     {1, 3}, true},
    {"pack_issue_gqa_nq1_nk4096_bf16", 1, 16, 8, 1, 4096, 32, Elt::bf16,
     false, 2, 32, {1, 32, 160}, true},
    // Dynamic Nq and Nk (a K/V cache that grows): one module per variant,
    // run at decode and chunked-prefill lengths, Nk < splits, Nq > Nk, Nk = 0.
    {"dynamic_lengths_causal_bf16", 1, 4, 2, 1, 37, 16, Elt::bf16, true, 4, 8,
     {3, 7}, false, {{1, 64}, {5, 21}, {1, 2}, {9, 4}, {3, 0}}},
    {"dynamic_lengths_pack_f16", 1, 4, 1, 1, 29, 16, Elt::f16, true, 4, 8,
     {1, 4}, true, {{6, 13}, {1, 1}, {7, 3}}},
};
// clang-format on

// The variants through split-KV and GQA packing: each sink enters the
// denominator once (in the combine, not once per split), the key mask cuts
// each split's blocks; 1, 16 and more splits than K/V blocks equal the
// unsplit module. D = 16 keeps the modules quick to compile.
// clang-format off
const DecodeConfig kVariantConfigs[] = {
    withVariants("decode_window_sinks_bf16",
                 {"", 2, 4, 2, 1, 75, 16, Elt::bf16, true, 1, 8,
                  {1, 16, 20}},
                 {{20}, std::nullopt, {0.5f, -1.0f, 30.0f, -INFINITY}}),
    withVariants("decode_window_sinks_pack_f16",
                 {"", 1, 8, 2, 1, 60, 16, Elt::f16, true, 8, 8, {1, 16, 20},
                  true},
                 {{11}, std::nullopt,
                  {0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f, 4.0f}}),
    withVariants("chunked_prefill_window_softcap_sinks_bf16",
                 {"", 1, 4, 2, 7, 45, 16, Elt::bf16, true, 4, 8, {2, 3, 9}},
                 {{9}, 50.0, {1.5f, -0.5f, 0.25f, 2.0f}}),
    withVariants("alibi_pack_split_bf16",
                 {"", 1, 8, 2, 3, 45, 16, Elt::bf16, true, 8, 8, {1, 16, 20},
                  true},
                 {{}, std::nullopt, {},
                  {0.5f, 0.25f, 0.125f, 0.0625f, 0.03f, 0.02f, 0.01f, 0.005f}}),
    withVariants("chunk_nq_gt_nk_sinks_f32",
                 {"", 1, 2, 1, 12, 5, 16, Elt::f32, true, 4, 2, {2, 4}},
                 {{-1, -1, 4}, std::nullopt, {1.0f, -1.0f}}),
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Variants, CpuDecodeNumerics,
                         ::testing::ValuesIn(kVariantConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(Decode, CpuDecodeNumerics,
                         ::testing::ValuesIn(kConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

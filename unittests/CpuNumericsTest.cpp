//===- CpuNumericsTest.cpp - attn-to-cpu output against a double reference ===//
//
// Compiles attn.attention through the attn-to-cpu pipeline (the same
// attn-tile / attn-causal-split / attn-online-softmax rewrites the GPU path
// uses), runs it with MLIR's ExecutionEngine on fresh random inputs and
// compares O and LSE with a float64 reference by ||out - ref|| / ||ref||.
// Outputs are poisoned with NaN first: an element left unwritten fails.
//
// Each module is compiled once (for a baseline CPU, CpuJit.h) and run on
// several fresh random inputs; dynamic-length modules also at several
// lengths. Small BLOCK_M / BLOCK_N keep the fully unrolled tile code quick to
// compile while every shape still spans several blocks and a tail.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "TypedBuffer.h"
#include "Variants.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

using namespace mlir;

namespace {

using mlir::attn::test::TargetCpu;

struct Config {
  const char *name;
  int64_t b, hq, hkv, nq, nk, d;
  bool bf16, causal;
  int64_t blockM = 8, blockN = 4;
  bool lse = true;
  double scale = 0; // 0: default 1/sqrt(D)
  /// Non-empty: Nq and Nk are dynamic; the module also runs at these
  /// (Nq, Nk) after (nq, nk).
  std::vector<std::pair<int64_t, int64_t>> moreLengths = {};
  TargetCpu cpu = TargetCpu::Baseline;
  /// Key mask, softcapping, sinks.
  attn::test::Variants variants = {};

  bool dynamicSeq() const { return !moreLengths.empty(); }

  bool sees(int64_t i, int64_t j) const {
    return variants.mask.sees(causal, i, j, nq, nk);
  }
};

constexpr auto withVariants = attn::test::withVariants<Config>;

void PrintTo(const Config &c, std::ostream *os) { *os << c.name; }

/// Fresh random inputs per compiled static-shape module.
constexpr int kRunsPerModule = 2;

const llvm::fltSemantics &semantics(bool bf16) {
  return bf16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}

uint16_t toHalf(float x, bool bf16) {
  llvm::APFloat f(x);
  bool lost;
  f.convert(semantics(bf16), llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

double fromHalf(uint16_t x, bool bf16) {
  llvm::APFloat f(semantics(bf16), llvm::APInt(16, x));
  return f.convertToDouble();
}

template <typename T, int N>
using Buffer = attn::test::RowMajorBuffer<T, N>;

std::string memrefType(std::array<int64_t, 4> s, bool dynSeq, StringRef elt) {
  auto dim = [&](int64_t v) { return std::to_string(v); };
  return llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}>", dim(s[0]), dim(s[1]),
                       dynSeq ? "?" : dim(s[2]), dim(s[3]), elt)
      .str();
}

std::string buildModule(const Config &c) {
  StringRef elt = c.bf16 ? "bf16" : "f16";
  std::string q = memrefType({c.b, c.hq, c.nq, c.d}, c.dynamicSeq(), elt);
  std::string kv = memrefType({c.b, c.hkv, c.nk, c.d}, c.dynamicSeq(), elt);
  std::string lse = llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq,
                                  c.dynamicSeq() ? "?" : std::to_string(c.nq));
  std::string attrs;
  if (c.causal)
    attrs += "causal";
  if (c.scale != 0)
    attrs += (attrs.empty() ? "" : ", ") +
             llvm::formatv("scale = {0} : f32", c.scale).str();
  for (const std::string &attr : c.variants.attributes())
    attrs += (attrs.empty() ? "" : ", ") + attr;
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {1}, %o: {0}, "
             "%lse: {2}{5}) {{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {1}) outs(%o : {0})"
             " {3}{6} {{{4}}\n  return\n}\n",
             q, kv, lse, c.lse ? "lse(%lse : " + lse + ")" : "", attrs,
             attn::test::Variants::arguments(c.hq), c.variants.clauses(c.hq))
      .str();
}

struct Reference {
  std::vector<double> o, lse;
};

/// float64 attention on the (rounded) inputs; bottom-right causal and key
/// masks per Config::sees.
Reference reference(const Config &c, const std::vector<uint16_t> &q,
                    const std::vector<uint16_t> &k,
                    const std::vector<uint16_t> &v) {
  Reference r;
  r.o.assign(c.b * c.hq * c.nq * c.d, 0.0);
  r.lse.assign(c.b * c.hq * c.nq, -INFINITY);
  double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(double(c.d));
  int64_t group = c.hq / c.hkv;
  std::vector<double> s(c.nk);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h) {
      int64_t hk = h / group;
      for (int64_t i = 0; i < c.nq; ++i) {
        const uint16_t *qi = &q[((b * c.hq + h) * c.nq + i) * c.d];
        for (int64_t j = 0; j < c.nk; ++j) {
          s[j] = -INFINITY;
          if (!c.sees(i, j))
            continue;
          const uint16_t *kj = &k[((b * c.hkv + hk) * c.nk + j) * c.d];
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += fromHalf(qi[x], c.bf16) * fromHalf(kj[x], c.bf16);
          s[j] = c.variants.cap(dot * scale) +
                 c.variants.bias(h, i, j, c.nq, c.nk);
        }
        attn::test::RowSoftmax row =
            attn::test::rowSoftmax(s, c.variants.sink(h));
        double *oi = &r.o[((b * c.hq + h) * c.nq + i) * c.d];
        for (int64_t j = 0; j < c.nk; ++j) {
          const uint16_t *vj = &v[((b * c.hkv + hk) * c.nk + j) * c.d];
          for (int64_t x = 0; row.p[j] != 0 && x < c.d; ++x)
            oi[x] += row.p[j] * fromHalf(vj[x], c.bf16);
        }
        r.lse[(b * c.hq + h) * c.nq + i] = row.lse;
      }
    }
  return r;
}

std::vector<uint16_t> randomHalves(int64_t n, bool bf16, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> out(std::max<int64_t>(n, 1));
  for (auto &x : out)
    x = toHalf(normal(rng), bf16);
  return out;
}

/// One call's inputs (fresh random values) and its poisoned outputs.
struct Call {
  Buffer<uint16_t, 4> q, k, v, o;
  Buffer<float, 3> lse;

  Call(const Config &c, unsigned seed)
      : q({c.b, c.hq, c.nq, c.d}, 0), k({c.b, c.hkv, c.nk, c.d}, 0),
        v({c.b, c.hkv, c.nk, c.d}, 0),
        o({c.b, c.hq, c.nq, c.d}, c.bf16 ? 0x7FC0 : 0x7E00), // NaN
        lse({c.b, c.hq, c.nq}, std::numeric_limits<float>::quiet_NaN()) {
    std::mt19937 rng(seed);
    q.data = randomHalves(c.b * c.hq * c.nq * c.d, c.bf16, rng);
    k.data = randomHalves(c.b * c.hkv * c.nk * c.d, c.bf16, rng);
    v.data = randomHalves(c.b * c.hkv * c.nk * c.d, c.bf16, rng);
    for (auto *buf : {&q, &k, &v})
      buf->desc.basePtr = buf->desc.data = buf->data.data();
  }

  llvm::Error run(ExecutionEngine &engine, const Config &c) {
    auto *qp = &q.desc, *kp = &k.desc, *vp = &v.desc, *op = &o.desc;
    auto *lp = &lse.desc;
    Buffer<float, 1> alibi({c.hq}, 0), sinks({c.hq}, 0);
    if (!c.variants.alibi.empty())
      alibi.data = c.variants.alibi;
    if (!c.variants.sinks.empty())
      sinks.data = c.variants.sinks;
    for (auto *buf : {&alibi, &sinks})
      buf->desc.basePtr = buf->desc.data = buf->data.data();
    auto *ap = &alibi.desc, *sp = &sinks.desc;
    return engine.invoke("attention", qp, kp, vp, op, lp, ap, sp);
  }
};

/// Runs the compiled `engine` once on fresh random inputs of the shape in `c`
/// and compares O and LSE with the float64 reference.
void runAndCompare(ExecutionEngine &engine, const Config &c) {
  // Fresh random inputs on every run (the seed is printed on failure).
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(
      llvm::formatv("Nq = {0}, Nk = {1}, seed {2}", c.nq, c.nk, seed).str());
  Call call(c, seed);
  llvm::Error err = call.run(engine, c);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  const auto &q = call.q, &k = call.k, &v = call.v, &o = call.o;
  const auto &lse = call.lse;

  Reference ref = reference(c, q.data, k.data, v.data);
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.o.size(); ++i) {
    double out = fromHalf(o.data[i], c.bf16);
    ASSERT_FALSE(std::isnan(out)) << "O[" << i << "] unwritten or NaN";
    num += (out - ref.o[i]) * (out - ref.o[i]);
    den += ref.o[i] * ref.o[i];
  }
  double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  // Rounding O to the storage type alone gives ~2^-9 (bf16) / 2^-12 (f16).
  double bound = c.bf16 ? 8e-3 : 1e-3;
  EXPECT_LE(rel, bound) << "||O - ref|| / ||ref|| = " << rel;
  if (!c.lse)
    return;
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    float got = lse.data[i];
    ASSERT_FALSE(std::isnan(got)) << "LSE[" << i << "] unwritten";
    if (std::isinf(ref.lse[i])) {
      EXPECT_TRUE(std::isinf(got) && got < 0) << "LSE[" << i << "] = " << got;
      continue;
    }
    EXPECT_NEAR(got, ref.lse[i], 1e-4 * std::max(1.0, std::fabs(ref.lse[i])))
        << "LSE[" << i << "]";
  }
}

class CpuNumerics : public ::testing::TestWithParam<Config> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

TEST_P(CpuNumerics, MatchesFloat64Reference) {
  const Config c = GetParam();
  auto engine =
      attn::test::compileOnCpu(buildModule(c), c.blockM, c.blockN, c.cpu);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());

  if (!c.dynamicSeq()) {
    for (int run = 0; run < kRunsPerModule; ++run)
      ASSERT_NO_FATAL_FAILURE(runAndCompare(**engine, c));
    return;
  }
  ASSERT_NO_FATAL_FAILURE(runAndCompare(**engine, c));
  for (auto [nq, nk] : c.moreLengths) {
    Config at = c;
    at.nq = nq;
    at.nk = nk;
    ASSERT_NO_FATAL_FAILURE(runAndCompare(**engine, at));
  }
}

const Config kConfigs[] = {
    // name, B, Hq, Hkv, Nq, Nk, D, bf16, causal[, BLOCK_M, BLOCK_N, LSE,
    // scale, more (Nq, Nk), CPU]; BLOCK_M x BLOCK_N = 8 x 4 by default.
    // Nq and Nk span several blocks and end in a tail (or are multiples).
    {"f16_tails", 1, 2, 2, 19, 13, 64, false, false},
    {"bf16_tails", 2, 2, 2, 13, 19, 64, true, false, 4, 8},
    {"f16_block_multiples", 1, 2, 2, 16, 16, 64, false, false},
    // Causal, bottom-right aligned: Nq = Nk, Nq < Nk, and Nq > Nk where rows
    // 0 .. Nq - Nk - 1 see no key (O = 0, LSE = -inf).
    {"causal_square_tail", 1, 2, 2, 21, 21, 64, true, true},
    {"causal_nq_lt_nk", 1, 2, 2, 11, 29, 64, false, true},
    {"causal_nq_gt_nk_rows_without_keys", 1, 2, 2, 29, 11, 64, true, true},
    {"causal_bn_lt_bm", 1, 2, 2, 22, 27, 64, false, true, 8, 2},
    {"causal_bm_lt_bn", 1, 2, 2, 22, 27, 64, true, true, 2, 8},
    {"causal_blocks_32x2", 1, 1, 1, 70, 70, 16, false, true, 32, 2},
    {"default_blocks_16x16", 1, 2, 2, 40, 37, 16, true, true, 16, 16},
    // GQA / MQA: query head h reads KV head h / (Hq / Hkv).
    {"gqa", 1, 8, 2, 12, 12, 64, false, true},
    {"mqa", 2, 4, 1, 9, 17, 64, true, false},
    // Head dims (64 above): every multiple of 8 up to 256 must work.
    {"d16", 1, 2, 2, 19, 23, 16, false, true},
    {"d40", 1, 2, 2, 13, 13, 40, false, true},
    {"d80", 1, 2, 1, 13, 15, 80, true, false},
    {"d96", 1, 2, 2, 11, 11, 96, false, true},
    {"d128", 1, 2, 2, 10, 18, 128, true, true, 4, 4},
    {"d256", 1, 1, 1, 7, 11, 256, true, false, 4, 4},
    // Edge shapes and options.
    {"decode_nq1", 1, 4, 2, 1, 37, 64, true, true},
    {"causal_one_by_one", 1, 1, 1, 1, 1, 64, false, true},
    {"empty_keys", 1, 2, 2, 9, 0, 64, false, false},
    {"explicit_scale", 1, 2, 2, 11, 14, 64, false, false, 8, 4, true, 0.5},
    {"no_lse", 1, 2, 2, 13, 13, 64, true, true, 8, 4, false},
    // Dynamic Nq and Nk: one module, run at several lengths.
    {"dynamic_seq_len_causal",
     1,
     2,
     1,
     13,
     19,
     64,
     true,
     true,
     8,
     4,
     true,
     0,
     {{19, 13}, {1, 9}, {8, 8}, {3, 0}}},
    {"dynamic_seq_len",
     1,
     2,
     2,
     17,
     11,
     64,
     false,
     false,
     8,
     4,
     true,
     0,
     {{5, 23}, {16, 16}, {1, 1}}},
};

INSTANTIATE_TEST_SUITE_P(Attention, CpuNumerics, ::testing::ValuesIn(kConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

// The same lowering JIT-compiled for the host CPU with its features, as
// ExecutionEngine does by default.
const Config kHostConfigs[] = {
    {"f16_causal_tails",
     1,
     2,
     2,
     19,
     13,
     64,
     false,
     true,
     8,
     4,
     true,
     0,
     {},
     TargetCpu::Host},
    {"bf16_tails",
     1,
     2,
     1,
     13,
     19,
     64,
     true,
     false,
     8,
     4,
     true,
     0,
     {},
     TargetCpu::Host},
};

INSTANTIATE_TEST_SUITE_P(HostCpu, CpuNumerics,
                         ::testing::ValuesIn(kHostConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

/// The variants: key masks (#attn.key_mask) alone and under `causal`,
/// Nq != Nk (bottom-right), windows wider than N, the diagonal only, chunks
/// and prefixes (rows that see no key: O = 0, LSE = -inf); softcapping;
/// sinks (no key: O = 0, LSE = sink); ALiBi.
Config base(bool causal, int64_t nq, int64_t nk, int64_t blockM = 8,
            int64_t blockN = 4) {
  return {"", 1, 2, 1, nq, nk, 32, true, causal, blockM, blockN};
}

// clang-format off
const Config kVariantConfigs[] = {
    // name, shape, {key mask {left, right, chunk, prefix}, softcap, sinks,
    // ALiBi slopes}
    withVariants("window_left_right", base(false, 37, 37), {{5, 3}}),
    withVariants("window_causal_nq_lt_nk", base(true, 19, 45), {{9}}),
    withVariants("window_nq_gt_nk", base(false, 45, 19, 4, 8), {{6, 2}}),
    withVariants("window_wider_than_n", base(true, 21, 21), {{100, 0}}),
    withVariants("window_diagonal_only", base(false, 23, 23), {{0, 0}}),
    withVariants("window_right_only", base(false, 26, 26), {{-1, 2}}),
    withVariants("window_left_only", base(false, 26, 30), {{4, -1}}),
    withVariants("chunked_causal", base(true, 40, 40), {{-1, -1, 12}}),
    withVariants("chunked_bidirectional", base(false, 33, 33, 8, 8),
                 {{-1, -1, 10}}),
    withVariants("chunked_nq_gt_nk_rows_without_keys", base(true, 30, 17),
                 {{-1, -1, 7}}),
    withVariants("chunked_window", base(false, 35, 35), {{3, 0, 16}}),
    withVariants("prefix_lm", base(true, 29, 29), {{-1, -1, 0, 11}}),
    withVariants("prefix_empty", base(true, 17, 17), {{-1, -1, 0, 0}}),
    withVariants("prefix_nq_lt_nk", base(true, 9, 30), {{-1, -1, 0, 25}}),
    withVariants("window_gqa", {"", 1, 4, 2, 21, 27, 64, false, true}, {{7}}),
    // Softcapping (Gemma-2: 50): logits near 1e4 (scale 2000) stay finite;
    // 0 is off; with a window (Gemma-2's local layers).
    withVariants("softcap_logits_near_1e4",
                 {"", 1, 2, 1, 19, 23, 32, true, true, 8, 4, true, 2000.0},
                 {{}, 50}),
    withVariants("softcap_zero_is_off", base(false, 13, 17), {{}, 0}),
    withVariants("softcap_small", base(false, 21, 21), {{}, 0.5}),
    withVariants("softcap_window", {"", 1, 4, 2, 25, 25, 64, false, true},
                 {{6}, 50}),
    // Learned sinks (gpt-oss), one logit per query head: ordinary values,
    // +30 (the sink takes nearly all weight: O near 0), -inf (no sink),
    // with GQA, a window and rows that see no key (O = 0, LSE = sink).
    withVariants("sinks", base(true, 23, 23),
                 {{}, std::nullopt, {0.5f, -1.25f}}),
    withVariants("sinks_plus_30_and_minus_inf", base(false, 17, 21),
                 {{}, std::nullopt, {30.0f, -INFINITY}}),
    withVariants("sinks_gqa_window", {"", 1, 4, 2, 19, 26, 64, false, true},
                 {{5}, std::nullopt, {1.0f, -2.0f, 0.0f, 3.5f}}),
    withVariants("sinks_rows_without_keys", base(true, 29, 11),
                 {{}, std::nullopt, {2.0f, -0.5f}}),
    // ALiBi (BLOOM, MPT; FlashAttention's alibi_slopes): causal, bidirectional
    // with Nq != Nk, GQA, and with a window, softcapping and sinks.
    withVariants("alibi_causal", base(true, 27, 27),
                 {{}, std::nullopt, {}, {0.5f, 0.125f}}),
    withVariants("alibi_nq_lt_nk", base(false, 13, 30),
                 {{}, std::nullopt, {}, {0.25f, 0.0625f}}),
    withVariants("alibi_gqa", {"", 1, 4, 2, 21, 21, 64, false, true},
                 {{}, std::nullopt, {}, {0.5f, 0.25f, 0.125f, 0.0625f}}),
    withVariants("alibi_window_softcap_sinks", base(true, 25, 31),
                 {{5}, 30.0, {1.0f, -1.0f}, {0.3f, 0.7f}}),
    withVariants("window_dynamic_lengths",
                 {"", 1, 2, 1, 17, 21, 32, true, true, 8, 4, true, 0,
                  {{21, 17}, {1, 30}, {9, 9}, {4, 0}}},
                 {{6}}),
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Variants, CpuNumerics,
                         ::testing::ValuesIn(kVariantConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

// FlashAttention's window (-1, 0) is causal: the key-mask lowering (its
// own block ranges and element mask) gives the causal kernel's O and LSE
// bit for bit, at Nq < Nk, Nq = Nk and Nq > Nk.
TEST(CpuKeyMask, WindowMinusOneZeroIsCausalBitForBit) {
  attn::registerAttnPassesAndPipelines();
  Config causal = base(true, 0, 0);
  Config window = withVariants("window", base(false, 0, 0), {{-1, 0}});
  causal.moreLengths = window.moreLengths = {{0, 0}}; // dynamic Nq, Nk
  auto causalEngine =
      attn::test::compileOnCpu(buildModule(causal), 8, 4, TargetCpu::Baseline);
  auto windowEngine =
      attn::test::compileOnCpu(buildModule(window), 8, 4, TargetCpu::Baseline);
  ASSERT_TRUE(bool(causalEngine)) << llvm::toString(causalEngine.takeError());
  ASSERT_TRUE(bool(windowEngine)) << llvm::toString(windowEngine.takeError());
  for (auto [nq, nk] : {std::pair{13, 29}, {24, 24}, {31, 10}}) {
    unsigned seed = std::random_device{}();
    SCOPED_TRACE(
        llvm::formatv("Nq = {0}, Nk = {1}, seed {2}", nq, nk, seed).str());
    causal.nq = window.nq = nq;
    causal.nk = window.nk = nk;
    Call a(causal, seed), b(window, seed);
    ASSERT_FALSE(bool(a.run(**causalEngine, causal)));
    ASSERT_FALSE(bool(b.run(**windowEngine, window)));
    EXPECT_EQ(a.o.data, b.o.data);
    EXPECT_EQ(0, std::memcmp(a.lse.data.data(), b.lse.data.data(),
                             a.lse.data.size() * sizeof(float)));
  }
}

} // namespace

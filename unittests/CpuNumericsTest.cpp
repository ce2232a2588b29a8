//===- CpuNumericsTest.cpp - attn-to-cpu output against a double reference ===//
//
// Compiles attn.attention through the attn-to-cpu pipeline (the same
// attn-tile / attn-causal-split / attn-online-softmax rewrites the GPU path
// uses), runs it with MLIR's ExecutionEngine on fresh random inputs and
// compares O and LSE with a float64 reference by ||out - ref|| / ||ref||.
// Outputs are poisoned with NaN first: an element left unwritten fails.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;

namespace {

struct Config {
  const char *name;
  int64_t b, hq, hkv, nq, nk, d;
  bool bf16, causal;
  int64_t blockM = 16, blockN = 16;
  bool lse = true;
  double scale = 0; // 0: default 1/sqrt(D)
  bool dynamicSeq = false;
};

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

/// A [d0, d1, d2, d3] row-major buffer seen as a StridedMemRefType.
template <typename T, int N> struct Buffer {
  std::vector<T> data;
  StridedMemRefType<T, N> desc;
  explicit Buffer(std::array<int64_t, N> shape, T fill) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    data.assign(std::max<int64_t>(n, 1), fill);
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    int64_t stride = 1;
    for (int i = N - 1; i >= 0; --i) {
      desc.sizes[i] = shape[i];
      desc.strides[i] = stride;
      stride *= shape[i];
    }
  }
};

std::string memrefType(std::array<int64_t, 4> s, bool dynSeq, StringRef elt) {
  auto dim = [&](int64_t v) { return std::to_string(v); };
  return llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}>", dim(s[0]), dim(s[1]),
                       dynSeq ? "?" : dim(s[2]), dim(s[3]), elt)
      .str();
}

std::string buildModule(const Config &c) {
  StringRef elt = c.bf16 ? "bf16" : "f16";
  std::string q = memrefType({c.b, c.hq, c.nq, c.d}, c.dynamicSeq, elt);
  std::string kv = memrefType({c.b, c.hkv, c.nk, c.d}, c.dynamicSeq, elt);
  std::string lse = llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq,
                                  c.dynamicSeq ? "?" : std::to_string(c.nq));
  std::string attrs;
  if (c.causal)
    attrs += "causal";
  if (c.scale != 0)
    attrs += (attrs.empty() ? "" : ", ") +
             llvm::formatv("scale = {0} : f32", c.scale).str();
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {1}, %o: {0}, "
             "%lse: {2}) {{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {1}) outs(%o : {0})"
             " {3} {{{4}}\n  return\n}\n",
             q, kv, lse, c.lse ? "lse(%lse : " + lse + ")" : "", attrs)
      .str();
}

struct Reference {
  std::vector<double> o, lse;
};

/// float64 attention on the (rounded) inputs; bottom-right causal.
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
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.nk; ++j) {
          s[j] = -INFINITY;
          if (c.causal && j > i + c.nk - c.nq)
            continue;
          const uint16_t *kj = &k[((b * c.hkv + hk) * c.nk + j) * c.d];
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += fromHalf(qi[x], c.bf16) * fromHalf(kj[x], c.bf16);
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY)
          continue; // no key: O = 0, LSE = -inf
        double sum = 0;
        double *oi = &r.o[((b * c.hq + h) * c.nq + i) * c.d];
        for (int64_t j = 0; j < c.nk; ++j) {
          if (s[j] == -INFINITY)
            continue;
          double p = std::exp(s[j] - mx);
          sum += p;
          const uint16_t *vj = &v[((b * c.hkv + hk) * c.nk + j) * c.d];
          for (int64_t x = 0; x < c.d; ++x)
            oi[x] += p * fromHalf(vj[x], c.bf16);
        }
        for (int64_t x = 0; x < c.d; ++x)
          oi[x] /= sum;
        r.lse[(b * c.hq + h) * c.nq + i] = mx + std::log(sum);
      }
    }
  return r;
}

class CpuNumerics : public ::testing::TestWithParam<Config> {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    attn::registerAttnPassesAndPipelines();
  }
};

std::vector<uint16_t> randomHalves(int64_t n, bool bf16, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> out(std::max<int64_t>(n, 1));
  for (auto &x : out)
    x = toHalf(normal(rng), bf16);
  return out;
}

TEST_P(CpuNumerics, MatchesFloat64Reference) {
  const Config c = GetParam();
  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  MLIRContext ctx(registry);
  std::string src = buildModule(c);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(module) << src;
  PassManager pm(&ctx);
  attn::CPUPipelineOptions options;
  options.blockM = c.blockM;
  options.blockN = c.blockN;
  attn::buildCPUPipeline(pm, options);
  ASSERT_TRUE(succeeded(pm.run(*module))) << src;
  auto engine = ExecutionEngine::create(*module);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());

  // Fresh random inputs on every run (the seed is printed on failure).
  unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  Buffer<uint16_t, 4> q({c.b, c.hq, c.nq, c.d}, 0), k({c.b, c.hkv, c.nk, c.d}, 0),
      v({c.b, c.hkv, c.nk, c.d}, 0);
  q.data = randomHalves(c.b * c.hq * c.nq * c.d, c.bf16, rng);
  k.data = randomHalves(c.b * c.hkv * c.nk * c.d, c.bf16, rng);
  v.data = randomHalves(c.b * c.hkv * c.nk * c.d, c.bf16, rng);
  for (auto *buf : {&q, &k, &v})
    buf->desc.basePtr = buf->desc.data = buf->data.data();
  uint16_t nanBits = c.bf16 ? 0x7FC0 : 0x7E00; // poison
  Buffer<uint16_t, 4> o({c.b, c.hq, c.nq, c.d}, nanBits);
  Buffer<float, 3> lse({c.b, c.hq, c.nq},
                       std::numeric_limits<float>::quiet_NaN());

  auto *qp = &q.desc, *kp = &k.desc, *vp = &v.desc, *op = &o.desc;
  auto *lp = &lse.desc;
  llvm::Error err = engine->get()->invoke("attention", qp, kp, vp, op, lp);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  Reference ref = reference(c, q.data, k.data, v.data);
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.o.size(); ++i) {
    double out = fromHalf(o.data[i], c.bf16);
    ASSERT_FALSE(std::isnan(out)) << "O[" << i << "] unwritten or NaN, seed "
                                  << seed;
    num += (out - ref.o[i]) * (out - ref.o[i]);
    den += ref.o[i] * ref.o[i];
  }
  double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  // Rounding O to the storage type alone gives ~2^-9 (bf16) / 2^-12 (f16).
  double bound = c.bf16 ? 8e-3 : 1e-3;
  EXPECT_LE(rel, bound) << "||O - ref|| / ||ref|| = " << rel << ", seed "
                        << seed;
  if (!c.lse)
    return;
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    float got = lse.data[i];
    ASSERT_FALSE(std::isnan(got)) << "LSE[" << i << "] unwritten, seed " << seed;
    if (std::isinf(ref.lse[i])) {
      EXPECT_TRUE(std::isinf(got) && got < 0) << "LSE[" << i << "] = " << got;
      continue;
    }
    EXPECT_NEAR(got, ref.lse[i], 1e-4 * std::max(1.0, std::fabs(ref.lse[i])))
        << "LSE[" << i << "], seed " << seed;
  }
}

const Config kConfigs[] = {
    // name, B, Hq, Hkv, Nq, Nk, D, bf16, causal, BLOCK_M, BLOCK_N
    {"f16_square", 1, 2, 2, 64, 64, 64, false, false},
    {"bf16_square", 1, 2, 2, 64, 64, 64, true, false},
    {"f16_tails", 1, 2, 2, 100, 77, 64, false, false},
    {"bf16_tails", 2, 2, 2, 37, 53, 64, true, false},
    {"causal_square", 1, 2, 2, 64, 64, 64, false, true},
    {"causal_square_tail", 1, 2, 2, 100, 100, 64, true, true, 32, 16},
    {"causal_nq_lt_nk", 1, 2, 2, 37, 100, 64, false, true},
    {"causal_nq_gt_nk_rows_without_keys", 1, 2, 2, 100, 37, 64, true, true},
    {"causal_bn_ne_bm", 1, 2, 2, 70, 90, 64, false, true, 16, 8},
    {"causal_bm_lt_bn", 1, 2, 2, 70, 90, 64, true, true, 8, 32},
    {"gqa", 1, 8, 2, 48, 48, 64, false, true},
    {"mqa", 2, 4, 1, 33, 65, 64, true, false},
    {"d40", 1, 2, 2, 50, 50, 40, false, true},
    {"d80", 1, 2, 1, 50, 61, 80, true, false},
    {"d96", 1, 2, 2, 45, 45, 96, false, true},
    {"d128", 1, 2, 2, 40, 72, 128, true, true},
    {"d256", 1, 1, 1, 20, 36, 256, true, false, 8, 8},
    {"decode_nq1", 1, 4, 2, 1, 200, 64, true, true},
    {"causal_one_by_one", 1, 1, 1, 1, 1, 64, false, true},
    {"empty_keys", 1, 2, 2, 16, 0, 64, false, false},
    {"explicit_scale", 1, 2, 2, 32, 48, 64, false, false, 16, 16, true, 0.5},
    {"no_lse", 1, 2, 2, 30, 30, 64, true, true, 16, 16, false},
    {"block_32x8", 1, 2, 2, 130, 130, 64, false, true, 32, 8},
    {"dynamic_seq_len", 1, 2, 1, 45, 77, 64, true, true, 16, 16, true, 0, true},
    {"dynamic_seq_len_causal_gt", 1, 2, 2, 77, 45, 64, false, true, 16, 16,
     true, 0, true},
};

INSTANTIATE_TEST_SUITE_P(Attention, CpuNumerics, ::testing::ValuesIn(kConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

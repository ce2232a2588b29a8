//===- CpuFp8NumericsTest.cpp - FP8 attention on the host vs float64 ------===//
//
// The pre-quantized FP8 entry point: attn.attention with f8E4M3FN Q, K, V
// and fp32 [B, Hkv] descales, through attn-to-cpu. Fresh random inputs are
// quantized on the host with per-(b, kv_head) scales amax / 448 that differ
// per head (each head's inputs have their own magnitude), outputs are
// poisoned with NaN, and O (bf16) and LSE are compared head by head with a
// float64 attention on the dequantized inputs (x_fp8 * descale): the
// lowering must apply exactly the documented descales, so the only
// differences are fp32 accumulation and O's bf16 rounding.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "TypedBuffer.h"
#include "Fp8.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using mlir::attn::test::fromE4M3;
using mlir::attn::test::kE4M3Max;
using mlir::attn::test::toE4M3;

namespace {

struct Config {
  const char *name;
  int64_t b, hq, hkv, nq, nk, d;
  bool causal;
  int64_t blockM = 8, blockN = 4;
  /// attn-tile pack-gqa: the group's query heads share a tile (and its
  /// descales are loaded once per (batch, KV head)).
  bool packGqa = false;
  /// V stored as V^T (unit stride along Nk), as the tensor-core path
  /// takes it: the same attention through a strided view.
  bool vTransposed = false;
};

void PrintTo(const Config &c, std::ostream *os) { *os << c.name; }

double fromBF16(uint16_t x) {
  return llvm::APFloat(llvm::APFloat::BFloat(), llvm::APInt(16, x))
      .convertToDouble();
}

template <typename T, int N>
using Buffer = attn::test::RowMajorBuffer<T, N>;

std::string buildModule(const Config &c) {
  auto mem = [](int64_t h, int64_t n, int64_t d, int64_t b, StringRef elt) {
    return llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}>", b, h, n, d, elt).str();
  };
  std::string q = mem(c.hq, c.nq, c.d, c.b, "f8E4M3FN");
  std::string kv = mem(c.hkv, c.nk, c.d, c.b, "f8E4M3FN");
  std::string v = c.vTransposed
                      ? llvm::formatv("memref<{0}x{1}x{2}x{3}xf8E4M3FN, "
                                      "strided<[?, ?, 1, ?], offset: ?>>",
                                      c.b, c.hkv, c.nk, c.d)
                            .str()
                      : kv;
  std::string o = mem(c.hq, c.nq, c.d, c.b, "bf16");
  std::string lse = llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq, c.nq);
  std::string ds = llvm::formatv("memref<{0}x{1}xf32>", c.b, c.hkv);
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {6}, %o: {2}, "
             "%lse: {3}, %qd: {4}, %kd: {4}, %vd: {4}) {{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {6}) outs(%o : {2})"
             " lse(%lse : {3}) descale(%qd, %kd, %vd : {4}, {4}, {4}) {5}\n"
             "  return\n}\n",
             q, kv, o, lse, ds, c.causal ? "{causal}" : "", v)
      .str();
}

/// FP8 tensors and their per-(b, kv_head) descales, as a caller passes them.
struct Inputs {
  Buffer<uint8_t, 4> q, k, v;
  Buffer<float, 2> qd, kd, vd;
  explicit Inputs(const Config &c)
      : q({c.b, c.hq, c.nq, c.d}, 0), k({c.b, c.hkv, c.nk, c.d}, 0),
        v({c.b, c.hkv, c.nk, c.d}, 0), qd({c.b, c.hkv}, 1.0f),
        kd({c.b, c.hkv}, 1.0f), vd({c.b, c.hkv}, 1.0f) {}
};

/// Quantizes the slices of (b, kv_head) (for Q: its query heads) of `x` with
/// descale = amax / 448 and returns the descales.
void quantize(const std::vector<float> &x, int64_t b, int64_t hkv,
              int64_t slice, std::vector<uint8_t> &bits,
              std::vector<float> &descale) {
  for (int64_t s = 0; s < b * hkv; ++s) {
    float amax = 0;
    for (int64_t i = 0; i < slice; ++i)
      amax = std::max(amax, std::fabs(x[s * slice + i]));
    descale[s] = amax > 0 ? amax / kE4M3Max : 1.0f;
    for (int64_t i = 0; i < slice; ++i)
      bits[s * slice + i] = toE4M3(x[s * slice + i] / descale[s]);
  }
}

/// Normal inputs with a different magnitude per (b, kv_head), quantized.
void fillRandom(const Config &c, Inputs &in, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> magnitude(0.25f, 4.0f);
  auto tensor = [&](Buffer<uint8_t, 4> &buf, int64_t slice,
                    Buffer<float, 2> &descale) {
    std::vector<float> x(buf.data.size());
    for (int64_t s = 0; s < c.b * c.hkv; ++s) {
      float m = magnitude(rng);
      for (int64_t i = 0; i < slice; ++i)
        x[s * slice + i] = m * normal(rng);
    }
    quantize(x, c.b, c.hkv, slice, buf.data, descale.data);
  };
  tensor(in.q, (c.hq / c.hkv) * c.nq * c.d, in.qd);
  tensor(in.k, c.nk * c.d, in.kd);
  tensor(in.v, c.nk * c.d, in.vd);
}

struct Reference {
  std::vector<double> o, lse;
};

/// float64 attention of [B, H, N, D] row-major inputs; bottom-right causal.
Reference reference(const Config &c, const std::vector<double> &q,
                    const std::vector<double> &k,
                    const std::vector<double> &v) {
  Reference r;
  r.o.assign(c.b * c.hq * c.nq * c.d, 0.0);
  r.lse.assign(c.b * c.hq * c.nq, -INFINITY);
  double scale = 1.0 / std::sqrt(double(c.d));
  int64_t group = c.hq / c.hkv;
  std::vector<double> s(c.nk);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h) {
      int64_t hk = h / group;
      auto kvRow = [&](const std::vector<double> &t, int64_t j) {
        return &t[((b * c.hkv + hk) * c.nk + j) * c.d];
      };
      for (int64_t i = 0; i < c.nq; ++i) {
        const double *qi = &q[((b * c.hq + h) * c.nq + i) * c.d];
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.nk; ++j) {
          s[j] = -INFINITY;
          if (c.causal && j > i + c.nk - c.nq)
            continue;
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += qi[x] * kvRow(k, j)[x];
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
          for (int64_t x = 0; x < c.d; ++x)
            oi[x] += p * kvRow(v, j)[x];
        }
        for (int64_t x = 0; x < c.d; ++x)
          oi[x] /= sum;
        r.lse[(b * c.hq + h) * c.nq + i] = mx + std::log(sum);
      }
    }
  return r;
}

/// x_fp8 * descale[b, kv_head] of a [B, H, N, D] tensor, H = Hkv * group.
std::vector<double> dequantize(const Buffer<uint8_t, 4> &x,
                               const Buffer<float, 2> &descale,
                               int64_t group) {
  int64_t slice = group * x.desc.sizes[2] * x.desc.sizes[3];
  std::vector<double> out(x.data.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = fromE4M3(x.data[i]) * descale.data[i / slice];
  return out;
}

/// float64 attention on the dequantized inputs x_fp8 * descale[b, kv_head].
Reference reference(const Config &c, const Inputs &in) {
  return reference(c, dequantize(in.q, in.qd, c.hq / c.hkv),
                   dequantize(in.k, in.kd, 1), dequantize(in.v, in.vd, 1));
}

struct Outputs {
  Buffer<uint16_t, 4> o;
  Buffer<float, 3> lse;
  explicit Outputs(const Config &c)
      : o({c.b, c.hq, c.nq, c.d}, 0x7FC0), // bf16 NaN: the poison
        lse({c.b, c.hq, c.nq}, std::numeric_limits<float>::quiet_NaN()) {}
};

/// V [B, Hkv, Nk, D] stored as V^T ([B, Hkv, D, Nk] row-major) and seen
/// through a [B, Hkv, Nk, D] descriptor with unit stride along Nk.
Buffer<uint8_t, 4> transposedV(const Config &c, const Buffer<uint8_t, 4> &v) {
  Buffer<uint8_t, 4> vt({c.b, c.hkv, c.d, c.nk}, 0);
  for (int64_t bh = 0; bh < c.b * c.hkv; ++bh)
    for (int64_t n = 0; n < c.nk; ++n)
      for (int64_t d = 0; d < c.d; ++d)
        vt.data[(bh * c.d + d) * c.nk + n] = v.data[(bh * c.nk + n) * c.d + d];
  std::swap(vt.desc.sizes[2], vt.desc.sizes[3]);
  std::swap(vt.desc.strides[2], vt.desc.strides[3]);
  return vt;
}

Outputs run(ExecutionEngine &engine, const Config &c, Inputs &in) {
  Outputs out(c);
  Buffer<uint8_t, 4> vt = transposedV(c, in.v);
  auto *qp = &in.q.desc, *kp = &in.k.desc;
  auto *vp = c.vTransposed ? &vt.desc : &in.v.desc;
  auto *qdp = &in.qd.desc, *kdp = &in.kd.desc, *vdp = &in.vd.desc;
  auto *op = &out.o.desc;
  auto *lp = &out.lse.desc;
  llvm::Error err =
      engine.invoke("attention", qp, kp, vp, op, lp, qdp, kdp, vdp);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  return out;
}

/// Compares O and LSE with the reference, one (b, query head) at a time.
void compareHeadByHead(const Config &c, const Outputs &out,
                       const Reference &ref) {
  int64_t rows = c.nq, cols = c.nq * c.d;
  for (int64_t bh = 0; bh < c.b * c.hq; ++bh) {
    SCOPED_TRACE(llvm::formatv("b = {0}, head = {1}", bh / c.hq, bh % c.hq)
                     .str());
    double num = 0, den = 0;
    for (int64_t i = bh * cols; i < (bh + 1) * cols; ++i) {
      double o = fromBF16(out.o.data[i]);
      ASSERT_FALSE(std::isnan(o)) << "O[" << i << "] unwritten or NaN";
      num += (o - ref.o[i]) * (o - ref.o[i]);
      den += ref.o[i] * ref.o[i];
    }
    double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    // O's bf16 rounding alone gives ~2^-9.
    EXPECT_LE(rel, 8e-3) << "||O - ref|| / ||ref|| = " << rel;
    for (int64_t i = bh * rows; i < (bh + 1) * rows; ++i) {
      float got = out.lse.data[i];
      ASSERT_FALSE(std::isnan(got)) << "LSE[" << i << "] unwritten";
      if (std::isinf(ref.lse[i]))
        EXPECT_TRUE(std::isinf(got) && got < 0) << "LSE[" << i << "] = " << got;
      else
        EXPECT_NEAR(got, ref.lse[i], 1e-4 * std::max(1.0, std::fabs(ref.lse[i])))
            << "LSE[" << i << "]";
    }
  }
}

class CpuFp8Numerics : public ::testing::TestWithParam<Config> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

TEST_P(CpuFp8Numerics, MatchesFloat64OnDequantizedInputs) {
  const Config c = GetParam();
  auto engine = attn::test::compileOnCpu(
      buildModule(c), attn::test::CpuPipeline{c.blockM, c.blockN,
                                              /*splits=*/1, c.packGqa});
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  for (int run = 0; run < 2; ++run) {
    unsigned seed = std::random_device{}();
    SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
    std::mt19937 rng(seed);
    Inputs in(c);
    fillRandom(c, in, rng);
    Outputs out = ::run(**engine, c, in);
    ASSERT_NO_FATAL_FAILURE(compareHeadByHead(c, out, reference(c, in)));
  }
}

/// A descale of (b, kv_head) reaches the query heads of that KV head and no
/// other: doubling its v_descale doubles their O exactly (a power of two),
/// changing its k_descale changes their scores, and every other head's
/// output stays bit for bit the same.
class CpuFp8Descale : public CpuFp8Numerics {};

TEST_P(CpuFp8Descale, ChangesOnlyItsHead) {
  const Config c = GetParam();
  auto engine = attn::test::compileOnCpu(buildModule(c), c.blockM, c.blockN);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
  std::mt19937 rng(seed);
  Inputs in(c);
  fillRandom(c, in, rng);
  Outputs base = ::run(**engine, c, in);

  int64_t b = c.b - 1, hk = c.hkv - 1, group = c.hq / c.hkv;
  int64_t slice = c.nq * c.d;
  auto mine = [&](int64_t bh) {
    return bh / c.hq == b && (bh % c.hq) / group == hk;
  };
  in.vd.data[b * c.hkv + hk] *= 2.0f;
  Outputs doubled = ::run(**engine, c, in);
  in.vd.data[b * c.hkv + hk] /= 2.0f;
  in.kd.data[b * c.hkv + hk] *= 3.0f;
  Outputs sharper = ::run(**engine, c, in);
  ASSERT_NO_FATAL_FAILURE(compareHeadByHead(c, sharper, reference(c, in)));

  for (int64_t bh = 0; bh < c.b * c.hq; ++bh) {
    bool changedV = false, changedK = false;
    for (int64_t i = bh * slice; i < (bh + 1) * slice; ++i) {
      double o = fromBF16(base.o.data[i]);
      double o2 = fromBF16(doubled.o.data[i]);
      if (mine(bh))
        ASSERT_EQ(o2, 2 * o) << "O[" << i << "]";
      else
        ASSERT_EQ(doubled.o.data[i], base.o.data[i]) << "O[" << i << "]";
      changedV |= o2 != o;
      changedK |= sharper.o.data[i] != base.o.data[i];
    }
    EXPECT_EQ(changedV, mine(bh)) << "v_descale, head " << bh;
    EXPECT_EQ(changedK, mine(bh)) << "k_descale, head " << bh;
  }
}

const Config kConfigs[] = {
    // name, B, Hq, Hkv, Nq, Nk, D, causal[, BLOCK_M, BLOCK_N]
    {"gqa_k_tail", 2, 4, 2, 13, 19, 64, false},
    {"gqa_causal", 1, 6, 2, 17, 23, 32, true, 4, 8},
    {"mqa_causal_rows_without_keys", 2, 2, 1, 11, 7, 16, true},
    {"mha_d128", 1, 2, 2, 5, 10, 128, false, 4, 4},
    // GQA packing: rows are (query, head in group); causal uses the query.
    {"gqa_packed_causal", 2, 8, 2, 5, 23, 32, true, 8, 4, true},
    {"decode_packed", 1, 8, 2, 1, 37, 64, false, 4, 8, true},
    // V stored as V^T (the tensor-core path's layout), tails in Nk.
    {"v_transposed_gqa_causal", 2, 4, 2, 9, 21, 32, true, 4, 8, false, true},
    {"v_transposed_decode_packed", 1, 8, 2, 1, 37, 64, false, 4, 8, true,
     true},
};

auto configName = [](const auto &info) { return std::string(info.param.name); };

INSTANTIATE_TEST_SUITE_P(Fp8, CpuFp8Numerics, ::testing::ValuesIn(kConfigs),
                         configName);

// GQA, several batches and KV heads: each descale has heads to leave alone.
const Config kIsolationConfigs[] = {
    {"gqa", 2, 4, 2, 9, 11, 32, false},
    {"gqa_causal", 2, 6, 3, 7, 13, 16, true},
};

INSTANTIATE_TEST_SUITE_P(Fp8, CpuFp8Descale,
                         ::testing::ValuesIn(kIsolationConfigs), configName);

} // namespace

//===- CpuGradNumericsTest.cpp - the backward on the host vs float64 ------===//
//
// Compiles attn.attention_grad through attn-to-cpu (attn-tile-grad,
// attn-causal-split-grad, attn-decompose-grad, attn-lower-to-cpu), runs it
// on fresh random Q, K, V, dO with O and LSE from a float64 forward, and
// compares dQ, dK, dV with float64 gradients by ||out - ref|| / ||ref||.
// Outputs are poisoned with NaN first. Small shapes and blocks keep the
// added test time low while every shape spans several blocks and a tail.
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "TypedBuffer.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using mlir::attn::test::Buffer;
using mlir::attn::test::Elt;
using mlir::attn::test::eltName;
using mlir::attn::test::fillNormal;

namespace {

struct GradConfig {
  const char *name;
  int64_t b, hq, hkv, nq, nk, d;
  Elt elt;
  bool causal;
  int64_t blockM = 8, blockN = 4;
  double scale = 0; // 0: default 1/sqrt(D)
  /// >= 0: dO is zero except in this query head of each GQA group.
  int64_t onlyHead = -1;
  /// The rank-4 operands in FlashAttention's [B, N, H, D] memory order,
  /// seen as [B, H, N, D] through strided memrefs.
  bool bnhd = false;
  /// Non-empty: Nq and Nk are dynamic; the module also runs at these
  /// (Nq, Nk) after (nq, nk).
  std::vector<std::pair<int64_t, int64_t>> moreLengths = {};

  bool dynamicSeq() const { return !moreLengths.empty(); }
};

void PrintTo(const GradConfig &c, std::ostream *os) { *os << c.name; }

std::string memrefType(std::array<int64_t, 4> s, const GradConfig &c) {
  std::string layout = c.bnhd ? Buffer<4>(c.elt, s, true).layout() : "";
  std::string n = c.dynamicSeq() ? "?" : std::to_string(s[2]);
  return llvm::formatv("memref<{0}x{1}x{2}x{3}x{4}{5}>", s[0], s[1], n, s[3],
                       eltName(c.elt), layout)
      .str();
}

std::string buildModule(const GradConfig &c) {
  std::string q = memrefType({c.b, c.hq, c.nq, c.d}, c);
  std::string kv = memrefType({c.b, c.hkv, c.nk, c.d}, c);
  std::string lse = llvm::formatv("memref<{0}x{1}x{2}xf32>", c.b, c.hq,
                                  c.dynamicSeq() ? "?" : std::to_string(c.nq));
  std::string attrs;
  if (c.causal)
    attrs += "causal";
  if (c.scale != 0)
    attrs += (attrs.empty() ? "" : ", ") +
             llvm::formatv("scale = {0} : f32", c.scale).str();
  return llvm::formatv(
             "func.func @grad(%q: {0}, %k: {1}, %v: {1}, %o: {0}, %do: {0}, "
             "%lse: {2}, %dq: {0}, %dk: {1}, %dv: {1}) {{\n"
             "  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : {0}, {1}, "
             "{1}, {0}, {0}, {2}) outs(%dq, %dk, %dv : {0}, {1}, {1}) {{{3}}\n"
             "  return\n}\n",
             q, kv, lse, attrs)
      .str();
}

/// The float64 forward (O, LSE) and gradients of one problem.
struct Reference {
  std::vector<double> o, lse, dq, dk, dv;
  std::vector<bool> rowHasKey; // [B, Hq, Nq]
};

/// Sizes and indexing of one configuration.
struct Layout {
  const GradConfig &c;
  int64_t q(int64_t b, int64_t h, int64_t i) const {
    return ((b * c.hq + h) * c.nq + i) * c.d;
  }
  int64_t k(int64_t b, int64_t h, int64_t j) const {
    return ((b * c.hkv + h) * c.nk + j) * c.d;
  }
  int64_t row(int64_t b, int64_t h, int64_t i) const {
    return (b * c.hq + h) * c.nq + i;
  }
  bool sees(int64_t i, int64_t j) const {
    return !c.causal || j <= i + c.nk - c.nq; // bottom-right aligned
  }
  double scale() const {
    return c.scale != 0 ? c.scale : 1.0 / std::sqrt(double(c.d));
  }
};

double dot(const std::vector<double> &a, int64_t ia,
           const std::vector<double> &b, int64_t ib, int64_t d) {
  double s = 0;
  for (int64_t x = 0; x < d; ++x)
    s += a[ia + x] * b[ib + x];
  return s;
}

/// Forward and backward in float64 on the (rounded) inputs; dK and dV sum
/// over the query heads of each KV head's group.
Reference reference(const GradConfig &c, const std::vector<double> &q,
                    const std::vector<double> &k, const std::vector<double> &v,
                    const std::vector<double> &dO) {
  Layout at{c};
  Reference r;
  r.o.assign(c.b * c.hq * c.nq * c.d, 0.0);
  r.dq.assign(r.o.size(), 0.0);
  r.dk.assign(c.b * c.hkv * c.nk * c.d, 0.0);
  r.dv.assign(r.dk.size(), 0.0);
  r.lse.assign(c.b * c.hq * c.nq, -INFINITY);
  r.rowHasKey.assign(r.lse.size(), false);
  int64_t group = c.hq / c.hkv;
  double scale = at.scale();
  std::vector<double> p(c.nk), dS(c.nk);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h) {
      int64_t hk = h / group;
      for (int64_t i = 0; i < c.nq; ++i) {
        int64_t qi = at.q(b, h, i);
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.nk; ++j) {
          p[j] = at.sees(i, j) ? dot(q, qi, k, at.k(b, hk, j), c.d) * scale
                               : -INFINITY;
          mx = std::max(mx, p[j]);
        }
        if (mx == -INFINITY)
          continue; // no key: O = 0, LSE = -inf, no gradient
        r.rowHasKey[at.row(b, h, i)] = true;
        double sum = 0;
        for (int64_t j = 0; j < c.nk; ++j)
          sum += p[j] = p[j] == -INFINITY ? 0.0 : std::exp(p[j] - mx);
        for (int64_t j = 0; j < c.nk; ++j) {
          p[j] /= sum;
          for (int64_t x = 0; x < c.d; ++x)
            r.o[qi + x] += p[j] * v[at.k(b, hk, j) + x];
        }
        r.lse[at.row(b, h, i)] = mx + std::log(sum);
        // Delta = rowsum(dO * O); dS = P * (dO V^T - Delta).
        double delta = dot(dO, qi, r.o, qi, c.d);
        for (int64_t j = 0; j < c.nk; ++j) {
          int64_t kj = at.k(b, hk, j);
          dS[j] = p[j] * (dot(dO, qi, v, kj, c.d) - delta);
          for (int64_t x = 0; x < c.d; ++x) {
            r.dq[qi + x] += dS[j] * k[kj + x] * scale;
            r.dk[kj + x] += dS[j] * q[qi + x] * scale;
            r.dv[kj + x] += p[j] * dO[qi + x];
          }
        }
      }
    }
  return r;
}


/// ||out - ref|| / ||ref|| (||out - ref|| where ref is 0); fails on NaN.
double relativeError(const Buffer<4> &out, const std::vector<double> &ref,
                     const char *name) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double x = out.get(i);
    EXPECT_FALSE(std::isnan(x)) << name << "[" << i << "] unwritten or NaN";
    if (std::isnan(x))
      return INFINITY;
    num += (x - ref[i]) * (x - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// Bound on ||out - ref|| / ||ref||: rounding the gradients to the storage
/// type alone gives about 2^-24 (f32), 2^-12 (f16), 2^-9 (bf16); O rounded
/// to it enters Delta, and dS = P * (dP - Delta) can cancel.
double bound(Elt elt) {
  return elt == Elt::f32 ? 2e-6 : elt == Elt::f16 ? 2e-3 : 1e-2;
}

void runAndCompare(ExecutionEngine &engine, const GradConfig &c) {
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(
      llvm::formatv("Nq = {0}, Nk = {1}, seed {2}", c.nq, c.nk, seed).str());
  std::mt19937 rng(seed);
  std::array<int64_t, 4> qShape = {c.b, c.hq, c.nq, c.d},
                         kShape = {c.b, c.hkv, c.nk, c.d};
  Buffer<4> q(c.elt, qShape, c.bnhd), k(c.elt, kShape, c.bnhd),
      v(c.elt, kShape, c.bnhd), o(c.elt, qShape, c.bnhd),
      dO(c.elt, qShape, c.bnhd), dQ(c.elt, qShape, c.bnhd),
      dK(c.elt, kShape, c.bnhd), dV(c.elt, kShape, c.bnhd);
  Buffer<3> lse(Elt::f32, {c.b, c.hq, c.nq});
  std::vector<double> qv = fillNormal(q, rng), kv = fillNormal(k, rng),
                      vv = fillNormal(v, rng), dOv = fillNormal(dO, rng);
  Layout at{c};
  int64_t group = c.hq / c.hkv;
  if (c.onlyHead >= 0)
    for (int64_t b = 0; b < c.b; ++b)
      for (int64_t h = 0; h < c.hq; ++h)
        for (int64_t i = 0; h % group != c.onlyHead && i < c.nq; ++i)
          for (int64_t x = 0; x < c.d; ++x) {
            dO.set(at.q(b, h, i) + x, 0.0);
            dOv[at.q(b, h, i) + x] = 0.0;
          }
  // The forward's outputs, as the backward receives them: O rounded to its
  // type, LSE to f32.
  Reference ref = reference(c, qv, kv, vv, dOv);
  for (size_t i = 0; i < ref.o.size(); ++i)
    o.set(i, ref.o[i]);
  for (size_t i = 0; i < ref.lse.size(); ++i)
    lse.set(i, ref.lse[i]);
  for (Buffer<4> *out : {&dQ, &dK, &dV})
    out->fill(NAN); // poison

  auto *qp = &q.desc, *kp = &k.desc, *vp = &v.desc, *op = &o.desc,
       *dOp = &dO.desc, *dQp = &dQ.desc, *dKp = &dK.desc, *dVp = &dV.desc;
  auto *lp = &lse.desc;
  llvm::Error err =
      engine.invoke("grad", qp, kp, vp, op, dOp, lp, dQp, dKp, dVp);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  for (auto [name, out, expected] :
       {std::tuple<const char *, Buffer<4> *, std::vector<double> *>{"dQ", &dQ,
                                                                     &ref.dq},
        {"dK", &dK, &ref.dk},
        {"dV", &dV, &ref.dv}}) {
    double rel = relativeError(*out, *expected, name);
    EXPECT_LE(rel, bound(c.elt)) << "||" << name << " - ref|| / ||ref||";
  }
  // Rows that see no key contribute nothing: dQ is exactly 0 there.
  for (int64_t r = 0; r < c.b * c.hq * c.nq; ++r)
    for (int64_t x = 0; !ref.rowHasKey[r] && x < c.d; ++x)
      ASSERT_EQ(dQ.get(r * c.d + x), 0.0) << "dQ row " << r << " has no key";
  if (c.onlyHead < 0)
    return;
  // One head of each group has dO: the others get dQ = 0 exactly. dK and dV
  // (checked above) are then that head's contribution alone, since the
  // others' dS and P^T dO are exactly 0 in the reference: a kernel that
  // summed the wrong head of the group, or only head 0, fails there.
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; h % group != c.onlyHead && i < c.nq; ++i)
        for (int64_t x = 0; x < c.d; ++x)
          ASSERT_EQ(dQ.get(at.q(b, h, i) + x), 0.0) << "head " << h;
}

class CpuGradNumerics : public ::testing::TestWithParam<GradConfig> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

TEST_P(CpuGradNumerics, MatchesFloat64Gradients) {
  const GradConfig c = GetParam();
  auto engine = attn::test::compileOnCpu(buildModule(c), c.blockM, c.blockN);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  for (int run = 0; run < 2; ++run) // fresh inputs each run
    ASSERT_NO_FATAL_FAILURE(runAndCompare(**engine, c));
  for (auto [nq, nk] : c.moreLengths) {
    GradConfig at = c;
    at.nq = nq;
    at.nk = nk;
    ASSERT_NO_FATAL_FAILURE(runAndCompare(**engine, at));
  }
}

const GradConfig kGradConfigs[] = {
    // name, B, Hq, Hkv, Nq, Nk, D, elt, causal[, BLOCK_M, BLOCK_N, scale,
    // only head]; BLOCK_M x BLOCK_N = 8 x 4 by default. Nq and Nk end in a
    // tail block unless said otherwise.
    {"f32_tails", 1, 2, 2, 19, 13, 16, Elt::f32, false},
    {"f32_block_multiples_explicit_scale", 2, 2, 2, 16, 8, 16, Elt::f32, false,
     8, 4, 0.3},
    // Causal, bottom-right aligned: Nq < Nk (GQA), Nq = Nk, and Nq > Nk
    // where rows 0 .. Nq - Nk - 1 see no key (dQ = 0, never NaN).
    {"f32_causal_gqa_nq_lt_nk", 1, 4, 2, 11, 21, 16, Elt::f32, true},
    {"f16_causal_square_bm_lt_bn", 1, 2, 2, 19, 19, 32, Elt::f16, true, 4, 8},
    {"bf16_causal_nq_gt_nk_rows_without_keys", 1, 2, 1, 21, 9, 32, Elt::bf16,
     true},
    {"bf16_causal_bn_lt_bm", 1, 2, 2, 14, 17, 16, Elt::bf16, true, 8, 2},
    // Odd block sizes: every alignment of the diagonal to the blocks (the
    // causal split's bounds).
    {"f32_causal_bn1", 1, 2, 1, 10, 13, 8, Elt::f32, true, 4, 1},
    {"f16_causal_odd_blocks_nq_gt_nk", 1, 2, 1, 17, 12, 16, Elt::f16, true, 5,
     3},
    // GQA: only query head 2 of the group of 4 has a nonzero dO.
    {"f16_gqa_one_head_with_dO", 1, 8, 2, 11, 14, 16, Elt::f16, true, 8, 4, 0,
     2},
    {"bf16_mqa_d64", 1, 3, 1, 9, 10, 64, Elt::bf16, false},
    // FlashAttention's [B, N, H, D] memory order as strided [B, H, N, D].
    {"f16_bnhd_strided_gqa_causal", 2, 4, 2, 10, 7, 16, Elt::f16, true, 8, 4, 0,
     -1, true},
    {"f32_empty_keys", 1, 2, 1, 5, 0, 16, Elt::f32, false},
    // Dynamic Nq and Nk: one module at several lengths (Nq < Nk, Nq > Nk,
    // decode Nq = 1, block multiples, no keys).
    {"bf16_dynamic_seq_causal_gqa",
     1,
     4,
     2,
     13,
     9,
     16,
     Elt::bf16,
     true,
     8,
     4,
     0,
     -1,
     false,
     {{9, 13}, {1, 5}, {8, 8}, {3, 0}}},
};

INSTANTIATE_TEST_SUITE_P(AttentionGrad, CpuGradNumerics,
                         ::testing::ValuesIn(kGradConfigs),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

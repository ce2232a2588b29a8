//===- CpuFp8QuantizeTest.cpp - attn-quantize-fp8 through attn-to-cpu -----===//
//
// attn-quantize-fp8 on the host, every scale granularity (Q/K per tensor,
// per KV head, per block; V per KV head, per channel; with and without the
// Hadamard rotation). The test reads back what the quantize step computed
// (the FP8 Q and the three descales, copied into extra function arguments
// before the FP8 attention) and checks it against amax / 448 of each group
// computed here, and the rotation's round trip; then O and LSE of the FP8
// attention, through the CPU pipeline, against float64 attention of the
// unquantized bf16 inputs (fresh random inputs, NaN-poisoned outputs).
// The outlier test compares the granularities' RMSE on FlashAttention-3's
// outlier inputs (arXiv 2407.08608, section 4.3).
//
//===----------------------------------------------------------------------===//

#include "CpuJit.h"
#include "Fp8.h"
#include "TypedBuffer.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

using namespace mlir;
using mlir::attn::test::fromE4M3;
using mlir::attn::test::kE4M3Max;
using mlir::attn::test::toE4M3;

namespace {

using Bf16 = attn::test::Buffer<4>;
template <typename T, int N> using Raw = attn::test::RowMajorBuffer<T, N>;

/// One attention problem and the attn-to-cpu tiles it runs with.
struct Shape {
  int64_t b, hq, hkv, nq, nk, d;
  bool causal;
  int64_t tileM = 8, tileN = 4;
  bool packGqa = false;
};

/// attn-quantize-fp8's options.
struct Quant {
  const char *name;
  const char *qk = "block", *v = "head";
  bool hadamard = false;
  int64_t blockM = 4, blockN = 8;
  /// The problem (null: kShape).
  const Shape *shape = nullptr;
  /// The shape of the descales it produces.
  std::vector<int64_t> qScales(const Shape &s) const {
    if (StringRef(qk) == "block")
      return {s.b, s.hq, static_cast<int64_t>(llvm::divideCeil(s.nq, blockM))};
    return {s.b, s.hkv};
  }
  std::vector<int64_t> kScales(const Shape &s) const {
    if (StringRef(qk) == "block")
      return {s.b, s.hkv, static_cast<int64_t>(llvm::divideCeil(s.nk, blockN))};
    return {s.b, s.hkv};
  }
  std::vector<int64_t> vScales(const Shape &s) const {
    if (StringRef(v) == "channel")
      return {s.b, s.hkv, s.d};
    return {s.b, s.hkv};
  }
  std::string pipeline() const {
    return llvm::formatv("func.func(attn-quantize-fp8{{qk-granularity={0} "
                         "v-granularity={1} hadamard={2} block-m={3} "
                         "block-n={4}})",
                         qk, v, hadamard, blockM, blockN)
        .str();
  }
};

void PrintTo(const Quant &q, std::ostream *os) { *os << q.name; }

std::string memref(ArrayRef<int64_t> shape, StringRef elt) {
  std::string s = "memref<";
  for (int64_t n : shape)
    s += std::to_string(n) + "x";
  return s + elt.str() + ">";
}

/// @attention(q, k, v, o, lse, q8, v8, qd, kd, vd): the bf16 attention,
/// and the buffers the quantized Q and V and the descales are copied to.
std::string buildModule(const Shape &s, const Quant &quant) {
  std::string q = memref({s.b, s.hq, s.nq, s.d}, "bf16");
  std::string kv = memref({s.b, s.hkv, s.nk, s.d}, "bf16");
  std::string lse = memref({s.b, s.hq, s.nq}, "f32");
  return llvm::formatv(
             "func.func @attention(%q: {0}, %k: {1}, %v: {1}, %o: {0}, "
             "%lse: {2}, %q8: {3}, %v8: {8}, %qd: {4}, %kd: {5}, %vd: {6}) "
             "{{\n"
             "  attn.attention ins(%q, %k, %v : {0}, {1}, {1}) outs(%o : {0})"
             " lse(%lse : {2}) {7}\n  return\n}\n",
             q, kv, lse, memref({s.b, s.hq, s.nq, s.d}, "f8E4M3FN"),
             memref(quant.qScales(s), "f32"), memref(quant.kScales(s), "f32"),
             memref(quant.vScales(s), "f32"), s.causal ? "{causal}" : "",
             memref({s.b, s.hkv, s.nk, s.d}, "f8E4M3FN"))
      .str();
}

/// Copies `from` into `to` (same static shape) with scalar loops.
void copyInto(OpBuilder &b, Location loc, Value from, Value to) {
  auto type = cast<MemRefType>(from.getType());
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t n : type.getShape()) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, n));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location l, ValueRange idx) {
                       Value x = memref::LoadOp::create(nb, l, from, idx);
                       memref::StoreOp::create(nb, l, x, to, idx);
                     });
}

/// After attn-quantize-fp8: copies the FP8 attention's Q, V (logical
/// [B, H, N, D] order) and descales into the function's last five
/// arguments, before the attention.
void exposeQuantized(ModuleOp module) {
  module.walk([](attn::AttentionOp op) {
    auto fn = op->getParentOfType<func::FuncOp>();
    ValueRange out = fn.getArguments().take_back(5);
    OpBuilder b(op);
    Value from[] = {op.getQ(), op.getV(), op.getQDescale(), op.getKDescale(),
                    op.getVDescale()};
    for (auto [src, dst] : llvm::zip_equal(from, out))
      copyInto(b, op.getLoc(), src, dst);
  });
}

/// After attn-quantize-fp8: the FP8 attention reads a row-major copy of
/// its V (stored V^T by the pass) instead.
void copyVRowMajor(ModuleOp module) {
  module.walk([](attn::AttentionOp op) {
    OpBuilder b(op);
    auto type = cast<MemRefType>(op.getV().getType());
    Value rowMajor = memref::AllocOp::create(
        b, op.getLoc(),
        MemRefType::get(type.getShape(), type.getElementType()));
    copyInto(b, op.getLoc(), op.getV(), rowMajor);
    op.getVMutable().assign(rowMajor);
  });
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
compile(const Shape &s, const Quant &quant,
        attn::test::TargetCpu cpu = attn::test::TargetCpu::Baseline,
        bool rowMajorV = false) {
  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  MLIRContext ctx(registry);
  std::string source = buildModule(s, quant);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  if (!module)
    return llvm::createStringError("cannot parse:\n" + source);
  PassManager quantize(&ctx);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (failed(parsePassPipeline(quant.pipeline(), quantize, os)) ||
      failed(quantize.run(*module)))
    return llvm::createStringError(quant.pipeline() + " failed: " + err);
  exposeQuantized(*module);
  if (rowMajorV)
    copyVRowMajor(*module);
  PassManager lower(&ctx);
  attn::CPUPipelineOptions options;
  options.blockM = s.tileM;
  options.blockN = s.tileN;
  options.packGqa = s.packGqa;
  attn::buildCPUPipeline(lower, options);
  if (failed(lower.run(*module)))
    return llvm::createStringError("attn-to-cpu failed");
  return attn::test::createEngine(*module, cpu);
}

/// A descale buffer of rank 2 or 3, NaN-poisoned.
struct Scales {
  std::vector<int64_t> shape;
  Raw<float, 2> r2;
  Raw<float, 3> r3;
  explicit Scales(std::vector<int64_t> s)
      : shape(s), r2({s[0], s[1]}, NAN),
        r3({s[0], s[1], s.size() == 3 ? s[2] : 1}, NAN) {}
  void *desc() {
    return shape.size() == 2 ? static_cast<void *>(&r2.desc)
                             : static_cast<void *>(&r3.desc);
  }
  float at(int64_t i) const {
    return shape.size() == 2 ? r2.data[i] : r3.data[i];
  }
  int64_t size() const {
    return shape.size() == 2 ? int64_t(r2.data.size())
                             : int64_t(r3.data.size());
  }
};

/// What one call returns: O (bf16), LSE, and what the quantize step made.
struct Result {
  Bf16 o;
  Raw<float, 3> lse;
  Raw<uint8_t, 4> q8, v8;
  Scales qd, kd, vd;
  Result(const Shape &s, const Quant &quant)
      : o(attn::test::Elt::bf16, {s.b, s.hq, s.nq, s.d}),
        lse({s.b, s.hq, s.nq}, NAN), q8({s.b, s.hq, s.nq, s.d}, 0x7f),
        v8({s.b, s.hkv, s.nk, s.d}, 0x7f), qd(quant.qScales(s)),
        kd(quant.kScales(s)), vd(quant.vScales(s)) {
    o.fill(NAN);
  }
};

/// bf16 Q, K, V.
struct Inputs {
  Bf16 q, k, v;
  explicit Inputs(const Shape &s)
      : q(attn::test::Elt::bf16, {s.b, s.hq, s.nq, s.d}),
        k(attn::test::Elt::bf16, {s.b, s.hkv, s.nk, s.d}),
        v(attn::test::Elt::bf16, {s.b, s.hkv, s.nk, s.d}) {}
};

std::unique_ptr<Result> run(ExecutionEngine &engine, const Shape &s,
                            const Quant &quant, Inputs &in) {
  auto r = std::make_unique<Result>(s, quant);
  void *args[] = {&in.q.desc,   &in.k.desc,   &in.v.desc,   &r->o.desc,
                  &r->lse.desc, &r->q8.desc,  &r->v8.desc,  r->qd.desc(),
                  r->kd.desc(), r->vd.desc()};
  llvm::Error err =
      engine.invoke("attention", args[0], args[1], args[2], args[3], args[4],
                    args[5], args[6], args[7], args[8], args[9]);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  return r;
}

/// Rows of normal values, each row with its own magnitude (so that groups
/// get different scales): in [1/4, 1] for Q and K (scores of a few units),
/// [1/8, 8] for V; Q gets one planted value of 16.
void fillRandom(const Shape &s, Inputs &in, std::mt19937 &rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  for (Bf16 *t : {&in.q, &in.k, &in.v}) {
    std::uniform_real_distribution<double> logMag(t == &in.v ? -3.0 : -2.0,
                                                  t == &in.v ? 3.0 : 0.0);
    for (int64_t row = 0; row < t->numElements / s.d; ++row) {
      double m = std::exp2(logMag(rng));
      for (int64_t j = 0; j < s.d; ++j)
        t->set(row * s.d + j, m * normal(rng));
    }
  }
  // Q[B-1, Hq-1, Nq/2, 1] = 16: its group's amax (exact in bf16).
  in.q.set((((s.b - 1) * s.hq + s.hq - 1) * s.nq + s.nq / 2) * s.d + 1, 16.0);
}

/// Outlier inputs: normal, and a `rate` (0.1%) of the Q and K entries with an
/// extra N(0, 10^2) term (FlashAttention-3's test, section 4.3), or multiplied
/// by 10-100 (`multiply`).
void fillOutliers(const Shape &s, Inputs &in, std::mt19937 &rng, bool multiply,
                  double rate = 1e-3) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (Bf16 *t : {&in.q, &in.k, &in.v})
    for (int64_t i = 0; i < t->numElements; ++i) {
      double x = normal(rng);
      if (t != &in.v && uniform(rng) < rate)
        x = multiply ? x * (10 + 90 * uniform(rng)) : x + 10 * normal(rng);
      t->set(i, x);
    }
}

/// The random-sign Hadamard rotation of attn-quantize-fp8, R = H S /
/// sqrt(D) (forward), or R^T = S H / sqrt(D) (`inverse`), of one row.
std::vector<double> rotate(const std::vector<double> &x, bool inverse) {
  int64_t d = x.size();
  std::mt19937 rng(0x5eed); // the pass's seed
  std::vector<double> sign(d), y(d, 0.0);
  for (double &v : sign)
    v = (rng() & 1) ? -1.0 : 1.0;
  for (int64_t j = 0; j < d; ++j)
    for (int64_t i = 0; i < d; ++i) {
      double h = (__builtin_popcountll(i & j) & 1) ? -1.0 : 1.0;
      y[j] += inverse ? sign[j] * h * x[i] : x[i] * sign[i] * h;
    }
  for (double &v : y)
    v /= std::sqrt(double(d));
  return y;
}

/// The values of a [B, H, N, D] bf16 buffer, rows rotated if `rot`.
std::vector<double> values(const Bf16 &t, bool rot) {
  std::vector<double> x(t.numElements);
  for (int64_t i = 0; i < t.numElements; ++i)
    x[i] = t.get(i);
  if (!rot)
    return x;
  int64_t d = t.shape[3];
  for (int64_t r = 0; r < t.numElements / d; ++r) {
    std::vector<double> row(x.begin() + r * d, x.begin() + (r + 1) * d);
    std::vector<double> y = rotate(row, /*inverse=*/false);
    std::copy(y.begin(), y.end(), x.begin() + r * d);
  }
  return x;
}

/// The scale group (row-major index into the descales) of element (b, h,
/// n, c) of a [B, H, N, D] operand with `hkv` KV heads.
int64_t groupOf(const std::vector<int64_t> &scales, int64_t b, int64_t h,
                int64_t n, int64_t c, int64_t hq, int64_t hkv, int64_t block,
                bool perChannel) {
  if (scales.size() == 2)
    return b * scales[1] + h / (hq / hkv);
  int64_t last = perChannel ? c : n / block;
  return (b * scales[1] + h) * scales[2] + last;
}

/// amax / 448 of each group (1 for an all-zero group), in f32 as the pass
/// computes it; per-tensor scales fill every entry.
std::vector<float> expectedScales(const std::vector<double> &x,
                                  const std::vector<int64_t> &shape4,
                                  const std::vector<int64_t> &scales,
                                  int64_t hkv, int64_t block, bool perChannel,
                                  bool perTensor) {
  int64_t n = 1;
  for (int64_t s : scales)
    n *= s;
  std::vector<float> amax(n, 0.0f);
  int64_t hq = shape4[1], len = shape4[2], d = shape4[3];
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = i % d, row = i / d, r = row % len, h = (row / len) % hq,
            b = row / len / hq;
    int64_t g =
        perTensor ? 0 : groupOf(scales, b, h, r, c, hq, hkv, block, perChannel);
    amax[g] = std::max(amax[g], std::fabs(float(x[i])));
  }
  std::vector<float> out(n);
  for (int64_t g = 0; g < n; ++g) {
    float a = perTensor ? amax[0] : amax[g];
    out[g] = a > 0 ? a / kE4M3Max : 1.0f;
  }
  return out;
}

/// float64 attention (bottom-right causal) of [B, H, N, D] row-major
/// values; O and LSE.
struct Reference {
  std::vector<double> o, lse;
};

Reference reference(const Shape &s, const std::vector<double> &q,
                    const std::vector<double> &k,
                    const std::vector<double> &v) {
  Reference r{std::vector<double>(s.b * s.hq * s.nq * s.d, 0.0),
              std::vector<double>(s.b * s.hq * s.nq, -INFINITY)};
  double scale = 1.0 / std::sqrt(double(s.d));
  std::vector<double> p(s.nk);
  for (int64_t b = 0; b < s.b; ++b)
    for (int64_t h = 0; h < s.hq; ++h) {
      int64_t kvBase = (b * s.hkv + h / (s.hq / s.hkv)) * s.nk * s.d;
      for (int64_t i = 0; i < s.nq; ++i) {
        int64_t row = (b * s.hq + h) * s.nq + i;
        double mx = -INFINITY;
        for (int64_t j = 0; j < s.nk; ++j) {
          p[j] = -INFINITY;
          if (s.causal && j > i + s.nk - s.nq)
            continue;
          double dot = 0;
          for (int64_t c = 0; c < s.d; ++c)
            dot += q[row * s.d + c] * k[kvBase + j * s.d + c];
          p[j] = dot * scale;
          mx = std::max(mx, p[j]);
        }
        if (mx == -INFINITY)
          continue;
        double sum = 0;
        for (int64_t j = 0; j < s.nk; ++j) {
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        for (int64_t j = 0; j < s.nk; ++j)
          for (int64_t c = 0; c < s.d; ++c)
            r.o[row * s.d + c] += p[j] / sum * v[kvBase + j * s.d + c];
        r.lse[row] = mx + std::log(sum);
      }
    }
  return r;
}

/// RMSE and relative Frobenius error of O; fails on NaN or unwritten O.
std::pair<double, double> errors(const Bf16 &o, const Reference &ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < o.numElements; ++i) {
    double x = o.get(i);
    EXPECT_TRUE(std::isfinite(x)) << "O[" << i << "] = " << x;
    if (!std::isfinite(x))
      return {INFINITY, INFINITY};
    num += (x - ref.o[i]) * (x - ref.o[i]);
    den += ref.o[i] * ref.o[i];
  }
  return {std::sqrt(num / o.numElements), std::sqrt(num / den)};
}

class CpuFp8Quantize : public ::testing::TestWithParam<Quant> {
protected:
  static void SetUpTestSuite() { attn::registerAttnPassesAndPipelines(); }
};

// GQA with tails: Nq = 13 (Q blocks of 4: the last has 1 row), Nk = 19 (K
// blocks of 8: the last has 3), tiles 8 x 4 (not the scale blocks).
const Shape kShape{2, 4, 2, 13, 19, 32, true};
/// Rotated blocks of 256 rows at D = 64 take the shared-memory transform
/// in two batches of 128 rows; Nq = 300 leaves a block of 44 rows whose
/// second batch is empty.
const Shape kLongShape{1, 2, 2, 300, 40, 64, false, 8, 8};
/// Blocks of 32 rows at D = 64 are 256 chunks, one per thread: whole
/// blocks take the chunk loop of static trip count, the tails (Nq = 80,
/// Nk = 72) the dynamic one.
const Shape kWholeShape{1, 4, 2, 80, 72, 64, true, 8, 8};
/// V^T is copied by CTAs of 128 keys: Nk = 300 gives two whole CTAs (their
/// rows loaded straight-line, every load first) and one of 44 keys (the
/// guarded loop, zero past Nk). Nq = 240: with 24 rows, O's relative
/// error over so few rows reached 0.12 in 1 of 50 draws (0.0635 at most in
/// 240 draws of 240 rows).
const Shape kKeyBlocksShape{1, 2, 2, 240, 300, 64, false, 8, 8};

/// A scale block far longer than any N here (2^40 rows or keys).
constexpr int64_t kPastN = int64_t{1} << 40;

/// Descales are amax / 448 of exactly their group (the planted 16 gives
/// its group 16 / 448), Q8 is Q / descale rounded to e4m3 (or, rotated,
/// rotates back to Q), and the attention of the quantized inputs is that
/// of the bf16 inputs within FP8 tolerance.
TEST_P(CpuFp8Quantize, ScalesRoundTripAndAttention) {
  const Quant quant = GetParam();
  Shape s = quant.shape ? *quant.shape : kShape;
  s.packGqa = quant.hadamard; // one packed configuration per rotation
  auto engine = compile(s, quant);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
  std::mt19937 rng(seed);
  Inputs in(s);
  fillRandom(s, in, rng);
  std::unique_ptr<Result> r = run(**engine, s, quant, in);

  bool tensor = StringRef(quant.qk) == "tensor";
  bool channel = StringRef(quant.v) == "channel";
  std::vector<double> q = values(in.q, quant.hadamard),
                      k = values(in.k, quant.hadamard), v = values(in.v, false);
  std::vector<float> qd = expectedScales(q, {s.b, s.hq, s.nq, s.d}, r->qd.shape,
                                         s.hkv, quant.blockM, false, tensor);
  std::vector<float> kd =
      expectedScales(k, {s.b, s.hkv, s.nk, s.d}, r->kd.shape, s.hkv,
                     quant.blockN, false, tensor);
  std::vector<float> vd = expectedScales(v, {s.b, s.hkv, s.nk, s.d},
                                         r->vd.shape, s.hkv, 1, channel, false);
  // Rotated values are summed in another order here: 1e-5 relative.
  double tol = quant.hadamard ? 1e-5 : 0.0;
  for (auto [name, got, want] :
       {std::tuple<const char *, const Scales *, std::vector<float> *>{
            "q_descale", &r->qd, &qd},
        {"k_descale", &r->kd, &kd},
        {"v_descale", &r->vd, &vd}}) {
    ASSERT_EQ(got->size(), int64_t(want->size())) << name;
    for (int64_t i = 0; i < got->size(); ++i)
      ASSERT_NEAR(got->at(i), (*want)[i], tol * (*want)[i])
          << name << "[" << i << "]";
  }
  if (!quant.hadamard && !tensor) {
    // The group of the planted 16 (the last Q group holding row Nq / 2).
    int64_t g = groupOf(r->qd.shape, s.b - 1, s.hq - 1, s.nq / 2, 1, s.hq,
                        s.hkv, quant.blockM, false);
    EXPECT_EQ(r->qd.at(g), 16.0f / kE4M3Max);
  }

  // Q8: exactly the e4m3 rounding of Q / descale; rotated, R^T (Q8 *
  // descale) is Q within e4m3's rounding (~2^-5 relative, rms).
  double num = 0, den = 0;
  for (int64_t row = 0; row < s.b * s.hq * s.nq; ++row) {
    int64_t n = row % s.nq, h = (row / s.nq) % s.hq, b = row / s.nq / s.hq;
    int64_t g = tensor ? 0
                       : groupOf(r->qd.shape, b, h, n, 0, s.hq, s.hkv,
                                 quant.blockM, false);
    float scale = r->qd.at(g);
    std::vector<double> deq(s.d);
    for (int64_t c = 0; c < s.d; ++c) {
      int64_t i = row * s.d + c;
      if (!quant.hadamard) {
        ASSERT_EQ(r->q8.data[i], toE4M3(float(q[i]) / scale))
            << "Q8[" << i << "]";
      }
      deq[c] = fromE4M3(r->q8.data[i]) * scale;
    }
    std::vector<double> back =
        quant.hadamard ? rotate(deq, /*inverse=*/true) : deq;
    for (int64_t c = 0; c < s.d; ++c) {
      double x = in.q.get(row * s.d + c);
      num += (back[c] - x) * (back[c] - x);
      den += x * x;
    }
  }
  EXPECT_LE(std::sqrt(num / den), 0.05) << "round trip of Q";
  // V8: exactly the e4m3 rounding of V / descale, per V granularity.
  for (int64_t i = 0; i < int64_t(v.size()); ++i) {
    int64_t c = i % s.d, row = i / s.d, n = row % s.nk,
            h = (row / s.nk) % s.hkv, b = row / s.nk / s.hkv;
    float scale =
        r->vd.at(groupOf(r->vd.shape, b, h, n, c, s.hkv, s.hkv, 1, channel));
    ASSERT_EQ(r->v8.data[i], toE4M3(float(v[i]) / scale)) << "V8[" << i << "]";
  }

  Reference ref = reference(s, values(in.q, false), values(in.k, false), v);
  auto [rmse, rel] = errors(r->o, ref);
  // e4m3's 3 mantissa bits: ~0.04 measured on these inputs.
  EXPECT_LE(rel, 0.08) << "||O - ref|| / ||ref||, RMSE " << rmse;
  for (int64_t i = 0; i < int64_t(ref.lse.size()); ++i) {
    float got = r->lse.data[i];
    if (std::isinf(ref.lse[i]))
      EXPECT_TRUE(std::isinf(got) && got < 0) << "LSE[" << i << "]";
    else
      EXPECT_NEAR(got, ref.lse[i], 0.1 * std::max(1.0, std::fabs(ref.lse[i])))
          << "LSE[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fp8, CpuFp8Quantize,
    ::testing::Values(Quant{"tensor", "tensor"}, Quant{"head", "head"},
                      Quant{"block"},
                      Quant{"block_channel", "block", "channel"},
                      Quant{"head_channel", "head", "channel"},
                      Quant{"tensor_hadamard", "tensor", "head", true},
                      Quant{"block_hadamard_channel", "block", "channel",
                            true},
                      Quant{"block_hadamard_batches", "block", "head", true,
                            256, 32, &kLongShape},
                      Quant{"block_whole", "block", "head", false, 32, 32,
                            &kWholeShape},
                      Quant{"vt_whole_head", "block", "head", false, 8, 32,
                            &kKeyBlocksShape},
                      Quant{"vt_whole_channel", "head", "channel", false, 4,
                            8, &kKeyBlocksShape},
                      // Scale blocks longer than N: one block per head.
                      Quant{"blocks_past_n_hadamard", "block", "head", true,
                            kPastN, kPastN},
                      Quant{"blocks_past_n", "block", "head", false, kPastN,
                            kPastN, &kWholeShape}),
    [](const auto &info) { return std::string(info.param.name); });

/// `x` rounded to bf16 (nearest even).
float roundToBf16(double x) {
  llvm::APFloat f(x);
  bool lost;
  f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return static_cast<float>(f.convertToDouble());
}

/// A random bf16 of magnitude at most `amax` (> 0): random sign and
/// mantissa, exponent up to 24 binades below amax's (some subnormal).
float randomBelow(float amax, std::mt19937 &rng) {
  int exp;
  std::frexp(amax, &exp);
  std::uniform_int_distribution<int> binade(exp - 24, exp);
  std::uniform_real_distribution<float> mantissa(0.5f, 1.0f);
  float x = roundToBf16(std::ldexp(mantissa(rng), binade(rng)));
  x = std::min(x, amax);
  return rng() & 1 ? -x : x;
}

/// The quantize step divides by a block's descale with a multiply and two
/// fmas (Markstein's correction) where the descale is at least 2^-88, by
/// division otherwise: both must round exactly as x / descale. Blocks of Q
/// (per block) and heads of V (V^T path, per head) with amax from bf16's
/// subnormals to its largest finite value (both sides of the branch and
/// subnormal x beside a small normal descale included), and values of 24
/// binades below each.
TEST(CpuFp8QuantizeDivision, RoundsAsDivisionForEveryScale) {
  attn::registerAttnPassesAndPipelines();
  Shape s{1, 8, 8, 64, 64, 64, false, 8, 8};
  Quant quant{"block", "block", "head", false, 4, 8};
  auto engine = compile(s, quant);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
  std::mt19937 rng(seed);
  // log2(amax) per group: the extremes, then uniform over bf16's range.
  std::vector<double> logAmax = {-133.0, -130.0, -127.0, -118.0, -110.0,
                                 -100.0, -80.0, -79.0, -78.0, 127.9};
  std::uniform_real_distribution<double> anyBinade(-133.0, 127.9);
  auto nextAmax = [&](size_t g) {
    double l = g < logAmax.size() ? logAmax[g] : anyBinade(rng);
    return roundToBf16(float(std::exp2(l)));
  };
  Inputs in(s);
  int64_t rowsQ = s.b * s.hq * s.nq, blocks = rowsQ / quant.blockM;
  for (int64_t g = 0; g < blocks; ++g) {
    float amax = nextAmax(g);
    for (int64_t i = 0; i < quant.blockM * s.d; ++i)
      in.q.set(g * quant.blockM * s.d + i, randomBelow(amax, rng));
    in.q.set(g * quant.blockM * s.d, amax);
  }
  int64_t perHead = s.nk * s.d;
  for (int64_t h = 0; h < s.b * s.hkv; ++h) {
    float amax = nextAmax(h);
    for (int64_t i = 0; i < perHead; ++i) {
      in.v.set(h * perHead + i, randomBelow(amax, rng));
      in.k.set(h * perHead + i, randomBelow(1.0f, rng));
    }
    in.v.set(h * perHead + perHead / 2, -amax);
  }
  std::unique_ptr<Result> r = run(**engine, s, quant, in);
  for (int64_t i = 0; i < in.q.numElements; ++i) {
    float scale = r->qd.at(i / s.d / quant.blockM);
    ASSERT_EQ(r->q8.data[i], toE4M3(float(in.q.get(i)) / scale))
        << "Q8[" << i << "], descale " << scale;
  }
  for (int64_t i = 0; i < in.v.numElements; ++i) {
    float scale = r->vd.at(i / perHead);
    ASSERT_EQ(r->v8.data[i], toE4M3(float(in.v.get(i)) / scale))
        << "V8[" << i << "], descale " << scale;
  }
}

/// attn-quantize-fp8 stores FP8 V as V^T (unit stride along Nk, what the
/// tensor cores read): the attention over that view gives bit for bit the
/// O and LSE of the same FP8 V copied row-major, per V granularity.
TEST(CpuFp8QuantizeVt, SameAttentionAsRowMajorV) {
  attn::registerAttnPassesAndPipelines();
  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  MLIRContext ctx(registry);
  for (Quant quant : {Quant{"head", "head"}, Quant{"channel", "tensor",
                                                    "channel"}}) {
    SCOPED_TRACE(quant.name);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(buildModule(kShape, quant), &ctx);
    ASSERT_TRUE(module);
    PassManager pm(&ctx);
    ASSERT_TRUE(succeeded(parsePassPipeline(quant.pipeline(), pm)));
    ASSERT_TRUE(succeeded(pm.run(*module)));
    module->walk([](attn::AttentionOp op) {
      auto [strides, offset] =
          cast<MemRefType>(op.getV().getType()).getStridesAndOffset();
      EXPECT_EQ(strides[2], 1) << "V is not stored as V^T";
    });
    auto vt = compile(kShape, quant);
    ASSERT_TRUE(bool(vt)) << llvm::toString(vt.takeError());
    auto rowMajor = compile(kShape, quant, attn::test::TargetCpu::Baseline,
                            /*rowMajorV=*/true);
    ASSERT_TRUE(bool(rowMajor)) << llvm::toString(rowMajor.takeError());
    unsigned seed = std::random_device{}();
    SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
    std::mt19937 rng(seed);
    Inputs in(kShape);
    fillRandom(kShape, in, rng);
    auto a = run(**vt, kShape, quant, in);
    auto b = run(**rowMajor, kShape, quant, in);
    for (int64_t i = 0; i < a->o.numElements; ++i)
      ASSERT_EQ(a->o.get(i), b->o.get(i)) << "O[" << i << "]";
    for (size_t i = 0; i < a->lse.data.size(); ++i)
      ASSERT_EQ(a->lse.data[i], b->lse.data[i]) << "LSE[" << i << "]";
  }
}

/// Operations in `quant`'s rewrite of the attention of shape `s`.
int64_t quantizedOps(MLIRContext &ctx, const Shape &s, const Quant &quant) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(buildModule(s, quant), &ctx);
  PassManager pm(&ctx);
  if (!module || failed(parsePassPipeline(quant.pipeline(), pm)) ||
      failed(pm.run(*module)))
    return -1;
  int64_t ops = 0;
  module->walk([&](Operation *) { ++ops; });
  return ops;
}

/// The quantize step's code is unrolled per block (the rotation's batches,
/// a whole block's straight-line chunks): a scale block longer than N is
/// one block of N rows and must cost no more IR than a block of exactly N
/// (a block-m of 10^6 with the rotation once built 84 MB of IR for N = 8).
TEST(CpuFp8QuantizeIr, BlocksLongerThanNCostTheIrOfN) {
  attn::registerAttnPassesAndPipelines();
  DialectRegistry registry;
  attn::registerAttnDialects(registry);
  MLIRContext ctx(registry);
  for (const Shape *s : {&kShape, &kLongShape, &kWholeShape})
    for (bool hadamard : {false, true}) {
      Quant exact{"n", "block", "head", hadamard, s->nq, s->nk};
      Quant past{"past_n", "block", "head", hadamard, kPastN, kPastN};
      int64_t want = quantizedOps(ctx, *s, exact);
      ASSERT_GT(want, 0) << exact.pipeline();
      EXPECT_EQ(quantizedOps(ctx, *s, past), want)
          << past.pipeline() << " on Nq " << s->nq << ", Nk " << s->nk;
    }
}

/// Outliers (0.1% of Q and K entries): every configuration stays finite.
/// With FlashAttention-3's outliers (an extra N(0, 10^2) term) block scales
/// with the rotation beat per-tensor scales without it, 1.2-1.6x in RMSE
/// here in most draws, 0.97x in one (the test pools four draws and asks
/// for 1.1x). With the issue's outliers (entries
/// multiplied by 10-100) they give 0.7-1.2x at this size (1.3x at N =
/// 2048): e4m3 rounds relatively, and the rotation spreads an outlier's
/// rounding error over every column rather than removing it. Figures at
/// the issue's shape: docs/validation.md.
TEST(CpuFp8QuantizeOutliers, BlockHadamardAgainstPerTensor) {
  attn::registerAttnPassesAndPipelines();
  // D = 128: the rotation spreads an outlier over D columns; 2048 rows.
  Shape s{2, 2, 2, 256, 256, 128, false, 8, 8};
  Quant perTensor{"tensor", "tensor", "head", false, 64, 64};
  Quant blockHadamard{"block_hadamard", "block", "head", true, 64, 64};
  auto tensorEngine = compile(s, perTensor);
  ASSERT_TRUE(bool(tensorEngine)) << llvm::toString(tensorEngine.takeError());
  auto blockEngine = compile(s, blockHadamard);
  ASSERT_TRUE(bool(blockEngine)) << llvm::toString(blockEngine.takeError());
  // About 130 outliers per draw: one draw's ratio ranged 0.97-1.6x (a
  // 0.97 failed CI once), so the FA3 check pools the squared errors of
  // kDraws draws.
  constexpr int kDraws = 4;
  for (bool multiply : {false, true}) {
    double tensorSq = 0, blockSq = 0;
    for (int draw = 0; draw < (multiply ? 1 : kDraws); ++draw) {
      unsigned seed = std::random_device{}();
      SCOPED_TRACE(llvm::formatv("seed {0}, outliers x10-100: {1}", seed,
                                 multiply)
                       .str());
      std::mt19937 rng(seed);
      Inputs in(s);
      fillOutliers(s, in, rng, multiply);
      Reference ref = reference(s, values(in.q, false), values(in.k, false),
                                values(in.v, false));
      auto tensor = run(**tensorEngine, s, perTensor, in);
      auto block = run(**blockEngine, s, blockHadamard, in);
      tensorSq += std::pow(errors(tensor->o, ref).first, 2);
      blockSq += std::pow(errors(block->o, ref).first, 2);
    }
    double tensorRmse = std::sqrt(tensorSq), blockRmse = std::sqrt(blockSq);
    RecordProperty(multiply ? "rmse_ratio_multiply" : "rmse_ratio_fa3",
                   std::to_string(tensorRmse / blockRmse));
    if (!multiply) {
      EXPECT_LT(1.1 * blockRmse, tensorRmse)
          << "per-tensor " << tensorRmse << ", block + Hadamard " << blockRmse
          << " (root of the summed squared RMSE of " << kDraws << " draws)";
    }
  }
}

/// The issue's accuracy table (not in CI: minutes of host time; run with
/// --gtest_also_run_disabled_tests --gtest_filter='*IssueShape*'): RMSE
/// and relative Frobenius error of O per configuration, normal inputs and
/// both outlier kinds, printed as markdown rows. The issue's shape is B2
/// H16 N2048 D128; ATTN_ISSUE_HEADS (default 16) runs fewer heads.
TEST(CpuFp8QuantizeOutliers, DISABLED_IssueShape) {
  attn::registerAttnPassesAndPipelines();
  const char *heads = std::getenv("ATTN_ISSUE_HEADS");
  int64_t h = heads ? std::atoi(heads) : 16;
  Shape s{2, h, h, 2048, 2048, 128, false, 32, 16};
  // Scale blocks of 128 rows / keys: the FP8 tensor-core tile at D = 128
  // (attn-quantize-fp8's block-m=0 block-n=0).
  const Quant quants[] = {
      {"tensor", "tensor", "head", false, 128, 128},
      {"head", "head", "head", false, 128, 128},
      {"block", "block", "head", false, 128, 128},
      {"tensor + Hadamard", "tensor", "head", true, 128, 128},
      {"block + Hadamard", "block", "head", true, 128, 128},
      {"block + Hadamard, V per channel", "block", "channel", true, 128, 128}};
  std::vector<std::unique_ptr<ExecutionEngine>> engines;
  for (const Quant &q : quants) {
    auto engine = compile(s, q, attn::test::TargetCpu::Host);
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    engines.push_back(std::move(*engine));
  }
  const char *kinds[] = {"normal", "outliers x10-100 (issue)",
                         "outliers + N(0, 10^2) (FA3)"};
  std::mt19937 rng(2026);
  for (int kind = 0; kind < 3; ++kind) {
    Inputs in(s);
    fillOutliers(s, in, rng, /*multiply=*/kind == 1, /*rate=*/kind ? 1e-3 : 0);
    Reference ref = reference(s, values(in.q, false), values(in.k, false),
                              values(in.v, false));
    for (size_t c = 0; c < std::size(quants); ++c) {
      auto r = run(*engines[c], s, quants[c], in);
      auto [rmse, rel] = errors(r->o, ref);
      std::printf("| %s | %s | %.3e | %.3e |\n", kinds[kind], quants[c].name,
                  rmse, rel);
      std::fflush(stdout);
    }
  }
}

} // namespace

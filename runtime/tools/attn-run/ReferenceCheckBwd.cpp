//===- ReferenceCheckBwd.cpp - check the backward reference kernels -------===//
//
// attn-reference-check's backward part: reference_bwd_dq_* and
// reference_bwd_dkdv_* (Reference.cu) on small f16 and bf16 shapes (GQA,
// causal with Nq < Nk and Nq > Nk, rows that see no key, D 64, 96, 128)
// against an fp64 backward on the host. The inputs are those attn-run gives
// a backward kernel: normal Q, K, V, dO, and O and LSE from the forward
// reference (O rounded to the input dtype). Two fp64 references:
//   - the same formula on the same inputs (P from the given LSE, Delta =
//     rowsum(dO * O)): the GPU reference must agree to fp32 rounding;
//   - the gradient of softmax written out (P from the row's own max and
//     sum, Delta = rowsum(P * dP)), independent of the given O and LSE: it
//     differs only by O's rounding to 16 bits, so this checks that the
//     formula is the gradient.
// dQ of a row that sees no key must be exactly 0 and nothing may be
// non-finite (the gradients start as NaN).
//
//===----------------------------------------------------------------------===//

#include "BackwardHost.h"
#include "ReferenceCheck.h"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace attn::run {
namespace {

struct BwdCase {
  bool bf16;
  int64_t batch, headsQ, headsKV, seqQ, seqK, headDim;
  int causal;
};

/// ||got - want||_F / ||want||_F (0 when both are 0; inf if got has a
/// non-finite value).
double relError(const std::vector<float> &got,
                const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den == 0 ? (num == 0 ? 0 : INFINITY) : std::sqrt(num / den);
}

int64_t countNonFinite(const std::vector<float> &x) {
  int64_t n = 0;
  for (float v : x)
    n += !std::isfinite(v);
  return n;
}

struct BwdKernels {
  CUfunction fill, forward, narrow, dq, dkdv;
};

template <typename T>
bool download(std::vector<T> &host, CUdeviceptr from, int64_t n) {
  host.resize(n);
  return n == 0 ||
         ok(cuMemcpyDtoH(host.data(), from, n * sizeof(T)), "download");
}

/// Runs one case and prints its row; returns 1 if it failed, 0 if it
/// passed, -1 on a CUDA error.
int runBwdCase(const BwdKernels &kern, const BwdCase &c) {
  int64_t b = c.batch, hq = c.headsQ, hkv = c.headsKV, nq = c.seqQ, nk = c.seqK,
          d = c.headDim;
  int64_t nQ = b * hq * nq * d, nKV = b * hkv * nk * d, rows = b * hq * nq;
  float scale = float(1 / std::sqrt(double(d)));
  int causal = c.causal;
  Buffer q(nQ * 2), k(nKV * 2), v(nKV * 2), dout(nQ * 2), o32(nQ * 4),
      o(nQ * 2), lse(rows * 4), dq(nQ * 4), dk(nKV * 4), dv(nKV * 4);
  // Q, K, V, dO normal; O, LSE from the forward reference, O narrowed.
  CUdeviceptr inputs[] = {q.ptr, k.ptr, v.ptr, dout.ptr};
  int64_t counts[] = {nQ, nKV, nKV, nQ};
  for (int x = 0; x < 4; ++x) {
    uint64_t seed = 11 + x;
    void *p[] = {&inputs[x], &counts[x], &seed};
    if (!ok(cuLaunchKernel(kern.fill, 64, 1, 1, 256, 1, 1, 0, nullptr, p,
                           nullptr),
            "fill_normal"))
      return -1;
  }
  void *fp[] = {&q.ptr, &k.ptr, &v.ptr, &o32.ptr, &lse.ptr, &b,    &hq,
                &hkv,   &nq,    &nk,    &d,       &causal,  &scale};
  void *np[] = {&o32.ptr, &o.ptr, &nQ};
  if (!ok(cuLaunchKernel(kern.forward, nq, hq, b, 128, 1, 1,
                         unsigned((nk + d) * 4), nullptr, fp, nullptr),
          "reference_fwd") ||
      !ok(cuLaunchKernel(kern.narrow, 64, 1, 1, 256, 1, 1, 0, nullptr, np,
                         nullptr),
          "narrow"))
    return -1;
  // The gradients start as NaN: whatever the kernels leave is seen.
  for (auto [ptr, n] : {std::pair{dq.ptr, nQ}, {dk.ptr, nKV}, {dv.ptr, nKV}})
    if (!ok(cuMemsetD32Async(ptr, 0x7FC00000u, n, nullptr), "poison"))
      return -1;
  void *bp[] = {&q.ptr,  &k.ptr,  &v.ptr,  &o.ptr,  &dout.ptr, &lse.ptr,
                &dq.ptr, &dk.ptr, &dv.ptr, &b,      &hq,       &hkv,
                &nq,     &nk,     &d,      &causal, &scale};
  if (!ok(cuLaunchKernel(kern.dq, nq, hq, b, 128, 1, 1, 0, nullptr, bp,
                         nullptr),
          "reference_bwd_dq") ||
      !ok(cuLaunchKernel(kern.dkdv, nk, hkv, b, 128, 1, 1, 0, nullptr, bp,
                         nullptr),
          "reference_bwd_dkdv") ||
      !ok(cuStreamSynchronize(nullptr), "reference_bwd"))
    return -1;

  std::vector<uint16_t> hq16, hk16, hv16, ho16, hdo16;
  std::vector<float> hlse, gdq, gdk, gdv;
  if (!download(hq16, q.ptr, nQ) || !download(hk16, k.ptr, nKV) ||
      !download(hv16, v.ptr, nKV) || !download(ho16, o.ptr, nQ) ||
      !download(hdo16, dout.ptr, nQ) || !download(hlse, lse.ptr, rows) ||
      !download(gdq, dq.ptr, nQ) || !download(gdk, dk.ptr, nKV) ||
      !download(gdv, dv.ptr, nKV))
    return -1;
  BwdProblem problem;
  problem.batch = b;
  problem.headsQ = hq;
  problem.headsKV = hkv;
  problem.seqQ = nq;
  problem.seqK = nk;
  problem.headDim = d;
  problem.causal = c.causal;
  problem.scale = scale;
  BwdOperands64 in;
  auto widen = [&](const std::vector<uint16_t> &x, std::vector<double> &y) {
    y.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      y[i] = from16(x[i], c.bf16);
  };
  widen(hq16, in.q);
  widen(hk16, in.k);
  widen(hv16, in.v);
  widen(ho16, in.o);
  widen(hdo16, in.dout);
  in.lse.assign(hlse.begin(), hlse.end());

  std::vector<double> rdq, rdk, rdv, sdq, sdk, sdv;
  hostBackward(problem, in, BwdForm::FromInputs, rdq, rdk, rdv);
  hostBackward(problem, in, BwdForm::Softmax, sdq, sdk, sdv);
  double errQ = relError(gdq, rdq), errK = relError(gdk, rdk),
         errV = relError(gdv, rdv);
  double errSoftmax =
      std::max({relError(gdq, sdq), relError(gdk, sdk), relError(gdv, sdv)});
  int64_t nonFinite =
      countNonFinite(gdq) + countNonFinite(gdk) + countNonFinite(gdv);
  // Rows that see no key: LSE = -inf and dQ exactly 0.
  int64_t noKey = 0, noKeyBad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (!std::isinf(hlse[r]))
      continue;
    ++noKey;
    for (int64_t x = 0; x < d; ++x)
      noKeyBad += gdq[r * d + x] != 0.0f;
  }
  // fp32 against fp64 on the same inputs: ~5e-7 on these shapes. Against
  // the softmax gradient, O's rounding to 16 bits shows in Delta: ~1e-3
  // for bf16, ~2e-4 for f16 on these shapes (an fp64 host model of the
  // whole check); a wrong formula is off by O(1).
  double softmaxTol = c.bf16 ? 2e-2 : 3e-3;
  bool pass = std::max({errQ, errK, errV}) < 1e-4 && errSoftmax < softmaxTol &&
              nonFinite == 0 && noKeyBad == 0;
  std::printf("  %-4s %2ld %3ld %3ld %4ld %4ld %4ld %-6s %9.2e %9.2e %9.2e "
              "%9.2e %6ld %6ld  %s\n",
              c.bf16 ? "bf16" : "f16", long(b), long(hq), long(hkv), long(nq),
              long(nk), long(d), c.causal ? "causal" : "-", errQ, errK, errV,
              errSoftmax, long(nonFinite), long(noKey), pass ? "PASS" : "FAIL");
  if (noKeyBad)
    std::printf("    %ld dQ values of rows without keys are not 0\n",
                long(noKeyBad));
  return pass ? 0 : 1;
}

} // namespace

int checkBackward(CUmodule module) {
  BwdKernels kernels[2]; // f16, bf16
  const char *suffix[2] = {"f16", "bf16"};
  for (int t = 0; t < 2; ++t) {
    struct {
      CUfunction *fn;
      const char *name;
    } names[] = {{&kernels[t].fill, "fill_normal_"},
                 {&kernels[t].forward, "reference_fwd_"},
                 {&kernels[t].narrow, "narrow_"},
                 {&kernels[t].dq, "reference_bwd_dq_"},
                 {&kernels[t].dkdv, "reference_bwd_dkdv_"}};
    for (auto [fn, name] : names) {
      std::string full = std::string(name) + suffix[t];
      if (!ok(cuModuleGetFunction(fn, module, full.c_str()), full.c_str()))
        return -1;
    }
  }
  // (bf16, B, Hq, Hkv, Nq, Nk, D, causal): GQA groups of 1, 2, 3, 4 and 8;
  // causal with Nq == Nk, Nq < Nk and Nq > Nk (rows without keys); a
  // single query row; D not a multiple of 32.
  const BwdCase cases[] = {
      {true, 2, 4, 2, 37, 37, 64, 0},  {false, 2, 4, 2, 37, 37, 64, 1},
      {true, 1, 6, 2, 20, 45, 128, 1}, {false, 1, 6, 2, 20, 45, 128, 1},
      {false, 2, 4, 1, 45, 20, 64, 1}, {true, 2, 4, 1, 45, 20, 64, 1},
      {true, 1, 8, 8, 33, 17, 128, 1}, {false, 1, 2, 2, 1, 70, 128, 0},
      {true, 1, 8, 1, 16, 16, 128, 0}, {false, 1, 4, 4, 9, 12, 96, 1}};
  std::printf("backward reference (relative Frobenius error; fp64: same "
              "inputs, softmax: own softmax, no O/LSE):\n");
  std::printf("  %-4s %2s %3s %3s %4s %4s %4s %-6s %9s %9s %9s %9s %6s %6s\n",
              "type", "B", "Hq", "Hkv", "Nq", "Nk", "D", "mask", "dQ fp64",
              "dK fp64", "dV fp64", "softmax", "nonfin", "nokey");
  int failed = 0;
  for (const BwdCase &c : cases) {
    int result = runBwdCase(kernels[c.bf16], c);
    if (result < 0)
      return -1;
    failed += result;
  }
  return failed;
}

} // namespace attn::run

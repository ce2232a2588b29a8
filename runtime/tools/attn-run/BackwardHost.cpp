//===- BackwardHost.cpp - fp64 attention backward on the host -------------===//

#include "BackwardHost.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attn::run {

int64_t BwdProblem::visibleKeys(int64_t i) const {
  return causal ? std::min(seqK, std::max<int64_t>(0, i + seqK - seqQ + 1))
                : seqK;
}

namespace {

/// Scores s_j = scale * q_i . k_j of the visible keys of one row.
void rowScores(const BwdProblem &p, const double *qi, const double *k,
               int64_t visible, std::vector<double> &s) {
  s.assign(visible, 0.0);
  for (int64_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (int64_t x = 0; x < p.headDim; ++x)
      dot += qi[x] * k[j * p.headDim + x];
    s[j] = dot * p.scale;
  }
}

} // namespace

void hostForward(const BwdProblem &p, const BwdOperands64 &in,
                 std::vector<double> &o, std::vector<double> &lse) {
  int64_t hq = p.headsQ, hkv = p.headsKV, nq = p.seqQ, nk = p.seqK,
          d = p.headDim;
  o.assign(p.batch * hq * nq * d, 0.0);
  lse.assign(p.batch * hq * nq, -INFINITY);
  std::vector<double> s;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        int64_t row = (b * hq + h) * nq + i;
        int64_t kv = (b * hkv + h / (hq / hkv)) * nk * d;
        int64_t visible = p.visibleKeys(i);
        if (visible == 0)
          continue;
        rowScores(p, &in.q[row * d], &in.k[kv], visible, s);
        double max = *std::max_element(s.begin(), s.end()), sum = 0;
        for (double &x : s)
          sum += x = std::exp(x - max);
        for (int64_t j = 0; j < visible; ++j)
          for (int64_t x = 0; x < d; ++x)
            o[row * d + x] += s[j] / sum * in.v[kv + j * d + x];
        lse[row] = max + std::log(sum);
      }
}

void hostBackward(const BwdProblem &p, const BwdOperands64 &in, BwdForm form,
                  std::vector<double> &dq, std::vector<double> &dk,
                  std::vector<double> &dv) {
  int64_t hq = p.headsQ, hkv = p.headsKV, nq = p.seqQ, nk = p.seqK,
          d = p.headDim;
  bool fromInputs = form == BwdForm::FromInputs;
  dq.assign(p.batch * hq * nq * d, 0.0);
  dk.assign(p.batch * hkv * nk * d, 0.0);
  dv.assign(p.batch * hkv * nk * d, 0.0);
  std::vector<double> prob, dp(nk);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        int64_t row = (b * hq + h) * nq + i;
        int64_t kv = (b * hkv + h / (hq / hkv)) * nk * d;
        int64_t visible = p.visibleKeys(i);
        if (visible == 0 || (fromInputs && std::isinf(in.lse[row])))
          continue; // no key: P = 0
        const double *qi = &in.q[row * d], *doi = &in.dout[row * d];
        rowScores(p, qi, &in.k[kv], visible, prob);
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x)
            dot += doi[x] * in.v[kv + j * d + x];
          dp[j] = dot;
        }
        double delta = 0;
        if (fromInputs) {
          for (double &x : prob)
            x = std::exp(x - in.lse[row]);
          for (int64_t x = 0; x < d; ++x)
            delta += doi[x] * in.o[row * d + x];
        } else {
          double max = *std::max_element(prob.begin(), prob.end()), sum = 0;
          for (double &x : prob)
            sum += x = std::exp(x - max);
          for (int64_t j = 0; j < visible; ++j)
            delta += (prob[j] /= sum) * dp[j];
        }
        for (int64_t j = 0; j < visible; ++j) {
          double ds = prob[j] * (dp[j] - delta);
          for (int64_t x = 0; x < d; ++x) {
            dq[row * d + x] += p.scale * ds * in.k[kv + j * d + x];
            dk[kv + j * d + x] += p.scale * ds * qi[x];
            dv[kv + j * d + x] += prob[j] * doi[x];
          }
        }
      }
}

double from16(uint16_t bits, bool bf16) {
  if (bf16) {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double sign = bits & 0x8000 ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(double(mantissa), -24);
  return sign * std::ldexp(double(mantissa + 1024), exponent - 25);
}

} // namespace attn::run

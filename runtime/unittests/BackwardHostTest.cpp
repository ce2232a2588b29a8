//===- BackwardHostTest.cpp - attn-reference-check's fp64 backward --------===//
//
// The fp64 backward that attn-reference-check holds the GPU reference
// backward to (BackwardHost.h): both of its forms against central
// differences of L = sum(dO * O(Q, K, V)), on GQA and bottom-right causal
// shapes with Nq > Nk (rows that see no key) and Nq < Nk.

#include "BackwardHost.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace attn::run;

namespace {

BwdProblem problem(int64_t hq, int64_t hkv, int64_t nq, int64_t nk,
                   bool causal) {
  BwdProblem p;
  p.batch = 2;
  p.headsQ = hq;
  p.headsKV = hkv;
  p.seqQ = nq;
  p.seqK = nk;
  p.headDim = 8;
  p.causal = causal;
  p.scale = 0.3;
  return p;
}

BwdOperands64 randomOperands(const BwdProblem &p, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  auto fill = [&](std::vector<double> &x, int64_t n) {
    x.resize(n);
    for (double &e : x)
      e = normal(rng);
  };
  BwdOperands64 in;
  int64_t nQ = p.batch * p.headsQ * p.seqQ * p.headDim,
          nKV = p.batch * p.headsKV * p.seqK * p.headDim;
  fill(in.q, nQ);
  fill(in.k, nKV);
  fill(in.v, nKV);
  fill(in.dout, nQ);
  hostForward(p, in, in.o, in.lse);
  return in;
}

double loss(const BwdProblem &p, const BwdOperands64 &in) {
  std::vector<double> o, lse;
  hostForward(p, in, o, lse);
  double l = 0;
  for (size_t i = 0; i < o.size(); ++i)
    l += in.dout[i] * o[i];
  return l;
}

/// Both forms against central differences on every element of Q, K, V.
void expectGradient(const BwdProblem &p) {
  BwdOperands64 in = randomOperands(p, 7);
  for (BwdForm form : {BwdForm::FromInputs, BwdForm::Softmax}) {
    std::vector<double> dq, dk, dv;
    hostBackward(p, in, form, dq, dk, dv);
    BwdOperands64 x = in;
    const double h = 1e-6;
    for (auto [values, grad] : {std::pair{&x.q, &dq}, {&x.k, &dk}, {&x.v, &dv}})
      for (size_t i = 0; i < values->size(); ++i) {
        double saved = (*values)[i];
        (*values)[i] = saved + h;
        double up = loss(p, x);
        (*values)[i] = saved - h;
        double down = loss(p, x);
        (*values)[i] = saved;
        EXPECT_NEAR((up - down) / (2 * h), (*grad)[i], 1e-6) << i;
      }
  }
}

TEST(BackwardHost, GradientGqa) { expectGradient(problem(4, 2, 5, 7, false)); }

TEST(BackwardHost, GradientCausalMoreKeys) {
  expectGradient(problem(6, 2, 4, 9, true));
}

TEST(BackwardHost, GradientCausalRowsWithoutKeys) {
  // Nq > Nk: rows 0 .. Nq - Nk - 1 see no key.
  expectGradient(problem(4, 1, 9, 4, true));
}

TEST(BackwardHost, RowsWithoutKeysGiveZero) {
  BwdProblem p = problem(2, 1, 6, 2, true);
  BwdOperands64 in = randomOperands(p, 3);
  std::vector<double> dq, dk, dv;
  hostBackward(p, in, BwdForm::FromInputs, dq, dk, dv);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.headsQ; ++h)
      for (int64_t i = 0; i < p.seqQ - p.seqK; ++i) {
        int64_t row = (b * p.headsQ + h) * p.seqQ + i;
        EXPECT_TRUE(std::isinf(in.lse[row]) && in.lse[row] < 0);
        for (int64_t x = 0; x < p.headDim; ++x)
          EXPECT_EQ(dq[row * p.headDim + x], 0.0);
      }
}

TEST(BackwardHost, From16) {
  EXPECT_EQ(from16(0x3C00, false), 1.0);
  EXPECT_EQ(from16(0xC000, false), -2.0);
  EXPECT_EQ(from16(0x0001, false), std::ldexp(1.0, -24)); // subnormal
  EXPECT_EQ(from16(0x7BFF, false), 65504.0);
  EXPECT_TRUE(std::isinf(from16(0xFC00, false)) && from16(0xFC00, false) < 0);
  EXPECT_TRUE(std::isnan(from16(0x7FFF, false)));
  EXPECT_EQ(from16(0x3F80, true), 1.0);
  EXPECT_EQ(from16(0xC040, true), -3.0);
  EXPECT_TRUE(std::isnan(from16(0x7FFF, true)));
}

} // namespace

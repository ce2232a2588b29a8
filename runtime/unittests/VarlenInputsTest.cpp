//===- VarlenInputsTest.cpp - attn-run's varlen batches -------------------===//

#include "Varlen.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace attn::run;

namespace {

/// The invariants attn-run relies on: prefix sums from 0, non-decreasing,
/// the max lengths equal to the largest ones, padding after the sequences.
void expectValid(const VarlenInputs &in, int64_t batch) {
  ASSERT_EQ(in.batch(), batch);
  ASSERT_EQ(int64_t(in.cuK.size()), batch + 1);
  EXPECT_EQ(in.cuQ[0], 0);
  EXPECT_EQ(in.cuK[0], 0);
  int64_t maxQ = 0, maxK = 0;
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_GE(in.seqQ(b), 0);
    EXPECT_GE(in.seqK(b), 0);
    maxQ = std::max(maxQ, in.seqQ(b));
    maxK = std::max(maxK, in.seqK(b));
  }
  EXPECT_EQ(in.maxQ, maxQ);
  EXPECT_EQ(in.maxK, maxK);
  EXPECT_EQ(in.totalQ, in.cuQ.back() + kVarlenPadQ);
  EXPECT_EQ(in.totalK, in.cuK.back() + kVarlenPadK);
}

TEST(VarlenInputs, EdgeCasesArePresent) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    VarlenInputs in = makeVarlenInputs(8, 257, 300, seed);
    expectValid(in, 8);
    EXPECT_EQ(in.maxQ, 257);
    EXPECT_EQ(in.maxK, 300);
    EXPECT_EQ(in.seqQ(1), 257); // the largest: max_seqlen_q/k
    EXPECT_EQ(in.seqK(1), 300);
    EXPECT_EQ(in.seqQ(0), 0); // empty first
    EXPECT_GT(in.seqK(0), 0);
    EXPECT_EQ(in.seqK(4), 0); // no key in the middle
    EXPECT_GT(in.seqQ(4), 0);
    EXPECT_EQ(in.seqQ(7), 0); // empty last
    EXPECT_EQ(in.seqK(7), 0);
    for (int64_t b : {2, 3, 5, 6}) {
      EXPECT_NE(in.seqQ(b), in.seqK(b)) << b;
      EXPECT_NE(in.seqQ(b) % 8, 0) << b;
      EXPECT_NE(in.seqK(b) % 8, 0) << b;
    }
  }
}

TEST(VarlenInputs, SmallAndOddShapes) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    for (int64_t batch : {0, 1, 2, 3, 4, 5})
      expectValid(makeVarlenInputs(batch, 7, 3, seed), batch);
    expectValid(makeVarlenInputs(6, 1, 1, seed), 6);
    expectValid(makeVarlenInputs(6, 0, 5, seed), 6);
    expectValid(makeVarlenInputs(6, 5, 0, seed), 6);
  }
  VarlenInputs one = makeVarlenInputs(1, 9, 4, 3);
  EXPECT_EQ(one.seqQ(0), 9);
  EXPECT_EQ(one.seqK(0), 4);
}

TEST(VarlenInputs, PackCountsPairs) {
  VarlenInputs in = packVarlen({{0, 3}, {2, 5}, {4, 0}, {1, 1}});
  EXPECT_EQ(in.cuQ, (std::vector<int32_t>{0, 0, 2, 6, 7}));
  EXPECT_EQ(in.cuK, (std::vector<int32_t>{0, 3, 8, 8, 9}));
  EXPECT_EQ(in.lengthsK(), (std::vector<int32_t>{3, 5, 0, 1}));
  EXPECT_EQ(in.pairs(), 2 * 5 + 1 * 1);
  EXPECT_EQ(in.maxQ, 4);
  EXPECT_EQ(in.maxK, 5);
}

TEST(VarlenInputs, LseByRowFollowsO) {
  VarlenInputs in = packVarlen({{2, 1}, {1, 1}}); // used_q 3, total_q 8
  const int64_t hq = 2;
  std::vector<float> lse(hq * in.totalQ, -1.0f);
  for (int64_t h = 0; h < hq; ++h)
    for (int64_t t = 0; t < in.usedQ(); ++t)
      lse[h * in.totalQ + t] = float(10 * t + h);
  EXPECT_EQ(lseByRow(lse, in, hq), (std::vector<float>{0, 1, 10, 11, 20, 21}));
}

TEST(VarlenInputs, WrittenPaddingCountsChangedBits) {
  VarlenInputs in = packVarlen({{2, 1}}); // used_q 2, total_q 7
  const int64_t hq = 2, d = 8;
  std::vector<uint16_t> o(in.totalQ * hq * d, kPoison16);
  std::vector<uint32_t> lse(hq * in.totalQ, kPoison32);
  // Real rows may hold anything.
  std::fill(o.begin(), o.begin() + in.usedQ() * hq * d, 0);
  lse[0] = lse[1] = lse[in.totalQ] = lse[in.totalQ + 1] = 0;
  EXPECT_EQ(writtenPadding(in, hq, d, o, lse), 0);
  EXPECT_EQ(writtenPadding(in, hq, d, o, {}), 0);
  o[in.usedQ() * hq * d] = 0x7FC0; // another NaN is still a write
  o.back() = 0;
  lse[in.totalQ + in.usedQ()] = 0;
  EXPECT_EQ(writtenPadding(in, hq, d, o, lse), 3);
  EXPECT_EQ(writtenPadding(in, hq, d, o, {}), 2);
}

} // namespace

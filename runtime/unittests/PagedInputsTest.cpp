//===- PagedInputsTest.cpp - attn-run's paged K/V tables ------------------===//

#include "Paged.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>

using namespace attn::run;

namespace {

/// The invariants attn-run relies on for B sequences of max_pages pages.
void expectValid(const PagedInputs &in, int64_t batch, int64_t maxPages,
                 int64_t pageSize) {
  int64_t capacity = maxPages * pageSize, numPages = batch * maxPages;
  ASSERT_EQ(int64_t(in.lengths.size()), batch);
  ASSERT_EQ(int64_t(in.table.size()), numPages);
  ASSERT_EQ(int64_t(in.validRows.size()), numPages);
  // The table is a permutation of the pages: every entry in range, each
  // page used by at most one sequence.
  std::vector<int32_t> sorted = in.table;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> iota(numPages);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  for (int64_t b = 0; b < batch; ++b) {
    int32_t n = in.lengths[b];
    EXPECT_GE(n, 0);
    EXPECT_LE(n, capacity);
    // Key j lives in a valid row of the page the table names.
    for (int64_t j = 0; j < n; ++j) {
      int64_t row = pagedRow(&in.table[b * maxPages], pageSize, j);
      EXPECT_EQ(row / pageSize, in.table[b * maxPages + j / pageSize]);
      EXPECT_EQ(row % pageSize, j % pageSize);
      EXPECT_LT(row % pageSize, in.validRows[row / pageSize]) << b << " " << j;
    }
  }
  // Valid rows are exactly the keys: their count is the lengths' sum.
  int64_t rows = std::accumulate(in.validRows.begin(), in.validRows.end(),
                                 int64_t(0));
  int64_t keys = std::accumulate(in.lengths.begin(), in.lengths.end(),
                                 int64_t(0));
  EXPECT_EQ(rows, keys);
}

TEST(PagedInputs, EdgeCasesArePresent) {
  for (int64_t pageSize : {16, 256}) {
    PagedInputs in = makePagedInputs(4, 4, pageSize, 7);
    expectValid(in, 4, 4, pageSize);
    EXPECT_EQ(in.lengths[0], 4 * pageSize); // full
    EXPECT_NE(in.lengths[1] % pageSize, 0); // ends inside a page
    EXPECT_EQ(in.lengths[3], 0);            // empty
  }
}

TEST(PagedInputs, TableIsNotTheIdentity) {
  PagedInputs in = makePagedInputs(8, 16, 16, 1);
  std::vector<int32_t> iota(in.table.size());
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_NE(in.table, iota);
}

TEST(PagedInputs, SmallAndOddShapes) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    expectValid(makePagedInputs(1, 1, 1, seed), 1, 1, 1);
    expectValid(makePagedInputs(2, 1, 1, seed), 2, 1, 1);
    expectValid(makePagedInputs(3, 3, 5, seed), 3, 3, 5);
    expectValid(makePagedInputs(2, 0, 16, seed), 2, 0, 16);
    expectValid(makePagedInputs(0, 4, 16, seed), 0, 4, 16);
  }
  // Page size 1: every length ends a page; sequence 1 stays random.
  PagedInputs in = makePagedInputs(2, 8, 1, 3);
  EXPECT_EQ(in.lengths[0], 8);
}

TEST(PagedInputs, GivenLengthsKeepTheTable) {
  PagedInputs in = makePagedInputs(3, 4, 16, 5);
  std::vector<int32_t> table = in.table;
  setLengths(in, {1, 17, 0}, 4, 16);
  EXPECT_EQ(in.table, table);
  EXPECT_EQ(in.lengths, (std::vector<int32_t>{1, 17, 0}));
  expectValid(in, 3, 4, 16);
  EXPECT_EQ(in.validRows[table[0]], 1);
  EXPECT_EQ(in.validRows[table[4]], 16);
  EXPECT_EQ(in.validRows[table[5]], 1);
}

} // namespace

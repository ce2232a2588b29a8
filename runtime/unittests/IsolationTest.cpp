//===- IsolationTest.cpp - attn-run's foreign rows per sequence -----------===//

#include "Isolation.h"

#include "gtest/gtest.h"

#include <vector>

using namespace attn::run;

namespace {

/// The rows of [0, total) that `ranges` cover, as a mask; the ranges must
/// be ascending, disjoint, non-empty and not touching (merged).
std::vector<bool> coverage(const RowRanges &ranges, int64_t total) {
  std::vector<bool> covered(total, false);
  int64_t previousEnd = -1;
  for (auto [first, last] : ranges) {
    EXPECT_LT(first, last);
    EXPECT_GT(first, previousEnd) << "ranges overlap, touch or go backwards";
    EXPECT_GE(first, 0);
    EXPECT_LE(last, total);
    for (int64_t row = std::max<int64_t>(first, 0); row < std::min(last, total);
         ++row)
      covered[row] = true;
    previousEnd = last;
  }
  return covered;
}

TEST(Isolation, RowsOutsideASequence) {
  struct Case {
    int64_t total, first, last;
  };
  // Middle, first, last, the whole buffer, an empty sequence, no rows.
  for (Case c : {Case{20, 5, 9}, Case{20, 0, 9}, Case{20, 9, 20},
                 Case{20, 0, 20}, Case{20, 7, 7}, Case{0, 0, 0}}) {
    std::vector<bool> covered =
        coverage(rowsOutside(c.total, c.first, c.last), c.total);
    for (int64_t row = 0; row < c.total; ++row)
      EXPECT_EQ(covered[row], row < c.first || row >= c.last)
          << "row " << row << " of [" << c.first << ", " << c.last << ")";
  }
}

TEST(Isolation, OwnRowsPerPageAreExactlyTheSequenceKeys) {
  for (int64_t pageSize : {1, 3, 16}) {
    int64_t batch = 5, maxPages = 4;
    PagedInputs in = makePagedInputs(batch, maxPages, pageSize, 11);
    int64_t rows = batch * maxPages * pageSize;
    for (int64_t seq = 0; seq < batch; ++seq) {
      std::vector<int32_t> own = ownRowsPerPage(in, seq, maxPages, pageSize);
      ASSERT_EQ(own.size(), in.table.size());
      std::vector<bool> key(rows, false);
      for (int64_t j = 0; j < in.lengths[seq]; ++j)
        key[pagedRow(&in.table[seq * maxPages], pageSize, j)] = true;
      for (int64_t row = 0; row < rows; ++row)
        EXPECT_EQ(row % pageSize < own[row / pageSize], key[row])
            << "page size " << pageSize << ", sequence " << seq << ", row "
            << row;
    }
  }
}

} // namespace

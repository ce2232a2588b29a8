//===- Isolation.cpp - sequence isolation for attn-run's check ------------===//

#include "Isolation.h"

#include <algorithm>

namespace attn::run {

/// Appends [first, last) to `ranges`, merged with the last range when they
/// touch.
static void append(RowRanges &ranges, int64_t first, int64_t last) {
  if (first >= last)
    return;
  if (!ranges.empty() && ranges.back().second == first)
    ranges.back().second = last;
  else
    ranges.emplace_back(first, last);
}

RowRanges rowsOutside(int64_t total, int64_t first, int64_t last) {
  RowRanges ranges;
  append(ranges, 0, std::min(first, total));
  append(ranges, std::max<int64_t>(last, 0), total);
  return ranges;
}

std::vector<int32_t> ownRowsPerPage(const PagedInputs &in, int64_t seq,
                                    int64_t maxPages, int64_t pageSize) {
  std::vector<int32_t> own(in.table.size(), 0);
  int64_t length = in.lengths[seq];
  for (int64_t j = 0; j * pageSize < length; ++j)
    own[in.table[seq * maxPages + j]] =
        int32_t(std::min(pageSize, length - j * pageSize));
  return own;
}

} // namespace attn::run

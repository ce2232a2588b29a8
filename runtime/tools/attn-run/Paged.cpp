//===- Paged.cpp - paged K/V inputs for attn-run's check ------------------===//

#include "Paged.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace attn::run {

/// A length in [1, capacity) that is not a multiple of `pageSize`, or
/// `fallback` when there is none (page size 1, or capacity <= 1).
static int64_t raggedLength(std::mt19937_64 &engine, int64_t capacity,
                            int64_t pageSize, int64_t fallback) {
  if (pageSize < 2 || capacity < 2)
    return fallback;
  std::uniform_int_distribution<int64_t> pick(1, capacity - 1);
  int64_t n = pick(engine);
  return n % pageSize ? n : n - 1; // n >= page_size >= 2 there
}

PagedInputs makePagedInputs(int64_t batch, int64_t maxPages, int64_t pageSize,
                            uint64_t seed) {
  std::mt19937_64 engine(seed);
  int64_t capacity = maxPages * pageSize, numPages = batch * maxPages;
  PagedInputs in;
  std::uniform_int_distribution<int64_t> length(0, capacity);
  for (int64_t b = 0; b < batch; ++b)
    in.lengths.push_back(int32_t(length(engine)));
  if (batch >= 1)
    in.lengths[0] = int32_t(capacity);
  if (batch >= 2)
    in.lengths[1] = int32_t(
        raggedLength(engine, capacity, pageSize, in.lengths[1]));
  if (batch >= 3)
    in.lengths[batch - 1] = 0;
  in.table.resize(numPages);
  std::iota(in.table.begin(), in.table.end(), 0);
  std::shuffle(in.table.begin(), in.table.end(), engine);
  std::vector<int32_t> lengths = std::move(in.lengths);
  setLengths(in, lengths, maxPages, pageSize);
  return in;
}

void setLengths(PagedInputs &in, const std::vector<int32_t> &lengths,
                int64_t maxPages, int64_t pageSize) {
  in.lengths = lengths;
  in.validRows.assign(in.table.size(), 0);
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t j = 0; j * pageSize < lengths[b]; ++j)
      in.validRows[in.table[b * maxPages + j]] =
          int32_t(std::min<int64_t>(pageSize, lengths[b] - j * pageSize));
}

} // namespace attn::run

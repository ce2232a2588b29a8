//===- Isolation.h - sequence isolation for attn-run's check ----*- C++ -*-===//
//
// A sequence's output must depend on its own rows only. TMA bounds a varlen
// kernel's loads by the packed buffer and a paged kernel's by the cache, not
// by the sequence, so a block that reaches past a sequence's last key reads
// its neighbour's rows, the padding or a page's unused rows, and must keep
// all of them out of P V (0 * NaN is NaN). attn-run checks this by running a
// varlen or paged kernel again once per sequence with every row that the
// sequence does not own set to NaN, and demanding the sequence's rows of O
// and LSE bit for bit as in the clean run. This header says which rows those
// are. Plain C++, tested on the host (runtime/unittests/IsolationTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_ISOLATION_H
#define ATTN_RUN_ISOLATION_H

#include "Paged.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace attn::run {

/// Half-open row ranges [first, last), ascending and disjoint.
using RowRanges = std::vector<std::pair<int64_t, int64_t>>;

/// The rows of [0, total) outside [first, last): a packed varlen tensor's
/// rows that belong to other sequences or to the padding.
RowRanges rowsOutside(int64_t total, int64_t first, int64_t last);

/// Per page of the caches, the rows (a prefix of the page) that hold
/// sequence `seq`'s keys: 0 for other sequences' pages and pages of no
/// sequence, fewer than page_size on its last page. Every other row is
/// foreign to `seq` (Paged.h's validRows, for one sequence).
std::vector<int32_t> ownRowsPerPage(const PagedInputs &in, int64_t seq,
                                    int64_t maxPages, int64_t pageSize);

} // namespace attn::run

#endif // ATTN_RUN_ISOLATION_H

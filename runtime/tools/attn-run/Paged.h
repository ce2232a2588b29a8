//===- Paged.h - paged K/V inputs for attn-run's check ----------*- C++ -*-===//
//
// attn-run checks a paged K/V kernel the way a serving system feeds it: each
// sequence's pages scattered through the caches (a random permutation of
// page indices, so the block table is not the identity), random lengths with
// the edge cases present (a full sequence, a length that ends inside a page,
// an empty sequence), and every cache row no sequence reads filled with
// large finite garbage, so that a kernel reading past a length shows. The
// addressing (pagedRow) is shared with the GPU reference (Reference.cu).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_PAGED_H
#define ATTN_RUN_PAGED_H

#include <cstdint>

#ifdef __CUDACC__
#define ATTN_RUN_HOST_DEVICE __host__ __device__
#else
#define ATTN_RUN_HOST_DEVICE
#include <vector>
#endif

namespace attn::run {

/// The cache row ([num_pages * page_size] rows of Hkv * D elements) that
/// holds key j of a sequence whose block-table row is `tableRow`.
ATTN_RUN_HOST_DEVICE inline int64_t pagedRow(const int32_t *tableRow,
                                             int64_t pageSize, int64_t j) {
  return int64_t(tableRow[j / pageSize]) * pageSize + j % pageSize;
}

/// The value unused cache rows hold: finite (a kernel may read whole pages
/// and mask), large enough that any use of it shows in O.
constexpr float kPagedGarbage = 1e4f;

#ifndef __CUDACC__
/// A paged call's tables for `batch` sequences of at most `maxPages` pages
/// of `pageSize` tokens, in `batch * maxPages` pages.
struct PagedInputs {
  std::vector<int32_t> lengths;   // [B] cache_seqlens, in [0, capacity]
  std::vector<int32_t> table;     // [B, max_pages], a permutation of pages
  std::vector<int32_t> validRows; // [num_pages] rows of each page in use
};

/// Lengths random in [0, max_pages * page_size] (from `seed`), except:
/// sequence 0 at full capacity, sequence 1 (B >= 2) ending inside a page
/// (when page_size >= 2 and capacity >= 2), the last (B >= 3) empty. Every
/// table entry is a valid page index; the pages past a sequence's length
/// are unused (validRows 0).
PagedInputs makePagedInputs(int64_t batch, int64_t maxPages, int64_t pageSize,
                            uint64_t seed);

/// Replaces the lengths of `in` (B of them, each in [0, max_pages *
/// page_size]: the caller checks) and recomputes validRows.
void setLengths(PagedInputs &in, const std::vector<int32_t> &lengths,
                int64_t maxPages, int64_t pageSize);
#endif

} // namespace attn::run

#endif // ATTN_RUN_PAGED_H

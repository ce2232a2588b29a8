//===- HeadCompare.h - O and LSE checked head by head ------------*- C++ -*-===//
//
// The forward's outputs read back as doubles, and the comparison the
// split-KV and paged numerics make against float64 and against another
// variant's outputs: per (batch, query head), and LSE elementwise.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_HEADCOMPARE_H
#define ATTN_UNITTESTS_HEADCOMPARE_H

#include "TypedBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace mlir::attn::test {

/// O [B, Hq, Nq, D] and LSE [B, Hq, Nq] as doubles, row-major.
struct Outputs {
  std::vector<double> o, lse;
};

/// Reads `o` and `lse` (poisoned with NaN before the run) into `out`;
/// fails on an element left NaN.
inline void readOutputs(const Buffer<4> &o, const Buffer<3> &lse,
                        Outputs &out) {
  out.o.resize(o.numElements);
  out.lse.resize(lse.numElements);
  for (int64_t i = 0; i < o.numElements; ++i) {
    out.o[i] = o.get(i);
    ASSERT_FALSE(std::isnan(out.o[i])) << "O[" << i << "] unwritten or NaN";
  }
  for (int64_t i = 0; i < lse.numElements; ++i) {
    out.lse[i] = lse.get(i);
    ASSERT_FALSE(std::isnan(out.lse[i])) << "LSE[" << i << "] unwritten";
  }
}

/// ||O - want|| / ||want|| over each of the B * Hq heads' `rowsPerHead` =
/// Nq * D values must stay within `bound`; LSE elementwise (-inf exactly
/// where `want` has it).
inline void expectHeadsClose(int64_t hq, int64_t rowsPerHead,
                             const Outputs &got, const Outputs &want,
                             double bound, const char *what) {
  int64_t heads = static_cast<int64_t>(want.o.size()) / rowsPerHead;
  for (int64_t bh = 0; bh < heads; ++bh) {
    double num = 0, den = 0;
    for (int64_t i = bh * rowsPerHead; i < (bh + 1) * rowsPerHead; ++i) {
      num += (got.o[i] - want.o[i]) * (got.o[i] - want.o[i]);
      den += want.o[i] * want.o[i];
    }
    double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    EXPECT_LE(rel, bound) << what << ": head " << bh % hq << " of batch "
                          << bh / hq << ", ||O - ref|| / ||ref|| = " << rel;
  }
  for (size_t i = 0; i < want.lse.size(); ++i) {
    if (std::isinf(want.lse[i])) {
      EXPECT_TRUE(std::isinf(got.lse[i]) && got.lse[i] < 0)
          << what << ": LSE[" << i << "] = " << got.lse[i];
      continue;
    }
    EXPECT_NEAR(got.lse[i], want.lse[i],
                1e-4 * std::max(1.0, std::fabs(want.lse[i])))
        << what << ": LSE[" << i << "]";
  }
}

/// Rounding O to the storage type alone gives ~2^-9 (bf16), 2^-12 (f16).
inline double boundFor(Elt elt) {
  return elt == Elt::bf16 ? 8e-3 : elt == Elt::f16 ? 1e-3 : 1e-5;
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_HEADCOMPARE_H

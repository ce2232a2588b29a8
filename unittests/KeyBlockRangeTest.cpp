//===- KeyBlockRangeTest.cpp - the block classification is exact ----------===//
//
// attn-causal-split's K/V block ranges under a key mask (keyBlockRange,
// CausalBounds.h), built on constants so that they fold, against the
// classification of every (Q block, K/V block) pair element by element,
// from the definition of #attn.key_mask: the blocks outside [begin, end)
// hold no visible key and every block inside holds one (no block is
// visited in vain); [fullBegin, fullEnd) are exactly the blocks whose every
// (row, key) pair is visible and inside Nk. Over windows, chunks and
// prefixes, Nq above and below Nk, tails, GQA packing and split-KV ranges.
//
//===----------------------------------------------------------------------===//

#include "CausalBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

using namespace mlir;
using namespace mlir::attn;

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

struct Mask {
  int64_t left = -1, right = -1;
  std::optional<int64_t> chunk, prefix;

  /// Query at key position p sees key j (bounds not included).
  bool sees(int64_t p, int64_t j) const {
    bool in = (left < 0 || j >= p - left) && (right < 0 || j <= p + right) &&
              (!chunk || floorDiv(p, *chunk) == floorDiv(j, *chunk));
    return in || (prefix && j < *prefix);
  }
};

struct Shape {
  int64_t nq, nk, blockM, blockN, pack;
  /// The loop's K/V block range (split-KV: one split's).
  int64_t loopBegin, loopEnd;
};

class KeyBlockRangeTest : public ::testing::Test {
protected:
  KeyBlockRangeTest() {
    context.loadDialect<arith::ArithDialect, AttnDialect>();
  }

  struct Range {
    int64_t begin, fullBegin, fullEnd, end;
  };

  /// keyBlockRange of Q block `qb`, folded.
  std::optional<Range> fold(const Mask &m, const Shape &s, int64_t qb) {
    Location loc = UnknownLoc::get(&context);
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
    auto b = OpBuilder::atBlockBegin(scratch->getBody());
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto mask = KeyMaskAttr::get(&context, m.left, m.right, m.chunk, m.prefix);
    KeyBlockRange r = keyBlockRange(
        b, loc, mask, index(s.nk), index(qb * s.blockM), index(s.nk - s.nq),
        index(s.loopBegin), index(s.loopEnd), s.blockM, s.blockN, s.pack);
    auto begin = getConstantIntValue(r.begin);
    auto fullBegin = getConstantIntValue(r.fullBegin);
    auto fullEnd = getConstantIntValue(r.fullEnd);
    auto end = getConstantIntValue(r.end);
    if (!begin || !fullBegin || !fullEnd || !end)
      return std::nullopt;
    return Range{*begin, *fullBegin, *fullEnd, *end};
  }

  /// Every (Q block, K/V block) pair against the element-wise definition.
  void check(const Mask &m, const Shape &s) {
    int64_t rows = s.nq * s.pack;
    for (int64_t qb = 0; qb * s.blockM < std::max<int64_t>(rows, 1); ++qb) {
      SCOPED_TRACE(llvm::formatv("q block {0}", qb).str());
      std::optional<Range> r = fold(m, s, qb);
      ASSERT_TRUE(r) << "the bounds did not fold";
      ASSERT_LE(s.loopBegin, r->begin);
      ASSERT_LE(r->begin, r->fullBegin);
      ASSERT_LE(r->fullBegin, r->fullEnd);
      ASSERT_LE(r->fullEnd, r->end);
      ASSERT_LE(r->end, s.loopEnd);
      for (int64_t kb = s.loopBegin; kb < s.loopEnd; ++kb) {
        bool any = false, all = true;
        // Every row of the tile, past Nq too (the kernels compute them).
        for (int64_t row = qb * s.blockM; row < (qb + 1) * s.blockM; ++row)
          for (int64_t j = kb * s.blockN; j < (kb + 1) * s.blockN; ++j) {
            bool visible = j < s.nk && m.sees(row / s.pack + s.nk - s.nq, j);
            any |= visible;
            all &= visible;
          }
        bool visited = kb >= r->begin && kb < r->end;
        bool full = kb >= r->fullBegin && kb < r->fullEnd;
        ASSERT_EQ(any, visited) << "K/V block " << kb;
        ASSERT_EQ(all, full) << "K/V block " << kb;
      }
    }
  }

  MLIRContext context;
};

TEST_F(KeyBlockRangeTest, NamedCases) {
  // Mistral's window under causal, small: window 9 (left 8, right 0).
  check({8, 0}, {40, 40, 8, 4, 1, 0, 10});
  // Causal alone, Nq > Nk: leading rows see nothing.
  check({-1, 0}, {29, 11, 8, 4, 1, 0, 3});
  // The diagonal only, and (0, 0) with BLOCK_N > BLOCK_M.
  check({0, 0}, {23, 23, 4, 8, 1, 0, 3});
  // Chunked causal with Nq > Nk (rows before the first key see none).
  check({-1, 0, 7}, {30, 17, 8, 4, 1, 0, 5});
  // Prefix-LM, and an empty prefix.
  check({-1, 0, std::nullopt, 11}, {29, 29, 8, 4, 1, 0, 8});
  check({-1, 0, std::nullopt, 0}, {17, 17, 8, 4, 1, 0, 5});
  // GQA packing of 3 query heads per KV head.
  check({5, 0}, {14, 20, 8, 4, 3, 0, 5});
  // One split of split-KV: blocks [2, 5) of 8.
  check({6, 1}, {30, 32, 8, 4, 1, 2, 5});
}

// Random masks and shapes (the seed is printed on failure).
TEST_F(KeyBlockRangeTest, RandomMasksAndShapes) {
  unsigned seed = std::random_device{}();
  SCOPED_TRACE(llvm::formatv("seed {0}", seed).str());
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t blocks[] = {1, 2, 4, 8, 16};
  for (int trial = 0; trial < 400; ++trial) {
    Mask m;
    m.left = pick(-1, 12);
    m.right = pick(-1, 12);
    if (pick(0, 2) == 0)
      m.chunk = pick(1, 12);
    if (m.left < 0 && !m.chunk && pick(0, 1) == 0)
      m.prefix = pick(0, 20);
    if (m.left < 0 && m.right < 0 && !m.chunk && !m.prefix)
      m.right = 0;
    Shape s{pick(1, 40),
            pick(0, 40),
            blocks[pick(0, 4)],
            blocks[pick(0, 3)],
            pick(1, 3),
            0,
            0};
    int64_t numBlocks = (s.nk + s.blockN - 1) / s.blockN;
    s.loopEnd = numBlocks;
    if (numBlocks > 0 && pick(0, 3) == 0) { // one split of split-KV
      s.loopBegin = pick(0, numBlocks - 1);
      s.loopEnd = pick(s.loopBegin, numBlocks);
    }
    SCOPED_TRACE(llvm::formatv("trial {0}: mask ({1}, {2}, chunk {3}, prefix "
                               "{4}), Nq {5}, Nk {6}, {7}x{8}, G {9}, loop "
                               "[{10}, {11})",
                               trial, m.left, m.right, m.chunk.value_or(0),
                               m.prefix.value_or(-1), s.nq, s.nk, s.blockM,
                               s.blockN, s.pack, s.loopBegin, s.loopEnd)
                     .str());
    ASSERT_NO_FATAL_FAILURE(check(m, s));
  }
}

} // namespace

//===- PersistentDealTest.cpp - how persistent CTAs deal their tiles ------===//
//
// attn-async-pipeline's persistent loops take their tiles from dealtRounds
// and dealtTile (PipelineBuilders.h). Built on constants, the arithmetic
// folds, so every grid can be checked here: each tile goes to exactly one
// CTA, and with tiles numbered heaviest first (cost numTiles - tile, as the
// causal order) the CTAs' sums of costs differ by at most the CTA count:
// an even round and the odd one after it give every CTA the same sum, so
// only the last one or two rounds differ (dealt round-robin, the sums
// drift apart by about the CTA count every round).
//
//===----------------------------------------------------------------------===//

#include "PipelineBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace mlir;
using namespace mlir::attn::pipeline;

namespace {

class PersistentDeal : public ::testing::Test {
protected:
  PersistentDeal() : builder(&context) {
    context.loadDialect<arith::ArithDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToStart(module->getBody());
  }

  Value index(int64_t v) {
    return arith::ConstantIndexOp::create(builder, builder.getUnknownLoc(), v);
  }
  static int64_t folded(Value v) {
    std::optional<int64_t> c = getConstantIntValue(v);
    EXPECT_TRUE(c.has_value()) << "the deal did not fold to a constant";
    return c.value_or(-1);
  }

  /// The tiles CTA `cta` of `ctas` takes of `numTiles`, in order.
  std::vector<int64_t> tilesOf(int64_t cta, int64_t ctas, int64_t numTiles) {
    Location loc = builder.getUnknownLoc();
    int64_t rounds = folded(
        dealtRounds(builder, loc, index(numTiles), index(cta), index(ctas)));
    std::vector<int64_t> tiles;
    for (int64_t r = 0; r < rounds; ++r)
      tiles.push_back(
          folded(dealtTile(builder, loc, index(r), index(cta), index(ctas))));
    return tiles;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(PersistentDeal, EveryTileOnceAndBalanced) {
  std::vector<std::pair<int64_t, int64_t>> grids; // (CTAs, tiles)
  for (int64_t ctas : {1, 2, 3, 7, 16})
    for (int64_t tiles = 0; tiles <= 4 * ctas + 3; ++tiles)
      grids.emplace_back(ctas, tiles);
  // An H200's 132 SMs: fewer tiles than CTAs, exact rounds, Llama-3-8B
  // prefill's 1376 tiles (10 full rounds), an odd last round (2816).
  for (int64_t tiles : {1, 131, 132, 133, 264, 1376, 2816})
    grids.emplace_back(132, tiles);
  for (auto [ctas, numTiles] : grids) {
    SCOPED_TRACE(testing::Message()
                 << ctas << " CTAs, " << numTiles << " tiles");
    std::vector<int> seen(numTiles, 0);
    std::vector<int64_t> cost(ctas, 0);
    for (int64_t cta = 0; cta < ctas; ++cta) {
      std::vector<int64_t> tiles = tilesOf(cta, ctas, numTiles);
      EXPECT_TRUE(std::is_sorted(tiles.begin(), tiles.end()));
      for (int64_t t : tiles) {
        ASSERT_GE(t, 0);
        ASSERT_LT(t, numTiles);
        ++seen[t];
        cost[cta] += numTiles - t;
      }
    }
    EXPECT_TRUE(
        std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    auto [lo, hi] = std::minmax_element(cost.begin(), cost.end());
    EXPECT_LE(*hi - *lo, ctas);
  }
}

} // namespace

//===- ManifestCoverageTest.cpp - grids cover O, boxes fit ----------------===//
//
// A manifest edited by hand (or written by a broken writer) whose attention
// grid covers only part of O, whose shared memory cannot hold a TMA box, or
// whose key no longer matches the grid is refused when the bundle loads.
//
//===----------------------------------------------------------------------===//

#include "TestBundles.h"

#include "llvm/Support/JSON.h"

using namespace attn::bundle;
using namespace attn::testing;
namespace json = llvm::json;

namespace {

/// The parse error of `kernel`'s manifest after `edit` changed kernel 0's
/// JSON ("" when it parsed).
template <typename Edit>
std::string errorAfter(const KernelEntry &kernel, Edit edit) {
  json::Value value = toJSON(manifestOf({kernel}));
  json::Object &top = *value.getAsObject();
  edit(*(*top.getArray("kernels"))[0].getAsObject());
  llvm::Expected<Manifest> parsed =
      parseManifest(llvm::formatv("{0}", value).str());
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

json::Object &launchOf(json::Object &kernel) {
  return *kernel.getObject("launch");
}

/// Term `i` of grid x.
json::Object &gridXTerm(json::Object &kernel, size_t i) {
  json::Object &x = *(*launchOf(kernel).getArray("grid"))[0].getAsObject();
  return *(*x.getArray("terms"))[i].getAsObject();
}

#define EXPECT_ERROR_HAS(message, part)                                        \
  EXPECT_NE(std::string(message).find(part), std::string::npos)                \
      << "message: " << (message)

constexpr const char *kUncovered = "part of its output would never be written";

// wgmmaKernel's grid x is ceil(Nq / 128) * Hq * B with BLOCK_M 128: a CTA
// per tile of one (batch, head).
TEST(ManifestCoverage, WgmmaGridCoversEveryRow) {
  KernelEntry k = wgmmaKernel("w");
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  // Tiles twice as tall as the kernel's.
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                gridXTerm(kernel, 0)["divisor"] = 256;
                              }),
                   kUncovered);
  // The batch term gone.
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                json::Object &x = *(*launchOf(kernel).getArray(
                                                        "grid"))[0]
                                                       .getAsObject();
                                x.getArray("terms")->erase(
                                    x.getArray("terms")->begin() + 2);
                              }),
                   kUncovered);
  // Q's rows counted off D instead of Nq.
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                gridXTerm(kernel, 0)["dim"] = 3;
                              }),
                   "kernels[0].launch.grid: has");
}

TEST(ManifestCoverage, StaticGridsAreCheckedAtTheKeysLengths) {
  // B 2, Hq 8, Nq 300: ceil(300 / 128) * 8 * 2 = 48 CTAs.
  KernelEntry k = withShape(wgmmaKernel("s"), 2, 8, 8, 300, 300);
  k.grid[0] = GridDim{48, {}};
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  k.grid[0] = GridDim{24, {}};
  EXPECT_ERROR_HAS(errorAfter(k, [](json::Object &) {}),
                   "has 24 CTAs for a call of B = 2, Hq = 8, Hkv = 8, Nq = "
                   "300, Nk = 300, but the kernel computes 48 tiles");
}

// Enough CTAs for the rows is not enough: a tile belongs to one (batch,
// head), so ceil(Nq / 48) * B CTAs of 192 rows miss tiles of Hq 4.
TEST(ManifestCoverage, TilesArePerBatchAndHead) {
  KernelEntry k = wgmmaKernel("t");
  k.key.blockM = 192;
  k.key.numHeadsQ = 4;
  k.key.numHeadsKV = 4;
  k.grid[0] = GridDim{1, {{Operand::Q, 2, 48}, {Operand::Q, 0, 1}}};
  EXPECT_ERROR_HAS(errorAfter(k, [](json::Object &) {}), kUncovered);
}

// A grid counted off Nk covers Q only when Nk >= Nq.
TEST(ManifestCoverage, QTilesAreNotCountedOffK) {
  KernelEntry k = wgmmaKernel("k");
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                gridXTerm(kernel, 0)["operand"] = "k";
                              }),
                   kUncovered);
}

// GQA packing: a tile holds the G query heads of a KV head.
TEST(ManifestCoverage, PackedTilesHoldAGroupOfHeads) {
  KernelEntry k = gqaPackedKernel("g");
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                gridXTerm(kernel, 0)["divisor"] = 128;
                              }),
                   kUncovered);
}

// O_partial [S, B, Hq, Nq, D] and LSE_partial [S, B, Hq, Nq] hold what the
// splits write.
TEST(ManifestCoverage, SplitWorkspaceHoldsEverySplit) {
  KernelEntry k = splitKernel("w", 3);
  // Workspace buffer `buffer`'s extent `dim` as the constant `value`.
  auto shrink = [&](size_t buffer, size_t dim, int64_t value) {
    KernelEntry edited = k;
    edited.workspace[buffer].shape[dim] = GridDim{value, {}};
    return errorAfter(edited, [](json::Object &) {});
  };
  EXPECT_ERROR_HAS(shrink(0, 0, 2), "kernels[0].workspace[0].shape: holds");
  EXPECT_ERROR_HAS(shrink(0, 4, 64), "but the kernel writes");
  EXPECT_ERROR_HAS(shrink(1, 1, 1), "kernels[0].workspace[1].shape: holds");
}

// The backward's Delta, LSE_log2 [B, Hq, Nq] and dQ_acc [B, Hq, Nq, D], and
// a dK/dV CTA per BLOCK_N keys of one (batch, KV head).
TEST(ManifestCoverage, BackwardBuffersAndKeyBlocks) {
  KernelEntry k = bwdKernel("b");
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  KernelEntry halfDelta = k;
  halfDelta.workspace[0].shape[2] = GridDim{100, {}};
  EXPECT_ERROR_HAS(errorAfter(halfDelta, [](json::Object &) {}),
                   "kernels[0].workspace[0].shape: holds 200 elements for a "
                   "call of B = 1, Hq = 2, Nq = 200, but the kernel writes "
                   "400 there");
  KernelEntry shortAcc = k;
  shortAcc.workspace[2].shape[3] = GridDim{64, {}};
  EXPECT_ERROR_HAS(errorAfter(shortAcc, [](json::Object &) {}),
                   "kernels[0].workspace[2].shape: holds");
  KernelEntry fewKeyBlocks = k; // ceil(300 / 128) = 3 key blocks
  fewKeyBlocks.then[1].grid[0] = GridDim{2, {}};
  EXPECT_ERROR_HAS(errorAfter(fewKeyBlocks, [](json::Object &) {}),
                   "kernels[0].then[1].launch.grid: has 2 CTAs");
}

TEST(ManifestCoverage, SplitsAreCountedInTheRows) {
  KernelEntry k = splitKernel("sp", 3);
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  // The key says 5 splits, the grid launches 3.
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                (*kernel.getObject("key"))["splits"] = 5;
                              }),
                   kUncovered);
}

TEST(ManifestCoverage, VarlenGridsCoverTheLongestSequence) {
  KernelEntry k = varlenKernel("vl");
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  EXPECT_ERROR_HAS(errorAfter(k,
                              [](json::Object &kernel) {
                                gridXTerm(kernel, 0)["divisor"] = 4096;
                              }),
                   kUncovered);
}

TEST(ManifestCoverage, PersistentGridsLoopOverTheTiles) {
  KernelEntry k = wgmmaKernel("p");
  k.grid[0] = GridDim{132, {}};
  k.persistentCtas = 132;
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
}

TEST(ManifestCoverage, SharedMemoryHoldsTheLargestBox) {
  KernelEntry k = wgmmaKernel("m"); // boxes of 64 x 128 bf16: 16 KiB
  EXPECT_EQ(errorAfter(k, [](json::Object &) {}), "");
  EXPECT_ERROR_HAS(
      errorAfter(k,
                 [](json::Object &kernel) {
                   launchOf(kernel)["dynamic_shared_bytes"] = 1024;
                 }),
      "kernels[0].launch.dynamic_shared_bytes: is 1024 (and 0 static), but a "
      "TMA box of the launch alone takes 16384 bytes");
}

TEST(ManifestCoverage, ScaleIsANormalF32) {
  KernelEntry k = wgmmaKernel("sc");
  for (double scale : {1e-40, 0.0, -0.125, 1e39})
    EXPECT_ERROR_HAS(errorAfter(k,
                                [&](json::Object &kernel) {
                                  (*kernel.getObject("key"))["scale"] = scale;
                                }),
                     "key.scale: must be a positive normal f32");
}

} // namespace

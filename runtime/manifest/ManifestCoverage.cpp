//===- ManifestCoverage.cpp - grids that cover O, boxes that fit ----------===//
//
// What a launch's recorded shape must hold whatever the compiler chose: a
// CTA of the attention launch computes at most BLOCK_M rows of O (a row is
// one query of one head; with GQA packing a tile's rows are (query, head)
// pairs, with split-KV each split writes its own partial rows), so the grid
// has at least B * Hq * Nq * splits / BLOCK_M CTAs on every call; and every
// TMA box lands in shared memory, so a launch has at least its largest
// box's bytes. A grid edited to cover half the tiles would otherwise leave
// part of O unwritten, and a short shared-memory size would let the copies
// overrun it.
//
//===----------------------------------------------------------------------===//

#include "ManifestChecks.h"

#include "llvm/Support/FormatVariadic.h"

using llvm::formatv;

namespace attn::bundle {

/// constant * prod ceil((size + offset) / divisor) for `sample`, saturated
/// at INT64_MAX.
static int64_t extent(const GridDim &dim, const FwdKey &key,
                      const CallSample &sample) {
  int64_t value = dim.constant;
  for (const GridTerm &t : dim.terms) {
    int64_t size = sampleSize(t.operand, t.dim, key, sample) + t.offset;
    int64_t factor = llvm::divideCeil(std::max<int64_t>(size, 0), t.divisor);
    if (__builtin_mul_overflow(value, factor, &value))
      return INT64_MAX;
  }
  return value;
}

/// Calls that exercise every dynamic length: one row, tails, many tiles;
/// lengths the key fixes are the key's.
static std::vector<CallSample> samples(const FwdKey &key) {
  int64_t m = std::max<int64_t>(key.blockM, 1);
  std::vector<CallSample> out;
  for (auto [b, hkv, n] : {std::array<int64_t, 3>{1, 1, 1},
                           {3, 2, 2 * m + 1},
                           {2, 4, 17 * m + 5}}) {
    CallSample s;
    s.batch = key.batch.value_or(b);
    s.numHeadsKV = key.numHeadsKV.value_or(hkv);
    s.numHeadsQ = key.numHeadsQ.value_or(2 * s.numHeadsKV);
    s.seqLenQ = key.seqLenQ.value_or(n);
    s.seqLenK = key.seqLenK.value_or(n + 7);
    out.push_back(s);
  }
  return out;
}

/// The attention launch of a forward kernel that is not persistent (whose
/// CTAs loop over the tiles) computes each row of O, or of each split's
/// partial O, in one of its CTAs.
static llvm::Error checkGridCovers(const KernelEntry &kernel,
                                   const std::string &at) {
  const FwdKey &key = kernel.key;
  if (kernel.isBackward() || kernel.persistentCtas > 0 || key.blockM < 1)
    return llvm::Error::success();
  size_t index = kernel.persistentLaunch();
  const KernelLaunch &launch = kernel.launch(index);
  for (const CallSample &s : samples(key)) {
    int64_t ctas = 1, rows = 1, covered;
    for (const GridDim &dim : launch.grid)
      if (__builtin_mul_overflow(ctas, extent(dim, key, s), &ctas))
        ctas = INT64_MAX;
    for (int64_t n : {s.batch, s.numHeadsQ, s.seqLenQ, key.splits})
      if (__builtin_mul_overflow(rows, n, &rows))
        rows = INT64_MAX;
    if (__builtin_mul_overflow(ctas, key.blockM, &covered))
      covered = INT64_MAX;
    if (covered >= rows)
      continue;
    std::string where = index == 0 ? at : formatv("{0}.then[{1}]", at,
                                                  index - 1).str();
    return corrupt(
        where + ".launch.grid",
        formatv("has {0} CTAs for a call of B = {1}, Hq = {2}, Nq = {3}, "
                "but O has {4} rows (B * Hq * Nq * splits) and a CTA "
                "computes at most block_m = {5}: part of O would never be "
                "written",
                ctas, s.batch, s.numHeadsQ, s.seqLenQ, rows, key.blockM));
  }
  return llvm::Error::success();
}

/// Bytes of one box of tensor map `p`.
static int64_t boxBytes(const KernelEntry &kernel, const Param &p) {
  int64_t elements = p.box[0] * p.box[1] * p.box[2] * p.box[3];
  int64_t bytes = p.workspace >= 0
                      ? workspaceElementBytes(kernel.workspace[p.workspace].dtype)
                      : dtypeBytes(expectedDtype(p.operand, kernel.key));
  return elements * bytes;
}

/// Every launch's dynamic and static shared memory holds its largest box.
static llvm::Error checkBoxesFit(const KernelEntry &kernel,
                                 const std::string &at) {
  for (size_t l = 0; l < kernel.numLaunches(); ++l) {
    const KernelLaunch &launch = kernel.launch(l);
    int64_t largest = 0;
    for (const Param &p : launch.params)
      if (p.field == Param::Field::TensorMap)
        largest = std::max(largest, boxBytes(kernel, p));
    int64_t shared = launch.dynamicSharedBytes + launch.resources.sharedBytes;
    if (largest <= shared)
      continue;
    std::string where =
        l == 0 ? at : formatv("{0}.then[{1}]", at, l - 1).str();
    return corrupt(where + ".launch.dynamic_shared_bytes",
                   formatv("is {0} (and {1} static), but a TMA box of the "
                           "launch alone takes {2} bytes of shared memory",
                           launch.dynamicSharedBytes,
                           launch.resources.sharedBytes, largest));
  }
  return llvm::Error::success();
}

llvm::Error checkCoverage(const KernelEntry &kernel, const llvm::Twine &at) {
  if (llvm::Error err = checkGridCovers(kernel, at.str()))
    return err;
  return checkBoxesFit(kernel, at.str());
}

} // namespace attn::bundle

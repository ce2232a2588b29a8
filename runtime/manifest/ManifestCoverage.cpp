//===- ManifestCoverage.cpp - grids that cover O, buffers that hold it ----===//
//
// What a launch's recorded shape must hold whatever the compiler chose,
// checked at the key's lengths or, where they are dynamic, at sample calls:
// - a CTA of the attention launch computes one BLOCK_M-row tile of one
//   (batch, head) (with GQA packing, of one KV head's G query heads; with
//   split-KV, of one split), so the grid has at least
//   splits * B * (Hq / G) * ceil(Nq * G / BLOCK_M) CTAs; a backward's
//   dK/dV launch has a CTA per BLOCK_N keys of one (batch, KV head);
// - split-KV's O_partial [S, B, Hq, Nq, D] and LSE_partial [S, B, Hq, Nq]
//   and a backward's Delta, LSE_log2 [B, Hq, Nq] and dQ_acc [B, Hq, Nq, D]
//   hold at least those elements (the kernels write them whole);
// - every TMA box lands in shared memory, so a launch has at least its
//   largest box's bytes.
// A grid edited to cover half the tiles would leave part of O unwritten; a
// short buffer or shared memory would be written past.
//
//===----------------------------------------------------------------------===//

#include "ManifestChecks.h"

#include "llvm/Support/FormatVariadic.h"

using llvm::formatv;
using llvm::StringRef;

namespace attn::bundle {

/// evaluate() for `sample`.
static int64_t extent(const GridDim &dim, const FwdKey &key,
                      const CallSample &sample) {
  return evaluate(dim, [&](Operand op, int64_t d) {
    return sampleSize(op, d, key, sample);
  });
}

/// Calls that exercise every dynamic length: one row, tails, many tiles,
/// Nk below and above Nq; lengths the key fixes are the key's.
static std::vector<CallSample> samples(const FwdKey &key) {
  int64_t m = std::max<int64_t>(key.blockM, 1);
  std::vector<CallSample> out;
  for (auto [b, hkv, nq, nk] : {std::array<int64_t, 4>{1, 1, 1, 1},
                                {3, 2, 2 * m + 1, 2 * m + 8},
                                {2, 4, 17 * m + 5, 1},
                                {2, 3, 5 * m + 3, 40 * m + 1}}) {
    CallSample s;
    s.batch = key.batch.value_or(b);
    s.numHeadsKV = key.numHeadsKV.value_or(hkv);
    s.numHeadsQ = key.numHeadsQ.value_or(2 * s.numHeadsKV);
    s.seqLenQ = key.seqLenQ.value_or(nq);
    s.seqLenK = key.seqLenK.value_or(nk);
    out.push_back(s);
  }
  return out;
}

/// a * b * ..., saturated at INT64_MAX.
static int64_t product(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out))
      return INT64_MAX;
  return out;
}

static int64_t ceilDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(llvm::divideCeil(a, b));
}

/// "kernels[i]" or "kernels[i].then[l - 1]".
static std::string launchPath(const std::string &at, size_t l) {
  return l == 0 ? at : formatv("{0}.then[{1}]", at, l - 1).str();
}

/// The query heads of one tile: the Q map's heads (box[1]) with GQA
/// packing (a heads_inner map), else 1.
static int64_t packedHeads(const KernelLaunch &launch) {
  for (const Param &p : launch.params)
    if (p.field == Param::Field::TensorMap && p.workspace < 0 &&
        p.operand == Operand::Q && p.headsInner)
      return std::max<int64_t>(p.box[1], 1);
  return 1;
}

/// The CTAs `launch` needs for sample `s`: the attention's tiles, or a
/// backward dK/dV launch's key blocks; 0 for a launch without such a rule.
static int64_t neededCtas(const KernelEntry &kernel, size_t l,
                          const CallSample &s) {
  const FwdKey &key = kernel.key;
  const KernelLaunch &launch = kernel.launch(l);
  if (kernel.isBackward()) {
    bool loadsTiles = llvm::any_of(launch.params, [](const Param &p) {
      return p.field == Param::Field::TensorMap;
    });
    return loadsTiles && key.blockN > 0
               ? product({s.batch, s.numHeadsKV,
                          ceilDiv(s.seqLenK, key.blockN)})
               : 0;
  }
  if (l != kernel.persistentLaunch() || kernel.persistentCtas > 0 ||
      key.blockM < 1)
    return 0;
  int64_t g = packedHeads(launch);
  return product({key.splits, s.batch, s.numHeadsQ / g,
                  ceilDiv(product({s.seqLenQ, g}), key.blockM)});
}

/// Each launch with a rule (neededCtas) has the CTAs it needs.
static llvm::Error checkGridCovers(const KernelEntry &kernel,
                                   const std::string &at) {
  const FwdKey &key = kernel.key;
  for (const CallSample &s : samples(key))
    for (size_t l = 0; l < kernel.numLaunches(); ++l) {
      int64_t needed = neededCtas(kernel, l, s), ctas = 1;
      for (const GridDim &dim : kernel.launch(l).grid)
        ctas = product({ctas, extent(dim, key, s)});
      if (ctas >= needed)
        continue;
      return corrupt(
          launchPath(at, l) + ".launch.grid",
          formatv("has {0} CTAs for a call of B = {1}, Hq = {2}, Hkv = {3}, "
                  "Nq = {4}, Nk = {5}, but the kernel computes {6} tiles "
                  "(one per CTA): part of its output would never be written",
                  ctas, s.batch, s.numHeadsQ, s.numHeadsKV, s.seqLenQ,
                  s.seqLenK, needed));
    }
  return llvm::Error::success();
}

/// The elements workspace buffer `index` must hold for sample `s`, or 0.
static int64_t neededElements(const KernelEntry &kernel, size_t index,
                              const CallSample &s) {
  const FwdKey &key = kernel.key;
  int64_t rows = product({s.batch, s.numHeadsQ, s.seqLenQ});
  if (kernel.isBackward()) // Delta, LSE_log2, dQ_acc
    return index < 2 ? rows : index == 2 ? product({rows, key.headDim}) : 0;
  if (key.splits < 2)
    return 0;
  StringRef name = kernel.workspace[index].name;
  if (name == "o_partial")
    return product({key.splits, rows, key.headDim});
  if (name == "lse_partial")
    return product({key.splits, rows});
  return 0;
}

/// Split-KV's and the backward's buffers hold what the kernels write.
static llvm::Error checkWorkspaceHolds(const KernelEntry &kernel,
                                       const std::string &at) {
  for (const CallSample &s : samples(kernel.key))
    for (size_t i = 0; i < kernel.workspace.size(); ++i) {
      int64_t needed = neededElements(kernel, i, s), held = 1;
      for (const GridDim &dim : kernel.workspace[i].shape)
        held = product({held, extent(dim, kernel.key, s)});
      if (held >= needed)
        continue;
      return corrupt(
          formatv("{0}.workspace[{1}].shape", at, i),
          formatv("holds {0} elements for a call of B = {1}, Hq = {2}, Nq = "
                  "{3}, but the kernel writes {4} there",
                  held, s.batch, s.numHeadsQ, s.seqLenQ, needed));
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
    return corrupt(launchPath(at, l) + ".launch.dynamic_shared_bytes",
                   formatv("is {0} (and {1} static), but a TMA box of the "
                           "launch alone takes {2} bytes of shared memory",
                           launch.dynamicSharedBytes,
                           launch.resources.sharedBytes, largest));
  }
  return llvm::Error::success();
}

llvm::Error checkCoverage(const KernelEntry &kernel, const llvm::Twine &at) {
  std::string where = at.str();
  if (llvm::Error err = checkGridCovers(kernel, where))
    return err;
  if (llvm::Error err = checkWorkspaceHolds(kernel, where))
    return err;
  return checkBoxesFit(kernel, where);
}

} // namespace attn::bundle

//===- SpillAdvice.cpp - what avoids a kernel's register spills -----------===//

#include "SpillAdvice.h"

#include "attn/manifest/Manifest.h"

#include "llvm/Support/FormatVariadic.h"

namespace bundle = ::attn::bundle;

namespace {

/// The launch that runs the attention tiles: the dK/dV launch of a
/// backward, the last of a quantized kernel (after its quantize launches),
/// else the first (split-KV's combine follows it).
size_t tileLaunch(const bundle::KernelEntry &entry) {
  if (entry.isBackward())
    return 2;
  return entry.key.quantizeFp8 ? entry.numLaunches() - 1 : 0;
}

std::string fp8TwoWarpgroups(const bundle::FwdKey &key) {
  std::string fix =
      key.headDim <= 128
          ? "the default tile, 192 x 96 with three consumer warpgroups, "
            "assembles without"
          : "--block-m=64 (one consumer warpgroup, the producer then keeps "
            "40; not timed) assembles without";
  return "with two consumer warpgroups at 240 registers the producer keeps "
         "24, too few for its warps that permute V^T (the spill is theirs, "
         "per 16-byte unit of V^T, not the consumers'); " +
         fix;
}

} // namespace

std::string mlir::attn::spillAdvice(const bundle::KernelEntry &entry,
                                    size_t launch) {
  const bundle::FwdKey &key = entry.key;
  if (key.path == "fma")
    return "the CUDA-core path keeps a query row's D accumulators per "
           "thread; the tensor-core path (--path=wgmma, sm_90a's default) "
           "assembles this shape without spills";
  if (launch != tileLaunch(entry))
    return "";
  if (entry.persistentCtas > 0)
    return "its persistent tile loop keeps each tile's indices live (in "
           "the producer, and at D 64 in the consumers); the same kernel "
           "without --persistent-ctas (the default: persistent kernels are "
           "a tuning variant, docs/perf-notes.md) assembles without";
  if (entry.isBackward())
    return "the dK/dV consumers keep dK and dV in registers at their 240 "
           "cap; no option lowers that (docs/perf-notes.md lists the "
           "shapes checked)";
  bool fp8 = key.dtype == "e4m3" || key.quantizeFp8;
  if (fp8 && key.blockM == 128)
    return fp8TwoWarpgroups(key);
  if (!fp8 && key.blockM == 192)
    return llvm::formatv("three consumer warpgroups hold BLOCK_N / 2 + D / 2 "
                         "= {0} accumulators each at their 160-register cap; "
                         "--block-m=128 (two at 240) assembles without, "
                         "where 192 rows ran 15-20% faster on dense D 64 "
                         "(docs/perf-notes.md)",
                         key.blockN / 2 + (key.headDim + 7) / 8 * 4)
        .str();
  return "";
}

void mlir::attn::warnSpills(llvm::raw_ostream &log,
                            const bundle::KernelEntry &entry) {
  for (size_t i = 0; i < entry.numLaunches(); ++i) {
    const bundle::KernelLaunch &l = entry.launch(i);
    const bundle::Resources &r = l.resources;
    if (r.spillStoreBytes == 0 && r.spillLoadBytes == 0)
      continue;
    std::string advice = spillAdvice(entry, i);
    log << "  warning: " << l.name << (i ? " (" + l.cubin + ")" : "")
        << " spills registers to local memory (" << r.spillStoreBytes
        << " B stored, " << r.spillLoadBytes
        << " B loaded): expect it to be slow"
        << (advice.empty() ? "" : "; " + advice) << "\n";
  }
}

//===- Dispatch.cpp - the kernel for a call, split count ------------------===//

#include "Bundle.h"
#include "CallChecks.h"
#include "KernelMatch.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace attn::runtime;
using attn::bundle::GridDim;
using attn::bundle::KernelEntry;
using llvm::formatv;

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

bool sameScale(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

static bool matches(const KernelEntry &kernel, const FwdCall &call) {
  return mismatches(kernel, call) == 0;
}

/// More static lengths first, then contiguous over strided, then the
/// tensor-core path over the FMA one.
static bool moreSpecialized(const KernelEntry &a, const KernelEntry &b) {
  int sa = a.key.numStaticLengths(), sb = b.key.numStaticLengths();
  if (sa != sb)
    return sa > sb;
  if (a.key.strided != b.key.strided)
    return !a.key.strided;
  return a.key.path == "wgmma" && b.key.path != "wgmma";
}

/// bundle::evaluate for this call's sizes (checkGrid refuses a saturated
/// INT64_MAX).
int64_t gridDim(const GridDim &dim, const CallOperands &args) {
  return bundle::evaluate(dim, [&](bundle::Operand op, int64_t d) {
    return bundle::isScalarOperand(op) ? args.scalar(op)
                                       : args.tensor(op).sizes[d];
  });
}

std::array<int64_t, 3> gridOf(const bundle::KernelLaunch &kernel,
                              const CallOperands &args) {
  return {gridDim(kernel.grid[0], args), gridDim(kernel.grid[1], args),
          gridDim(kernel.grid[2], args)};
}

Status checkGrid(const bundle::KernelLaunch &kernel, const CallOperands &args) {
  std::array<int64_t, 3> grid = gridOf(kernel, args);
  if (grid[0] < 1 || grid[0] > INT32_MAX || grid[1] < 1 || grid[1] > 65535 ||
      grid[2] < 1 || grid[2] > 65535)
    return invalid(formatv("kernel {0}: grid {1} for this call is outside the "
                           "CUDA limits (x in [1, 2^31-1], y and z in [1, "
                           "65535])",
                           kernel.name, listText(grid.data(), 3)));
  return Status::success();
}

/// SMs of the current context's device; 0 without a driver or context.
static int currentDeviceSMs() {
  std::string error;
  const DriverApi *driver = getDriver(error);
  CUcontext context = nullptr;
  CUdevice device = 0;
  if (!driver || driver->ctxGetCurrent(&context) != CUDA_SUCCESS || !context ||
      driver->ctxGetDevice(&device) != CUDA_SUCCESS)
    return 0;
  return deviceSMs(*driver, device);
}

/// CTAs of `launch` an SM holds at once, by dynamic shared memory (228 KiB
/// per SM, 1 KiB of it reserved per CTA) and threads (2048 per SM).
static int64_t ctasPerSM(const bundle::KernelLaunch &launch) {
  int64_t threads = std::max<int64_t>(1, launch.threads[0] * launch.threads[1] *
                                             launch.threads[2]);
  int64_t bySmem = launch.dynamicSharedBytes > 0
                       ? 228 * 1024 / (launch.dynamicSharedBytes + 1024)
                       : 32;
  return std::max<int64_t>(1, std::min({bySmem, 2048 / threads, int64_t(32)}));
}

/// Split-KV's split count per call, FlashAttention-2's num_splits
/// heuristic: a bundle built with several split counts of one kernel
/// (attn-compile --variant="splits=S") holds them as variants. For each
/// count (its first variant), the partial launch fills waves = CTAs / (SMs
/// * CTAs per SM) of the device, with efficiency waves / ceil(waves); the
/// fewest splits within 85% of the best efficiency win, since every split
/// adds a workspace round trip and combine work. Counts above the K/V
/// blocks (splits left empty) are skipped. The lengths are on the device
/// for paged and varlen calls, so the blocks count from FwdCall::seqLenK,
/// as FlashAttention does: a batched paged call's capacity max_pages *
/// page_size, a varlen call's (paged or not) max_seqlen_k; a varlen call's
/// partial grid is in its terms too, ceil(max_seqlen_q / BLOCK_M) * S by
/// heads by B sequences. A tuned choice (attn_tune) wins over this.
size_t Bundle::chooseSplits(const FwdCall &call, const attn_fwd_args &args,
                            size_t best) const {
  std::map<int64_t, size_t> bySplits; // split count -> first variant
  for (size_t v : variantsOf(call, best))
    bySplits.try_emplace(kernel(v).key.splits, v);
  if (bySplits.size() < 2)
    return best;
  int sms = currentDeviceSMs();
  if (sms <= 0)
    return best;
  int64_t blocks = std::max<int64_t>(
      1, llvm::divideCeil(call.seqLenK,
                          std::max<int64_t>(1, kernel(best).key.blockN)));
  std::vector<std::pair<double, size_t>> efficiency; // by split count
  double top = 0;
  for (auto [splits, v] : bySplits) {
    if (splits > blocks && splits != bySplits.begin()->first)
      continue;
    std::array<int64_t, 3> grid = gridOf(kernel(v).launch(0), args);
    double waves = double(grid[0]) * double(grid[1]) * double(grid[2]) /
                   double(sms * ctasPerSM(kernel(v).launch(0)));
    double e = waves / std::ceil(waves);
    efficiency.emplace_back(e, v);
    top = std::max(top, e);
  }
  for (auto [e, v] : efficiency)
    if (e >= 0.85 * top)
      return v;
  return best;
}

Status Bundle::pickKernel(const FwdCall &call, const attn_fwd_args &args,
                          int64_t &index) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < numKernels(); ++i)
    if (matches(kernel(i), call) &&
        (!best || moreSpecialized(kernel(i), kernel(*best))))
      best = i;
  if (!best) {
    std::string message = formatv("no kernel in bundle {0} matches the call "
                                  "({1}); ",
                                  dir, call.describe())
                              .str();
    if (numKernels() == 0)
      message += "it has no kernels";
    else
      message += formatv("its {0} kernel(s): ", numKernels()).str();
    for (size_t i = 0; i < std::min<size_t>(numKernels(), 4); ++i)
      message += (i ? "; " : "") + bundle::describeKey(kernel(i));
    if (numKernels() > 4)
      message += formatv("; and {0} more", numKernels() - 4).str();
    message += closestKernel(manifest.kernels, call);
    return makeError(ATTN_ERROR_NO_MATCHING_KERNEL, message);
  }
  // Most bundles have no choices: no shape string, no variant scan per call.
  bool tuned = false;
  if (!tuning.empty())
    if (auto choice = tuning.lookup(call.describe()))
      for (size_t v : variantsOf(call, *best))
        if (kernel(v).name == choice->kernel) {
          best = v;
          tuned = true;
        }
  if (splitKV && !tuned && !call.empty())
    best = chooseSplits(call, args, *best);
  if (!call.empty())
    for (size_t i = 0; i < kernel(*best).numLaunches(); ++i)
      if (Status s = checkGrid(kernel(*best).launch(i), args); !s.ok())
        return s;
  index = static_cast<int64_t>(*best);
  return Status::success();
}

std::vector<size_t> Bundle::variantsOf(const FwdCall &call, size_t best) const {
  std::vector<size_t> variants;
  for (size_t i = 0; i < numKernels(); ++i)
    if (i == best || (matches(kernel(i), call) &&
                      !moreSpecialized(kernel(best), kernel(i)) &&
                      !moreSpecialized(kernel(i), kernel(best))))
      variants.push_back(i);
  return variants;
}

Status Bundle::select(const attn_fwd_args &args, int64_t &index) const {
  FwdCall call;
  if (Status s = validateFwd(args, call); !s.ok())
    return s;
  return pickKernel(call, args, index);
}

} // namespace attn::runtime

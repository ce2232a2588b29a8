//===- attn-run.cpp - check and time a bundle's kernels on the GPU --------===//
//
// Loads a kernel bundle through the runtime's C API (attn/runtime.h) and, for
// each kernel, runs attn_fwd on fresh random inputs with poisoned outputs,
// compares O and LSE with an fp32 reference computed on the GPU
// (Reference.cu, embedded as a cubin) and times the launches. Kernel keys
// come from the C API too (attn_bundle_kernel_key). The exit
// status is 0 iff every checked kernel passed. FP8 (e4m3) kernels get inputs
// quantized on the host (Fp8.h) and are checked against the reference on the
// dequantized values. Paged K/V kernels get scattered pages, random lengths
// and garbage in every unused cache row (Paged.h), and a reference that
// reads each sequence's keys through the block table. Varlen kernels get a
// packed batch of random lengths with empty sequences and padding rows
// (Varlen.h), a reference launched per sequence on views of the packed
// tensors, and a check that no padding row of O or LSE was written; varlen
// paged kernels the same with K/V in scattered pages. Varlen and paged
// kernels then run once per sequence with NaN in every row the sequence does
// not own, and its rows of O and LSE must keep their bits (Isolation.h).
// Backward kernels
// (kind "bwd") go through attn_bwd and are checked against the fp32
// reference backward (Backward.cpp).
//
// The forward's parts: the command line and call shapes (FwdArguments.cpp),
// the call's tensors and arguments (FwdInputs.cpp), the reference and
// isolation checks (FwdCheck.cpp); this file checks, times and tunes each
// kernel and prints the report.
//
//===----------------------------------------------------------------------===//

#include "Backward.h"
#include "FwdCall.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>

using attn::run::check;
using attn::run::Event;
using attn::run::makeError;
using attn::run::Reference;
using attn::run::Stream;
using attn::run::timeLaunches;
using namespace attn::run::fwd;

//===----------------------------------------------------------------------===//
// CUDA context
//===----------------------------------------------------------------------===//

/// Device 0's primary context, current on this thread while held.
class PrimaryContext {
public:
  ~PrimaryContext() {
    if (!held)
      return;
    cuCtxSetCurrent(nullptr);
    cuDevicePrimaryCtxRelease(device);
  }
  Error acquire() {
    if (Error err = check(cuInit(0), "cuInit"))
      return err;
    if (Error err = check(cuDeviceGet(&device, 0), "cuDeviceGet(0)"))
      return err;
    CUcontext ctx;
    if (Error err = check(cuDevicePrimaryCtxRetain(&ctx, device),
                          "cuDevicePrimaryCtxRetain"))
      return err;
    held = true;
    return check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
  CUdevice get() const { return device; }

private:
  CUdevice device = 0;
  bool held = false;
};

Error attn::run::timeLaunches(CUstream stream, unsigned iters,
                              llvm::function_ref<attn_status()> launch,
                              attn_status &status, double &ms) {
  ms = NAN;
  Event start, stop;
  if (Error err =
          check(cuEventCreate(start.init(), CU_EVENT_DEFAULT), "cuEventCreate"))
    return err;
  if (Error err =
          check(cuEventCreate(stop.init(), CU_EVENT_DEFAULT), "cuEventCreate"))
    return err;
  for (unsigned i = 0; i <= iters; ++i) {
    if (i == 1)
      if (Error err =
              check(cuEventRecord(start.get(), stream), "cuEventRecord"))
        return err;
    if ((status = launch()))
      return check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  if (Error err = check(cuEventRecord(stop.get(), stream), "cuEventRecord"))
    return err;
  if (Error err = check(cuEventSynchronize(stop.get()), "timed launches"))
    return err;
  float elapsed = 0;
  if (Error err = check(cuEventElapsedTime(&elapsed, start.get(), stop.get()),
                        "cuEventElapsedTime"))
    return err;
  ms = double(elapsed) / iters;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// One kernel
//===----------------------------------------------------------------------===//

/// Average time of `iters` attn_fwd launches after one warm-up; a failed
/// launch leaves `r.note` set and r.ms NaN.
static Error timeKernel(attn_bundle *bundle, const attn_fwd_args &args,
                        CUstream stream, unsigned iters, Result &r) {
  attn_status st = ATTN_SUCCESS;
  if (Error err = timeLaunches(
          stream, iters, [&] { return attn_fwd(bundle, &args, stream); }, st,
          r.ms))
    return err;
  if (st)
    r.note = failure(*r.shape, "timed attn_fwd", st);
  else
    r.tflops = r.shape->flops() / (r.ms * 1e9);
  return Error::success();
}

/// Launches the kernel once, checks it and times it. Kernel failures land in
/// `r`; the returned error is a driver failure that ends the run.
static Error runChecked(attn_bundle *bundle, const Reference &ref,
                        const Shape &s, uint64_t seed, CUstream stream,
                        Result &r) {
  Buffers b;
  if (Error err = allocateAll(s, b))
    return err;
  if (Error err = prepareInputs(ref, s, b, seed, stream))
    return err;
  attn_fwd_args args = makeArgs(s, b);
  if (attn_status st = attn_fwd_select(bundle, &args, &r.picked)) {
    r.note = failure(s, "attn_fwd_select", st);
    return check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  attn_status st = tuneOpt ? attn_tune(bundle, &args, stream, &r.picked)
                           : attn_fwd(bundle, &args, stream);
  if (st != ATTN_SUCCESS) {
    r.note = failure(s, tuneOpt ? "attn_tune" : "attn_fwd", st);
    return check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  if (Error err = check(cuStreamSynchronize(stream), "attn_fwd kernel"))
    return err;
  if (Error err = runReference(ref, s, b, stream))
    return err;
  if (Error err = checkOutputs(ref, s, b, stream, r))
    return err;
  if (s.varlen || s.paged())
    if (Error err = checkIsolation(bundle, ref, s, seed, stream, b, args, r))
      return err;
  r.pass = r.nonFinite == 0 && r.infMismatch == 0 && r.paddingWritten == 0 &&
           r.isolationChanged == 0 && r.note.empty() && passesTolerance(s, r);
  if (itersOpt == 0)
    return Error::success();
  // The checked launch read the descales back; timed launches must not
  // synchronize the stream each time.
  attn_bundle_set_check_values(bundle, 0);
  Error timed = timeKernel(bundle, args, stream, itersOpt, r);
  attn_bundle_set_check_values(bundle, 1);
  if (timed)
    return timed;
  r.pass &= r.note.empty();
  return Error::success();
}

static Error runKernel(attn_bundle *bundle, const attn_kernel_key &key,
                       const Reference &ref, uint64_t seed, CUstream stream,
                       Result &r) {
  Expected<Shape> shape = resolveShape(key);
  if (!shape) {
    r.note = llvm::toString(shape.takeError());
    return Error::success();
  }
  if (Error err = checkReferenceLimits(*shape, ref)) {
    r.shape = *shape;
    r.note = llvm::toString(std::move(err));
    return Error::success();
  }
  if (shape->varlen)
    shape->seqs = attn::run::makeVarlenInputs(shape->batch, shape->seqQ,
                                              shape->seqK, seed + 4);
  if (shape->paged())
    if (Error err = drawPages(*shape, seed + 3)) {
      r.shape = *shape;
      r.note = llvm::toString(std::move(err));
      return Error::success();
    }
  r.shape = *shape;
  return runChecked(bundle, ref, *shape, seed, stream, r);
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

static std::string number(double x, const char *style) {
  return std::isnan(x) ? "-" : llvm::formatv(style, x).str();
}

/// A varlen batch's lengths and packed rows, to reproduce a failure.
static void printVarlenBatch(const Shape &s) {
  const attn::run::VarlenInputs &in = s.seqs;
  llvm::outs() << "     varlen (Nq, Nk):";
  for (int64_t b = 0; b < in.batch(); ++b)
    llvm::outs() << " (" << in.seqQ(b) << ", " << in.seqK(b) << ")";
  llvm::outs() << "; total_q " << in.totalQ;
  if (!s.paged())
    llvm::outs() << ", total_k " << in.totalK;
  llvm::outs() << " (padding included)\n";
}

static void printTable(ArrayRef<Result> results) {
  if (results.empty())
    return;
  auto row = [](auto... cols) {
    llvm::outs() << llvm::formatv("{0,4} {1,-36} {2,6} {3,10} {4,10} {5,9} "
                                  "{6,10} {7,9} {8}\n",
                                  cols...);
  };
  llvm::outs() << "\n";
  row("#", "B Hq Hkv Nq Nk D dtype causal", "picked", "relerr(O)", "err(LSE)",
      "nonfinite", "ms", "TFLOP/s", "result");
  for (const Result &r : results) {
    row(r.index, r.shape ? r.shape->str() : std::string("-"),
        r.picked >= 0 ? std::to_string(r.picked) : std::string("-"),
        number(r.relErr, "{0:e2}"), number(r.lseErr, "{0:e2}"),
        r.nonFinite >= 0 ? std::to_string(r.nonFinite) : std::string("-"),
        number(r.ms, "{0:f3}"), number(r.tflops, "{0:f1}"),
        r.pass ? "PASS" : "FAIL");
    if (r.shape && r.shape->fp8 && !std::isnan(r.maxErr))
      llvm::outs() << llvm::formatv("     e4m3: max |O - ref| = {0:e2}, "
                                    "bound 0.05 * max |ref| + 0.01 = {1:e2}\n",
                                    r.maxErr, 0.05 * r.maxRef + 1e-2);
    if (!r.note.empty())
      llvm::outs() << "     " << r.note << "\n";
    else if (r.infMismatch > 0)
      llvm::outs() << "     " << r.infMismatch
                   << " rows disagree with the reference on LSE = -inf / O = 0"
                   << "\n";
    if (r.paddingWritten > 0)
      llvm::outs() << "     " << r.paddingWritten
                   << " elements of O or LSE written in the padding rows "
                      "(past cu_seqlens_q[B])\n";
    if (r.shape && r.shape->varlen && !r.shape->seqs.cuQ.empty())
      printVarlenBatch(*r.shape);
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

using BundlePtr = std::unique_ptr<attn_bundle, void (*)(attn_bundle *)>;

static Expected<BundlePtr> loadBundle(StringRef dir) {
  attn_bundle *raw = nullptr;
  if (attn_status st = attn_bundle_load(dir.str().c_str(), &raw))
    return makeError(Twine("cannot load bundle '") + dir +
                     "': " + attn_status_name(st) + ": " + attn_last_error());
  return BundlePtr(raw, attn_bundle_destroy);
}

/// Runs every selected kernel; returns whether all of them passed.
static Expected<bool> run(attn_bundle *bundle, CUdevice device, uint64_t seed) {
  int64_t count = attn_bundle_num_kernels(bundle);
  if (kernelOpt.getNumOccurrences() && (kernelOpt < 0 || kernelOpt >= count))
    return makeError(llvm::formatv("--kernel={0} is out of range: the bundle "
                                   "has {1} kernels",
                                   kernelOpt.getValue(), count));
  Reference ref;
  if (Error err = loadReference(ref, device))
    return err;
  Stream stream;
  if (Error err = check(cuStreamCreate(stream.init(), CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate"))
    return err;
  std::vector<Result> results;
  std::vector<attn::run::BwdResult> bwdResults;
  for (int64_t i = 0; i < count; ++i) {
    if (kernelOpt.getNumOccurrences() && i != kernelOpt)
      continue;
    llvm::outs() << "checking kernel " << i << "...\n";
    llvm::outs().flush();
    attn_kernel_key key;
    if (attn_bundle_kernel_key(bundle, i, &key) != ATTN_SUCCESS)
      return makeError(llvm::formatv("kernel {0}: {1}", i, attn_last_error()));
    if (key.kind == ATTN_KERNEL_BWD) {
      attn::run::BwdResult &r = bwdResults.emplace_back();
      r.index = i;
      if (Error err = attn::run::runBackwardKernel(bundle, key, ref, seed,
                                                   itersOpt, stream.get(), r)) {
        r.note = llvm::toString(std::move(err));
        printTable(results);
        attn::run::printBackwardTable(bwdResults);
        return makeError(llvm::formatv("kernel {0}: {1}", i, r.note));
      }
      continue;
    }
    Result &r = results.emplace_back();
    r.index = i;
    if (Error err = runKernel(bundle, key, ref, seed, stream.get(), r)) {
      // A driver error may leave the context unusable: stop here.
      r.note = llvm::toString(std::move(err));
      printTable(results);
      attn::run::printBackwardTable(bwdResults);
      return makeError(llvm::formatv("kernel {0}: {1}", i, r.note));
    }
  }
  printTable(results);
  attn::run::printBackwardTable(bwdResults);
  size_t passed =
      llvm::count_if(results, [](const Result &r) { return r.pass; }) +
      llvm::count_if(bwdResults,
                     [](const attn::run::BwdResult &r) { return r.pass; });
  size_t checked = results.size() + bwdResults.size();
  llvm::outs() << passed << " of " << checked << " kernels passed\n";
  return passed == checked;
}

static uint64_t defaultSeed() {
  return uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
}

static void printKernels(const attn_bundle *bundle) {
  int64_t count = attn_bundle_num_kernels(bundle);
  llvm::outs() << "bundle " << bundleDir << ": " << count << " kernels\n";
  for (int64_t i = 0; i < count; ++i)
    llvm::outs() << llvm::formatv("  [{0}] {1}\n", i,
                                  attn_bundle_kernel_info(bundle, i));
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: check a bundle's kernels against an fp32 GPU reference on "
      "random inputs and time them\n");
  auto fail = [](Error err) {
    llvm::errs() << "attn-run: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  };
  for (const cl::opt<int64_t> *opt : lengthOpts)
    if (*opt < 0)
      return fail(makeError("--" + opt->ArgStr + " must be >= 0"));
  // The context outlives the bundle: unloading modules needs it current.
  PrimaryContext context;
  Expected<BundlePtr> bundle = loadBundle(bundleDir);
  if (!bundle)
    return fail(bundle.takeError());
  printKernels(bundle->get());
  if (Error err = context.acquire())
    return fail(std::move(err));
  uint64_t seed =
      seedOpt.getNumOccurrences() ? seedOpt.getValue() : defaultSeed();
  llvm::outs()
      << "seed " << seed
      << " (Q, K, V use seed, seed+1, seed+2; a backward's dO seed+5)\n";
  Expected<bool> passed = run(bundle->get(), context.get(), seed);
  if (!passed)
    return fail(passed.takeError());
  return *passed ? 0 : 1;
}

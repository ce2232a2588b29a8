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
//===----------------------------------------------------------------------===//

#include "AttnRun.h"
#include "Backward.h"
#include "Fp8.h"
#include "Isolation.h"
#include "Paged.h"
#include "Varlen.h"
#include "attn/runtime.h"
#include "reference_cubin.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cuda.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

using attn::run::allocate;
using attn::run::check;
using attn::run::DeviceBuffer;
using attn::run::download;
using attn::run::Event;
using attn::run::kReferenceThreads;
using attn::run::makeError;
using attn::run::Reference;
using attn::run::Stream;
using attn::run::tensor;
using attn::run::timeLaunches;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory category("attn-run options");
static cl::opt<std::string> bundleDir(cl::Positional, cl::Required,
                                      cl::desc("<bundle-dir>"),
                                      cl::cat(category));
static cl::opt<int64_t> kernelOpt("kernel",
                                  cl::desc("Check only this kernel index"),
                                  cl::value_desc("index"), cl::cat(category));
static cl::opt<int64_t>
    batchOpt("batch",
             cl::desc("B, for a dynamic batch; for a varlen kernel the "
                      "number of sequences (default 8)"),
             cl::value_desc("n"), cl::cat(category));
static cl::opt<int64_t> headsQOpt("heads-q",
                                  cl::desc("Hq, for dynamic query heads"),
                                  cl::value_desc("n"), cl::cat(category));
static cl::opt<int64_t> headsKVOpt("heads-kv",
                                   cl::desc("Hkv, for dynamic key heads"),
                                   cl::value_desc("n"), cl::cat(category));
static cl::opt<int64_t>
    seqQOpt("seqlen-q",
            cl::desc("Nq, for a dynamic query length; for a varlen kernel "
                     "the largest sequence's (max_seqlen_q, default 257)"),
            cl::value_desc("n"), cl::cat(category));
static cl::opt<int64_t> seqKOpt(
    "seqlen-k",
    cl::desc("Nk, for a dynamic key length; for a paged K/V kernel the "
             "capacity per sequence, rounded up to whole pages (max_pages * "
             "page_size); for a varlen kernel the largest sequence's "
             "(max_seqlen_k, default 300; paged: the capacity)"),
    cl::value_desc("n"), cl::cat(category));
static cl::list<int32_t> cacheSeqlensOpt(
    "cache-seqlens", cl::CommaSeparated,
    cl::desc("Paged K/V kernels (not varlen): the B sequence lengths "
             "(cache_seqlens), "
             "each in [0, capacity] (default: random, with a full, a ragged "
             "and an empty sequence)"),
    cl::value_desc("n,n,..."), cl::cat(category));
static cl::opt<unsigned> itersOpt(
    "iters", cl::init(10), cl::value_desc("n"),
    cl::desc("Timed launches per kernel after one warm-up (0: no timing)"),
    cl::cat(category));
static cl::opt<bool> tuneOpt(
    "tune",
    cl::desc("Tune first: time the variants of each call's kernel "
             "(attn_tune), keep the fastest and write the choice to "
             "<bundle>/tuning.json"),
    cl::cat(category));
static cl::opt<uint64_t> seedOpt("seed",
                                 cl::desc("Seed of the random inputs "
                                          "(default: from the clock)"),
                                 cl::value_desc("u64"), cl::cat(category));

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
// The reference module (Reference.cu)
//===----------------------------------------------------------------------===//

static Error loadReference(Reference &ref, CUdevice device) {
  if (Error err =
          check(cuModuleLoadData(ref.module.init(), attn_reference_cubin),
                "cuModuleLoadData(reference cubin)"))
    return err;
  std::pair<CUfunction *, const char *> functions[] = {
      {&ref.fill[0], "fill_normal_f16"},
      {&ref.fill[1], "fill_normal_bf16"},
      {&ref.forward[0], "reference_fwd_f16"},
      {&ref.forward[1], "reference_fwd_bf16"},
      {&ref.forwardF32, "reference_fwd_f32"},
      {&ref.widen[0], "widen_f16"},
      {&ref.widen[1], "widen_bf16"},
      {&ref.forwardPaged[0], "reference_fwd_paged_f16"},
      {&ref.forwardPaged[1], "reference_fwd_paged_bf16"},
      {&ref.poisonPages[0], "poison_pages_f16"},
      {&ref.poisonPages[1], "poison_pages_bf16"},
      {&ref.forwardVarlen[0], "reference_fwd_varlen_f16"},
      {&ref.forwardVarlen[1], "reference_fwd_varlen_bf16"},
      {&ref.narrow[0], "narrow_f16"},
      {&ref.narrow[1], "narrow_bf16"},
      {&ref.backwardDq[0], "reference_bwd_dq_f16"},
      {&ref.backwardDq[1], "reference_bwd_dq_bf16"},
      {&ref.backwardDkDv[0], "reference_bwd_dkdv_f16"},
      {&ref.backwardDkDv[1], "reference_bwd_dkdv_bf16"}};
  for (auto [function, name] : functions)
    if (Error err =
            check(cuModuleGetFunction(function, ref.module.get(), name), name))
      return err;
  int optin = 0, statics = 0;
  if (Error err = check(
          cuDeviceGetAttribute(
              &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              device),
          "cuDeviceGetAttribute(shared memory opt-in)"))
    return err;
  if (Error err = check(cuFuncGetAttribute(&statics,
                                           CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                           ref.forward[0]),
                        "cuFuncGetAttribute(shared size)"))
    return err;
  ref.maxDynamicShared = optin - statics;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// The call checked for one kernel.
struct Shape {
  int64_t batch = 0, headsQ = 0, headsKV = 0, seqQ = 0, seqK = 0, headDim = 0;
  bool bf16 = false, causal = false, hasLse = false;
  bool fp8 = false; // e4m3 Q, K, V^T; bf16 O; descales
  /// A quantized (quantize_fp8) kernel: bf16 in and out, called with
  /// quantize = ATTN_QUANTIZE_FP8, held to FP8 accuracy.
  bool quantized = false;
  double scale = 0;
  /// Paged K/V (pageSize > 0): seqK is the capacity maxPages * pageSize;
  /// the caches hold batch * maxPages pages; `pages` holds the tables
  /// (drawn per run from the seed).
  int64_t pageSize = 0, maxPages = 0;
  attn::run::PagedInputs pages;
  /// Varlen (packed [total, H, D] tensors): seqQ and seqK are the max
  /// lengths, `seqs` the batch's cu_seqlens (drawn per run from the seed).
  /// Paged too: K/V are the caches above, sequence b's keys cu_seqlens_k[b
  /// + 1] - cu_seqlens_k[b] of them (no cache_seqlens).
  bool varlen = false;
  attn::run::VarlenInputs seqs;

  bool paged() const { return pageSize > 0; }
  int64_t numPages() const { return batch * maxPages; }
  /// Rows of Q and O: [B, Hq, Nq] or varlen [total_q, Hq].
  int64_t numRows() const {
    return (varlen ? seqs.totalQ : batch * seqQ) * headsQ;
  }
  int64_t numQ() const { return numRows() * headDim; }
  /// Elements of K (and of V): [B, Hkv, Nk, D], varlen [total_k, Hkv, D],
  /// or the paged caches [B * max_pages, page_size, Hkv, D] (as many as
  /// [B, Hkv, Nk, D]).
  int64_t numKV() const {
    return (varlen && !paged() ? seqs.totalK : batch * seqK) * headsKV *
           headDim;
  }
  /// FP8 V^T storage: rows of Nk padded to 16 bytes (a TMA stride).
  int64_t seqKPadded() const { return (seqK + 15) / 16 * 16; }
  /// Index of O's dtype in Reference's f16/bf16 pairs.
  int oIndex() const { return bf16 || fp8; }
  /// Keys of all sequences: B * Nk, or the sum of a paged call's lengths.
  double totalKeys() const {
    if (!paged())
      return double(batch) * seqK;
    double keys = 0;
    for (int32_t n : pages.lengths)
      keys += n;
    return keys;
  }
  double flops() const {
    double pairs = varlen ? seqs.pairs() : seqQ * totalKeys();
    double f = 4.0 * headsQ * pairs * headDim;
    return causal ? f / 2 : f;
  }
  std::string str() const {
    return llvm::formatv("{0} {1} {2} {3} {4} {5} {6}{7}{8}{9}{10}", batch,
                         headsQ, headsKV, seqQ, seqK, headDim,
                         fp8    ? "e4m3"
                         : bf16 ? "bf16"
                                : "f16",
                         causal ? " causal" : "", varlen ? " varlen" : "",
                         paged() ? " page" + std::to_string(pageSize) : "",
                         quantized ? " quantize=fp8" : "")
        .str();
  }
  /// The call's form, named in failure notes ("" for a plain call).
  std::string form() const {
    if (varlen && paged())
      return "varlen paged call (cu_seqlens_q/k, block_table, no "
             "cache_seqlens): ";
    return varlen ? "varlen call: " : paged() ? "paged call: " : "";
  }
};

/// The length options, in attn_kernel_key order.
static cl::opt<int64_t> *lengthOpts[] = {&batchOpt, &headsQOpt, &headsKVOpt,
                                         &seqQOpt, &seqKOpt};

/// A varlen kernel's B and max lengths when not given (key order; -1:
/// none): its key never fixes them; they describe the batch attn-run draws.
static const int64_t varlenDefaults[] = {8, -1, -1, 257, 300};

/// The kernel's static lengths, with the options' values for the dynamic
/// ones. Options that disagree with a static length are ignored (noted).
static Expected<Shape> resolveShape(const attn_kernel_key &key) {
  Shape s;
  int64_t fixed[] = {key.batch, key.num_heads_q, key.num_heads_kv, key.seqlen_q,
                     key.seqlen_k}; // -1: dynamic
  int64_t *out[] = {&s.batch, &s.headsQ, &s.headsKV, &s.seqQ, &s.seqK};
  std::string missing, ignored;
  for (size_t i = 0; i < std::size(fixed); ++i) {
    const cl::opt<int64_t> &opt = *lengthOpts[i];
    bool given = opt.getNumOccurrences() > 0;
    bool isStatic = fixed[i] >= 0;
    int64_t fallback = key.varlen ? varlenDefaults[i] : -1;
    if (isStatic && given && opt != fixed[i])
      ignored += (" --" + opt.ArgStr + "=" + Twine(opt.getValue())).str();
    if (!isStatic && !given && fallback < 0)
      missing += (" --" + opt.ArgStr).str();
    *out[i] = isStatic ? fixed[i] : given ? opt.getValue() : fallback;
  }
  if (!missing.empty())
    return makeError("dynamic lengths without a value: give" + missing);
  if (!ignored.empty())
    llvm::outs() << "  note: static lengths kept over" << ignored << "\n";
  s.headDim = key.head_dim;
  s.bf16 = key.dtype == ATTN_DTYPE_BF16;
  s.fp8 = key.dtype == ATTN_DTYPE_E4M3;
  s.quantized = key.quantize == ATTN_QUANTIZE_FP8;
  s.causal = key.causal;
  s.hasLse = key.has_lse;
  s.scale = key.scale;
  s.varlen = key.varlen;
  if (key.page_size > 0) {
    // --seqlen-k is the capacity, rounded up to whole pages.
    s.pageSize = key.page_size;
    s.maxPages = (s.seqK + s.pageSize - 1) / s.pageSize;
    s.seqK = s.maxPages * s.pageSize;
  }
  return s;
}

/// The host-side limits of the reference kernel's launch.
static Error checkReferenceLimits(const Shape &s, const Reference &ref) {
  if (s.headsKV < 1 || s.headsQ % s.headsKV != 0)
    return makeError("Hq must be a multiple of Hkv >= 1");
  if (s.batch > 65535 || s.headsQ > 65535 || s.seqQ > 0x7FFFFFFF)
    return makeError("the reference's grid (Nq, Hq, B) is over the limits");
  if (s.paged() && (s.seqK > INT32_MAX || s.numPages() > INT32_MAX))
    return makeError("a paged call's capacity and page count are i32");
  if (s.varlen && s.batch * std::max(s.seqQ, s.seqK) >
                      INT32_MAX - attn::run::kVarlenPadK)
    return makeError("a varlen call's cu_seqlens are i32: B * max length "
                     "must stay below 2^31");
  if ((s.seqK + s.headDim) * 4 > ref.maxDynamicShared)
    return makeError(llvm::formatv("the reference keeps Nk scores in shared "
                                   "memory: needs Nk <= {0}",
                                   ref.maxDynamicShared / 4 - s.headDim));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// One kernel
//===----------------------------------------------------------------------===//

struct Result {
  int64_t index = 0;
  std::optional<Shape> shape;
  int64_t picked = -1;
  double relErr = NAN, lseErr = NAN, ms = NAN, tflops = NAN;
  double maxErr = NAN, maxRef = NAN; // max |O - ref|, max |ref| (finite O)
  int64_t nonFinite = -1, infMismatch = -1;
  int64_t paddingWritten = 0; // varlen: padding elements of O, LSE written
  /// Varlen and paged: elements of O and LSE that changed when the rows a
  /// sequence does not own were NaN (checkIsolation).
  int64_t isolationChanged = 0;
  bool pass = false;
  std::string note; // why the kernel failed, if it did
};

/// The device tensors of one call.
struct Buffers {
  DeviceBuffer q, k, v, o, lse, refO, refLse;
  DeviceBuffer oF32; // O widened to f32 for the comparison
  // FP8: the descales, and the dequantized inputs the reference reads.
  DeviceBuffer qDescale, kDescale, vDescale, refQ, refK, refV;
  // Paged K/V: block_table, cache_seqlens, and the used rows of each page
  // (varlen contiguous K/V: the used rows of the packed K/V, one number).
  DeviceBuffer table, lengths, validRows;
  // Varlen: cu_seqlens_q, cu_seqlens_k.
  DeviceBuffer cuQ, cuK;
};

/// FP8: e4m3 Q and K, V as V^T storage ([B, Hkv, D, Nk'] viewed as [B,
/// Hkv, Nk, D]), bf16 O, f32 [B, Hkv] descales.
static void setFp8Args(const Shape &s, const Buffers &b, attn_fwd_args &args) {
  args.q.dtype = args.k.dtype = args.v.dtype = ATTN_DTYPE_E4M3;
  args.o.dtype = ATTN_DTYPE_BF16;
  int64_t n = s.seqKPadded(), d = s.headDim;
  int64_t vt[4] = {s.headsKV * d * n, d * n, 1, n};
  std::copy(std::begin(vt), std::end(vt), args.v.strides);
  args.q_descale = tensor(b.qDescale, ATTN_DTYPE_F32, {s.batch, s.headsKV});
  args.k_descale = tensor(b.kDescale, ATTN_DTYPE_F32, {s.batch, s.headsKV});
  args.v_descale = tensor(b.vDescale, ATTN_DTYPE_F32, {s.batch, s.headsKV});
}

/// Paged K/V: the caches [num_pages, page_size, Hkv, D], block_table i32
/// [B, max_pages], cache_seqlens i32 [B].
static void setPagedArgs(const Shape &s, const Buffers &b,
                         attn_fwd_args &args) {
  attn_dtype dtype = args.q.dtype;
  args.k = tensor(b.k, dtype, {s.numPages(), s.pageSize, s.headsKV, s.headDim});
  args.v = tensor(b.v, dtype, {s.numPages(), s.pageSize, s.headsKV, s.headDim});
  args.block_table = tensor(b.table, ATTN_DTYPE_I32, {s.batch, s.maxPages});
  args.cache_seqlens = tensor(b.lengths, ATTN_DTYPE_I32, {s.batch});
}

/// Varlen: q, o [total_q, Hq, D], lse [Hq, total_q], k, v [total_k, Hkv,
/// D] (paged: the caches and block_table setPagedArgs set, without
/// cache_seqlens), cu_seqlens_q/k i32 [B + 1], the max lengths.
static void setVarlenArgs(const Shape &s, const Buffers &b,
                          attn_fwd_args &args) {
  attn_dtype dtype = args.q.dtype;
  const attn::run::VarlenInputs &in = s.seqs;
  args.q = tensor(b.q, dtype, {in.totalQ, s.headsQ, s.headDim});
  args.o = tensor(b.o, dtype, {in.totalQ, s.headsQ, s.headDim});
  if (s.hasLse)
    args.lse = tensor(b.lse, ATTN_DTYPE_F32, {s.headsQ, in.totalQ});
  if (s.paged()) {
    args.cache_seqlens = {};
  } else {
    args.k = tensor(b.k, dtype, {in.totalK, s.headsKV, s.headDim});
    args.v = tensor(b.v, dtype, {in.totalK, s.headsKV, s.headDim});
  }
  args.cu_seqlens_q = tensor(b.cuQ, ATTN_DTYPE_I32, {s.batch + 1});
  args.cu_seqlens_k = tensor(b.cuK, ATTN_DTYPE_I32, {s.batch + 1});
  args.max_seqlen_q = in.maxQ;
  args.max_seqlen_k = in.maxK;
}

static attn_fwd_args makeArgs(const Shape &s, const Buffers &b) {
  attn_dtype dtype = s.bf16 ? ATTN_DTYPE_BF16 : ATTN_DTYPE_F16;
  attn_fwd_args args = {};
  args.q = tensor(b.q, dtype, {s.batch, s.headsQ, s.seqQ, s.headDim});
  args.k = tensor(b.k, dtype, {s.batch, s.headsKV, s.seqK, s.headDim});
  args.v = tensor(b.v, dtype, {s.batch, s.headsKV, s.seqK, s.headDim});
  if (s.paged())
    setPagedArgs(s, b, args);
  args.o = tensor(b.o, dtype, {s.batch, s.headsQ, s.seqQ, s.headDim});
  if (s.fp8)
    setFp8Args(s, b, args);
  if (s.quantized)
    args.quantize = ATTN_QUANTIZE_FP8;
  if (s.hasLse)
    args.lse = tensor(b.lse, ATTN_DTYPE_F32, {s.batch, s.headsQ, s.seqQ});
  if (s.varlen)
    setVarlenArgs(s, b, args);
  args.causal = s.causal;
  // 0 asks for the default scale, so that path is the one exercised.
  double defaultScale = 1.0 / std::sqrt(double(s.headDim));
  bool isDefault = std::fabs(s.scale / defaultScale - 1) < 1e-6;
  args.softmax_scale = isDefault ? 0.0f : static_cast<float>(s.scale);
  return args;
}

static Error allocateAll(const Shape &s, Buffers &b) {
  size_t elt = s.fp8 ? 1 : 2, q = s.numQ(), kv = s.numKV(),
         rows = s.numRows() * 4;
  size_t v = s.fp8 ? s.batch * s.headsKV * s.headDim * s.seqKPadded() : kv;
  std::vector<std::pair<DeviceBuffer *, size_t>> sizes = {
      {&b.q, q * elt},    {&b.k, kv * elt},   {&b.v, v * elt},
      {&b.o, q * 2},      {&b.lse, rows},     {&b.refO, q * 4},
      {&b.refLse, rows},  {&b.oF32, q * 4}};
  if (s.fp8) {
    size_t descale = s.batch * s.headsKV * 4;
    sizes.insert(sizes.end(), {{&b.qDescale, descale},
                               {&b.kDescale, descale},
                               {&b.vDescale, descale},
                               {&b.refQ, q * 4},
                               {&b.refK, kv * 4},
                               {&b.refV, kv * 4}});
  }
  if (s.paged())
    sizes.insert(sizes.end(), {{&b.table, s.numPages() * 4},
                               {&b.lengths, s.batch * 4},
                               {&b.validRows, s.numPages() * 4}});
  if (s.varlen)
    sizes.insert(sizes.end(), {{&b.cuQ, (s.batch + 1) * 4},
                               {&b.cuK, (s.batch + 1) * 4}});
  if (s.varlen && !s.paged())
    sizes.push_back({&b.validRows, 4});
  for (auto [buffer, bytes] : sizes)
    if (Error err = allocate(*buffer, bytes))
      return err;
  return Error::success();
}

static Error fillNormal(const Reference &ref, const Shape &s,
                        const DeviceBuffer &x, int64_t n, uint64_t seed,
                        CUstream stream) {
  if (n == 0)
    return Error::success();
  CUdeviceptr ptr = x.get();
  void *params[] = {&ptr, &n, &seed};
  unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 1 << 16));
  return check(cuLaunchKernel(ref.fill[s.bf16], blocks, 1, 1, 256, 1, 1, 0,
                              stream, params, nullptr),
               "launch fill_normal");
}

template <typename T>
static Error upload(const DeviceBuffer &buffer, const std::vector<T> &host) {
  if (host.empty())
    return Error::success();
  return check(cuMemcpyHtoD(buffer.get(), host.data(), host.size() * sizeof(T)),
               "cuMemcpyHtoD");
}

/// `n` standard normal values from `seed` (host: FP8 inputs are quantized
/// on the host).
static std::vector<float> hostNormal(int64_t n, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(n);
  for (float &value : x)
    value = normal(engine);
  return x;
}

/// FP8 inputs: normal values quantized per (batch, KV head) to e4m3 (scale
/// amax / 448), V laid out as V^T, the descales, and the dequantized values
/// for the reference.
static Error uploadFp8Inputs(const Shape &s, const Buffers &b, uint64_t seed) {
  using attn::run::quantizePerKVHead;
  attn::run::Quantized q = quantizePerKVHead(
      hostNormal(s.numQ(), seed), s.batch, s.headsQ, s.headsKV, s.seqQ,
      s.headDim);
  attn::run::Quantized k = quantizePerKVHead(
      hostNormal(s.numKV(), seed + 1), s.batch, s.headsKV, s.headsKV, s.seqK,
      s.headDim);
  attn::run::Quantized v = quantizePerKVHead(
      hostNormal(s.numKV(), seed + 2), s.batch, s.headsKV, s.headsKV, s.seqK,
      s.headDim);
  std::vector<uint8_t> vt = attn::run::toVt(v.bytes, s.batch, s.headsKV,
                                            s.seqK, s.headDim, s.seqKPadded());
  Error err = upload(b.q, q.bytes);
  if (!err)
    err = upload(b.k, k.bytes);
  if (!err)
    err = upload(b.v, vt);
  for (auto [buffer, host] :
       {std::make_pair(&b.qDescale, &q.descale), {&b.kDescale, &k.descale},
        {&b.vDescale, &v.descale}, {&b.refQ, &q.dequantized},
        {&b.refK, &k.dequantized}, {&b.refV, &v.dequantized}})
    if (!err)
      err = upload(*buffer, *host);
  return err;
}

/// `garbage` in the rows of K and V, `numPages` pages of `pageSize` rows,
/// that b.validRows marks unused: in paged caches every row past a
/// sequence's length and the pages no sequence reads; in a varlen call's
/// packed K/V (one page of total_k rows) the padding.
static Error poisonUnusedRows(const Reference &ref, const Shape &s,
                             const Buffers &b, int64_t numPages,
                             int64_t pageSize, float garbage,
                             CUstream stream) {
  int64_t rowElems = s.headsKV * s.headDim;
  if (numPages * pageSize * rowElems == 0)
    return Error::success();
  CUdeviceptr valid = b.validRows.get();
  for (const DeviceBuffer *cache : {&b.k, &b.v}) {
    CUdeviceptr x = cache->get();
    void *params[] = {&x, &valid, &numPages, &pageSize, &rowElems, &garbage};
    if (Error err = check(cuLaunchKernel(ref.poisonPages[s.bf16], 1024, 1, 1,
                                         256, 1, 1, 0, stream, params, nullptr),
                          "launch poison_pages"))
      return err;
  }
  return Error::success();
}

/// Paged K/V: the run's tables (s.pages) uploaded, then garbage in the
/// unused cache rows (after the normal fill, on the same stream).
static Error preparePaged(const Reference &ref, const Shape &s,
                          const Buffers &b, CUstream stream) {
  if (Error err = upload(b.table, s.pages.table))
    return err;
  if (Error err = upload(b.lengths, s.pages.lengths))
    return err;
  if (Error err = upload(b.validRows, s.pages.validRows))
    return err;
  // A pageable cuMemcpyHtoD may return before its DMA lands, and `stream`
  // does not wait for the legacy stream: wait here.
  if (Error err = check(cuStreamSynchronize(nullptr), "cuMemcpyHtoD"))
    return err;
  return poisonUnusedRows(ref, s, b, s.numPages(), s.pageSize,
                          attn::run::kPagedGarbage, stream);
}

/// Varlen: cu_seqlens uploaded, then garbage in the unused K/V rows (paged:
/// as preparePaged; contiguous: the rows past cu_seqlens_k[B]).
static Error prepareVarlen(const Reference &ref, const Shape &s,
                           const Buffers &b, CUstream stream) {
  if (Error err = upload(b.cuQ, s.seqs.cuQ))
    return err;
  if (Error err = upload(b.cuK, s.seqs.cuK))
    return err;
  if (s.paged())
    return preparePaged(ref, s, b, stream);
  if (Error err = upload(b.validRows, std::vector<int32_t>{s.seqs.cuK.back()}))
    return err;
  if (Error err = check(cuStreamSynchronize(nullptr), "cuMemcpyHtoD"))
    return err;
  return poisonUnusedRows(ref, s, b, 1, s.seqs.totalK,
                          attn::run::kPagedGarbage, stream);
}

/// Fresh inputs (seeds seed, seed+1, seed+2 for Q, K, V) and NaN outputs.
static Error prepareInputs(const Reference &ref, const Shape &s,
                           const Buffers &b, uint64_t seed, CUstream stream) {
  if (s.fp8) {
    if (Error err = uploadFp8Inputs(s, b, seed))
      return err;
  } else {
    if (Error err = fillNormal(ref, s, b.q, s.numQ(), seed, stream))
      return err;
    if (Error err = fillNormal(ref, s, b.k, s.numKV(), seed + 1, stream))
      return err;
    if (Error err = fillNormal(ref, s, b.v, s.numKV(), seed + 2, stream))
      return err;
  }
  if (s.varlen) {
    if (Error err = prepareVarlen(ref, s, b, stream))
      return err;
  } else if (s.paged()) {
    if (Error err = preparePaged(ref, s, b, stream))
      return err;
  }
  // NaN bits (a varlen check demands them intact in the padding rows).
  using attn::run::kPoison16, attn::run::kPoison32;
  if (Error err =
          check(cuMemsetD16Async(b.o.get(), kPoison16, s.numQ(), stream),
                "cuMemsetD16Async(O)"))
    return err;
  for (const DeviceBuffer *buffer : {&b.lse, &b.refLse})
    if (Error err = check(
            cuMemsetD32Async(buffer->get(), kPoison32, s.numRows(), stream),
            "cuMemsetD32Async(LSE)"))
      return err;
  return check(cuMemsetD32Async(b.refO.get(), kPoison32, s.numQ(), stream),
               "cuMemsetD32Async(reference O)");
}

/// The reference's launch for a paged call: each sequence's keys through
/// its block-table row.
static Error launchPagedReference(const Reference &ref, const Shape &s,
                                  const Buffers &b, unsigned shared,
                                  CUstream stream) {
  CUdeviceptr q = b.q.get(), k = b.k.get(), v = b.v.get(), o = b.refO.get(),
              lse = b.refLse.get(), table = b.table.get(),
              lengths = b.lengths.get();
  int64_t hq = s.headsQ, hkv = s.headsKV, nq = s.seqQ, d = s.headDim,
          maxPages = s.maxPages, pageSize = s.pageSize;
  int causal = s.causal;
  float scale = static_cast<float>(s.scale);
  void *params[] = {&q,   &k,     &v,      &o,     &lse,
                    &hq,  &hkv,   &nq,     &d,     &causal,
                    &scale, &table, &lengths, &maxPages, &pageSize};
  return check(cuLaunchKernel(ref.forwardPaged[s.bf16], unsigned(s.seqQ),
                              unsigned(s.headsQ), unsigned(s.batch),
                              kReferenceThreads, 1, 1, shared, stream, params,
                              nullptr),
               "launch reference_fwd_paged");
}

/// The reference's launches for a varlen call: one per sequence with
/// queries, on views of the packed tensors at its first query and key (a
/// paged call: the caches and the sequence's block-table row).
static Error launchVarlenReference(const Reference &ref, const Shape &s,
                                   const Buffers &b, unsigned shared,
                                   CUstream stream) {
  const attn::run::VarlenInputs &in = s.seqs;
  int64_t hq = s.headsQ, hkv = s.headsKV, d = s.headDim,
          lseStride = in.totalQ, pageSize = std::max<int64_t>(s.pageSize, 1);
  int causal = s.causal;
  float scale = static_cast<float>(s.scale);
  for (int64_t seq = 0; seq < in.batch(); ++seq) {
    int64_t nq = in.seqQ(seq), nk = in.seqK(seq);
    if (nq == 0)
      continue;
    int64_t firstQ = in.cuQ[seq], firstK = s.paged() ? 0 : in.cuK[seq];
    CUdeviceptr q = b.q.get() + firstQ * hq * d * 2,
                k = b.k.get() + firstK * hkv * d * 2,
                v = b.v.get() + firstK * hkv * d * 2,
                o = b.refO.get() + firstQ * hq * d * 4,
                lse = b.refLse.get() + firstQ * 4,
                table = s.paged() ? b.table.get() + seq * s.maxPages * 4 : 0;
    void *params[] = {&q,     &k,      &v,         &o,     &lse,
                      &hq,    &hkv,    &nq,        &nk,    &d,
                      &causal, &scale, &lseStride, &table, &pageSize};
    if (Error err = check(cuLaunchKernel(ref.forwardVarlen[s.bf16],
                                         unsigned(nq), unsigned(hq), 1,
                                         kReferenceThreads, 1, 1, shared,
                                         stream, params, nullptr),
                          "launch reference_fwd_varlen"))
      return err;
  }
  return Error::success();
}

static Error runReference(const Reference &ref, const Shape &s,
                          const Buffers &b, CUstream stream) {
  if (s.numRows() == 0)
    return Error::success();
  CUfunction fn = s.fp8       ? ref.forwardF32
                  : s.varlen  ? ref.forwardVarlen[s.bf16]
                  : s.paged() ? ref.forwardPaged[s.bf16]
                              : ref.forward[s.bf16];
  unsigned shared = unsigned((s.seqK + s.headDim) * sizeof(float));
  if (Error err = check(
          cuFuncSetAttribute(
              fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared)),
          "cuFuncSetAttribute(reference shared memory)"))
    return err;
  if (s.varlen) {
    if (Error err = launchVarlenReference(ref, s, b, shared, stream))
      return err;
    return check(cuStreamSynchronize(stream), "reference_fwd_varlen");
  }
  if (s.paged()) {
    if (Error err = launchPagedReference(ref, s, b, shared, stream))
      return err;
    return check(cuStreamSynchronize(stream), "reference_fwd_paged");
  }
  CUdeviceptr q = b.q.get(), k = b.k.get(), v = b.v.get(), o = b.refO.get(),
              lse = b.refLse.get();
  if (s.fp8) {
    q = b.refQ.get();
    k = b.refK.get();
    v = b.refV.get();
  }
  int64_t dims[] = {s.batch, s.headsQ, s.headsKV, s.seqQ, s.seqK, s.headDim};
  int causal = s.causal;
  float scale = static_cast<float>(s.scale);
  void *params[] = {&q,       &k,       &v,       &o,       &lse,
                    &dims[0], &dims[1], &dims[2], &dims[3], &dims[4],
                    &dims[5], &causal,  &scale};
  if (Error err = check(cuLaunchKernel(fn, unsigned(s.seqQ), unsigned(s.headsQ),
                                       unsigned(s.batch), kReferenceThreads, 1,
                                       1, shared, stream, params, nullptr),
                        "launch reference_fwd"))
    return err;
  return check(cuStreamSynchronize(stream), "reference_fwd");
}

static bool isNegInf(double x) { return std::isinf(x) && x < 0; }

/// Fills the error fields of `r` from the kernel's and the reference's
/// outputs (host copies) on their first `rows` rows (O: D values a row;
/// LSE: one, in the same row order).
static void compare(const Shape &s, int64_t rows, ArrayRef<float> o,
                    ArrayRef<float> lse, ArrayRef<float> refO,
                    ArrayRef<float> refLse, Result &r) {
  double errSq = 0, refSq = 0;
  r.nonFinite = r.infMismatch = 0;
  r.lseErr = r.maxErr = r.maxRef = 0;
  for (int64_t row = 0; row < rows; ++row) {
    bool empty = isNegInf(refLse[row]);
    bool rowZero = true;
    for (int64_t c = row * s.headDim; c < (row + 1) * s.headDim; ++c) {
      double x = o[c];
      rowZero &= x == 0;
      refSq += double(refO[c]) * refO[c];
      r.maxRef = std::max(r.maxRef, std::fabs(double(refO[c])));
      if (!std::isfinite(x))
        ++r.nonFinite;
      else
        errSq += (x - refO[c]) * (x - refO[c]);
      if (std::isfinite(x))
        r.maxErr = std::max(r.maxErr, std::fabs(x - refO[c]));
    }
    if (empty && !rowZero)
      ++r.infMismatch;
    if (!s.hasLse)
      continue;
    if (empty != isNegInf(lse[row]))
      ++r.infMismatch;
    else if (!empty && !std::isfinite(lse[row]))
      r.lseErr = INFINITY; // unwritten (NaN) or +inf
    else if (!empty)
      r.lseErr = std::max(r.lseErr, std::fabs(double(lse[row]) - refLse[row]));
  }
  // All-empty rows give a zero reference: then report the absolute error.
  r.relErr = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
}

/// Widens the kernel's O to f32 on the GPU (CUDA's own conversions).
static Error widenO(const Reference &ref, const Shape &s, const Buffers &b,
                    CUstream stream) {
  int64_t n = s.numQ();
  if (n == 0)
    return Error::success();
  CUdeviceptr x = b.o.get(), y = b.oF32.get();
  void *params[] = {&x, &y, &n};
  unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 1 << 16));
  if (Error err = check(cuLaunchKernel(ref.widen[s.oIndex()], blocks, 1, 1, 256, 1,
                                       1, 0, stream, params, nullptr),
                        "launch widen"))
    return err;
  return check(cuStreamSynchronize(stream), "widen");
}

/// Varlen: the sequences' rows against the reference (LSE [Hq, total_q]
/// taken in O's row order), and the poison's bits intact in every padding
/// row of O and LSE.
static Error checkVarlenOutputs(const Shape &s, const Buffers &b,
                                ArrayRef<float> o,
                                const std::vector<float> &lse,
                                ArrayRef<float> refO,
                                const std::vector<float> &refLse, Result &r) {
  using attn::run::lseByRow;
  const attn::run::VarlenInputs &in = s.seqs;
  std::vector<float> lseRows;
  if (s.hasLse)
    lseRows = lseByRow(lse, in, s.headsQ);
  compare(s, in.usedQ() * s.headsQ, o, lseRows, refO,
          lseByRow(refLse, in, s.headsQ), r);
  std::vector<uint16_t> oBits;
  std::vector<uint32_t> lseBits;
  if (Error err = download(oBits, b.o, s.numQ()))
    return err;
  if (s.hasLse)
    if (Error err = download(lseBits, b.lse, s.numRows()))
      return err;
  r.paddingWritten =
      attn::run::writtenPadding(in, s.headsQ, s.headDim, oBits, lseBits);
  return Error::success();
}

static Error checkOutputs(const Reference &ref, const Shape &s,
                          const Buffers &b, CUstream stream, Result &r) {
  std::vector<float> o, lse, refO, refLse;
  if (Error err = widenO(ref, s, b, stream))
    return err;
  if (Error err = download(o, b.oF32, s.numQ()))
    return err;
  if (Error err = download(refO, b.refO, s.numQ()))
    return err;
  if (Error err = download(refLse, b.refLse, s.numRows()))
    return err;
  if (s.hasLse)
    if (Error err = download(lse, b.lse, s.numRows()))
      return err;
  if (s.varlen)
    return checkVarlenOutputs(s, b, o, lse, refO, refLse, r);
  compare(s, s.numRows(), o, lse, refO, refLse, r);
  return Error::success();
}

/// The note of a runtime call that failed: the call's form, the function,
/// the status and the runtime's message.
static std::string failure(const Shape &s, const char *what,
                           attn_status st) {
  return s.form() + what + ": " + attn_status_name(st) + ": " +
         attn_last_error();
}

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

/// f16/bf16: relative error of O below 1e-2, LSE within 1e-3. FP8: the
/// kernel rounds P to e4m3 before P V (3 mantissa bits), so O is off by a
/// few percent of its magnitude: max |O - ref| <= 0.05 * max |ref| + 1e-2;
/// LSE (from fp32 scores of the same dequantized inputs) within 1e-2.
/// Quantized kernels: relative error of O below 6e-2, LSE within 0.25 (the
/// scores of quantized Q and K move rows with few keys most).
static bool passesTolerance(const Shape &s, const Result &r) {
  // Quantized: the reference runs on the bf16 inputs, so the quantization
  // of Q, K, V (and P) is in the error: a few percent of |O|.
  if (s.quantized)
    return r.relErr < 6e-2 && (!s.hasLse || r.lseErr < 2.5e-1);
  if (!s.fp8)
    return r.relErr < 1e-2 && (!s.hasLse || r.lseErr < 1e-3);
  return r.maxErr <= 0.05 * r.maxRef + 1e-2 && (!s.hasLse || r.lseErr < 1e-2);
}

/// Sets the rows `ranges` of the [rows, rowElems] 16-bit tensor `x` to NaN.
static Error poisonRows(const DeviceBuffer &x, const attn::run::RowRanges &ranges,
                        int64_t rowElems, CUstream stream) {
  for (auto [first, last] : ranges)
    if (Error err = check(cuMemsetD16Async(x.get() + first * rowElems * 2,
                                           attn::run::kPoison16,
                                           (last - first) * rowElems, stream),
                          "cuMemsetD16Async(isolation)"))
      return err;
  return Error::success();
}

/// NaN in every Q, K and V row that sequence `seq` does not own
/// (Isolation.h): packed varlen rows outside its own, cache rows that hold
/// none of its keys (the page poison with the sequence's own rows as the
/// valid ones).
static Error poisonForeignRows(const Reference &ref, const Shape &s,
                               const Buffers &b, int64_t seq,
                               CUstream stream) {
  using namespace attn::run;
  const VarlenInputs &in = s.seqs;
  if (s.varlen)
    if (Error err = poisonRows(b.q, rowsOutside(in.totalQ, in.cuQ[seq], in.cuQ[seq + 1]),
                               s.headsQ * s.headDim, stream))
      return err;
  if (!s.paged()) {
    RowRanges kv = rowsOutside(in.totalK, in.cuK[seq], in.cuK[seq + 1]);
    if (Error err = poisonRows(b.k, kv, s.headsKV * s.headDim, stream))
      return err;
    return poisonRows(b.v, kv, s.headsKV * s.headDim, stream);
  }
  if (Error err = upload(b.validRows, ownRowsPerPage(s.pages, seq, s.maxPages,
                                                     s.pageSize)))
    return err;
  if (Error err = check(cuStreamSynchronize(nullptr), "cuMemcpyHtoD"))
    return err;
  return poisonUnusedRows(ref, s, b, s.numPages(), s.pageSize, NAN, stream);
}

/// Sequence `seq`'s elements of O ([total_q, Hq, D] or [B, Hq, Nq, D]) and
/// LSE ([Hq, total_q] or [B, Hq, Nq]) whose bits differ between two runs.
static int64_t changedElements(const Shape &s, int64_t seq,
                               const std::vector<uint16_t> &o0,
                               const std::vector<uint16_t> &o1,
                               const std::vector<uint32_t> &lse0,
                               const std::vector<uint32_t> &lse1) {
  int64_t hd = s.headsQ * s.headDim, changed = 0;
  auto count = [&](const auto &x, const auto &y, int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i)
      changed += x[i] != y[i];
  };
  if (!s.varlen) {
    count(o0, o1, seq * hd * s.seqQ, (seq + 1) * hd * s.seqQ);
    if (!lse0.empty())
      count(lse0, lse1, seq * s.headsQ * s.seqQ, (seq + 1) * s.headsQ * s.seqQ);
    return changed;
  }
  const attn::run::VarlenInputs &in = s.seqs;
  count(o0, o1, in.cuQ[seq] * hd, in.cuQ[seq + 1] * hd);
  for (int64_t h = 0; !lse0.empty() && h < s.headsQ; ++h)
    count(lse0, lse1, h * in.totalQ + in.cuQ[seq], h * in.totalQ + in.cuQ[seq + 1]);
  return changed;
}

/// The bits of O and LSE after the last launch.
static Error downloadBits(const Shape &s, const Buffers &b,
                          std::vector<uint16_t> &o,
                          std::vector<uint32_t> &lse) {
  if (Error err = download(o, b.o, s.numQ()))
    return err;
  if (!s.hasLse)
    return Error::success();
  return download(lse, b.lse, s.numRows());
}

/// Sequence isolation (Isolation.h): a varlen or paged kernel again once
/// per sequence, on the same inputs with every row the sequence does not
/// own NaN; its rows of O and LSE must keep their bits. Leaves the clean
/// inputs in place.
static Error checkIsolation(attn_bundle *bundle, const Reference &ref,
                            const Shape &s, uint64_t seed, CUstream stream,
                            const Buffers &b, const attn_fwd_args &args,
                            Result &r) {
  std::vector<uint16_t> cleanO, o;
  std::vector<uint32_t> cleanLse, lse;
  if (Error err = downloadBits(s, b, cleanO, cleanLse))
    return err;
  for (int64_t seq = 0; seq < s.batch; ++seq) {
    if (Error err = prepareInputs(ref, s, b, seed, stream))
      return err;
    if (Error err = poisonForeignRows(ref, s, b, seq, stream))
      return err;
    if (attn_status st = attn_fwd(bundle, &args, stream)) {
      r.note = failure(s, "attn_fwd (isolation)", st);
      break;
    }
    if (Error err = check(cuStreamSynchronize(stream), "attn_fwd kernel"))
      return err;
    if (Error err = downloadBits(s, b, o, lse))
      return err;
    int64_t changed = changedElements(s, seq, cleanO, o, cleanLse, lse);
    if (changed && r.note.empty())
      r.note = llvm::formatv("sequence {0}: {1} elements of O and LSE changed "
                             "when the rows it does not own were NaN",
                             seq, changed);
    r.isolationChanged += changed;
  }
  return prepareInputs(ref, s, b, seed, stream);
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

/// A paged call's tables from `seed`, with --cache-seqlens' lengths when
/// given (varlen: the lengths drawn in s.seqs).
static Error drawPages(Shape &s, uint64_t seed) {
  s.pages = attn::run::makePagedInputs(s.batch, s.maxPages, s.pageSize, seed);
  if (s.varlen) { // the lengths are the batch's, from cu_seqlens_k
    attn::run::setLengths(s.pages, s.seqs.lengthsK(), s.maxPages, s.pageSize);
    return Error::success();
  }
  if (cacheSeqlensOpt.empty())
    return Error::success();
  std::vector<int32_t> lengths(cacheSeqlensOpt.begin(), cacheSeqlensOpt.end());
  if (int64_t(lengths.size()) != s.batch)
    return makeError(llvm::formatv("--cache-seqlens gives {0} lengths for B "
                                   "= {1}",
                                   lengths.size(), s.batch));
  for (int32_t n : lengths)
    if (n < 0 || n > s.seqK)
      return makeError(llvm::formatv("--cache-seqlens: {0} is outside [0, "
                                     "capacity = {1}]",
                                     n, s.seqK));
  attn::run::setLengths(s.pages, lengths, s.maxPages, s.pageSize);
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

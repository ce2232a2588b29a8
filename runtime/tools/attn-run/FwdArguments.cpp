//===- FwdArguments.cpp - attn-run's command line and call shapes ---------===//
//
// The options, and the call attn-run makes for a forward kernel: the key's
// static lengths, the options' values for the dynamic ones, a varlen
// kernel's default batch, a paged call's tables.
//
//===----------------------------------------------------------------------===//

#include "FwdCall.h"

#include "llvm/Support/raw_ostream.h"

#include <iterator>

namespace attn::run::fwd {

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

cl::OptionCategory category("attn-run options");
cl::opt<std::string> bundleDir(cl::Positional, cl::Required,
                               cl::desc("<bundle-dir>"), cl::cat(category));
cl::opt<int64_t> kernelOpt("kernel", cl::desc("Check only this kernel index"),
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
cl::opt<unsigned> itersOpt(
    "iters", cl::init(10), cl::value_desc("n"),
    cl::desc("Timed launches per kernel after one warm-up (0: no timing)"),
    cl::cat(category));
cl::opt<bool>
    tuneOpt("tune",
            cl::desc("Tune first: time the variants of each call's kernel "
                     "(attn_tune), keep the fastest and write the choice to "
                     "<bundle>/tuning.json"),
            cl::cat(category));
cl::opt<uint64_t> seedOpt("seed",
                          cl::desc("Seed of the random inputs "
                                   "(default: from the clock)"),
                          cl::value_desc("u64"), cl::cat(category));

cl::opt<int64_t> *lengthOpts[5] = {&batchOpt, &headsQOpt, &headsKVOpt, &seqQOpt,
                                   &seqKOpt};

/// A varlen kernel's B and max lengths when not given (key order; -1:
/// none): its key never fixes them; they describe the batch attn-run draws.
static const int64_t varlenDefaults[] = {8, -1, -1, 257, 300};

/// The kernel's static lengths, with the options' values for the dynamic
/// ones. Options that disagree with a static length are ignored (noted).
Expected<Shape> resolveShape(const attn_kernel_key &key) {
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
Error checkReferenceLimits(const Shape &s, const Reference &ref) {
  if (s.headsKV < 1 || s.headsQ % s.headsKV != 0)
    return makeError("Hq must be a multiple of Hkv >= 1");
  if (s.batch > 65535 || s.headsQ > 65535 || s.seqQ > 0x7FFFFFFF)
    return makeError("the reference's grid (Nq, Hq, B) is over the limits");
  if (s.paged() && (s.seqK > INT32_MAX || s.numPages() > INT32_MAX))
    return makeError("a paged call's capacity and page count are i32");
  if (s.varlen &&
      s.batch * std::max(s.seqQ, s.seqK) > INT32_MAX - attn::run::kVarlenPadK)
    return makeError("a varlen call's cu_seqlens are i32: B * max length "
                     "must stay below 2^31");
  if ((s.seqK + s.headDim) * 4 > ref.maxDynamicShared)
    return makeError(llvm::formatv("the reference keeps Nk scores in shared "
                                   "memory: needs Nk <= {0}",
                                   ref.maxDynamicShared / 4 - s.headDim));
  return Error::success();
}

/// A paged call's tables from `seed`, with --cache-seqlens' lengths when
/// given (varlen: the lengths drawn in s.seqs).
Error drawPages(Shape &s, uint64_t seed) {
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

} // namespace attn::run::fwd

//===- FwdCall.h - the forward call attn-run checks -------------*- C++ -*-===//
//
// Shared by attn-run's parts for forward kernels: the command line and the
// call's shape (FwdArguments.cpp), the call's device tensors and
// attn_fwd_args (FwdInputs.cpp), the reference check and the sequence
// isolation check (FwdCheck.cpp); checking, timing and tuning each kernel,
// and the report (attn-run.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_FWDCALL_H
#define ATTN_RUN_FWDCALL_H

#include "AttnRun.h"
#include "Paged.h"
#include "Varlen.h"
#include "attn/runtime.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::run::fwd {

using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// The command line (FwdArguments.cpp)
//===----------------------------------------------------------------------===//

extern cl::OptionCategory category;
extern cl::opt<std::string> bundleDir;
extern cl::opt<int64_t> kernelOpt;
extern cl::opt<unsigned> itersOpt;
extern cl::opt<bool> tuneOpt;
extern cl::opt<uint64_t> seedOpt;
/// The length options, in attn_kernel_key order.
extern cl::opt<int64_t> *lengthOpts[5];

//===----------------------------------------------------------------------===//
// Shapes (FwdArguments.cpp)
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

/// The kernel's static lengths, with the options' values for the dynamic
/// ones. Options that disagree with a static length are ignored (noted).
Expected<Shape> resolveShape(const attn_kernel_key &key);
/// The host-side limits of the reference kernel's launch.
Error checkReferenceLimits(const Shape &s, const Reference &ref);
/// A paged call's tables from `seed`, with --cache-seqlens' lengths when
/// given (varlen: the lengths drawn in s.seqs).
Error drawPages(Shape &s, uint64_t seed);

//===----------------------------------------------------------------------===//
// One call (FwdInputs.cpp)
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

attn_fwd_args makeArgs(const Shape &s, const Buffers &b);
Error allocateAll(const Shape &s, Buffers &b);
/// Fresh inputs (seeds seed, seed+1, seed+2 for Q, K, V) and NaN outputs.
Error prepareInputs(const Reference &ref, const Shape &s, const Buffers &b,
                    uint64_t seed, CUstream stream);
/// `garbage` in the rows of K and V, `numPages` pages of `pageSize` rows,
/// that b.validRows marks unused.
Error poisonUnusedRows(const Reference &ref, const Shape &s, const Buffers &b,
                       int64_t numPages, int64_t pageSize, float garbage,
                       CUstream stream);

template <typename T>
Error upload(const DeviceBuffer &buffer, const std::vector<T> &host) {
  if (host.empty())
    return Error::success();
  return check(cuMemcpyHtoD(buffer.get(), host.data(), host.size() * sizeof(T)),
               "cuMemcpyHtoD");
}

/// The note of a runtime call that failed: the call's form, the function,
/// the status and the runtime's message.
inline std::string failure(const Shape &s, const char *what, attn_status st) {
  return s.form() + what + ": " + attn_status_name(st) + ": " +
         attn_last_error();
}

//===----------------------------------------------------------------------===//
// The checks (FwdCheck.cpp)
//===----------------------------------------------------------------------===//

/// Loads Reference.cu's kernels (the embedded cubin) for `device`.
Error loadReference(Reference &ref, CUdevice device);
/// The fp32 reference of the call into b.refO and b.refLse.
Error runReference(const Reference &ref, const Shape &s, const Buffers &b,
                   CUstream stream);
/// The kernel's O and LSE against the reference: the error fields of `r`.
Error checkOutputs(const Reference &ref, const Shape &s, const Buffers &b,
                   CUstream stream, Result &r);
/// Whether the errors in `r` are within the call's tolerance.
bool passesTolerance(const Shape &s, const Result &r);
/// Sequence isolation (Isolation.h): each sequence's rows of O and LSE keep
/// their bits when every row it does not own is NaN.
Error checkIsolation(attn_bundle *bundle, const Reference &ref, const Shape &s,
                     uint64_t seed, CUstream stream, const Buffers &b,
                     const attn_fwd_args &args, Result &r);

} // namespace attn::run::fwd

#endif // ATTN_RUN_FWDCALL_H

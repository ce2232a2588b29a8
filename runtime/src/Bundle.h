//===- Bundle.h - a loaded kernel bundle: dispatch and launch ---*- C++ -*-===//
//
// A Bundle holds a parsed manifest and the bytes of every cubin it names.
// select() validates a call on the host and picks the most specialized
// kernel for it; launch() adds the device checks, loads that kernel into the
// driver on first use and enqueues it. The C API (CApi.cpp) is a thin layer
// over this class.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "Driver.h"
#include "Tuning.h"
#include "WorkspacePools.h"
#include "attn/manifest/Manifest.h"
#include "attn/runtime.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace attn::runtime {

/// A status code and, on failure, a message naming what went wrong.
struct Status {
  attn_status code = ATTN_SUCCESS;
  std::string message;

  bool ok() const { return code == ATTN_SUCCESS; }
  static Status success() { return {}; }
};

Status makeError(attn_status code, const llvm::Twine &message);

/// A forward call that passed the host checks: its dispatch key and the
/// bytes each operand's view spans.
struct FwdCall {
  std::string dtype; // "f16", "bf16" or "e4m3"
  int64_t headDim = 0, batch = 0, numHeadsQ = 0, numHeadsKV = 0, seqLenQ = 0,
          seqLenK = 0;
  bool causal = false, hasLse = false;
  /// An e4m3 call: bf16 O, V^T storage, descales.
  bool fp8 = false;
  /// A paged K/V call: k, v [num_pages, page_size, Hkv, D], block_table,
  /// and cache_seqlens unless varlen; seqLenK is the capacity max_pages *
  /// page_size unless varlen.
  bool paged = false;
  int64_t pageSize = 0, numPages = 0, capacity = 0; // 0 unless paged
  /// A varlen call: q, o [total_q, Hq, D], k, v [total_k, Hkv, D] (or paged
  /// caches), lse [Hq, total_q], cu_seqlens; batch is B =
  /// size(cu_seqlens_q, 0) - 1, seqLenQ and seqLenK are max_seqlen_q and
  /// max_seqlen_k.
  bool varlen = false;
  /// quantize == ATTN_QUANTIZE_FP8: only quantized (quantize_fp8) kernels
  /// match, and only such calls match them.
  bool quantizeFp8 = false;
  /// q, k, v, o (and lse, if given) are contiguous row-major.
  bool contiguous = false;
  double scale = 0;                         // softmax_scale, or 1/sqrt(D) for 0
  /// By bundle::Operand; 0: empty or absent (no LSE, descales of a non-FP8
  /// call, tables of a contiguous call).
  std::array<uint64_t, bundle::kNumOperands> extentBytes = {};

  /// Nothing to compute: no query row.
  bool empty() const { return seqLenQ == 0 || batch == 0 || numHeadsQ == 0; }
  /// "bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=100 Nk=100 scale=0.0884
  /// strided"; a paged call adds " page_size=16" after Nk, a quantized one
  /// " quantize=fp8" at the end.
  std::string describe() const;
};

/// Checks `args` on the host: everything but the device checks. Failures
/// are ATTN_ERROR_INVALID_ARGUMENT with a message naming the operand.
Status validateFwd(const attn_fwd_args &args, FwdCall &call);

/// A backward call that passed the host checks (Backward.cpp): its
/// dispatch key and the bytes each operand's view spans.
struct BwdCall {
  std::string dtype; // "f16" or "bf16"
  int64_t headDim = 0, batch = 0, numHeadsQ = 0, numHeadsKV = 0, seqLenQ = 0,
          seqLenK = 0;
  bool causal = false;
  /// q, k, v, o, dO, dQ, dK, dV and lse are contiguous row-major.
  bool contiguous = false;
  double scale = 0; // softmax_scale, or 1/sqrt(D) for 0
  /// By bundle::Operand; 0 for an empty view and the forward-only operands.
  std::array<uint64_t, bundle::kNumOperands> extentBytes = {};

  /// Nothing to compute: dQ, dK and dV have no element.
  bool empty() const;
  /// "bwd bf16 D=128 causal B=1 Hq=32 Hkv=8 Nq=100 Nk=100 scale=0.0884
  /// strided".
  std::string describe() const;
};

/// Checks a backward call on the host, as validateFwd a forward one.
Status validateBwd(const attn_bwd_args &args, BwdCall &call);

/// The tensors (and varlen scalars) of a call by bundle::Operand: what the
/// manifest's grids, workspace extents and parameters refer to. Built
/// implicitly from a forward call's arguments; absent operands are the
/// zero tensor.
struct CallOperands {
  CallOperands(const attn_fwd_args &args);
  explicit CallOperands(const attn_bwd_args &args);
  const attn_tensor &tensor(bundle::Operand op) const;
  int64_t scalar(bundle::Operand op) const;

private:
  std::array<const attn_tensor *, bundle::kNumOperands> tensors = {};
  int64_t maxSeqlenQ = 0, maxSeqlenK = 0;
};

/// The tensor of `args` that holds operand `op`.
const attn_tensor &operandTensor(const attn_fwd_args &args,
                                 bundle::Operand op);

/// A softmax scale as messages print it.
std::string scaleText(double scale);

/// ATTN_ERROR_CUDA naming the driver call `what` and its error.
Status cudaError(const DriverApi &driver, CUresult result, const char *what);

/// The value checks of attn_bundle_set_check_values (ValueChecks.cpp):
/// reads the call's FP8 descales, varlen prefix sums or paged tables back
/// from the device on `stream` (one synchronization) and refuses values
/// that break the caller's contract; other calls read nothing back.
Status checkCallValues(const DriverApi &driver, const attn_fwd_args &args,
                       const FwdCall &call, CUstream stream);

/// A kernel's workspace buffers for one call (split-KV).
struct WorkspaceBuffers;

class Bundle {
public:
  /// Reads `dir`/manifest.json and every cubin it names; touches no GPU.
  static Status load(llvm::StringRef dir, std::unique_ptr<Bundle> &out);
  ~Bundle();
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;

  const std::string &directory() const { return dir; }
  size_t numKernels() const { return manifest.kernels.size(); }
  const bundle::KernelEntry &kernel(size_t index) const {
    return manifest.kernels[index];
  }
  /// bundle::describe of kernel `index`, owned by the bundle.
  const std::string &kernelInfo(size_t index) const { return infos[index]; }

  /// Validates `args` on the host and sets `index` to the kernel to launch.
  Status select(const attn_fwd_args &args, int64_t &index) const;
  /// The same for a backward call: the "bwd" kernel of the call's key
  /// (Backward.cpp).
  Status selectBwd(const attn_bwd_args &args, int64_t &index) const;
  /// selectBwd(), the device checks, then the kernel's launches on
  /// `stream` with their workspace.
  Status launchBwd(const attn_bwd_args &args, CUstream stream);
  /// select(), the device checks, then the launch on `stream`. With auto
  /// tuning on, a call shape with variants and no choice is tuned first.
  Status launch(const attn_fwd_args &args, CUstream stream);
  /// Times every variant of the kernel for `args` on `stream` (a warm-up
  /// and kTuningLaunches timed launches each; the stream is synchronized),
  /// records the fastest for the call's shape in tuning.json and launches
  /// it once more, so O and LSE hold its result. `chosen` is its index.
  Status tune(const attn_fwd_args &args, CUstream stream, int64_t &chosen);
  void setAutoTune(bool on) { autoTune = on; }
  /// Whether launch() and tune() read an FP8 call's descales or a paged
  /// call's block table and cache lengths back and check them (one stream
  /// synchronization per call).
  void setCheckValues(bool on) { checkValues = on; }

  static constexpr int kTuningLaunches = 5;

private:
  struct Loaded;
  Bundle();
  /// The most specialized kernel for a validated call (and its grid fits);
  /// among its variants, the tuned choice for the call's shape.
  Status pickKernel(const FwdCall &call, const attn_fwd_args &args,
                    int64_t &index) const;
  /// The kernels that tie with `best` for `call`, in manifest order: the
  /// variants of one kernel (just `best` when it has none).
  std::vector<size_t> variantsOf(const FwdCall &call, size_t best) const;
  /// Among the variants of `best` for `call`, the split-KV split count that
  /// fills the current device best (Dispatch.cpp); `best`
  /// where the variants all split alike or there is no device to ask.
  size_t chooseSplits(const FwdCall &call, const attn_fwd_args &args,
                      size_t best) const;
  /// Host checks, the kernel to launch (pickKernel), the driver, the
  /// current context's device and the device checks of every operand.
  Status prepare(const attn_fwd_args &args, FwdCall &call, int64_t &index,
                 const DriverApi *&driver, CUdevice &device) const;
  /// prepare, then the value checks (unless turned off) of the operands
  /// the host cannot see (descales, tables, cu_seqlens). After success an
  /// empty `call` has nothing to launch.
  Status prepareChecked(const attn_fwd_args &args, CUstream stream,
                        FwdCall &call, int64_t &index, const DriverApi *&driver,
                        CUdevice &device) const;
  /// Loads kernel `index` if needed and enqueues its launches (with their
  /// workspace, allocated and freed on `stream`).
  Status launchIndex(const DriverApi &driver, CUdevice device, size_t index,
                     const CallOperands &args, CUstream stream);
  /// Loads launch `which` of kernel `index` if needed and enqueues it.
  Status launchOne(const DriverApi &driver, CUdevice device, size_t index,
                   size_t which, const CallOperands &args,
                   const WorkspaceBuffers &ws, CUstream stream);
  /// The "bwd" kernel for a validated backward call.
  Status pickBwdKernel(const BwdCall &call, const attn_bwd_args &args,
                       int64_t &index) const;
  /// tune() after the checks: times the variants of kernel `index` for
  /// `call`, records the fastest and launches it; `index` becomes its index.
  Status tuneVariants(const FwdCall &call, const attn_fwd_args &args,
                      CUstream stream, const DriverApi &driver, CUdevice device,
                      int64_t &index);
  /// Time per launch of kernel `index` (after one warm-up launch).
  Status timeIndex(const DriverApi &driver, CUdevice device, size_t index,
                   const attn_fwd_args &args, CUstream stream, double &ms);
  /// The driver handle of launch `which` of kernel `index`, loaded on first
  /// use, with its dynamic shared memory limit raised on `device` when it
  /// needs it.
  Status ensureLoaded(const DriverApi &driver, size_t index, size_t which,
                      CUdevice device, CUkernel &handle);

  std::string dir;
  bundle::Manifest manifest;
  std::vector<std::string> infos;
  /// Cubin bytes by file name (kernels may share a cubin).
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> cubins;
  /// Driver state of each launch of each kernel, created on first launch.
  std::vector<std::vector<std::unique_ptr<Loaded>>> loaded;
  TuningTable tuning;
  /// Where launches take their workspace.
  WorkspacePools workspacePools;
  /// Some kernel is split-KV: calls may choose their split count
  /// (chooseSplits).
  bool splitKV = false;
  std::atomic<bool> autoTune{false};
  std::atomic<bool> checkValues{true};
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_H

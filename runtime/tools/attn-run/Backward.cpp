//===- Backward.cpp - attn-run's check of backward kernels ----------------===//
//
// For a "bwd" kernel (every length static in its key): random normal Q, K,
// V, dO; O and LSE from the forward reference (reference_fwd_*, O rounded
// to the kernel's dtype by narrow_*), so the call is the backward of a real
// forward; dQ, dK, dV poisoned with NaN; one attn_bwd; the fp32 reference
// backward (reference_bwd_dq_*, reference_bwd_dkdv_*, checked against fp64
// by attn-reference-check) on the same inputs; relative Frobenius error of
// each gradient (below 2e-2, as bench/bwd_check.py), no non-finite value,
// dQ exactly 0 on rows that see no key; then the time of attn_bwd (its
// workspace allocation and four launches) over --iters calls and TFLOP/s
// with FlashAttention's count for the backward: 2.5 times the forward's,
// 10 * B * Hq * Nq * Nk * D, halved when causal.
//
//===----------------------------------------------------------------------===//

#include "Backward.h"

#include "Varlen.h" // kPoison16

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using llvm::Error;

namespace attn::run {
namespace {

/// The call checked for one backward kernel.
struct BwdShape {
  int64_t batch = 0, headsQ = 0, headsKV = 0, seqQ = 0, seqK = 0, headDim = 0;
  bool bf16 = false, causal = false;
  double scale = 0;

  int64_t numRows() const { return batch * headsQ * seqQ; }
  int64_t numQ() const { return numRows() * headDim; }
  int64_t numKV() const { return batch * headsKV * seqK * headDim; }
  double flops() const {
    double f = 10.0 * batch * headsQ * double(seqQ) * seqK * headDim;
    return causal ? f / 2 : f;
  }
  std::string str() const {
    return llvm::formatv("{0} {1} {2} {3} {4} {5} {6}{7}", batch, headsQ,
                         headsKV, seqQ, seqK, headDim, bf16 ? "bf16" : "f16",
                         causal ? " causal" : "")
        .str();
  }
};

/// The key's shape; an error says why attn-run cannot check it.
Error resolve(const attn_kernel_key &key, const Reference &ref, BwdShape &s) {
  if (key.dtype != ATTN_DTYPE_F16 && key.dtype != ATTN_DTYPE_BF16)
    return makeError(llvm::Twine("backward dtype ") +
                     attn_dtype_name(key.dtype) + " (f16 or bf16 only)");
  if (key.batch < 0 || key.num_heads_q < 0 || key.num_heads_kv < 0 ||
      key.seqlen_q < 0 || key.seqlen_k < 0)
    return makeError("a backward kernel's lengths are all static");
  s.batch = key.batch;
  s.headsQ = key.num_heads_q;
  s.headsKV = key.num_heads_kv;
  s.seqQ = key.seqlen_q;
  s.seqK = key.seqlen_k;
  s.headDim = key.head_dim;
  s.bf16 = key.dtype == ATTN_DTYPE_BF16;
  s.causal = key.causal;
  s.scale = key.scale;
  if (s.headsKV < 1 || s.headsQ % s.headsKV != 0)
    return makeError("Hq must be a multiple of Hkv >= 1");
  if (s.headDim < 1 || s.headDim > 256)
    return makeError("the backward reference takes D <= 256");
  if (s.batch > 65535 || s.headsQ > 65535 || s.seqQ > 0x7FFFFFFF ||
      s.seqK > 0x7FFFFFFF)
    return makeError("the reference's grids (Nq, Hq, B) and (Nk, Hkv, B) "
                     "are over the limits");
  if ((s.seqK + s.headDim) * 4 > ref.maxDynamicShared)
    return makeError(llvm::formatv("the forward reference keeps Nk scores in "
                                   "shared memory: needs Nk <= {0}",
                                   ref.maxDynamicShared / 4 - s.headDim));
  return Error::success();
}

/// The device tensors of one backward call.
struct BwdBuffers {
  DeviceBuffer q, k, v, o, dout, lse, dq, dk, dv; // the call's
  DeviceBuffer oF32, refDq, refDk, refDv;         // the reference's (f32)
  DeviceBuffer widened; // the kernel's dQ, dK or dV in f32
};

Error allocateAll(const BwdShape &s, BwdBuffers &b) {
  size_t q = s.numQ(), kv = s.numKV(), rows = s.numRows();
  std::pair<DeviceBuffer *, size_t> sizes[] = {
      {&b.q, q * 2},      {&b.k, kv * 2},
      {&b.v, kv * 2},     {&b.o, q * 2},
      {&b.dout, q * 2},   {&b.lse, rows * 4},
      {&b.dq, q * 2},     {&b.dk, kv * 2},
      {&b.dv, kv * 2},    {&b.oF32, q * 4},
      {&b.refDq, q * 4},  {&b.refDk, kv * 4},
      {&b.refDv, kv * 4}, {&b.widened, std::max(q, kv) * 4}};
  for (auto [buffer, bytes] : sizes)
    if (Error err = allocate(*buffer, bytes))
      return err;
  return Error::success();
}

/// Grid of the elementwise kernels (fill, narrow, widen): 256 threads.
unsigned elementwiseBlocks(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + 255) / 256, 1, 1 << 16));
}

/// Q, K, V, dO normal; O, LSE from the forward reference; dQ, dK, dV NaN.
Error prepareInputs(const Reference &ref, const BwdShape &s,
                    const BwdBuffers &b, uint64_t seed, CUstream stream) {
  std::pair<const DeviceBuffer *, int64_t> fills[] = {{&b.q, s.numQ()},
                                                      {&b.k, s.numKV()},
                                                      {&b.v, s.numKV()},
                                                      {&b.dout, s.numQ()}};
  uint64_t seeds[] = {seed, seed + 1, seed + 2, seed + 5};
  for (int i = 0; i < 4; ++i) {
    CUdeviceptr ptr = fills[i].first->get();
    int64_t n = fills[i].second;
    void *params[] = {&ptr, &n, &seeds[i]};
    if (Error err =
            check(cuLaunchKernel(ref.fill[s.bf16], elementwiseBlocks(n), 1, 1,
                                 256, 1, 1, 0, stream, params, nullptr),
                  "launch fill_normal"))
      return err;
  }
  unsigned shared = unsigned((s.seqK + s.headDim) * sizeof(float));
  CUfunction forward = ref.forward[s.bf16];
  if (Error err =
          check(cuFuncSetAttribute(
                    forward, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    int(shared)),
                "cuFuncSetAttribute(reference shared memory)"))
    return err;
  CUdeviceptr q = b.q.get(), k = b.k.get(), v = b.v.get(), o32 = b.oF32.get(),
              o = b.o.get(), lse = b.lse.get();
  int64_t dims[] = {s.batch, s.headsQ, s.headsKV, s.seqQ, s.seqK, s.headDim};
  int causal = s.causal;
  float scale = float(s.scale);
  void *fwd[] = {&q,       &k,       &v,       &o32,     &lse,
                 &dims[0], &dims[1], &dims[2], &dims[3], &dims[4],
                 &dims[5], &causal,  &scale};
  if (Error err =
          check(cuLaunchKernel(forward, unsigned(s.seqQ), unsigned(s.headsQ),
                               unsigned(s.batch), kReferenceThreads, 1, 1,
                               shared, stream, fwd, nullptr),
                "launch reference_fwd"))
    return err;
  int64_t n = s.numQ();
  void *narrow[] = {&o32, &o, &n};
  if (Error err =
          check(cuLaunchKernel(ref.narrow[s.bf16], elementwiseBlocks(n), 1, 1,
                               256, 1, 1, 0, stream, narrow, nullptr),
                "launch narrow"))
    return err;
  std::pair<const DeviceBuffer *, int64_t> grads[] = {
      {&b.dq, s.numQ()}, {&b.dk, s.numKV()}, {&b.dv, s.numKV()}};
  for (auto [buffer, count] : grads)
    if (Error err = check(
            cuMemsetD16Async(buffer->get(), kPoison16, size_t(count), stream),
            "cuMemsetD16Async(gradient poison)"))
      return err;
  return check(cuStreamSynchronize(stream), "backward inputs");
}

attn_bwd_args makeArgs(const BwdShape &s, const BwdBuffers &b) {
  attn_dtype dtype = s.bf16 ? ATTN_DTYPE_BF16 : ATTN_DTYPE_F16;
  std::initializer_list<int64_t> qShape = {s.batch, s.headsQ, s.seqQ,
                                           s.headDim},
                                 kvShape = {s.batch, s.headsKV, s.seqK,
                                            s.headDim};
  attn_bwd_args args = {};
  args.q = tensor(b.q, dtype, qShape);
  args.k = tensor(b.k, dtype, kvShape);
  args.v = tensor(b.v, dtype, kvShape);
  args.o = tensor(b.o, dtype, qShape);
  args.dout = tensor(b.dout, dtype, qShape);
  args.lse = tensor(b.lse, ATTN_DTYPE_F32, {s.batch, s.headsQ, s.seqQ});
  args.dq = tensor(b.dq, dtype, qShape);
  args.dk = tensor(b.dk, dtype, kvShape);
  args.dv = tensor(b.dv, dtype, kvShape);
  args.causal = s.causal;
  // 0 asks for the default scale, so that path is the one exercised (as
  // the forward check does).
  double defaultScale = 1.0 / std::sqrt(double(s.headDim));
  bool isDefault = std::fabs(s.scale / defaultScale - 1) < 1e-6;
  args.softmax_scale = isDefault ? 0.0f : float(s.scale);
  return args;
}

Error runReference(const Reference &ref, const BwdShape &s, const BwdBuffers &b,
                   CUstream stream) {
  CUdeviceptr ptrs[] = {b.q.get(),     b.k.get(),     b.v.get(),
                        b.o.get(),     b.dout.get(),  b.lse.get(),
                        b.refDq.get(), b.refDk.get(), b.refDv.get()};
  int64_t dims[] = {s.batch, s.headsQ, s.headsKV, s.seqQ, s.seqK, s.headDim};
  int causal = s.causal;
  float scale = float(s.scale);
  void *params[] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3], &ptrs[4], &ptrs[5],
                    &ptrs[6], &ptrs[7], &ptrs[8], &dims[0], &dims[1], &dims[2],
                    &dims[3], &dims[4], &dims[5], &causal,  &scale};
  // One CTA per (row, head, batch): dQ by query rows, dK/dV by keys.
  auto launch = [&](CUfunction fn, int64_t rows, int64_t heads,
                    const char *what) -> Error {
    if (rows * heads * s.batch == 0) // an empty grid: nothing to launch
      return Error::success();
    return check(cuLaunchKernel(fn, unsigned(rows), unsigned(heads),
                                unsigned(s.batch), kReferenceThreads, 1, 1, 0,
                                stream, params, nullptr),
                 what);
  };
  if (Error err = launch(ref.backwardDq[s.bf16], s.seqQ, s.headsQ,
                         "launch reference_bwd_dq"))
    return err;
  if (Error err = launch(ref.backwardDkDv[s.bf16], s.seqK, s.headsKV,
                         "launch reference_bwd_dkdv"))
    return err;
  return check(cuStreamSynchronize(stream), "reference_bwd");
}

/// The kernel's gradient `x` (n elements) in f32 on the host.
Error widen(const Reference &ref, const BwdShape &s, const BwdBuffers &b,
            const DeviceBuffer &x, int64_t n, CUstream stream,
            std::vector<float> &out) {
  CUdeviceptr from = x.get(), to = b.widened.get();
  void *params[] = {&from, &to, &n};
  if (n > 0) {
    if (Error err =
            check(cuLaunchKernel(ref.widen[s.bf16], elementwiseBlocks(n), 1, 1,
                                 256, 1, 1, 0, stream, params, nullptr),
                  "launch widen"))
      return err;
    if (Error err = check(cuStreamSynchronize(stream), "widen"))
      return err;
  }
  return download(out, b.widened, n);
}

/// ||x - ref||_F / ||ref||_F over the finite x (the absolute error if ref
/// is 0); counts the non-finite x into *nonFinite.
double relError(const std::vector<float> &x, const std::vector<float> &ref,
                int64_t *nonFinite) {
  double errSq = 0, refSq = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    refSq += double(ref[i]) * ref[i];
    if (!std::isfinite(x[i]))
      ++*nonFinite;
    else
      errSq += (double(x[i]) - ref[i]) * (double(x[i]) - ref[i]);
  }
  return refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
}

Error checkOutputs(const Reference &ref, const BwdShape &s, const BwdBuffers &b,
                   CUstream stream, BwdResult &r) {
  std::vector<float> dq, dk, dv, refDq, refDk, refDv, lse;
  if (Error err = widen(ref, s, b, b.dq, s.numQ(), stream, dq))
    return err;
  if (Error err = widen(ref, s, b, b.dk, s.numKV(), stream, dk))
    return err;
  if (Error err = widen(ref, s, b, b.dv, s.numKV(), stream, dv))
    return err;
  if (Error err = download(refDq, b.refDq, s.numQ()))
    return err;
  if (Error err = download(refDk, b.refDk, s.numKV()))
    return err;
  if (Error err = download(refDv, b.refDv, s.numKV()))
    return err;
  if (Error err = download(lse, b.lse, s.numRows()))
    return err;
  r.nonFinite = 0;
  r.errDq = relError(dq, refDq, &r.nonFinite);
  r.errDk = relError(dk, refDk, &r.nonFinite);
  r.errDv = relError(dv, refDv, &r.nonFinite);
  r.noKeyNonZero = 0;
  for (int64_t row = 0; row < s.numRows(); ++row)
    if (std::isinf(lse[row]) && lse[row] < 0)
      for (int64_t c = row * s.headDim; c < (row + 1) * s.headDim; ++c)
        r.noKeyNonZero += dq[c] != 0.0f;
  return Error::success();
}

std::string failure(const char *what, attn_status st) {
  return std::string(what) + ": " + attn_status_name(st) + ": " +
         attn_last_error();
}

/// Average time of `iters` attn_bwd calls after one warm-up.
Error timeKernel(attn_bundle *bundle, const attn_bwd_args &args,
                 const BwdShape &s, CUstream stream, unsigned iters,
                 BwdResult &r) {
  attn_status st = ATTN_SUCCESS;
  if (Error err = timeLaunches(
          stream, iters, [&] { return attn_bwd(bundle, &args, stream); }, st,
          r.ms))
    return err;
  if (st)
    r.note = failure("timed attn_bwd", st);
  else
    r.tflops = s.flops() / (r.ms * 1e9);
  return Error::success();
}

std::string number(double x, const char *style) {
  return std::isnan(x) ? "-" : llvm::formatv(style, x).str();
}

} // namespace

Error runBackwardKernel(attn_bundle *bundle, const attn_kernel_key &key,
                        const Reference &ref, uint64_t seed, unsigned iters,
                        CUstream stream, BwdResult &r) {
  BwdShape s;
  if (Error err = resolve(key, ref, s)) {
    r.note = llvm::toString(std::move(err));
    return Error::success();
  }
  r.shape = s.str();
  BwdBuffers b;
  if (Error err = allocateAll(s, b))
    return err;
  if (Error err = prepareInputs(ref, s, b, seed, stream))
    return err;
  attn_bwd_args args = makeArgs(s, b);
  if (attn_status st = attn_bwd_select(bundle, &args, &r.picked)) {
    r.note = failure("attn_bwd_select", st);
    return Error::success();
  }
  if (attn_status st = attn_bwd(bundle, &args, stream)) {
    r.note = failure("attn_bwd", st);
    return check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  if (Error err = check(cuStreamSynchronize(stream), "attn_bwd kernels"))
    return err;
  if (Error err = runReference(ref, s, b, stream))
    return err;
  if (Error err = checkOutputs(ref, s, b, stream, r))
    return err;
  r.pass = r.nonFinite == 0 && r.noKeyNonZero == 0 &&
           std::max({r.errDq, r.errDk, r.errDv}) < 2e-2;
  if (iters == 0)
    return Error::success();
  if (Error err = timeKernel(bundle, args, s, stream, iters, r))
    return err;
  r.pass &= r.note.empty();
  return Error::success();
}

void printBackwardTable(llvm::ArrayRef<BwdResult> results) {
  if (results.empty())
    return;
  auto row = [](auto... cols) {
    llvm::outs() << llvm::formatv("{0,4} {1,-36} {2,6} {3,10} {4,10} {5,10} "
                                  "{6,9} {7,10} {8,9} {9}\n",
                                  cols...);
  };
  llvm::outs() << "\nbackward (attn_bwd; relative error against the fp32 "
                  "reference, pass < 2e-2; dO from seed + 5):\n";
  row("#", "B Hq Hkv Nq Nk D dtype causal", "picked", "relerr(dQ)",
      "relerr(dK)", "relerr(dV)", "nonfinite", "ms", "TFLOP/s", "result");
  for (const BwdResult &r : results) {
    row(r.index, r.shape.empty() ? std::string("-") : r.shape,
        r.picked >= 0 ? std::to_string(r.picked) : std::string("-"),
        number(r.errDq, "{0:e2}"), number(r.errDk, "{0:e2}"),
        number(r.errDv, "{0:e2}"),
        r.nonFinite >= 0 ? std::to_string(r.nonFinite) : std::string("-"),
        number(r.ms, "{0:f3}"), number(r.tflops, "{0:f1}"),
        r.pass ? "PASS" : "FAIL");
    if (!r.note.empty())
      llvm::outs() << "     " << r.note << "\n";
    if (r.noKeyNonZero > 0)
      llvm::outs() << "     " << r.noKeyNonZero
                   << " dQ values of rows that see no key (LSE = -inf) are "
                      "not 0\n";
  }
}

} // namespace attn::run

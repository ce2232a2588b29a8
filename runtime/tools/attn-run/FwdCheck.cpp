//===- FwdCheck.cpp - a forward call against the fp32 reference -----------===//
//
// The reference (Reference.cu, embedded as a cubin) of a forward call, the
// comparison of O and LSE with it and the tolerance, and the sequence
// isolation check of varlen and paged kernels (Isolation.h).
//
//===----------------------------------------------------------------------===//

#include "FwdCall.h"
#include "Isolation.h"
#include "reference_cubin.h"

namespace attn::run::fwd {

Error loadReference(Reference &ref, CUdevice device) {
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
  void *params[] = {&q,     &k,     &v,       &o,        &lse,
                    &hq,    &hkv,   &nq,      &d,        &causal,
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
  int64_t hq = s.headsQ, hkv = s.headsKV, d = s.headDim, lseStride = in.totalQ,
          pageSize = std::max<int64_t>(s.pageSize, 1);
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
    void *params[] = {&q,      &k,     &v,         &o,     &lse,
                      &hq,     &hkv,   &nq,        &nk,    &d,
                      &causal, &scale, &lseStride, &table, &pageSize};
    if (Error err =
            check(cuLaunchKernel(ref.forwardVarlen[s.bf16], unsigned(nq),
                                 unsigned(hq), 1, kReferenceThreads, 1, 1,
                                 shared, stream, params, nullptr),
                  "launch reference_fwd_varlen"))
      return err;
  }
  return Error::success();
}

Error runReference(const Reference &ref, const Shape &s, const Buffers &b,
                   CUstream stream) {
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
  if (Error err = check(cuLaunchKernel(ref.widen[s.oIndex()], blocks, 1, 1, 256,
                                       1, 1, 0, stream, params, nullptr),
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

Error checkOutputs(const Reference &ref, const Shape &s, const Buffers &b,
                   CUstream stream, Result &r) {
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

/// f16/bf16: relative error of O below 1e-2, LSE within 1e-3. FP8: the
/// kernel rounds P to e4m3 before P V (3 mantissa bits), so O is off by a
/// few percent of its magnitude: max |O - ref| <= 0.05 * max |ref| + 1e-2;
/// LSE (from fp32 scores of the same dequantized inputs) within 1e-2.
/// Quantized kernels: relative error of O below 6e-2, LSE within 0.25 (the
/// scores of quantized Q and K move rows with few keys most).
bool passesTolerance(const Shape &s, const Result &r) {
  // Quantized: the reference runs on the bf16 inputs, so the quantization
  // of Q, K, V (and P) is in the error: a few percent of |O|.
  if (s.quantized)
    return r.relErr < 6e-2 && (!s.hasLse || r.lseErr < 2.5e-1);
  if (!s.fp8)
    return r.relErr < 1e-2 && (!s.hasLse || r.lseErr < 1e-3);
  return r.maxErr <= 0.05 * r.maxRef + 1e-2 && (!s.hasLse || r.lseErr < 1e-2);
}

/// Sets the rows `ranges` of the [rows, rowElems] 16-bit tensor `x` to NaN.
static Error poisonRows(const DeviceBuffer &x,
                        const attn::run::RowRanges &ranges, int64_t rowElems,
                        CUstream stream) {
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
                               const Buffers &b, int64_t seq, CUstream stream) {
  using namespace attn::run;
  const VarlenInputs &in = s.seqs;
  if (s.varlen)
    if (Error err = poisonRows(
            b.q, rowsOutside(in.totalQ, in.cuQ[seq], in.cuQ[seq + 1]),
            s.headsQ * s.headDim, stream))
      return err;
  if (!s.paged()) {
    RowRanges kv = rowsOutside(in.totalK, in.cuK[seq], in.cuK[seq + 1]);
    if (Error err = poisonRows(b.k, kv, s.headsKV * s.headDim, stream))
      return err;
    return poisonRows(b.v, kv, s.headsKV * s.headDim, stream);
  }
  if (Error err = upload(b.validRows,
                         ownRowsPerPage(s.pages, seq, s.maxPages, s.pageSize)))
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
    count(lse0, lse1, h * in.totalQ + in.cuQ[seq],
          h * in.totalQ + in.cuQ[seq + 1]);
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
Error checkIsolation(attn_bundle *bundle, const Reference &ref, const Shape &s,
                     uint64_t seed, CUstream stream, const Buffers &b,
                     const attn_fwd_args &args, Result &r) {
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

} // namespace attn::run::fwd

//===- ReferenceCheck.cpp - check attn-run's GPU reference itself ---------===//
//
// attn-reference-check: runs attn-run's reference kernels (Reference.cu) on
// small bf16 shapes and compares them with an fp64 attention on the host.
// The paged reference (keys through a block table, Paged.h's inputs) must
// agree bit for bit with the contiguous one on each sequence's gathered
// keys, and garbage must sit exactly in the unused cache rows. The varlen
// reference (one launch per sequence on views of packed [total, H, D]
// tensors) must agree bit for bit with the contiguous one on each
// sequence's rows copied out, and with fp64. The backward references
// (dQ, dK, dV; f16 and bf16) are checked against an fp64 host backward in
// ReferenceCheckBwd.cpp. No bundle is needed: it checks the checker. Exit
// status 0 iff everything agrees.
//
//===----------------------------------------------------------------------===//

#include "ReferenceCheck.h"
#include "Paged.h"
#include "Varlen.h"
#include "reference_cubin.h"

#include <cuda.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using attn::run::Buffer;
using attn::run::ok;

float fromBf16(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// `x` rounded to bf16 (to nearest even, as the poison kernel stores it);
/// 1e4 becomes 9984.
float roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1);
  return fromBf16(uint16_t(bits >> 16));
}

struct Kernels {
  CUfunction fill, paged, contiguous, poison, varlen;
};

struct Case {
  int64_t batch, headsQ, headsKV, seqQ, headDim, pageSize, maxPages;
  int causal;
};

/// One row's fp64 attention over `n` gathered keys ([Hkv, n, D] bf16).
void hostRow(const uint16_t *q, const std::vector<uint16_t> &k,
             const std::vector<uint16_t> &v, int64_t head, int64_t n,
             int64_t visible, int64_t d, double scale,
             std::vector<double> &out, double &lse) {
  std::vector<double> s(visible);
  double max = -INFINITY, sum = 0;
  for (int64_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c)
      dot += double(fromBf16(q[c])) * fromBf16(k[(head * n + j) * d + c]);
    s[j] = dot * scale;
    max = std::max(max, s[j]);
  }
  for (double &x : s)
    sum += x = std::exp(x - max);
  out.assign(d, 0.0);
  for (int64_t c = 0; c < d; ++c)
    for (int64_t j = 0; j < visible; ++j)
      out[c] += s[j] * fromBf16(v[(head * n + j) * d + c]) / sum;
  lse = visible ? max + std::log(sum) : -INFINITY;
}

/// Fills Q, K and V (bf16, `counts` elements each) with normal values from
/// seeds `seed`, `seed + 1`, `seed + 2`.
bool fillInputs(const Kernels &kern, std::array<CUdeviceptr, 3> inputs,
                std::array<int64_t, 3> counts, uint64_t seed) {
  for (int i = 0; i < 3; ++i) {
    uint64_t s = seed + i;
    void *p[] = {&inputs[i], &counts[i], &s};
    if (!ok(cuLaunchKernel(kern.fill, 64, 1, 1, 256, 1, 1, 0, nullptr, p,
                           nullptr),
            "fill_normal_bf16"))
      return false;
  }
  return true;
}

/// Runs one case; returns the number of disagreements (-1: a CUDA error).
int runCase(const Kernels &kern, const Case &c) {
  int64_t b = c.batch, hq = c.headsQ, hkv = c.headsKV, nq = c.seqQ,
          d = c.headDim, ps = c.pageSize, maxPages = c.maxPages;
  int64_t pages = b * maxPages, rowElems = hkv * d;
  int64_t nQ = b * hq * nq * d, nKV = pages * ps * rowElems, rows = b * hq * nq;
  attn::run::PagedInputs in =
      attn::run::makePagedInputs(b, maxPages, ps, 42 + ps);
  Buffer q(nQ * 2), k(nKV * 2), v(nKV * 2), o(nQ * 4), lse(rows * 4),
      table(pages * 4), lengths(b * 4), valid(pages * 4);
  if (!fillInputs(kern, {q.ptr, k.ptr, v.ptr}, {nQ, nKV, nKV}, 1))
    return -1;
  if (!ok(cuMemcpyHtoD(table.ptr, in.table.data(), pages * 4), "upload") ||
      !ok(cuMemcpyHtoD(lengths.ptr, in.lengths.data(), b * 4), "upload") ||
      !ok(cuMemcpyHtoD(valid.ptr, in.validRows.data(), pages * 4), "upload"))
    return -1;
  float garbage = attn::run::kPagedGarbage, scale = 0.125f;
  for (CUdeviceptr x : {k.ptr, v.ptr}) {
    void *p[] = {&x, &valid.ptr, &pages, &ps, &rowElems, &garbage};
    if (!ok(cuLaunchKernel(kern.poison, 64, 1, 1, 256, 1, 1, 0, nullptr, p,
                           nullptr),
            "poison_pages_bf16"))
      return -1;
  }
  auto shared = unsigned((maxPages * ps + d) * 4);
  void *p[] = {&q.ptr, &k.ptr, &v.ptr,      &o.ptr,   &lse.ptr,
               &hq,    &hkv,   &nq,         &d,       const_cast<int *>(&c.causal),
               &scale, &table.ptr, &lengths.ptr, &maxPages, &ps};
  if (!ok(cuFuncSetAttribute(kern.paged,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(shared)),
          "cuFuncSetAttribute") ||
      !ok(cuLaunchKernel(kern.paged, nq, hq, b, 128, 1, 1, shared, nullptr, p,
                         nullptr),
          "reference_fwd_paged_bf16") ||
      !ok(cuStreamSynchronize(nullptr), "reference_fwd_paged_bf16"))
    return -1;
  std::vector<uint16_t> hostQ(nQ), hostK(nKV), hostV(nKV);
  std::vector<float> hostO(nQ), hostLse(rows);
  if (!ok(cuMemcpyDtoH(hostQ.data(), q.ptr, nQ * 2), "download") ||
      !ok(cuMemcpyDtoH(hostK.data(), k.ptr, nKV * 2), "download") ||
      !ok(cuMemcpyDtoH(hostV.data(), v.ptr, nKV * 2), "download") ||
      !ok(cuMemcpyDtoH(hostO.data(), o.ptr, nQ * 4), "download") ||
      !ok(cuMemcpyDtoH(hostLse.data(), lse.ptr, rows * 4), "download"))
    return -1;
  int bad = 0;
  // Garbage in exactly the rows no sequence reads.
  int64_t garbageRows = 0, unused = pages * ps;
  for (int32_t n : in.lengths)
    unused -= n;
  float stored = roundToBf16(garbage);
  for (int64_t r = 0; r < pages * ps; ++r)
    garbageRows += fromBf16(hostK[r * rowElems]) == stored &&
                   fromBf16(hostV[r * rowElems + rowElems - 1]) == stored;
  if (garbageRows != unused) {
    std::printf("  %ld garbage rows, expected %ld\n", long(garbageRows),
                long(unused));
    ++bad;
  }
  double maxErr = 0;
  for (int64_t s = 0; s < b; ++s) {
    // The sequence's keys gathered as contiguous [1, Hkv, n, D].
    int64_t n = in.lengths[s];
    std::vector<uint16_t> gk(hkv * n * d), gv(hkv * n * d);
    for (int64_t h = 0; h < hkv; ++h)
      for (int64_t j = 0; j < n; ++j) {
        int64_t row = attn::run::pagedRow(&in.table[s * maxPages], ps, j);
        std::memcpy(&gk[(h * n + j) * d], &hostK[(row * hkv + h) * d], d * 2);
        std::memcpy(&gv[(h * n + j) * d], &hostV[(row * hkv + h) * d], d * 2);
      }
    Buffer ck(gk.size() * 2), cv(gv.size() * 2), co(hq * nq * d * 4),
        cl(hq * nq * 4);
    CUdeviceptr qs = q.ptr + s * hq * nq * d * 2;
    int64_t one = 1;
    auto sh = unsigned((n + d) * 4);
    void *cp[] = {&qs, &ck.ptr, &cv.ptr, &co.ptr, &cl.ptr, &one, &hq,
                  &hkv, &nq,    &n,      &d,      const_cast<int *>(&c.causal),
                  &scale};
    std::vector<float> contO(hq * nq * d), contLse(hq * nq);
    if ((n && (!ok(cuMemcpyHtoD(ck.ptr, gk.data(), gk.size() * 2), "upload") ||
               !ok(cuMemcpyHtoD(cv.ptr, gv.data(), gv.size() * 2), "upload"))) ||
        !ok(cuLaunchKernel(kern.contiguous, nq, hq, 1, 128, 1, 1, sh, nullptr,
                           cp, nullptr),
            "reference_fwd_bf16") ||
        !ok(cuStreamSynchronize(nullptr), "reference_fwd_bf16") ||
        !ok(cuMemcpyDtoH(contO.data(), co.ptr, contO.size() * 4), "download") ||
        !ok(cuMemcpyDtoH(contLse.data(), cl.ptr, contLse.size() * 4),
            "download"))
      return -1;
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        int64_t visible =
            c.causal ? std::min(n, std::max<int64_t>(0, i + n - nq + 1)) : n;
        int64_t row = (s * hq + h) * nq + i, local = h * nq + i;
        std::vector<double> ref;
        double refLse;
        hostRow(&hostQ[row * d], gk, gv, h / (hq / hkv), n, visible, d, scale,
                ref, refLse);
        bool lseSame = hostLse[row] == contLse[local] ||
                       (std::isnan(hostLse[row]) && std::isnan(contLse[local]));
        bad += !lseSame;
        maxErr = std::max(maxErr, std::isinf(refLse)
                                      ? (hostLse[row] == refLse ? 0 : INFINITY)
                                      : std::fabs(hostLse[row] - refLse));
        for (int64_t x = 0; x < d; ++x) {
          bad += hostO[row * d + x] != contO[local * d + x];
          maxErr = std::max(maxErr, std::fabs(hostO[row * d + x] - ref[x]));
        }
      }
  }
  bool close = maxErr < 1e-4;
  std::printf("  B%ld Hq%ld Hkv%ld Nq%ld D%ld page %ld x %ld%s, lengths",
              long(b), long(hq), long(hkv), long(nq), long(d), long(ps),
              long(maxPages), c.causal ? " causal" : "");
  for (int32_t n : in.lengths)
    std::printf(" %d", n);
  std::printf(": max |paged - fp64| %.2e, %d values differ from the "
              "contiguous reference: %s\n",
              maxErr, bad, bad == 0 && close ? "PASS" : "FAIL");
  return bad + !close;
}

/// Rows [first, first + n) of a packed [total, H, D] bf16 tensor as
/// contiguous [H, n, D].
std::vector<uint16_t> unpack(const std::vector<uint16_t> &packed,
                             int64_t first, int64_t n, int64_t heads,
                             int64_t d) {
  std::vector<uint16_t> out(heads * n * d);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < n; ++t)
      std::memcpy(&out[(h * n + t) * d], &packed[((first + t) * heads + h) * d],
                  d * 2);
  return out;
}

struct VarlenCase {
  int64_t headsQ, headsKV, headDim;
  int causal;
  std::vector<std::pair<int64_t, int64_t>> seqs; // (Nq, Nk)
};

/// The varlen reference's launches, one per sequence with queries, on
/// views of packed q, k, v, o, lse (contiguous keys: table null).
bool launchVarlen(const Kernels &kern, const VarlenCase &c,
                  const attn::run::VarlenInputs &in, CUdeviceptr q,
                  CUdeviceptr k, CUdeviceptr v, CUdeviceptr o,
                  CUdeviceptr lse, float scale) {
  int64_t hq = c.headsQ, hkv = c.headsKV, d = c.headDim,
          lseStride = in.totalQ, pageSize = 1;
  CUdeviceptr table = 0;
  for (int64_t b = 0; b < in.batch(); ++b) {
    int64_t nq = in.seqQ(b), nk = in.seqK(b);
    if (nq == 0)
      continue;
    int64_t firstQ = in.cuQ[b], firstK = in.cuK[b];
    CUdeviceptr qs = q + firstQ * hq * d * 2, ks = k + firstK * hkv * d * 2,
                vs = v + firstK * hkv * d * 2, os = o + firstQ * hq * d * 4,
                ls = lse + firstQ * 4;
    int causal = c.causal;
    void *p[] = {&qs, &ks, &vs,     &os,    &ls,        &hq,    &hkv,     &nq,
                 &nk, &d,  &causal, &scale, &lseStride, &table, &pageSize};
    if (!ok(cuLaunchKernel(kern.varlen, nq, hq, 1, 128, 1, 1,
                           unsigned((nk + d) * 4), nullptr, p, nullptr),
            "reference_fwd_varlen_bf16"))
      return false;
  }
  return ok(cuStreamSynchronize(nullptr), "reference_fwd_varlen_bf16");
}

/// The contiguous reference on [1, H, N, D] copies of one sequence's rows.
bool runContiguous(const Kernels &kern, const VarlenCase &c,
                   const std::vector<uint16_t> &q,
                   const std::vector<uint16_t> &k,
                   const std::vector<uint16_t> &v, int64_t nq, int64_t nk,
                   float scale, std::vector<float> &o,
                   std::vector<float> &lse) {
  int64_t one = 1, hq = c.headsQ, hkv = c.headsKV, d = c.headDim;
  Buffer dq(q.size() * 2), dk(k.size() * 2), dv(v.size() * 2),
      dO(hq * nq * d * 4), dl(hq * nq * 4);
  void *p[] = {&dq.ptr, &dk.ptr, &dv.ptr, &dO.ptr, &dl.ptr, &one, &hq,
               &hkv,    &nq,     &nk,     &d, const_cast<int *>(&c.causal),
               &scale};
  o.resize(hq * nq * d);
  lse.resize(hq * nq);
  return ok(cuMemcpyHtoD(dq.ptr, q.data(), q.size() * 2), "upload") &&
         (nk == 0 ||
          (ok(cuMemcpyHtoD(dk.ptr, k.data(), k.size() * 2), "upload") &&
           ok(cuMemcpyHtoD(dv.ptr, v.data(), v.size() * 2), "upload"))) &&
         ok(cuLaunchKernel(kern.contiguous, nq, hq, 1, 128, 1, 1,
                           unsigned((nk + d) * 4), nullptr, p, nullptr),
            "reference_fwd_bf16") &&
         ok(cuStreamSynchronize(nullptr), "reference_fwd_bf16") &&
         ok(cuMemcpyDtoH(o.data(), dO.ptr, o.size() * 4), "download") &&
         ok(cuMemcpyDtoH(lse.data(), dl.ptr, lse.size() * 4), "download");
}

/// Runs one varlen case; returns the number of disagreements (-1: a CUDA
/// error).
int runVarlenCase(const Kernels &kern, const VarlenCase &c) {
  attn::run::VarlenInputs in = attn::run::packVarlen(c.seqs);
  int64_t hq = c.headsQ, hkv = c.headsKV, d = c.headDim;
  int64_t nQ = in.totalQ * hq * d, nKV = in.totalK * hkv * d;
  float scale = float(1 / std::sqrt(double(d)));
  Buffer q(nQ * 2), k(nKV * 2), v(nKV * 2), o(nQ * 4), lse(hq * in.totalQ * 4);
  if (!fillInputs(kern, {q.ptr, k.ptr, v.ptr}, {nQ, nKV, nKV}, 4))
    return -1;
  if (!launchVarlen(kern, c, in, q.ptr, k.ptr, v.ptr, o.ptr, lse.ptr, scale))
    return -1;
  std::vector<uint16_t> hostQ(nQ), hostK(nKV), hostV(nKV);
  std::vector<float> hostO(nQ), hostLse(hq * in.totalQ);
  if (!ok(cuMemcpyDtoH(hostQ.data(), q.ptr, nQ * 2), "download") ||
      !ok(cuMemcpyDtoH(hostK.data(), k.ptr, nKV * 2), "download") ||
      !ok(cuMemcpyDtoH(hostV.data(), v.ptr, nKV * 2), "download") ||
      !ok(cuMemcpyDtoH(hostO.data(), o.ptr, nQ * 4), "download") ||
      !ok(cuMemcpyDtoH(hostLse.data(), lse.ptr, hostLse.size() * 4),
          "download"))
    return -1;
  int bad = 0;
  double maxErr = 0;
  for (int64_t b = 0; b < in.batch(); ++b) {
    int64_t nq = in.seqQ(b), nk = in.seqK(b);
    if (nq == 0)
      continue;
    std::vector<uint16_t> sq = unpack(hostQ, in.cuQ[b], nq, hq, d),
                          sk = unpack(hostK, in.cuK[b], nk, hkv, d),
                          sv = unpack(hostV, in.cuK[b], nk, hkv, d);
    std::vector<float> contO, contLse;
    if (!runContiguous(kern, c, sq, sk, sv, nq, nk, scale, contO, contLse))
      return -1;
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        int64_t t = in.cuQ[b] + i, local = h * nq + i;
        int64_t visible =
            c.causal ? std::min(nk, std::max<int64_t>(0, i + nk - nq + 1)) : nk;
        float got = hostLse[h * in.totalQ + t];
        bad += !(got == contLse[local] ||
                 (std::isnan(got) && std::isnan(contLse[local])));
        std::vector<double> ref;
        double refLse;
        hostRow(&sq[local * d], sk, sv, h / (hq / hkv), nk, visible, d, scale,
                ref, refLse);
        maxErr = std::max(maxErr, std::isinf(refLse)
                                      ? (got == refLse ? 0 : INFINITY)
                                      : std::fabs(got - refLse));
        for (int64_t x = 0; x < d; ++x) {
          float value = hostO[(t * hq + h) * d + x];
          bad += value != contO[local * d + x];
          maxErr = std::max(maxErr, std::fabs(value - ref[x]));
        }
      }
  }
  bool close = maxErr < 1e-4;
  std::printf("  varlen Hq%ld Hkv%ld D%ld%s, (Nq, Nk)", long(hq), long(hkv),
              long(d), c.causal ? " causal" : "");
  for (auto [nq, nk] : c.seqs)
    std::printf(" (%ld, %ld)", long(nq), long(nk));
  std::printf(": max |varlen - fp64| %.2e, %d values differ from the "
              "contiguous reference: %s\n",
              maxErr, bad, bad == 0 && close ? "PASS" : "FAIL");
  return bad + !close;
}

} // namespace

int main() {
  CUdevice device;
  CUcontext context;
  CUmodule module;
  Kernels kern;
  if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !ok(cuDevicePrimaryCtxRetain(&context, device), "retain context") ||
      !ok(cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !ok(cuModuleLoadData(&module, attn_reference_cubin), "load reference") ||
      !ok(cuModuleGetFunction(&kern.fill, module, "fill_normal_bf16"), "fill") ||
      !ok(cuModuleGetFunction(&kern.paged, module, "reference_fwd_paged_bf16"),
          "paged") ||
      !ok(cuModuleGetFunction(&kern.contiguous, module, "reference_fwd_bf16"),
          "contiguous") ||
      !ok(cuModuleGetFunction(&kern.poison, module, "poison_pages_bf16"),
          "poison") ||
      !ok(cuModuleGetFunction(&kern.varlen, module,
                              "reference_fwd_varlen_bf16"),
          "varlen"))
    return 2;
  const Case cases[] = {{4, 4, 2, 5, 64, 16, 4, 0}, {4, 4, 2, 5, 64, 16, 4, 1},
                        {3, 8, 8, 1, 128, 1, 40, 0}, {3, 2, 1, 7, 64, 5, 9, 1},
                        {2, 4, 4, 3, 64, 256, 2, 1}};
  int failed = 0;
  for (const Case &c : cases) {
    int bad = runCase(kern, c);
    if (bad < 0)
      return 2;
    failed += bad > 0;
  }
  const VarlenCase varlenCases[] = {
      {4, 2, 64, 1, {{0, 5}, {7, 3}, {3, 9}, {4, 0}, {1, 1}, {0, 0}}},
      {4, 4, 64, 0, {{5, 17}, {0, 0}, {9, 2}}},
      {8, 2, 128, 1, {{33, 70}, {70, 33}}}};
  for (const VarlenCase &c : varlenCases) {
    int bad = runVarlenCase(kern, c);
    if (bad < 0)
      return 2;
    failed += bad > 0;
  }
  int bwdFailed = attn::run::checkBackward(module);
  if (bwdFailed < 0)
    return 2;
  failed += bwdFailed;
  std::printf("%s\n", failed ? "FAIL" : "all cases PASS");
  cuModuleUnload(module);
  return failed ? 1 : 0;
}

//===- VarlenCheck.cpp - a varlen kernel against the batched one ----------===//
//
// attn-varlen-check <bundle>: the bundle holds a varlen kernel and a
// batched strided kernel of one key otherwise (attn-compile --spec-file
// with both, see docs/bundle.md "Varlen calls"). For a mixed batch (empty
// sequences first, in the middle and last; lengths 1, 17, 300, 129 and a
// query-longer-than-keys one) it runs the varlen call once, then each
// sequence as a batched B = 1 call on strided views of the same packed
// buffers, and compares O and LSE. The batched kernels are checked against
// a reference by attn-run, so this checks the varlen layout (packed maps,
// cu_seqlens, grid) rather than the attention itself. Rows of O past
// cu_seqlens_q[B] must stay untouched (NaN poison). Exit status 0 iff all
// agree. Needs a GPU. attn-run checks varlen kernels against a reference
// per sequence; this checks the varlen call against the batched kernel.
//
//===----------------------------------------------------------------------===//

#include "attn/runtime.h"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

int fail(const char *what, CUresult r) {
  std::fprintf(stderr, "%s failed: CUresult %d\n", what, int(r));
  return 2;
}

uint16_t toBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return uint16_t(bits >> 16);
}

float fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

attn_tensor tensor(CUdeviceptr data, attn_dtype dtype,
                   std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  attn_tensor t = {};
  t.data = reinterpret_cast<void *>(data);
  t.dtype = dtype;
  t.rank = int32_t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    t.sizes[i] = sizes[i];
    t.strides[i] = strides[i];
  }
  return t;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attn-varlen-check <bundle>\n");
    return 2;
  }
  const int64_t hq = 4, hkv = 4, d = 64;
  const bool causal = true;
  // Per sequence (Nq, Nk): empty first, in the middle and last; a query
  // longer than its keys (causal rows that see nothing).
  const std::vector<std::pair<int64_t, int64_t>> seqs = {
      {0, 0}, {1, 1}, {17, 40}, {0, 5}, {300, 300}, {129, 64}, {5, 0}, {0, 0}};
  std::vector<int32_t> cuQ = {0}, cuK = {0};
  int64_t maxQ = 0, maxK = 0;
  for (auto [nq, nk] : seqs) {
    cuQ.push_back(cuQ.back() + int32_t(nq));
    cuK.push_back(cuK.back() + int32_t(nk));
    maxQ = std::max(maxQ, nq);
    maxK = std::max(maxK, nk);
  }
  const int64_t b = int64_t(seqs.size());
  const int64_t totalQ = cuQ.back() + 7, totalK = cuK.back() + 9; // padding

  CUresult r;
  if ((r = cuInit(0)) != CUDA_SUCCESS)
    return fail("cuInit", r);
  CUdevice dev;
  CUcontext ctx;
  if ((r = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS ||
      (r = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS ||
      (r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
    return fail("context", r);

  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  auto randomBf16 = [&](int64_t n) {
    std::vector<uint16_t> v(n);
    for (auto &x : v)
      x = toBf16(normal(rng));
    return v;
  };
  std::vector<uint16_t> hQ = randomBf16(totalQ * hq * d),
                        hK = randomBf16(totalK * hkv * d),
                        hV = randomBf16(totalK * hkv * d);
  CUdeviceptr q, k, v, o, oRef, lse, lseRef, dCuQ, dCuK;
  size_t qBytes = hQ.size() * 2, kBytes = hK.size() * 2,
         lseBytes = size_t(hq * totalQ) * 4;
  for (auto [ptr, bytes] :
       {std::pair{&q, qBytes}, {&k, kBytes}, {&v, kBytes}, {&o, qBytes},
        {&oRef, qBytes}, {&lse, lseBytes}, {&lseRef, lseBytes},
        {&dCuQ, cuQ.size() * 4}, {&dCuK, cuK.size() * 4}})
    if ((r = cuMemAlloc(ptr, bytes)) != CUDA_SUCCESS)
      return fail("cuMemAlloc", r);
  cuMemcpyHtoD(q, hQ.data(), qBytes);
  cuMemcpyHtoD(k, hK.data(), kBytes);
  cuMemcpyHtoD(v, hV.data(), kBytes);
  cuMemcpyHtoD(dCuQ, cuQ.data(), cuQ.size() * 4);
  cuMemcpyHtoD(dCuK, cuK.data(), cuK.size() * 4);
  // NaN poison: bf16 0x7fc0, f32 0x7fc00000.
  cuMemsetD16Async(o, 0x7fc0, qBytes / 2, nullptr);
  cuMemsetD16Async(oRef, 0x7fc0, qBytes / 2, nullptr);
  cuMemsetD32Async(lse, 0x7fc00000, lseBytes / 4, nullptr);
  cuMemsetD32Async(lseRef, 0x7fc00000, lseBytes / 4, nullptr);

  attn_bundle *bundle = nullptr;
  if (attn_bundle_load(argv[1], &bundle) != ATTN_SUCCESS) {
    std::fprintf(stderr, "%s\n", attn_last_error());
    return 2;
  }
  attn_fwd_args args = {};
  args.q = tensor(q, ATTN_DTYPE_BF16, {totalQ, hq, d}, {hq * d, d, 1});
  args.k = tensor(k, ATTN_DTYPE_BF16, {totalK, hkv, d}, {hkv * d, d, 1});
  args.v = tensor(v, ATTN_DTYPE_BF16, {totalK, hkv, d}, {hkv * d, d, 1});
  args.o = tensor(o, ATTN_DTYPE_BF16, {totalQ, hq, d}, {hq * d, d, 1});
  args.lse = tensor(lse, ATTN_DTYPE_F32, {hq, totalQ}, {totalQ, 1});
  args.cu_seqlens_q = tensor(dCuQ, ATTN_DTYPE_I32, {b + 1}, {1});
  args.cu_seqlens_k = tensor(dCuK, ATTN_DTYPE_I32, {b + 1}, {1});
  args.max_seqlen_q = maxQ;
  args.max_seqlen_k = maxK;
  args.causal = causal;
  int64_t index = -1;
  if (attn_fwd_select(bundle, &args, &index) != ATTN_SUCCESS ||
      attn_fwd(bundle, &args, nullptr) != ATTN_SUCCESS) {
    std::fprintf(stderr, "varlen call: %s\n", attn_last_error());
    return 1;
  }
  std::printf("varlen call: kernel %lld (%s)\n", (long long)index,
              attn_bundle_kernel_info(bundle, index));
  // Each sequence as a batched B = 1 call on views of the packed buffers.
  for (int64_t s = 0; s < b; ++s) {
    int64_t nq = cuQ[s + 1] - cuQ[s], nk = cuK[s + 1] - cuK[s];
    attn_fwd_args one = {};
    CUdeviceptr qs = q + size_t(cuQ[s] * hq * d * 2),
                ks = k + size_t(cuK[s] * hkv * d * 2),
                vs = v + size_t(cuK[s] * hkv * d * 2),
                os = oRef + size_t(cuQ[s] * hq * d * 2),
                ls = lseRef + size_t(cuQ[s] * 4);
    one.q = tensor(qs, ATTN_DTYPE_BF16, {1, hq, nq, d}, {0, d, hq * d, 1});
    one.k = tensor(ks, ATTN_DTYPE_BF16, {1, hkv, nk, d}, {0, d, hkv * d, 1});
    one.v = tensor(vs, ATTN_DTYPE_BF16, {1, hkv, nk, d}, {0, d, hkv * d, 1});
    one.o = tensor(os, ATTN_DTYPE_BF16, {1, hq, nq, d}, {0, d, hq * d, 1});
    one.lse = tensor(ls, ATTN_DTYPE_F32, {1, hq, nq}, {0, totalQ, 1});
    one.causal = causal;
    if (attn_fwd(bundle, &one, nullptr) != ATTN_SUCCESS) {
      std::fprintf(stderr, "batched call of sequence %lld: %s\n",
                   (long long)s, attn_last_error());
      return 1;
    }
  }
  if ((r = cuStreamSynchronize(nullptr)) != CUDA_SUCCESS)
    return fail("cuStreamSynchronize", r);
  std::vector<uint16_t> hO(hQ.size()), hORef(hQ.size());
  std::vector<float> hL(hq * totalQ), hLRef(hq * totalQ);
  cuMemcpyDtoH(hO.data(), o, qBytes);
  cuMemcpyDtoH(hORef.data(), oRef, qBytes);
  cuMemcpyDtoH(hL.data(), lse, lseBytes);
  cuMemcpyDtoH(hLRef.data(), lseRef, lseBytes);
  int64_t bad = 0, nan = 0, written = 0;
  double maxErr = 0, maxLseErr = 0;
  for (int64_t row = 0; row < totalQ; ++row)
    for (int64_t i = 0; i < hq * d; ++i) {
      float x = fromBf16(hO[row * hq * d + i]),
            y = fromBf16(hORef[row * hq * d + i]);
      if (row >= cuQ.back()) { // padding: never written
        written += !std::isnan(x);
        continue;
      }
      if (std::isnan(x) || std::isnan(y)) {
        ++nan;
        continue;
      }
      double err = std::fabs(x - y);
      maxErr = std::max(maxErr, err);
      bad += err > 2e-2 + 2e-2 * std::fabs(y);
    }
  for (int64_t h = 0; h < hq; ++h)
    for (int64_t row = 0; row < cuQ.back(); ++row) {
      float x = hL[h * totalQ + row], y = hLRef[h * totalQ + row];
      if (std::isinf(x) && std::isinf(y) && (x < 0) == (y < 0))
        continue;
      if (std::isnan(x) || std::isnan(y)) {
        ++nan;
        continue;
      }
      double err = std::fabs(x - y);
      maxLseErr = std::max(maxLseErr, err);
      bad += err > 1e-3;
    }
  std::printf("B=%lld Hq=%lld Hkv=%lld D=%lld total_q=%lld total_k=%lld: "
              "max |O - O_batched| %.3g, max |LSE - LSE_batched| %.3g, "
              "%lld mismatches, %lld NaN, %lld padding elements written\n",
              (long long)b, (long long)hq, (long long)hkv, (long long)d,
              (long long)totalQ, (long long)totalK, maxErr, maxLseErr,
              (long long)bad, (long long)nan, (long long)written);
  attn_bundle_destroy(bundle);
  bool ok = bad == 0 && nan == 0 && written == 0;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

//===- Reference.cu - random inputs and a plain fp32 attention -*- CUDA -*-===//
//
// Device code of attn-run, built into a cubin and loaded through the driver
// API. fill_normal_* writes standard normal inputs from a counter-based hash;
// reference_fwd_* is a deliberately simple attention (one CTA per query row,
// fp32 throughout, expf/logf) to check the compiled kernels against. It keeps
// the semantics of attn.attention (docs/ir.md): bottom-right causal mask, GQA,
// and O = 0, LSE = -inf for a row that sees no key. The paged variant reads
// each sequence's keys through its block-table row (Paged.h's pagedRow); the
// varlen one runs on one sequence's view of the packed [total, H, D] tensors
// per launch (contiguous or paged keys). reference_bwd_dq_* and
// reference_bwd_dkdv_* are the backward (fp32 dQ, dK, dV of contiguous
// operands, one CTA per query row and per key row; section "Reference
// backward"), narrow_* rounds the forward's f32 O to a backward's dtype.
//
//===----------------------------------------------------------------------===//

#include "Paged.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace {

//===----------------------------------------------------------------------===//
// Random inputs
//===----------------------------------------------------------------------===//

__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A standard normal value for element `index` (Box-Muller on two 32-bit
/// uniforms), never zero: values that would round to zero in 16 bits become
/// +-2^-10, a negligible change to the distribution.
__device__ float normalAt(uint64_t seed, uint64_t index) {
  uint64_t bits = splitmix64(seed ^ splitmix64(index));
  // u1 in (0, 1] keeps the log finite; u2 in [0, 1).
  float u1 = (float(uint32_t(bits >> 32)) + 1.0f) * 0x1p-32f;
  float u2 = float(uint32_t(bits)) * 0x1p-32f;
  float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  if (fabsf(z) < 0x1p-10f)
    z = copysignf(0x1p-10f, z);
  return z;
}

__device__ float toFloat(float x) { return x; }
__device__ float toFloat(__half x) { return __half2float(x); }
__device__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ T fromFloat(float x);
template <> __device__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T>
__device__ void fillNormal(T *x, int64_t n, uint64_t seed) {
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    x[i] = fromFloat<T>(normalAt(seed, uint64_t(i)));
}

//===----------------------------------------------------------------------===//
// Reference attention
//===----------------------------------------------------------------------===//

constexpr int kWarp = 32;

/// Reduces `value` over the CTA with `op`; every thread gets the result.
/// `scratch` holds one float per warp.
template <typename Op>
__device__ float blockReduce(float value, float *scratch, Op op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  int numWarps = (blockDim.x + kWarp - 1) / kWarp;
  __syncthreads(); // scratch may still be read by a previous reduction
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < numWarps; ++w)
    value = op(value, scratch[w]);
  return value;
}

/// Where key j of one (sequence, KV head) starts in K and V: contiguous
/// [B, Hkv, Nk, D] (no table: rows D apart from `base`), or a paged
/// [num_pages, page_size, Hkv, D] cache (rows Hkv * D apart, `base` the
/// head's offset in a row, through the sequence's block-table row).
struct KeyRows {
  int64_t base = 0, rowStride = 0;
  const int32_t *table = nullptr;
  int64_t pageSize = 1;

  __device__ int64_t offset(int64_t j) const {
    int64_t row = table ? attn::run::pagedRow(table, pageSize, j) : j;
    return base + row * rowStride;
  }
};

/// Where the CTA's query row starts: in Q and O (the same layout), and its
/// LSE element.
struct QueryRow {
  int64_t qo = 0, lse = 0;
};

/// One CTA computes query row i = blockIdx.x (of nq) at `at` against the
/// sequence's `nk` keys at `rows`. Dynamic shared memory: D floats (the
/// query row) then nk floats (scores). Needs blockDim.x to be a multiple of
/// 32.
template <typename T>
__device__ void referenceFwd(const T *q, const T *k, const T *v, float *o,
                             float *lse, QueryRow at, int64_t nq, int64_t nk,
                             int64_t d, int causal, float scale,
                             KeyRows rows) {
  extern __shared__ float smem[];
  __shared__ float scratch[kWarp];
  float *qRow = smem, *scores = smem + d;
  int64_t i = blockIdx.x;
  float *oRow = o + at.qo;

  // Keys 0 .. visible-1 are visible: causal is bottom-right aligned.
  int64_t visible = nk;
  if (causal)
    visible = min(nk, max(int64_t(0), i + nk - nq + 1));
  if (visible == 0) {
    for (int64_t c = threadIdx.x; c < d; c += blockDim.x)
      oRow[c] = 0.0f;
    if (threadIdx.x == 0)
      lse[at.lse] = -INFINITY;
    return;
  }

  for (int64_t c = threadIdx.x; c < d; c += blockDim.x)
    qRow[c] = toFloat(q[at.qo + c]);
  __syncthreads();

  // s_j = scale * q . k_j: one warp per key, lanes split the head dim.
  int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  int numWarps = blockDim.x / kWarp;
  float localMax = -INFINITY;
  for (int64_t j = warp; j < visible; j += numWarps) {
    const T *kRow = k + rows.offset(j);
    float dot = 0.0f;
    for (int64_t c = lane; c < d; c += kWarp)
      dot += qRow[c] * toFloat(kRow[c]);
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      dot += __shfl_xor_sync(0xFFFFFFFFu, dot, offset);
    float s = scale * dot;
    if (lane == 0)
      scores[j] = s;
    localMax = fmaxf(localMax, s);
  }
  float rowMax = blockReduce(localMax, scratch,
                             [](float a, float b) { return fmaxf(a, b); });

  // p_j = exp(s_j - max), kept in place of s_j.
  float localSum = 0.0f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    float p = expf(scores[j] - rowMax);
    scores[j] = p;
    localSum += p;
  }
  float rowSum =
      blockReduce(localSum, scratch, [](float a, float b) { return a + b; });

  // O[c] = sum_j p_j v_j[c] / sum: threads split the head dim, so each
  // step over j reads a contiguous piece of v_j.
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < visible; ++j)
      acc += scores[j] * toFloat(v[rows.offset(j) + c]);
    oRow[c] = acc / rowSum;
  }
  if (threadIdx.x == 0)
    lse[at.lse] = rowMax + logf(rowSum);
}

/// The CTA's query row (b, h, i) of contiguous [B, H, Nq, D] Q and O and
/// [B, H, Nq] LSE.
__device__ QueryRow batchedRow(int64_t hq, int64_t nq, int64_t d) {
  int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  int64_t row = (b * hq + h) * nq + i;
  return {row * d, row};
}

/// The contiguous K/V rows of the CTA's (b, KV head of h).
__device__ KeyRows contiguousRows(int64_t hq, int64_t hkv, int64_t nk,
                                  int64_t d) {
  int64_t h = blockIdx.y, b = blockIdx.z;
  return {(b * hkv + h / (hq / hkv)) * nk * d, d};
}

template <typename T>
__device__ void referenceContiguous(const T *q, const T *k, const T *v,
                                    float *o, float *lse, int64_t hq,
                                    int64_t hkv, int64_t nq, int64_t nk,
                                    int64_t d, int causal, float scale) {
  referenceFwd(q, k, v, o, lse, batchedRow(hq, nq, d), nq, nk, d, causal,
               scale, contiguousRows(hq, hkv, nk, d));
}

/// Paged K/V: sequence b has lengths[b] keys, key j in row pagedRow(table
/// row b, page_size, j) of the caches.
template <typename T>
__device__ void referencePaged(const T *q, const T *k, const T *v, float *o,
                               float *lse, int64_t hq, int64_t hkv, int64_t nq,
                               int64_t d, int causal, float scale,
                               const int32_t *table, const int32_t *lengths,
                               int64_t maxPages, int64_t pageSize) {
  int64_t h = blockIdx.y, b = blockIdx.z;
  KeyRows rows = {(h / (hq / hkv)) * d, hkv * d, table + b * maxPages,
                  pageSize};
  referenceFwd(q, k, v, o, lse, batchedRow(hq, nq, d), nq,
               int64_t(lengths[b]), d, causal, scale, rows);
}

/// Varlen, one sequence per launch on views at its first query and key:
/// query row (i, h) of [Nq_b, Hq, D] Q and O (rows Hq * D apart), LSE
/// element h * lseStride + i; keys [Nk_b, Hkv, D] rows Hkv * D apart, or
/// through `table` (the sequence's block-table row; null: contiguous) in
/// [num_pages, page_size, Hkv, D] caches.
template <typename T>
__device__ void referenceVarlen(const T *q, const T *k, const T *v, float *o,
                                float *lse, int64_t hq, int64_t hkv,
                                int64_t nq, int64_t nk, int64_t d, int causal,
                                float scale, int64_t lseStride,
                                const int32_t *table, int64_t pageSize) {
  int64_t i = blockIdx.x, h = blockIdx.y;
  QueryRow at = {(i * hq + h) * d, h * lseStride + i};
  KeyRows rows = {(h / (hq / hkv)) * d, hkv * d, table, pageSize};
  referenceFwd(q, k, v, o, lse, at, nq, nk, d, causal, scale, rows);
}

//===----------------------------------------------------------------------===//
// Reference backward
//===----------------------------------------------------------------------===//

// The backward of attn.attention_grad (FlashAttention-2, Algorithm 2),
// written as sums over the (query row i, key j) pairs a row sees:
//   P_ij  = exp(scale * q_i . k_j - LSE_i)      (recomputed; LSE given)
//   dP_ij = dO_i . v_j
//   Delta_i = dO_i . O_i                        (= sum_j P_ij dP_ij)
//   dS_ij = P_ij (dP_ij - Delta_i)
//   dQ_i = scale sum_j dS_ij k_j,  dK_j = scale sum_i dS_ij q_i,
//   dV_j = sum_i P_ij dO_i, dK/dV summed over the query heads of a group.
// A row with LSE = -inf (no key) has P = 0 and contributes nothing. One CTA
// per output row; each warp takes a pair at a time, its lanes holding
// columns lane, lane + 32, ... of the CTA's own row (kBwdCols of them: D <=
// 256) and accumulating its columns of the result; the warps' partial
// results are summed in shared memory at the end. Delta is recomputed per
// pair (one more dot product) rather than kept in a buffer: one launch each
// for dQ and dK/dV, nothing shared between them.

constexpr int kBwdCols = 8; // per lane: D <= 32 * kBwdCols = 256
constexpr int kBwdWarps = 4;
constexpr int kBwdThreads = kBwdWarps * kWarp;

/// The warp's sum of `value` (every lane gets it).
__device__ float warpSum(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  return value;
}

/// Sum over the warp of x[c] * y_row[c], with x the lane's columns in
/// registers and y a row in global memory.
template <typename T>
__device__ float warpDot(const float (&x)[kBwdCols], const T *y, int64_t d) {
  float dot = 0.0f;
  for (int t = 0; t < kBwdCols; ++t) {
    int64_t c = threadIdx.x % kWarp + t * kWarp;
    if (c < d)
      dot += x[t] * toFloat(y[c]);
  }
  return warpSum(dot);
}

template <typename T>
__device__ void loadCols(float (&x)[kBwdCols], const T *row, int64_t d) {
  for (int t = 0; t < kBwdCols; ++t) {
    int64_t c = threadIdx.x % kWarp + t * kWarp;
    x[t] = c < d ? toFloat(row[c]) : 0.0f;
  }
}

/// out[c] = factor * the sum over the CTA's warps of acc (lane columns).
/// Needs blockDim.x == kBwdThreads.
__device__ void storeWarpSum(const float (&acc)[kBwdCols], float *out,
                             int64_t d, float factor) {
  __shared__ float partial[kBwdWarps][kWarp * kBwdCols];
  int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  for (int t = 0; t < kBwdCols; ++t)
    partial[warp][lane + t * kWarp] = acc[t];
  __syncthreads();
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
    float sum = 0.0f;
    for (int w = 0; w < kBwdWarps; ++w)
      sum += partial[w][c];
    out[c] = factor * sum;
  }
  __syncthreads();
}

/// Contiguous [B, Hq, Nq, D] q, o, dout, [B, Hq, Nq] lse; [B, Hkv, Nk, D]
/// k, v; the same sizes for the f32 gradients.
template <typename T> struct BwdOperands {
  const T *q, *k, *v, *o, *dout;
  const float *lse;
  float *dq, *dk, *dv;
  int64_t hq, hkv, nq, nk, d;
  int causal;
  float scale;
};

/// dS_ij (and P_ij in *p) for query row `qRow` (element offset of q_i, o_i,
/// dO_i), LSE `lse`, key row `kRow` (of k_j, v_j); qi, doi or kj, vj are
/// the ones the caller holds in registers, the others are read. The whole
/// warp calls it and gets the same values.
template <typename T>
__device__ float pairGrad(const BwdOperands<T> &a, const float (&x)[kBwdCols],
                          const float (&y)[kBwdCols], bool queryHeld,
                          int64_t qRow, int64_t kRow, float lse, float *p) {
  float s, dp, delta;
  if (queryHeld) { // x = q_i, y = dO_i
    s = warpDot(x, a.k + kRow, a.d);
    dp = warpDot(y, a.v + kRow, a.d);
  } else { // x = k_j, y = v_j
    s = warpDot(x, a.q + qRow, a.d);
    dp = warpDot(y, a.dout + qRow, a.d);
  }
  float dOi[kBwdCols];
  loadCols(dOi, a.dout + qRow, a.d);
  delta = warpDot(dOi, a.o + qRow, a.d);
  *p = expf(a.scale * s - lse);
  return *p * (dp - delta);
}

/// Keys 0 .. visible-1 are visible to query row i (bottom-right causal).
__device__ int64_t visibleKeys(int64_t i, int64_t nq, int64_t nk, int causal) {
  return causal ? min(nk, max(int64_t(0), i + nk - nq + 1)) : nk;
}

/// dQ of query row (b, h, i) = (blockIdx.z, blockIdx.y, blockIdx.x).
template <typename T> __device__ void referenceBwdDq(BwdOperands<T> a) {
  int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  int64_t row = (b * a.hq + h) * a.nq + i, qRow = row * a.d;
  int64_t kBase = (b * a.hkv + h / (a.hq / a.hkv)) * a.nk * a.d;
  float lse = a.lse[row];
  int64_t visible =
      isinf(lse) && lse < 0 ? 0 : visibleKeys(i, a.nq, a.nk, a.causal);
  float qi[kBwdCols], doi[kBwdCols], acc[kBwdCols] = {};
  loadCols(qi, a.q + qRow, a.d);
  loadCols(doi, a.dout + qRow, a.d);
  for (int64_t j = threadIdx.x / kWarp; j < visible; j += kBwdWarps) {
    int64_t kRow = kBase + j * a.d;
    float p;
    float ds = pairGrad(a, qi, doi, /*queryHeld=*/true, qRow, kRow, lse, &p);
    for (int t = 0; t < kBwdCols; ++t) {
      int64_t c = threadIdx.x % kWarp + t * kWarp;
      if (c < a.d)
        acc[t] += ds * toFloat(a.k[kRow + c]);
    }
  }
  storeWarpSum(acc, a.dq + qRow, a.d, a.scale);
}

/// dK and dV of key row (b, kv head, j) = (blockIdx.z, blockIdx.y,
/// blockIdx.x): the pairs (h, i) over the group's query heads h and the
/// rows i that see key j.
template <typename T> __device__ void referenceBwdDkDv(BwdOperands<T> a) {
  int64_t j = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  int64_t group = a.hq / a.hkv;
  int64_t kRow = ((b * a.hkv + hk) * a.nk + j) * a.d;
  // Query i sees key j iff j < visibleKeys(i): i >= j + nq - nk if causal.
  int64_t first = a.causal ? max(int64_t(0), j + a.nq - a.nk) : 0;
  int64_t pairs = group * max(int64_t(0), a.nq - first);
  float kj[kBwdCols], vj[kBwdCols], dk[kBwdCols] = {}, dv[kBwdCols] = {};
  loadCols(kj, a.k + kRow, a.d);
  loadCols(vj, a.v + kRow, a.d);
  for (int64_t n = threadIdx.x / kWarp; n < pairs; n += kBwdWarps) {
    int64_t h = hk * group + n / (a.nq - first), i = first + n % (a.nq - first);
    int64_t row = (b * a.hq + h) * a.nq + i, qRow = row * a.d;
    float lse = a.lse[row];
    if (isinf(lse) && lse < 0)
      continue; // no key: P = 0
    float p;
    float ds = pairGrad(a, kj, vj, /*queryHeld=*/false, qRow, kRow, lse, &p);
    for (int t = 0; t < kBwdCols; ++t) {
      int64_t c = threadIdx.x % kWarp + t * kWarp;
      if (c < a.d) {
        dk[t] += ds * toFloat(a.q[qRow + c]);
        dv[t] += p * toFloat(a.dout[qRow + c]);
      }
    }
  }
  storeWarpSum(dk, a.dk + kRow, a.d, a.scale);
  storeWarpSum(dv, a.dv + kRow, a.d, 1.0f);
}

/// O in f32 narrowed to f16/bf16 (round to nearest even), for a backward
/// call's O from the f32 forward reference.
template <typename T> __device__ void narrow(const float *x, T *y, int64_t n) {
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = fromFloat<T>(x[i]);
}

/// Rows r >= validRows[p] of each page p of a [num_pages, page_size, ...]
/// cache (`rowElems` elements a row) get `value`.
template <typename T>
__device__ void poisonPages(T *x, const int32_t *validRows, int64_t numPages,
                            int64_t pageSize, int64_t rowElems, float value) {
  int64_t n = numPages * pageSize * rowElems;
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    int64_t row = e / rowElems;
    if (row % pageSize >= validRows[row / pageSize])
      x[e] = fromFloat<T>(value);
  }
}

template <typename T> __device__ void widen(const T *x, float *y, int64_t n) {
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = toFloat(x[i]);
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points (loaded by name)
//===----------------------------------------------------------------------===//

extern "C" __global__ void fill_normal_f16(__half *x, int64_t n,
                                           uint64_t seed) {
  fillNormal(x, n, seed);
}

extern "C" __global__ void fill_normal_bf16(__nv_bfloat16 *x, int64_t n,
                                            uint64_t seed) {
  fillNormal(x, n, seed);
}

// Grid (Nq, Hq, B); blockDim.x a multiple of 32.
extern "C" __global__ void
reference_fwd_f16(const __half *q, const __half *k, const __half *v, float *o,
                  float *lse, int64_t b, int64_t hq, int64_t hkv, int64_t nq,
                  int64_t nk, int64_t d, int causal, float scale) {
  referenceContiguous(q, k, v, o, lse, hq, hkv, nq, nk, d, causal, scale);
}

extern "C" __global__ void
reference_fwd_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                   const __nv_bfloat16 *v, float *o, float *lse, int64_t b,
                   int64_t hq, int64_t hkv, int64_t nq, int64_t nk, int64_t d,
                   int causal, float scale) {
  referenceContiguous(q, k, v, o, lse, hq, hkv, nq, nk, d, causal, scale);
}

// FP8 calls: the dequantized Q, K, V (e4m3 value * descale) in f32.
extern "C" __global__ void
reference_fwd_f32(const float *q, const float *k, const float *v, float *o,
                  float *lse, int64_t b, int64_t hq, int64_t hkv, int64_t nq,
                  int64_t nk, int64_t d, int causal, float scale) {
  referenceContiguous(q, k, v, o, lse, hq, hkv, nq, nk, d, causal, scale);
}

// Paged K/V: grid (Nq, Hq, B); k, v [num_pages, page_size, Hkv, D]
// contiguous; table [B, max_pages] and lengths [B] contiguous.
extern "C" __global__ void reference_fwd_paged_f16(
    const __half *q, const __half *k, const __half *v, float *o, float *lse,
    int64_t hq, int64_t hkv, int64_t nq, int64_t d, int causal, float scale,
    const int32_t *table, const int32_t *lengths, int64_t maxPages,
    int64_t pageSize) {
  referencePaged(q, k, v, o, lse, hq, hkv, nq, d, causal, scale, table,
                 lengths, maxPages, pageSize);
}

extern "C" __global__ void reference_fwd_paged_bf16(
    const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
    float *o, float *lse, int64_t hq, int64_t hkv, int64_t nq, int64_t d,
    int causal, float scale, const int32_t *table, const int32_t *lengths,
    int64_t maxPages, int64_t pageSize) {
  referencePaged(q, k, v, o, lse, hq, hkv, nq, d, causal, scale, table,
                 lengths, maxPages, pageSize);
}

// Varlen, one launch per sequence b: grid (Nq_b, Hq, 1); q, o, lse, k, v
// at the sequence's first query and key (k, v: the caches when `table`,
// the sequence's block-table row, is not null); lseStride = total_q.
extern "C" __global__ void reference_fwd_varlen_f16(
    const __half *q, const __half *k, const __half *v, float *o, float *lse,
    int64_t hq, int64_t hkv, int64_t nq, int64_t nk, int64_t d, int causal,
    float scale, int64_t lseStride, const int32_t *table, int64_t pageSize) {
  referenceVarlen(q, k, v, o, lse, hq, hkv, nq, nk, d, causal, scale,
                  lseStride, table, pageSize);
}

extern "C" __global__ void reference_fwd_varlen_bf16(
    const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
    float *o, float *lse, int64_t hq, int64_t hkv, int64_t nq, int64_t nk,
    int64_t d, int causal, float scale, int64_t lseStride,
    const int32_t *table, int64_t pageSize) {
  referenceVarlen(q, k, v, o, lse, hq, hkv, nq, nk, d, causal, scale,
                  lseStride, table, pageSize);
}

extern "C" __global__ void poison_pages_f16(__half *x,
                                            const int32_t *validRows,
                                            int64_t numPages, int64_t pageSize,
                                            int64_t rowElems, float value) {
  poisonPages(x, validRows, numPages, pageSize, rowElems, value);
}

extern "C" __global__ void poison_pages_bf16(__nv_bfloat16 *x,
                                             const int32_t *validRows,
                                             int64_t numPages,
                                             int64_t pageSize,
                                             int64_t rowElems, float value) {
  poisonPages(x, validRows, numPages, pageSize, rowElems, value);
}

// The kernel's O in f32 for the host-side comparison (exact: every f16 and
// bf16 value, NaN included, is an f32 value).
extern "C" __global__ void widen_f16(const __half *x, float *y, int64_t n) {
  widen(x, y, n);
}

extern "C" __global__ void widen_bf16(const __nv_bfloat16 *x, float *y,
                                      int64_t n) {
  widen(x, y, n);
}

// Backward, contiguous operands ([B, Hq, Nq, D] q, o, dout, dq; [B, Hkv,
// Nk, D] k, v, dk, dv; [B, Hq, Nq] lse; gradients f32). The two kernels
// take the same arguments: reference_bwd_dq_* with grid (Nq, Hq, B),
// reference_bwd_dkdv_* with grid (Nk, Hkv, B); blockDim.x = 128, D <= 256.
#define ATTN_REFERENCE_BWD(NAME, T, BODY)                                      \
  extern "C" __global__ void __launch_bounds__(kBwdThreads)                    \
      NAME(const T *q, const T *k, const T *v, const T *o, const T *dout,      \
           const float *lse, float *dq, float *dk, float *dv, int64_t b,       \
           int64_t hq, int64_t hkv, int64_t nq, int64_t nk, int64_t d,         \
           int causal, float scale) {                                          \
    BODY(BwdOperands<T>{q, k, v, o, dout, lse, dq, dk, dv, hq, hkv, nq, nk, d, \
                        causal, scale});                                       \
  }
ATTN_REFERENCE_BWD(reference_bwd_dq_f16, __half, referenceBwdDq)
ATTN_REFERENCE_BWD(reference_bwd_dq_bf16, __nv_bfloat16, referenceBwdDq)
ATTN_REFERENCE_BWD(reference_bwd_dkdv_f16, __half, referenceBwdDkDv)
ATTN_REFERENCE_BWD(reference_bwd_dkdv_bf16, __nv_bfloat16, referenceBwdDkDv)
#undef ATTN_REFERENCE_BWD

extern "C" __global__ void narrow_f16(const float *x, __half *y, int64_t n) {
  narrow(x, y, n);
}

extern "C" __global__ void narrow_bf16(const float *x, __nv_bfloat16 *y,
                                       int64_t n) {
  narrow(x, y, n);
}

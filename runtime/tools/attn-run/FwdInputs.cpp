//===- FwdInputs.cpp - the device tensors and arguments of a call ---------===//
//
// Allocates a forward call's tensors, fills them (normal values; FP8:
// quantized on the host; paged and varlen: tables, lengths, garbage in every
// unused K/V row; NaN outputs) and builds its attn_fwd_args.
//
//===----------------------------------------------------------------------===//

#include "Fp8.h"
#include "FwdCall.h"

#include <algorithm>
#include <iterator>
#include <random>

namespace attn::run::fwd {

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

attn_fwd_args makeArgs(const Shape &s, const Buffers &b) {
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

Error allocateAll(const Shape &s, Buffers &b) {
  size_t elt = s.fp8 ? 1 : 2, q = s.numQ(), kv = s.numKV(),
         rows = s.numRows() * 4;
  size_t v = s.fp8 ? s.batch * s.headsKV * s.headDim * s.seqKPadded() : kv;
  std::vector<std::pair<DeviceBuffer *, size_t>> sizes = {
      {&b.q, q * elt}, {&b.k, kv * elt}, {&b.v, v * elt},   {&b.o, q * 2},
      {&b.lse, rows},  {&b.refO, q * 4}, {&b.refLse, rows}, {&b.oF32, q * 4}};
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
    sizes.insert(sizes.end(),
                 {{&b.cuQ, (s.batch + 1) * 4}, {&b.cuK, (s.batch + 1) * 4}});
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
  attn::run::Quantized q =
      quantizePerKVHead(hostNormal(s.numQ(), seed), s.batch, s.headsQ,
                        s.headsKV, s.seqQ, s.headDim);
  attn::run::Quantized k =
      quantizePerKVHead(hostNormal(s.numKV(), seed + 1), s.batch, s.headsKV,
                        s.headsKV, s.seqK, s.headDim);
  attn::run::Quantized v =
      quantizePerKVHead(hostNormal(s.numKV(), seed + 2), s.batch, s.headsKV,
                        s.headsKV, s.seqK, s.headDim);
  std::vector<uint8_t> vt = attn::run::toVt(v.bytes, s.batch, s.headsKV, s.seqK,
                                            s.headDim, s.seqKPadded());
  Error err = upload(b.q, q.bytes);
  if (!err)
    err = upload(b.k, k.bytes);
  if (!err)
    err = upload(b.v, vt);
  for (auto [buffer, host] : {std::make_pair(&b.qDescale, &q.descale),
                              {&b.kDescale, &k.descale},
                              {&b.vDescale, &v.descale},
                              {&b.refQ, &q.dequantized},
                              {&b.refK, &k.dequantized},
                              {&b.refV, &v.dequantized}})
    if (!err)
      err = upload(*buffer, *host);
  return err;
}

/// `garbage` in the rows of K and V, `numPages` pages of `pageSize` rows,
/// that b.validRows marks unused: in paged caches every row past a
/// sequence's length and the pages no sequence reads; in a varlen call's
/// packed K/V (one page of total_k rows) the padding.
Error poisonUnusedRows(const Reference &ref, const Shape &s, const Buffers &b,
                       int64_t numPages, int64_t pageSize, float garbage,
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
  return poisonUnusedRows(ref, s, b, 1, s.seqs.totalK, attn::run::kPagedGarbage,
                          stream);
}

/// Fresh inputs (seeds seed, seed+1, seed+2 for Q, K, V) and NaN outputs.
Error prepareInputs(const Reference &ref, const Shape &s, const Buffers &b,
                    uint64_t seed, CUstream stream) {
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

} // namespace attn::run::fwd

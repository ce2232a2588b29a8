//===- RuntimeCalls.cpp - random runtime calls and what they may write ----===//

#include "RuntimeCalls.h"
#include "attn/runtime.hpp"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using attn::bundle::KernelEntry;
using llvm::formatv;

namespace attn::fuzz {

namespace {

/// Fake device addresses, 64 GiB apart: a call as drawn never overlaps.
void *region(int i) {
  return reinterpret_cast<void *>(uintptr_t(0x100000000000) +
                                  (uintptr_t(i) << 36));
}

/// A row-major tensor of `sizes` in region `i`.
attn_tensor contiguous(int i, attn_dtype dtype,
                       std::initializer_list<int64_t> sizes) {
  return attn::makeTensor(region(i), dtype, sizes);
}

/// [B, H, N, D] stored as FlashAttention's [B, N, H, D].
attn_tensor bnhd(int i, attn_dtype dtype, int64_t b, int64_t h, int64_t n,
                 int64_t d) {
  attn_tensor t = contiguous(i, dtype, {b, h, n, d});
  t.strides[1] = d;
  t.strides[2] = h * d;
  return t;
}

attn_dtype dtypeOf(llvm::StringRef name) {
  return name == "f16"    ? ATTN_DTYPE_F16
         : name == "e4m3" ? ATTN_DTYPE_E4M3
                          : ATTN_DTYPE_BF16;
}

int64_t length(const std::optional<int64_t> &key, Mutator &m, int64_t hi) {
  return key ? *key : 1 + static_cast<int64_t>(m.below(hi));
}

/// 0 (the default) where the key has 1/sqrt(D), else the key's scale.
float scaleOf(const bundle::FwdKey &key) {
  double byDefault = 1.0 / std::sqrt(double(key.headDim));
  return std::fabs(key.scale / byDefault - 1) < 1e-6
             ? 0.0f
             : static_cast<float>(key.scale);
}

/// A varlen call's q, k, v, o, lse and tables for `key`.
void drawVarlen(const bundle::FwdKey &key, int64_t hq, int64_t hkv, Mutator &m,
                attn_fwd_args &a) {
  attn_dtype dtype = dtypeOf(key.dtype);
  int64_t b = 1 + m.below(3), totalQ = 0, totalK = 0, d = key.headDim;
  for (int64_t i = 0; i < b; ++i) {
    totalQ += m.below(9);
    totalK += m.below(9);
  }
  a.q = contiguous(0, dtype, {totalQ, hq, d});
  a.o = contiguous(3, dtype, {totalQ, hq, d});
  if (key.pageSize > 0) {
    int64_t pages = 1 + m.below(4);
    a.k = contiguous(1, dtype, {1 + int64_t(m.below(8)), key.pageSize, hkv, d});
    a.v = contiguous(2, dtype, {a.k.sizes[0], key.pageSize, hkv, d});
    a.block_table = contiguous(10, ATTN_DTYPE_I32, {b, pages});
  } else {
    a.k = contiguous(1, dtype, {totalK, hkv, d});
    a.v = contiguous(2, dtype, {totalK, hkv, d});
  }
  if (key.hasLse)
    a.lse = contiguous(4, ATTN_DTYPE_F32, {hq, totalQ});
  a.cu_seqlens_q = contiguous(8, ATTN_DTYPE_I32, {b + 1});
  a.cu_seqlens_k = contiguous(9, ATTN_DTYPE_I32, {b + 1});
  a.max_seqlen_q = m.below(9);
  a.max_seqlen_k = m.below(9);
}

RuntimeCall forwardCall(const bundle::FwdKey &key, Mutator &m) {
  RuntimeCall call;
  attn_fwd_args &a = call.fwd;
  attn_dtype dtype = dtypeOf(key.dtype);
  bool fp8 = dtype == ATTN_DTYPE_E4M3;
  int64_t hkv = key.numHeadsKV  ? *key.numHeadsKV
                : key.numHeadsQ ? (m.below(2) ? 1 : *key.numHeadsQ)
                                : 1 + m.below(2);
  int64_t hq = key.numHeadsQ ? *key.numHeadsQ : hkv * (1 + m.below(3));
  int64_t d = key.headDim;
  a.causal = key.causal;
  a.softmax_scale = scaleOf(key);
  if (key.quantizeFp8)
    a.quantize = ATTN_QUANTIZE_FP8;
  if (key.varlen) {
    drawVarlen(key, hq, hkv, m, a);
    return call;
  }
  int64_t b = length(key.batch, m, 2), nq = length(key.seqLenQ, m, 16),
          nk = length(key.seqLenK, m, 16);
  bool permuted = key.strided && !fp8 && m.below(2);
  auto view = [&](int i, attn_dtype t, int64_t h, int64_t n) {
    return permuted ? bnhd(i, t, b, h, n, d) : contiguous(i, t, {b, h, n, d});
  };
  a.q = view(0, dtype, hq, nq);
  a.o = view(3, fp8 ? ATTN_DTYPE_BF16 : dtype, hq, nq);
  if (key.pageSize > 0) {
    int64_t pages = 1 + m.below(8);
    a.k = contiguous(1, dtype, {pages, key.pageSize, hkv, d});
    a.v = contiguous(2, dtype, {pages, key.pageSize, hkv, d});
    a.block_table = contiguous(8, ATTN_DTYPE_I32, {b, 1 + int64_t(m.below(4))});
    a.cache_seqlens = contiguous(9, ATTN_DTYPE_I32, {b});
  } else {
    a.k = view(1, dtype, hkv, nk);
    a.v = view(2, dtype, hkv, nk);
  }
  if (fp8) { // V^T storage: [B, Hkv, D, Nk padded to 16] viewed transposed
    int64_t padded = (nk + 15) / 16 * 16;
    a.v = contiguous(2, dtype, {b, hkv, nk, d});
    a.v.strides[0] = hkv * d * padded;
    a.v.strides[1] = d * padded;
    a.v.strides[2] = 1;
    a.v.strides[3] = padded;
    a.q_descale = contiguous(5, ATTN_DTYPE_F32, {b, hkv});
    a.k_descale = contiguous(6, ATTN_DTYPE_F32, {b, hkv});
    a.v_descale = contiguous(7, ATTN_DTYPE_F32, {b, hkv});
  }
  if (key.hasLse)
    a.lse = contiguous(4, ATTN_DTYPE_F32, {b, hq, nq});
  return call;
}

RuntimeCall backwardCall(const bundle::FwdKey &key, Mutator &m) {
  RuntimeCall call;
  call.backward = true;
  attn_bwd_args &a = call.bwd;
  attn_dtype t = dtypeOf(key.dtype);
  int64_t b = length(key.batch, m, 2), hq = length(key.numHeadsQ, m, 4),
          hkv = length(key.numHeadsKV, m, 4), nq = length(key.seqLenQ, m, 16),
          nk = length(key.seqLenK, m, 16), d = key.headDim;
  a.q = contiguous(0, t, {b, hq, nq, d});
  a.k = contiguous(1, t, {b, hkv, nk, d});
  a.v = contiguous(2, t, {b, hkv, nk, d});
  a.o = contiguous(3, t, {b, hq, nq, d});
  a.lse = contiguous(4, ATTN_DTYPE_F32, {b, hq, nq});
  a.dout = contiguous(5, t, {b, hq, nq, d});
  a.dq = contiguous(6, t, {b, hq, nq, d});
  a.dk = contiguous(7, t, {b, hkv, nk, d});
  a.dv = contiguous(8, t, {b, hkv, nk, d});
  a.causal = key.causal;
  a.softmax_scale = scaleOf(key);
  return call;
}

bool isGiven(const attn_tensor &t) { return t.rank != 0 || t.data; }

/// The call's tensors by name; outputs first, `outputs` of them.
std::vector<std::pair<const char *, attn_tensor *>> tensors(RuntimeCall &c,
                                                            size_t &outputs) {
  std::vector<std::pair<const char *, attn_tensor *>> all;
  if (c.backward) {
    attn_bwd_args &a = c.bwd;
    all = {{"dq", &a.dq}, {"dk", &a.dk},   {"dv", &a.dv},
           {"q", &a.q},   {"k", &a.k},     {"v", &a.v},
           {"o", &a.o},   {"lse", &a.lse}, {"dout", &a.dout}};
    outputs = 3;
    return all;
  }
  attn_fwd_args &a = c.fwd;
  all = {{"o", &a.o},
         {"lse", &a.lse},
         {"q", &a.q},
         {"k", &a.k},
         {"v", &a.v},
         {"q_descale", &a.q_descale},
         {"k_descale", &a.k_descale},
         {"v_descale", &a.v_descale},
         {"block_table", &a.block_table},
         {"cache_seqlens", &a.cache_seqlens},
         {"cu_seqlens_q", &a.cu_seqlens_q},
         {"cu_seqlens_k", &a.cu_seqlens_k}};
  outputs = 2;
  return all;
}

/// One change that may make an output overlap itself or another operand
/// (mostly on outputs), or a size off by one.
void mutate(RuntimeCall &c, Mutator &m) {
  size_t outputs = 0;
  auto all = tensors(c, outputs);
  attn_tensor &t =
      *all[m.below(4) ? m.below(outputs) : m.below(all.size())].second;
  if (t.rank < 1 || t.rank > 4)
    return;
  auto dim = static_cast<int32_t>(m.below(t.rank)),
       other = static_cast<int32_t>(m.below(t.rank));
  static const int64_t strides[] = {0, 1, 8, 16, 64, 128};
  switch (m.below(6)) {
  case 0:
    t.strides[dim] = 0;
    break;
  case 1:
    t.strides[dim] = strides[m.below(std::size(strides))];
    break;
  case 2:
    t.strides[dim] = t.strides[other];
    break;
  case 3:
    std::swap(t.strides[dim], t.strides[other]);
    break;
  case 4: {
    static const uintptr_t offsets[] = {0, 16, 4096};
    const attn_tensor &onto = *all[m.below(all.size())].second;
    t.data = reinterpret_cast<char *>(onto.data) +
             offsets[m.below(std::size(offsets))];
    break;
  }
  default:
    t.sizes[dim] = std::max<int64_t>(0, t.sizes[dim] + (m.below(2) ? 1 : -1));
    break;
  }
}

uint64_t elementBytes(const attn_tensor &t) {
  int dtype;
  std::memcpy(&dtype, &t.dtype, sizeof(dtype));
  return dtype == ATTN_DTYPE_F32 || dtype == ATTN_DTYPE_I32 ? 4
         : dtype == ATTN_DTYPE_E4M3                         ? 1
                                                            : 2;
}

/// The byte address of every element of `t` (rank 1 to 4, sizes >= 0).
std::vector<uint64_t> addresses(const attn_tensor &t) {
  std::vector<uint64_t> out = {reinterpret_cast<uintptr_t>(t.data)};
  for (int32_t d = 0; d < t.rank; ++d) {
    std::vector<uint64_t> next;
    next.reserve(out.size() * t.sizes[d]);
    for (uint64_t base : out)
      for (int64_t i = 0; i < t.sizes[d]; ++i)
        next.push_back(base +
                       uint64_t(i) * uint64_t(t.strides[d]) * elementBytes(t));
    out = std::move(next);
  }
  return out;
}

/// [first byte, end) of `t`'s elements; empty when it has none.
std::pair<uint64_t, uint64_t> byteRange(const attn_tensor &t) {
  uint64_t first = reinterpret_cast<uintptr_t>(t.data), last = first;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.sizes[d] == 0)
      return {first, first};
    last += uint64_t(t.sizes[d] - 1) * uint64_t(t.strides[d]) * elementBytes(t);
  }
  return {first, last + elementBytes(t)};
}

} // namespace

RuntimeCall drawCall(const KernelEntry &kernel, Mutator &m) {
  RuntimeCall call = kernel.isBackward() ? backwardCall(kernel.key, m)
                                         : forwardCall(kernel.key, m);
  if (m.below(4))
    for (size_t n = 1 + m.below(3); n > 0; --n)
      mutate(call, m);
  return call;
}

std::string checkAccepted(const RuntimeCall &accepted) {
  RuntimeCall call = accepted;
  size_t outputs = 0;
  auto all = tensors(call, outputs);
  for (size_t i = 0; i < outputs; ++i) {
    auto [name, out] = all[i];
    if (!isGiven(*out))
      continue;
    std::vector<uint64_t> elements = addresses(*out);
    std::sort(elements.begin(), elements.end());
    auto twice = std::adjacent_find(elements.begin(), elements.end());
    if (twice != elements.end())
      return formatv("output {0} has two elements at address {1:x}", name,
                     *twice);
    uint64_t size = elementBytes(*out);
    for (auto [other, t] : all) {
      if (t == out || !isGiven(*t))
        continue;
      auto [begin, end] = byteRange(*t);
      // The first element whose bytes reach past `begin`.
      auto hit = std::lower_bound(elements.begin(), elements.end(),
                                  begin >= size ? begin - size + 1 : 0);
      if (begin != end && hit != elements.end() && *hit < end)
        return formatv("output {0} has an element at {1:x}, inside {2}'s "
                       "bytes [{3:x}, {4:x})",
                       name, *hit, other, begin, end);
    }
  }
  return "";
}

std::string describe(const RuntimeCall &c) {
  RuntimeCall call = c;
  size_t outputs = 0;
  std::string out = call.backward ? "attn_bwd_select" : "attn_fwd_select";
  for (auto [name, t] : tensors(call, outputs)) {
    if (!isGiven(*t))
      continue;
    int dtype;
    std::memcpy(&dtype, &t->dtype, sizeof(dtype));
    out += formatv("\n  {0}: data {1:x} dtype {2} rank {3} sizes", name,
                   reinterpret_cast<uintptr_t>(t->data), dtype, t->rank);
    for (int32_t d = 0; d < std::min(t->rank, 4); ++d)
      out += " " + std::to_string(t->sizes[d]);
    out += " strides";
    for (int32_t d = 0; d < std::min(t->rank, 4); ++d)
      out += " " + std::to_string(t->strides[d]);
  }
  if (!call.backward)
    out += formatv("\n  causal {0} scale {1} quantize {2} max_seqlen {3} {4}",
                   call.fwd.causal, call.fwd.softmax_scale, call.fwd.quantize,
                   call.fwd.max_seqlen_q, call.fwd.max_seqlen_k);
  return out;
}

} // namespace attn::fuzz

//===- TestBundles.h - manifests and bundles for the runtime tests -*- C++ -*-//
//
// Builders shared by ManifestTest and RuntimeTest: a forward kernel entry
// with the full memref-descriptor parameter list, and a temporary bundle
// directory with a manifest and fake cubins.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_UNITTESTS_TESTBUNDLES_H
#define ATTN_RUNTIME_UNITTESTS_TESTBUNDLES_H

#include "attn/manifest/Manifest.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn::testing {

using bundle::GridDim;
using bundle::KernelEntry;
using bundle::Manifest;
using bundle::Operand;
using bundle::Param;

/// The memref descriptor of `operand`: pointers, offset, sizes, strides.
/// `varlen`: the ranks of a varlen kernel (q, k, v, o 3, lse 2).
inline void appendDescriptor(std::vector<Param> &params, Operand operand,
                             bool varlen = false) {
  params.push_back({operand, Param::Field::AllocatedPtr, 0});
  params.push_back({operand, Param::Field::AlignedPtr, 0});
  params.push_back({operand, Param::Field::Offset, 0});
  for (auto field : {Param::Field::Size, Param::Field::Stride})
    for (int64_t i = 0; i < bundle::operandRank(operand, varlen); ++i)
      params.push_back({operand, field, i});
}

/// A dynamic-shape strided bf16 D=128 kernel: grid (ceil(Nq/64), Hq, B),
/// 128 threads, parameters q, k, v, o (and lse).
inline KernelEntry fwdKernel(const std::string &name, bool lse = false) {
  KernelEntry k;
  k.name = name;
  k.kind = "fwd";
  k.cubin = name + ".cubin";
  k.ptx = name + ".ptx";
  k.key.dtype = "bf16";
  k.key.headDim = 128;
  k.key.hasLse = lse;
  k.key.scale = 1.0 / std::sqrt(128.0);
  k.key.blockM = 64;
  k.key.blockN = 64;
  k.grid[0] = GridDim{1, {{Operand::Q, 2, 64}}};
  k.grid[1] = GridDim{1, {{Operand::Q, 1, 1}}};
  k.grid[2] = GridDim{1, {{Operand::Q, 0, 1}}};
  k.threads = {128, 1, 1};
  for (Operand op : {Operand::Q, Operand::K, Operand::V, Operand::O})
    appendDescriptor(k.params, op);
  if (lse)
    appendDescriptor(k.params, Operand::LSE);
  k.resources = {168, 0, 0, 0, 0};
  return k;
}

/// A wgmma kernel as attn-compile writes it: a 1-D grid
/// ceil(Nq / 128) * Hq * B of 384 threads, Q, K, V as tensor maps, O's
/// descriptor.
inline KernelEntry wgmmaKernel(const std::string &name) {
  KernelEntry k = fwdKernel(name);
  k.key.path = "wgmma";
  k.key.blockM = k.key.blockN = 128;
  k.grid[0] = GridDim{
      1, {{Operand::Q, 2, 128}, {Operand::Q, 1, 1}, {Operand::Q, 0, 1}}};
  k.grid[1] = k.grid[2] = GridDim{1, {}};
  k.threads = {384, 1, 1};
  k.dynamicSharedBytes = 163840;
  k.params.clear();
  for (Operand op : {Operand::V, Operand::K, Operand::Q}) {
    Param map;
    map.operand = op;
    map.field = Param::Field::TensorMap;
    map.box = {64, 128, 1, 1};
    k.params.push_back(map);
  }
  appendDescriptor(k.params, Operand::O);
  return k;
}

/// An FP8 wgmma kernel as the contract with attn-lower-to-wgmma has it:
/// e4m3 D=128, maps of V (transposed: V^T storage, boxes of 128 keys by D),
/// K and Q (128-byte boxes: 128 e4m3 columns), O's descriptor (bf16), then
/// the descriptors of q_descale, k_descale and v_descale.
inline KernelEntry fp8Kernel(const std::string &name) {
  KernelEntry k = wgmmaKernel(name);
  k.key.dtype = "e4m3";
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap) {
      p.box = {128, 128, 1, 1};
      p.transposed = p.operand == Operand::V;
    }
  for (Operand op : {Operand::QDescale, Operand::KDescale, Operand::VDescale})
    appendDescriptor(k.params, op);
  return k;
}

/// A GQA-packed wgmma kernel (attn-compile pack_gqa) for Hq 4, Hkv 2: the
/// grid's y walks KV heads, Q's map views it as (D, H, N, B) in boxes of
/// the 2 heads of a group by 64 queries (BLOCK_M 128 packed rows).
inline KernelEntry gqaPackedKernel(const std::string &name) {
  KernelEntry k = wgmmaKernel(name);
  k.key.numHeadsQ = 4;
  k.key.numHeadsKV = 2;
  k.grid[0] = GridDim{1, {{Operand::Q, 2, 64}, {Operand::K, 1, 1},
                          {Operand::Q, 0, 1}}};
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand == Operand::Q) {
      p.box = {64, 2, 64, 1};
      p.headsInner = true;
    }
  return k;
}

/// A paged K/V wgmma kernel as attn-compile writes it (bf16 D=128, BLOCK_N
/// 128, dynamic lengths): the maps of v and k heads_inner over the
/// [num_pages, page_size, Hkv, D] caches in boxes of min(page_size, 128)
/// rows, q's map, o's descriptor, then the descriptors of cache_seqlens
/// and block_table (not in operand order: the params list gives it).
inline KernelEntry pagedKernel(const std::string &name, int64_t pageSize) {
  KernelEntry k = wgmmaKernel(name);
  k.key.pageSize = pageSize;
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand != Operand::Q) {
      p.headsInner = true;
      p.box = {64, std::min<int64_t>(pageSize, k.key.blockN), 1, 1};
    }
  appendDescriptor(k.params, Operand::CacheSeqlens);
  appendDescriptor(k.params, Operand::BlockTable);
  return k;
}

/// A varlen wgmma kernel as attn-compile --varlen writes it (bf16 D=128,
/// Hq 32, Hkv 8 static, BLOCK_M 128, with LSE): grid x
/// ceil(max_seqlen_q / 128) * Hq * (size(cu_seqlens_q, 0) - 1), the maps
/// of v, k and q packed ([total, H, D] as (D, total, H, 1)), the value of
/// max_seqlen_q, the descriptors of o (rank 3), lse (rank 2), cu_seqlens_q
/// and cu_seqlens_k; max_seqlen_k does not reach the kernel.
inline KernelEntry varlenKernel(const std::string &name) {
  KernelEntry k = wgmmaKernel(name);
  k.key.varlen = true;
  k.key.hasLse = true;
  k.key.numHeadsQ = 32;
  k.key.numHeadsKV = 8;
  k.grid[0] = GridDim{1,
                      {{Operand::MaxSeqlenQ, 0, 128},
                       {Operand::Q, 1, 1},
                       {Operand::CuSeqlensQ, 0, 1, -1}}};
  k.params.clear();
  for (Operand op : {Operand::V, Operand::K, Operand::Q}) {
    Param map;
    map.operand = op;
    map.field = Param::Field::TensorMap;
    map.box = {64, 128, 1, 1};
    map.packed = true;
    k.params.push_back(map);
  }
  k.params.push_back({Operand::MaxSeqlenQ, Param::Field::Value, 0});
  for (Operand op : {Operand::O, Operand::LSE, Operand::CuSeqlensQ,
                     Operand::CuSeqlensK})
    appendDescriptor(k.params, op, /*varlen=*/true);
  return k;
}

/// A varlen paged wgmma kernel (FlashAttention-2's flash_attn_varlen_func
/// with block_table): varlenKernel with key page_size, the maps of v and k
/// heads_inner over the [num_pages, page_size, Hkv, D] caches (boxes of
/// min(page_size, 128) rows, not packed), and last the descriptor of
/// block_table; no cache_seqlens (cu_seqlens_k gives the key counts).
inline KernelEntry varlenPagedKernel(const std::string &name,
                                     int64_t pageSize) {
  KernelEntry k = varlenKernel(name);
  k.key.pageSize = pageSize;
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand != Operand::Q) {
      p.packed = false;
      p.headsInner = true;
      p.box = {64, std::min<int64_t>(pageSize, k.key.blockN), 1, 1};
    }
  appendDescriptor(k.params, Operand::BlockTable);
  return k;
}

/// The memref descriptor of workspace buffer `buffer` (rank `rank`).
inline void appendWorkspace(std::vector<Param> &params, int64_t buffer,
                            int64_t rank) {
  size_t first = params.size();
  params.push_back({Operand::Q, Param::Field::AllocatedPtr, 0});
  params.push_back({Operand::Q, Param::Field::AlignedPtr, 0});
  params.push_back({Operand::Q, Param::Field::Offset, 0});
  for (auto field : {Param::Field::Size, Param::Field::Stride})
    for (int64_t i = 0; i < rank; ++i)
      params.push_back({Operand::Q, field, i});
  for (size_t i = first; i < params.size(); ++i)
    params[i].workspace = buffer;
}

/// A split-KV kernel as attn-compile writes it (bf16 D=128 with LSE,
/// `splits` splits): the partial attention (grid ceil(Nq / 64) * S, Hq, B;
/// q, k, v, O_partial, LSE_partial) then the combine (grid ceil(Nq / 64),
/// Hq, B; O_partial, LSE_partial, o, lse), with the workspace O_partial
/// [S, B, Hq, Nq, 128] and LSE_partial [S, B, Hq, Nq].
inline KernelEntry splitKernel(const std::string &name, int64_t splits) {
  KernelEntry k = fwdKernel(name, /*lse=*/true);
  k.key.splits = splits;
  k.grid[0] = GridDim{splits, {{Operand::Q, 2, 64}}};
  k.params.clear();
  for (Operand op : {Operand::Q, Operand::K, Operand::V})
    appendDescriptor(k.params, op);
  appendWorkspace(k.params, 0, 5);
  appendWorkspace(k.params, 1, 4);
  bundle::KernelLaunch combine;
  combine.name = name;
  combine.cubin = name + "_0.cubin";
  combine.ptx = name + "_0.ptx";
  combine.grid = {GridDim{1, {{Operand::Q, 2, 64}}},
                  GridDim{1, {{Operand::Q, 1, 1}}},
                  GridDim{1, {{Operand::Q, 0, 1}}}};
  combine.threads = {256, 1, 1};
  appendWorkspace(combine.params, 0, 5);
  appendWorkspace(combine.params, 1, 4);
  appendDescriptor(combine.params, Operand::O);
  appendDescriptor(combine.params, Operand::LSE);
  k.then.push_back(combine);
  std::vector<GridDim> rows = {GridDim{splits, {}}, GridDim{1, {{Operand::Q, 0, 1}}},
                               GridDim{1, {{Operand::Q, 1, 1}}},
                               GridDim{1, {{Operand::Q, 2, 1}}}};
  k.workspace.push_back({"lse_partial", rows});
  rows.push_back(GridDim{128, {}});
  k.workspace.insert(k.workspace.begin(), {"o_partial", rows});
  return k;
}

/// A paged split-KV kernel (wgmma, BLOCK_M 64, BLOCK_N 128, `splits`
/// splits): splitKernel's launches and workspace, the partial launch
/// reading v, k (paged maps) and q through tensor maps and taking the
/// block table and cache lengths.
inline KernelEntry pagedSplitKernel(const std::string &name, int64_t splits,
                                    int64_t pageSize) {
  KernelEntry k = splitKernel(name, splits);
  k.key.pageSize = pageSize;
  k.key.path = "wgmma";
  k.key.blockN = 128;
  k.threads = {256, 1, 1};
  k.dynamicSharedBytes = 200 * 1024; // one CTA per SM
  std::vector<Param> params;
  for (Operand op : {Operand::V, Operand::K, Operand::Q}) {
    Param map;
    map.operand = op;
    map.field = Param::Field::TensorMap;
    map.box = {64, op == Operand::Q ? 64 : std::min<int64_t>(pageSize, 128),
               1, 1};
    map.headsInner = op != Operand::Q;
    params.push_back(map);
  }
  for (const Param &p : k.params)
    if (p.workspace >= 0)
      params.push_back(p);
  appendDescriptor(params, Operand::BlockTable);
  appendDescriptor(params, Operand::CacheSeqlens);
  k.params = params;
  return k;
}

/// A varlen split-KV kernel (BLOCK_M 64, `splits` splits; paged when
/// `pageSize` > 0): the partial attention (grid ceil(max_seqlen_q / 64) *
/// S, Hq, B = size(cu_seqlens_q, 0) - 1; the maps of v, k and q, the value
/// of max_seqlen_q, cu_seqlens_q/k (and block_table), O_partial and
/// LSE_partial) then the combine (grid ceil(total_q / 64), Hq, 1;
/// O_partial, LSE_partial, o, lse), with the workspace O_partial [S,
/// total_q, Hq, 128] and LSE_partial [S, Hq, total_q].
inline KernelEntry varlenSplitKernel(const std::string &name, int64_t splits,
                                     int64_t pageSize = 0) {
  KernelEntry k =
      pageSize > 0 ? varlenPagedKernel(name, pageSize) : varlenKernel(name);
  k.key.splits = splits;
  k.key.blockM = 64;
  k.threads = {256, 1, 1};
  k.grid = {GridDim{splits, {{Operand::MaxSeqlenQ, 0, 64}}},
            GridDim{1, {{Operand::Q, 1, 1}}},
            GridDim{1, {{Operand::CuSeqlensQ, 0, 1, -1}}}};
  std::vector<Param> params;
  for (Param p : k.params) {
    if (p.operand == Operand::O || p.operand == Operand::LSE)
      continue; // the combine writes them
    if (p.field == Param::Field::TensorMap && p.operand == Operand::Q)
      p.box = {64, 64, 1, 1};
    params.push_back(p);
  }
  appendWorkspace(params, 0, 4);
  appendWorkspace(params, 1, 3);
  k.params = params;
  bundle::KernelLaunch combine;
  combine.name = name + "_combine";
  combine.cubin = name + "_0.cubin";
  combine.ptx = name + "_0.ptx";
  combine.grid = {GridDim{1, {{Operand::Q, 0, 64}}},
                  GridDim{1, {{Operand::Q, 1, 1}}}, GridDim{1, {}}};
  combine.threads = {256, 1, 1};
  appendWorkspace(combine.params, 0, 4);
  appendWorkspace(combine.params, 1, 3);
  appendDescriptor(combine.params, Operand::O, /*varlen=*/true);
  appendDescriptor(combine.params, Operand::LSE, /*varlen=*/true);
  k.then.push_back(combine);
  GridDim s{splits, {}}, totalQ{1, {{Operand::Q, 0, 1}}},
      hq{1, {{Operand::Q, 1, 1}}};
  k.workspace = {{"o_partial", {s, totalQ, hq, GridDim{128, {}}}},
                 {"lse_partial", {s, hq, totalQ}}};
  return k;
}

/// A tensor map parameter of `op` with `box` (innermost first).
inline Param tensorMap(Operand op, std::array<int64_t, 4> box) {
  Param map;
  map.operand = op;
  map.field = Param::Field::TensorMap;
  map.box = box;
  return map;
}

/// A one-launch step of a kernel: `name`_`i`.cubin, a 1-D constant grid.
inline bundle::KernelLaunch step(const std::string &name, int i,
                                 int64_t blocks, int64_t threads) {
  bundle::KernelLaunch l;
  l.name = name;
  l.cubin = name + "_" + std::to_string(i) + ".cubin";
  l.ptx = name + "_" + std::to_string(i) + ".ptx";
  l.grid = {GridDim{blocks, {}}, GridDim{1, {}}, GridDim{1, {}}};
  l.threads = {threads, 1, 1};
  l.resources = {40, 0, 0, 0, 0};
  return l;
}

/// A backward kernel as attn-compile writes attn.attention_grad of bf16
/// B1 Hq2 Hkv1 Nq200 Nk300 D128 causal (contiguous): preprocess (o, dout,
/// Delta, lse, LSE_log2), dQ_acc = 0, dK/dV (maps of dout, q [64, 64] and
/// v, k [64, 128], dQ_acc, LSE_log2, Delta, dk, dv) and dQ (dQ_acc, dq),
/// with the workspace Delta, LSE_log2 [1, 2, 200] and dQ_acc [1, 2, 200,
/// 128].
inline KernelEntry bwdKernel(const std::string &name) {
  KernelEntry k;
  static_cast<bundle::KernelLaunch &>(k) = step(name, 0, 4, 128);
  k.cubin = name + ".cubin";
  k.ptx = name + ".ptx";
  k.kind = "bwd";
  k.key.dtype = "bf16";
  k.key.headDim = 128;
  k.key.causal = true;
  k.key.hasLse = true;
  k.key.scale = 1.0 / std::sqrt(128.0);
  k.key.batch = 1;
  k.key.numHeadsQ = 2;
  k.key.numHeadsKV = 1;
  k.key.seqLenQ = 200;
  k.key.seqLenK = 300;
  k.key.strided = false;
  k.key.blockM = 64;
  k.key.blockN = 128;
  k.key.path = "wgmma";
  appendDescriptor(k.params, Operand::O);
  appendDescriptor(k.params, Operand::DO);
  appendWorkspace(k.params, 0, 3);
  appendDescriptor(k.params, Operand::LSE);
  appendWorkspace(k.params, 1, 3);
  bundle::KernelLaunch zero = step(name, 1, 26, 128);
  appendWorkspace(zero.params, 2, 4);
  bundle::KernelLaunch dkdv = step(name, 2, 3, 384);
  dkdv.dynamicSharedBytes = 163840;
  dkdv.params = {tensorMap(Operand::DO, {64, 64, 1, 1}),
                 tensorMap(Operand::Q, {64, 64, 1, 1}),
                 tensorMap(Operand::V, {64, 128, 1, 1}),
                 tensorMap(Operand::K, {64, 128, 1, 1})};
  appendWorkspace(dkdv.params, 2, 4);
  appendWorkspace(dkdv.params, 1, 3);
  appendWorkspace(dkdv.params, 0, 3);
  appendDescriptor(dkdv.params, Operand::DK);
  appendDescriptor(dkdv.params, Operand::DV);
  bundle::KernelLaunch dq = step(name, 3, 26, 128);
  appendWorkspace(dq.params, 2, 4);
  appendDescriptor(dq.params, Operand::DQ);
  k.then = {zero, dkdv, dq};
  GridDim one{1, {}}, two{2, {}}, n{200, {}};
  k.workspace = {{"scratch0", {one, two, n}},
                 {"scratch1", {one, two, n}},
                 {"scratch2", {one, two, n, GridDim{128, {}}}}};
  return k;
}

/// A workspace tensor map of buffer `buffer`: dims (innermost first),
/// strides of dims 1 to 3 and box, 128-byte swizzle (`transposed`: V^T).
inline Param workspaceMap(int64_t buffer, std::array<int64_t, 4> dims,
                          std::array<int64_t, 3> strides,
                          std::array<int64_t, 4> box, bool transposed = false) {
  Param map;
  map.transposed = transposed;
  map.field = Param::Field::TensorMap;
  map.workspace = buffer;
  map.dims = dims;
  map.strides = strides;
  map.box = box;
  return map;
}

/// A quantized kernel (attn-compile quantize_fp8) for B1 Hq4 Hkv2 Nq100
/// Nk128 D128 with LSE: a quantize launch (q, k, v in; the e4m3 copies,
/// descales and an i32 amax out) then the FP8 attention (maps of the copies
/// of v, k, q; the descales; o, lse), with the workspace q_fp8 [1, 4, 100,
/// 128], q_descale [1, 4, 1], k_fp8, v_fp8 (V^T) [1, 2, 128, 128],
/// k_descale [1, 2, 1], v_descale [1, 2], scratch6 [1, 2] i32.
inline KernelEntry quantizedKernel(const std::string &name) {
  KernelEntry k = fwdKernel(name, /*lse=*/true);
  k.key.batch = 1;
  k.key.numHeadsQ = 4;
  k.key.numHeadsKV = 2;
  k.key.seqLenQ = 100;
  k.key.seqLenK = 128;
  k.key.path = "wgmma";
  k.key.blockM = k.key.blockN = 128;
  k.key.quantizeFp8 =
      "block-m=128 block-n=128 hadamard=false qk-granularity=block "
      "v-granularity=head";
  auto c = [](int64_t n) { return GridDim{n, {}}; };
  k.workspace = {{"q_fp8", {c(1), c(4), c(100), c(128)}, "e4m3", Operand::Q},
                 {"q_descale", {c(1), c(4), c(1)}},
                 {"k_fp8", {c(1), c(2), c(128), c(128)}, "e4m3", Operand::K},
                 {"k_descale", {c(1), c(2), c(1)}},
                 {"v_fp8", {c(1), c(2), c(128), c(128)}, "e4m3", Operand::V},
                 {"v_descale", {c(1), c(2)}},
                 {"scratch6", {c(1), c(2)}}};
  k.grid = {c(8), c(1), c(1)};
  k.threads = {256, 1, 1};
  k.params.clear();
  for (Operand op : {Operand::Q, Operand::K, Operand::V})
    appendDescriptor(k.params, op);
  for (int64_t w = 0; w < 7; ++w)
    appendWorkspace(k.params, w, k.workspace[w].shape.size());
  bundle::KernelLaunch attention;
  attention.name = name;
  attention.cubin = name + "_0.cubin";
  attention.ptx = name + "_0.ptx";
  attention.grid = {c(4), c(1), c(1)};
  attention.threads = {384, 1, 1};
  attention.dynamicSharedBytes = 180224;
  attention.params = {
      workspaceMap(4, {128, 128, 2, 1}, {128, 16384, 32768}, {128, 128, 1, 1},
                   /*transposed=*/true),
      workspaceMap(2, {128, 128, 2, 1}, {128, 16384, 32768}, {128, 128, 1, 1}),
      workspaceMap(0, {128, 100, 4, 1}, {128, 12800, 51200}, {128, 128, 1, 1})};
  appendWorkspace(attention.params, 5, 2);
  appendWorkspace(attention.params, 1, 3);
  appendWorkspace(attention.params, 3, 3);
  appendDescriptor(attention.params, Operand::O);
  appendDescriptor(attention.params, Operand::LSE);
  k.then.push_back(attention);
  return k;
}

/// Sets every length of `k` to static values.
inline KernelEntry withShape(KernelEntry k, int64_t b, int64_t hq, int64_t hkv,
                             int64_t nq, int64_t nk) {
  k.key.batch = b;
  k.key.numHeadsQ = hq;
  k.key.numHeadsKV = hkv;
  k.key.seqLenQ = nq;
  k.key.seqLenK = nk;
  return k;
}

inline std::string manifestText(const Manifest &manifest) {
  return llvm::formatv("{0:2}", bundle::toJSON(manifest)).str();
}

/// A fresh directory, removed with its contents at the end of the test.
class TempDir {
public:
  TempDir() {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory("attn-runtime-test", dir);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(dir); }
  std::string path() const { return std::string(dir.str()); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p.str());
  }
  void write(llvm::StringRef name, llvm::StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(file(name), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  }

private:
  llvm::SmallString<256> dir;
};

/// A fake cubin: ELF magic, padded to the 64 bytes of an ELF64 header.
inline std::string fakeCubin() {
  std::string cubin = "\x7f"
                      "ELF\x02\x01\x01 fake cubin";
  cubin.resize(64, '\0');
  return cubin;
}

/// Writes manifest.json and a fake cubin per kernel.
inline void writeBundle(const TempDir &dir, const Manifest &manifest) {
  dir.write("manifest.json", manifestText(manifest));
  for (const KernelEntry &k : manifest.kernels)
    for (size_t i = 0; i < k.numLaunches(); ++i)
      dir.write(k.launch(i).cubin, fakeCubin());
}

/// Kernels whose manifest entries name the fake cubin's hash.
inline Manifest manifestOf(std::vector<KernelEntry> kernels) {
  for (KernelEntry &k : kernels) {
    k.cubinSha256 = bundle::sha256Hex(fakeCubin());
    for (bundle::KernelLaunch &l : k.then)
      l.cubinSha256 = k.cubinSha256;
  }
  Manifest m;
  m.generator = "attn-runtime-unittests";
  m.chip = "sm_90a";
  m.kernels = std::move(kernels);
  return m;
}

} // namespace attn::testing

#endif // ATTN_RUNTIME_UNITTESTS_TESTBUNDLES_H

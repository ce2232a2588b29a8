//===- ValueChecks.cpp - value checks of a call's device-side inputs ------===//
//
// attn_bundle_set_check_values: what attn_fwd reads back from the device
// before a launch (FP8 descales, paged block tables and lengths, varlen
// prefix sums), with one stream synchronization per call.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using attn::bundle::Operand;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

static Status invalid(const llvm::Twine &message) {
  return makeError(ATTN_ERROR_INVALID_ARGUMENT, message);
}

/// 4-byte elements (f32 or i32) of a view read back to the host: its span
/// from the first element.
using HostWords = std::vector<uint32_t>;

/// Copies the spans of `ops` (FwdCall::extentBytes) to the host on `stream`
/// (after the work queued before the call, which may compute them) and
/// waits for it once. `what` names the values for the missing-driver error.
static Status readBack(const DriverApi &driver, const attn_fwd_args &args,
                       const FwdCall &call, llvm::ArrayRef<Operand> ops,
                       StringRef what, CUstream stream,
                       std::vector<HostWords> &host) {
  if (!driver.memcpyDtoHAsync || !driver.streamSynchronize)
    return makeError(ATTN_ERROR_CUDA,
                     "checking " + what +
                         " needs cuMemcpyDtoHAsync and cuStreamSynchronize, "
                         "which the CUDA driver lacks "
                         "(attn_bundle_set_check_values(bundle, 0) skips the "
                         "check)");
  host.assign(ops.size(), {});
  for (size_t i = 0; i < ops.size(); ++i) {
    uint64_t bytes = call.extentBytes[static_cast<size_t>(ops[i])];
    if (bytes == 0)
      continue;
    host[i].resize(bytes / sizeof(uint32_t));
    auto src = static_cast<CUdeviceptr>(
        reinterpret_cast<uintptr_t>(operandTensor(args, ops[i]).data));
    if (CUresult r = driver.memcpyDtoHAsync(host[i].data(), src, bytes, stream);
        r != CUDA_SUCCESS)
      return cudaError(driver, r, "cuMemcpyDtoHAsync");
  }
  if (CUresult r = driver.streamSynchronize(stream); r != CUDA_SUCCESS)
    return cudaError(driver, r, "cuStreamSynchronize");
  return Status::success();
}

/// Element [i0, i1] of a rank-1 or rank-2 view read back by readBack.
template <typename T>
static T element(const HostWords &host, const attn_tensor &t, int64_t i0,
                 int64_t i1 = 0) {
  int64_t offset = i0 * t.strides[0] + (t.rank > 1 ? i1 * t.strides[1] : 0);
  T value;
  std::memcpy(&value, &host[offset], sizeof(T));
  return value;
}

/// An FP8 call's descales: every factor must be finite and > 0, or the
/// kernel would write NaN, Inf or garbage.
static Status checkDescaleValues(const DriverApi &driver,
                                 const attn_fwd_args &args, const FwdCall &call,
                                 CUstream stream) {
  constexpr Operand descales[] = {Operand::QDescale, Operand::KDescale,
                                  Operand::VDescale};
  std::vector<HostWords> host;
  if (Status s = readBack(driver, args, call, descales, "the descale values",
                          stream, host);
      !s.ok())
    return s;
  for (size_t i = 0; i < 3; ++i) {
    const attn_tensor &t = operandTensor(args, descales[i]);
    for (int64_t b = 0; b < t.sizes[0]; ++b)
      for (int64_t h = 0; h < t.sizes[1]; ++h) {
        float value = element<float>(host[i], t, b, h);
        if (!std::isfinite(value) || !(value > 0))
          return invalid(formatv(
              "{0}[{1}, {2}] = {3} must be finite and > 0 (the factor that "
              "undoes the quantization of batch {1}, KV head {2})",
              bundle::operandName(descales[i]), b, h, scaleText(value)));
      }
  }
  return Status::success();
}

/// The block_table entries sequence `b` of `n` keys reads (its first
/// ceil(n / page_size)) are pages of k and v: in [0, num_pages). Entries
/// past those are never read, so never checked.
static Status checkTableRow(const HostWords &host, const attn_tensor &table,
                            const FwdCall &call, int64_t b, int64_t n) {
  int64_t used = llvm::divideCeil(n, call.pageSize);
  for (int64_t j = 0; j < used; ++j) {
    auto page = element<int32_t>(host, table, b, j);
    if (page < 0 || page >= call.numPages)
      return invalid(formatv("block_table[{0}, {1}] = {2} must be a page "
                             "of k and v in [0, num_pages = {3}) (sequence "
                             "{0} has {4} keys: its first {5} entries are "
                             "read)",
                             b, j, page, call.numPages, n, used));
  }
  return Status::success();
}

/// A batched paged call's tables, FlashAttention's contract: every
/// cache_seqlens[b] in [0, max_pages * page_size], and the block_table
/// entries each sequence reads in range (checkTableRow).
static Status checkPagedValues(const DriverApi &driver,
                               const attn_fwd_args &args, const FwdCall &call,
                               CUstream stream) {
  constexpr Operand tables[] = {Operand::BlockTable, Operand::CacheSeqlens};
  std::vector<HostWords> host;
  if (Status s = readBack(driver, args, call, tables,
                          "the block table and cache lengths", stream, host);
      !s.ok())
    return s;
  const attn_tensor &table = args.block_table, &lengths = args.cache_seqlens;
  for (int64_t b = 0; b < lengths.sizes[0]; ++b) {
    auto n = element<int32_t>(host[1], lengths, b);
    if (n < 0 || n > call.capacity)
      return invalid(formatv("cache_seqlens[{0}] = {1} must be in [0, "
                             "max_pages * page_size = {2} * {3} = {4}]",
                             b, n, table.sizes[1], call.pageSize,
                             call.capacity));
    if (Status s = checkTableRow(host[0], table, call, b, n); !s.ok())
      return s;
  }
  return Status::success();
}

/// One prefix-sum table of a varlen call and its bounds: the packed rows
/// it indexes (none for a paged cu_seqlens_k: the keys live in pages) and
/// the largest length.
struct PrefixSums {
  const attn_tensor &t;
  const char *name;
  std::optional<int64_t> total;
  int64_t max;
  const char *maxName;
};

/// FlashAttention's contract on cu_seqlens: [0] = 0, non-decreasing, the
/// last entry <= total, every length <= its max_seqlen (the grid covers no
/// more query rows; the kernel reads no more keys).
static Status checkPrefixSums(const HostWords &host, const PrefixSums &c) {
  auto first = element<int32_t>(host, c.t, 0);
  if (first != 0)
    return invalid(formatv("{0}[0] = {1} must be 0", c.name, first));
  for (int64_t b = 0; b + 1 < c.t.sizes[0]; ++b) {
    auto start = element<int32_t>(host, c.t, b);
    auto end = element<int32_t>(host, c.t, b + 1);
    if (end < start)
      return invalid(formatv("{0}[{1}] = {2} is below {0}[{3}] = {4}: the "
                             "prefix sums must be non-decreasing",
                             c.name, b + 1, end, b, start));
    if (c.total && end > *c.total)
      return invalid(formatv("{0}[{1}] = {2} is past the packed rows (total "
                             "= {3})",
                             c.name, b + 1, end, *c.total));
    if (end - start > c.max)
      return invalid(formatv("sequence {0} has {1} = {2} - {3} = {4} rows, "
                             "more than {5} = {6}",
                             b, c.name, end, start, end - start, c.maxName,
                             c.max));
  }
  return Status::success();
}

/// A varlen paged call's keys: sequence b's Nk_b = cu_seqlens_k[b + 1] -
/// cu_seqlens_k[b] (checkPrefixSums: >= 0) fits the capacity max_pages *
/// page_size, and the block_table entries it reads are in range.
static Status checkVarlenPages(const HostWords &cuK, const HostWords &table,
                               const attn_fwd_args &args, const FwdCall &call) {
  for (int64_t b = 0; b < call.batch; ++b) {
    auto start = element<int32_t>(cuK, args.cu_seqlens_k, b);
    auto end = element<int32_t>(cuK, args.cu_seqlens_k, b + 1);
    int64_t n = int64_t(end) - start;
    if (n > call.capacity)
      return invalid(formatv("sequence {0} has cu_seqlens_k = {1} - {2} = {3} "
                             "keys, more than max_pages * page_size = {4} * "
                             "{5} = {6}",
                             b, end, start, n, args.block_table.sizes[1],
                             call.pageSize, call.capacity));
    if (Status s = checkTableRow(table, args.block_table, call, b, n); !s.ok())
      return s;
  }
  return Status::success();
}

/// A varlen call's prefix sums (checkPrefixSums), and for a varlen paged
/// call its pages (checkVarlenPages), read back with one synchronization.
static Status checkVarlenValues(const DriverApi &driver,
                                const attn_fwd_args &args, const FwdCall &call,
                                CUstream stream) {
  constexpr Operand tables[] = {Operand::CuSeqlensQ, Operand::CuSeqlensK,
                                Operand::BlockTable};
  llvm::ArrayRef<Operand> read(tables, call.paged ? 3 : 2);
  std::vector<HostWords> host;
  if (Status s = readBack(driver, args, call, read,
                          call.paged ? "cu_seqlens_q/k and the block table"
                                     : "cu_seqlens_q/k",
                          stream, host);
      !s.ok())
    return s;
  std::optional<int64_t> totalK;
  if (!call.paged)
    totalK = args.k.sizes[0];
  const PrefixSums sums[] = {{args.cu_seqlens_q, "cu_seqlens_q",
                              args.q.sizes[0], args.max_seqlen_q,
                              "max_seqlen_q"},
                             {args.cu_seqlens_k, "cu_seqlens_k", totalK,
                              args.max_seqlen_k, "max_seqlen_k"}};
  for (size_t i = 0; i < 2; ++i)
    if (Status s = checkPrefixSums(host[i], sums[i]); !s.ok())
      return s;
  return call.paged ? checkVarlenPages(host[1], host[2], args, call)
                    : Status::success();
}

/// The value checks of attn_bundle_set_check_values: FP8 descales, varlen
/// prefix sums (and a varlen paged call's table), paged tables; other calls
/// read nothing back.
Status checkCallValues(const DriverApi &driver, const attn_fwd_args &args,
                       const FwdCall &call, CUstream stream) {
  if (call.fp8)
    return checkDescaleValues(driver, args, call, stream);
  if (call.varlen)
    return checkVarlenValues(driver, args, call, stream);
  if (call.paged)
    return checkPagedValues(driver, args, call, stream);
  return Status::success();
}

} // namespace attn::runtime

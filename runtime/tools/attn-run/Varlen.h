//===- Varlen.h - varlen batches for attn-run's check -----------*- C++ -*-===//
//
// attn-run checks a varlen kernel (FlashAttention-2's flash_attn_varlen_func
// layout) on a batch of random lengths with the edge cases present: an
// empty query first, a sequence without keys in the middle, an empty one
// last, the largest lengths equal to max_seqlen_q / max_seqlen_k, Nq != Nk
// and lengths that are no multiple of a block size elsewhere. The packed
// tensors get padding rows after cu_seqlens[B]; the check demands that no
// padding row of O or LSE is written (the poison's bits survive). Plain C++,
// tested on the host (runtime/unittests/VarlenInputsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_VARLEN_H
#define ATTN_RUN_VARLEN_H

#include <cstdint>
#include <vector>

namespace attn::run {

/// The bits attn-run poisons O (f16 and bf16: a NaN in both) and LSE (f32)
/// with before a call.
constexpr uint16_t kPoison16 = 0x7FFF;
constexpr uint32_t kPoison32 = 0x7FFFFFFF;

/// Padding rows after the sequences in the packed Q/O and K/V tensors.
constexpr int64_t kVarlenPadQ = 5, kVarlenPadK = 7;

/// One varlen batch: B sequences packed as [total, H, D].
struct VarlenInputs {
  std::vector<int32_t> cuQ, cuK;  // [B + 1] cu_seqlens_q / cu_seqlens_k
  int64_t maxQ = 0, maxK = 0;     // max_seqlen_q / max_seqlen_k
  int64_t totalQ = 0, totalK = 0; // rows: cuQ[B], cuK[B] plus the padding

  int64_t batch() const { return int64_t(cuQ.size()) - 1; }
  int64_t seqQ(int64_t b) const { return cuQ[b + 1] - cuQ[b]; }
  int64_t seqK(int64_t b) const { return cuK[b + 1] - cuK[b]; }
  /// Rows of the sequences (the rest of total_q is padding).
  int64_t usedQ() const { return cuQ.back(); }
  /// Each sequence's key count (a paged call's lengths).
  std::vector<int32_t> lengthsK() const;
  /// The sum of Nq_b * Nk_b (the FLOP count's pairs of rows and keys).
  double pairs() const;
};

/// Prefix sums of `seqs` (Nq_b, Nk_b), max lengths the largest ones,
/// totals with kVarlenPadQ / kVarlenPadK padding rows.
VarlenInputs packVarlen(const std::vector<std::pair<int64_t, int64_t>> &seqs);

/// `batch` sequences with lengths random in [1, maxQ] x [1, maxK] (from
/// `seed`), Nq != Nk and neither a multiple of 8 where the range allows,
/// except: sequence 1 (0 when B = 1) has Nq = maxQ, Nk = maxK; with B >= 4,
/// sequence 0 has Nq = 0, sequence B / 2 has Nk = 0 (its rows see no key)
/// and sequence B - 1 is empty (Nq = Nk = 0).
VarlenInputs makeVarlenInputs(int64_t batch, int64_t maxQ, int64_t maxK,
                              uint64_t seed);

/// LSE [Hq, total_q] (f32) reordered as O's rows ([used_q, Hq]: row t * Hq +
/// h), the padding left out.
std::vector<float> lseByRow(const std::vector<float> &lse,
                            const VarlenInputs &in, int64_t headsQ);

/// Elements of the padding rows whose bits are no longer the poison's: of
/// O ([total_q, Hq, D], 16-bit) and of LSE ([Hq, total_q]; empty: no LSE).
int64_t writtenPadding(const VarlenInputs &in, int64_t headsQ, int64_t headDim,
                       const std::vector<uint16_t> &oBits,
                       const std::vector<uint32_t> &lseBits);

} // namespace attn::run

#endif // ATTN_RUN_VARLEN_H

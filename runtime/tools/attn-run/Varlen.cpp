//===- Varlen.cpp - varlen batches for attn-run's check -------------------===//

#include "Varlen.h"

#include <algorithm>
#include <random>
#include <utility>

namespace attn::run {

std::vector<int32_t> VarlenInputs::lengthsK() const {
  std::vector<int32_t> lengths;
  for (int64_t b = 0; b < batch(); ++b)
    lengths.push_back(int32_t(seqK(b)));
  return lengths;
}

double VarlenInputs::pairs() const {
  double sum = 0;
  for (int64_t b = 0; b < batch(); ++b)
    sum += double(seqQ(b)) * double(seqK(b));
  return sum;
}

VarlenInputs packVarlen(const std::vector<std::pair<int64_t, int64_t>> &seqs) {
  VarlenInputs in;
  in.cuQ = {0};
  in.cuK = {0};
  for (auto [nq, nk] : seqs) {
    in.cuQ.push_back(int32_t(in.cuQ.back() + nq));
    in.cuK.push_back(int32_t(in.cuK.back() + nk));
    in.maxQ = std::max(in.maxQ, nq);
    in.maxK = std::max(in.maxK, nk);
  }
  in.totalQ = in.cuQ.back() + kVarlenPadQ;
  in.totalK = in.cuK.back() + kVarlenPadK;
  return in;
}

/// (Nq, Nk) random in [1, maxQ] x [1, maxK] with Nq != Nk and neither a
/// multiple of 8 (so of no block or TMA box size), when a few draws find
/// such a pair.
static std::pair<int64_t, int64_t> raggedPair(std::mt19937_64 &engine,
                                              int64_t maxQ, int64_t maxK) {
  std::uniform_int_distribution<int64_t> q(std::min<int64_t>(1, maxQ), maxQ),
      k(std::min<int64_t>(1, maxK), maxK);
  std::pair<int64_t, int64_t> pair;
  for (int tries = 0; tries < 64; ++tries) {
    pair = {q(engine), k(engine)};
    if (pair.first != pair.second && pair.first % 8 && pair.second % 8)
      break;
  }
  return pair;
}

VarlenInputs makeVarlenInputs(int64_t batch, int64_t maxQ, int64_t maxK,
                              uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::pair<int64_t, int64_t>> seqs;
  for (int64_t b = 0; b < batch; ++b)
    seqs.push_back(raggedPair(engine, maxQ, maxK));
  if (batch >= 1)
    seqs[batch >= 2 ? 1 : 0] = {maxQ, maxK};
  if (batch >= 4) {
    seqs[0].first = 0;
    seqs[batch / 2].second = 0;
    seqs[batch - 1] = {0, 0};
  }
  return packVarlen(seqs);
}

std::vector<float> lseByRow(const std::vector<float> &lse,
                            const VarlenInputs &in, int64_t headsQ) {
  std::vector<float> rows(in.usedQ() * headsQ);
  for (int64_t h = 0; h < headsQ; ++h)
    for (int64_t t = 0; t < in.usedQ(); ++t)
      rows[t * headsQ + h] = lse[h * in.totalQ + t];
  return rows;
}

int64_t writtenPadding(const VarlenInputs &in, int64_t headsQ, int64_t headDim,
                       const std::vector<uint16_t> &oBits,
                       const std::vector<uint32_t> &lseBits) {
  int64_t written = 0;
  for (size_t e = in.usedQ() * headsQ * headDim; e < oBits.size(); ++e)
    written += oBits[e] != kPoison16;
  if (lseBits.empty())
    return written;
  for (int64_t h = 0; h < headsQ; ++h)
    for (int64_t t = in.usedQ(); t < in.totalQ; ++t)
      written += lseBits[h * in.totalQ + t] != kPoison32;
  return written;
}

} // namespace attn::run

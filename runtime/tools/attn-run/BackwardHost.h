//===- BackwardHost.h - fp64 attention backward on the host ----*- C++ -*-===//
//
// The fp64 backward attn-reference-check holds the GPU reference backward
// to (ReferenceCheckBwd.cpp), in plain C++ so that it is tested without a
// GPU (runtime/unittests/BackwardHostTest.cpp: against central
// differences of the forward).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_BACKWARDHOST_H
#define ATTN_RUN_BACKWARDHOST_H

#include <cstdint>
#include <vector>

namespace attn::run {

/// A backward call's sizes and semantics (attn.attention_grad).
struct BwdProblem {
  int64_t batch = 0, headsQ = 0, headsKV = 0, seqQ = 0, seqK = 0, headDim = 0;
  bool causal = false;
  double scale = 0;

  /// Keys 0 .. visible-1 seen by query row i (bottom-right causal).
  int64_t visibleKeys(int64_t i) const;
};

/// Contiguous operands: q, o, dout [B, Hq, Nq, D], k, v [B, Hkv, Nk, D],
/// lse [B, Hq, Nq] (natural log; -inf for a row that sees no key).
struct BwdOperands64 {
  std::vector<double> q, k, v, o, dout, lse;
};

enum class BwdForm {
  /// P = exp(s - LSE) with the given LSE, Delta = rowsum(dO * O) with the
  /// given O: the GPU reference's formula (FlashAttention-2, Algorithm 2).
  FromInputs,
  /// P = softmax(s) from the row's own max and sum, Delta = rowsum(P *
  /// dP): the Jacobian of softmax written out; O and LSE are not read.
  Softmax,
};

/// dQ, dK, dV in fp64 (dK, dV summed over the query heads of a group); a
/// row that sees no key (FromInputs: LSE = -inf) contributes nothing.
void hostBackward(const BwdProblem &p, const BwdOperands64 &in, BwdForm form,
                  std::vector<double> &dq, std::vector<double> &dk,
                  std::vector<double> &dv);

/// O and LSE of the forward in fp64 (O = 0, LSE = -inf for a row that
/// sees no key); q, k, v of `in` are read.
void hostForward(const BwdProblem &p, const BwdOperands64 &in,
                 std::vector<double> &o, std::vector<double> &lse);

/// A 16-bit float's value: bf16, or IEEE half (subnormals, inf, NaN).
double from16(uint16_t bits, bool bf16);

} // namespace attn::run

#endif // ATTN_RUN_BACKWARDHOST_H

//===- Backward.h - attn-run's check of backward kernels --------*- C++ -*-===//
//
// A "bwd" kernel of a bundle (attn.attention_grad, attn_bwd) on random
// inputs of its key's static shape, against Reference.cu's fp32 backward.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_BACKWARD_H
#define ATTN_RUN_BACKWARD_H

#include "AttnRun.h"
#include "attn/runtime.h"

#include "llvm/ADT/ArrayRef.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace attn::run {

/// The outcome of one backward kernel (a row of the backward table).
struct BwdResult {
  int64_t index = 0;
  std::string shape; // "B Hq Hkv Nq Nk D dtype [causal]"; "-" if unknown
  int64_t picked = -1;
  /// Relative Frobenius error of dQ, dK, dV against the reference.
  double errDq = NAN, errDk = NAN, errDv = NAN, ms = NAN, tflops = NAN;
  int64_t nonFinite = -1;
  /// dQ elements of rows that see no key (LSE = -inf) that are not 0.
  int64_t noKeyNonZero = 0;
  bool pass = false;
  std::string note; // why the kernel failed, if it did
};

/// Checks backward kernel `key` through attn_bwd on `stream`: Q, K, V, dO
/// normal from seeds seed, seed + 1, seed + 2, seed + 5; O and LSE from the
/// forward reference (O rounded to the kernel's dtype); dQ, dK, dV poisoned
/// with NaN; then times `iters` attn_bwd calls (none if 0). Kernel
/// failures land in `r`; the returned error is a driver failure that ends
/// the run.
llvm::Error runBackwardKernel(attn_bundle *bundle, const attn_kernel_key &key,
                              const Reference &ref, uint64_t seed,
                              unsigned iters, CUstream stream, BwdResult &r);

/// Prints the backward table (nothing if `results` is empty).
void printBackwardTable(llvm::ArrayRef<BwdResult> results);

} // namespace attn::run

#endif // ATTN_RUN_BACKWARD_H

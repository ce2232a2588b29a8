//===- Fp8.h - host-side f8E4M3FN reference conversions ---------*- C++ -*-===//
//
// The tests' independent reference for FP8: APFloat's Float8E4M3FN.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_FP8_H
#define ATTN_UNITTESTS_FP8_H

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstdint>

namespace mlir::attn::test {

/// The largest finite f8E4M3FN value.
constexpr float kE4M3Max = 448.0f;

/// f8E4M3FN bits -> value (exact; NaN for S.1111.111).
inline double fromE4M3(uint8_t bits) {
  return llvm::APFloat(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, bits))
      .convertToDouble();
}

/// f32 -> f8E4M3FN bits, round to nearest even, satfinite: NaN stays NaN and
/// everything beyond +-448 becomes +-448. Clamping first is exact (448 is
/// representable and rounding is monotonic).
inline uint8_t toE4M3(float x) {
  if (!std::isnan(x))
    x = std::fmin(std::fmax(x, -kE4M3Max), kE4M3Max);
  llvm::APFloat r(x);
  bool lost;
  r.convert(llvm::APFloat::Float8E4M3FN(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return static_cast<uint8_t>(r.bitcastToAPInt().getZExtValue());
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_FP8_H

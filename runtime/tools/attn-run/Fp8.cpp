//===- Fp8.cpp - host FP8 (e4m3) inputs for attn-run's check -------------===//

#include "Fp8.h"

#include <algorithm>
#include <cmath>

namespace attn::run {

uint8_t toE4M3(float x) {
  if (std::isnan(x))
    return 0x7F;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  if (a >= kE4M3Max)
    return sign | 0x7E;
  // Three mantissa bits: the quantum of a's binade, 2^-9 below 2^-6
  // (subnormals). Dividing by a power of two is exact, so nearbyint
  // (ties to even in the default rounding mode) rounds a itself.
  int e = 0;
  std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
  float step = std::ldexp(1.0f, std::max(e - 1, -6) - 3);
  float q = std::nearbyint(a / step) * step; // <= 448: 448 = 14 * 32
  if (q == 0)
    return sign;
  std::frexp(q, &e);
  int biased = e - 1 + 7;
  if (biased <= 0) // subnormal: m * 2^-9
    return sign | static_cast<uint8_t>(q * 512.0f);
  auto mantissa = static_cast<uint8_t>(std::ldexp(q, 1 - e) * 8.0f - 8.0f);
  return sign | static_cast<uint8_t>(biased << 3) | mantissa;
}

float fromE4M3(uint8_t bits) {
  int exponent = (bits >> 3) & 0xF, mantissa = bits & 7;
  if (exponent == 15 && mantissa == 7)
    return NAN;
  float value = exponent == 0
                    ? std::ldexp(float(mantissa), -9)
                    : std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
  return bits & 0x80 ? -value : value;
}

Quantized quantizePerKVHead(llvm::ArrayRef<float> x, int64_t batch,
                            int64_t heads, int64_t headsKV, int64_t n,
                            int64_t d) {
  Quantized out;
  out.bytes.resize(x.size());
  out.dequantized.resize(x.size());
  out.descale.assign(batch * headsKV, 0.0f);
  int64_t group = heads / headsKV, head = n * d;
  auto scaleOf = [&](int64_t b, int64_t h) -> float & {
    return out.descale[b * headsKV + h / group];
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < head; ++i)
        scaleOf(b, h) =
            std::max(scaleOf(b, h), std::fabs(x[(b * heads + h) * head + i]));
  for (float &s : out.descale)
    s = s > 0 ? s / kE4M3Max : 1.0f;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      float s = scaleOf(b, h);
      for (int64_t i = 0; i < head; ++i) {
        int64_t at = (b * heads + h) * head + i;
        out.bytes[at] = toE4M3(x[at] / s);
        out.dequantized[at] = fromE4M3(out.bytes[at]) * s;
      }
    }
  return out;
}

std::vector<uint8_t> toVt(llvm::ArrayRef<uint8_t> v, int64_t batch,
                          int64_t heads, int64_t n, int64_t d,
                          int64_t nPadded) {
  std::vector<uint8_t> vt(batch * heads * d * nPadded, 0);
  for (int64_t bh = 0; bh < batch * heads; ++bh)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < d; ++c)
        vt[(bh * d + c) * nPadded + j] = v[(bh * n + j) * d + c];
  return vt;
}

} // namespace attn::run

//===- Fp8InputsTest.cpp - attn-run's host FP8 quantization --------------===//

#include "Fp8.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace attn::run;

namespace {

TEST(Fp8Inputs, EveryByteRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    auto bits = static_cast<uint8_t>(b);
    float value = fromE4M3(bits);
    if ((b & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(value)) << b;
      continue;
    }
    EXPECT_EQ(toE4M3(value), bits) << b << " = " << value;
  }
  EXPECT_EQ(fromE4M3(0x7E), 448.0f);
  EXPECT_EQ(fromE4M3(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(fromE4M3(0x08), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_EQ(fromE4M3(0xB8), -1.0f);
}

TEST(Fp8Inputs, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(fromE4M3(toE4M3(1.0625f)), 1.0f);  // tie: even mantissa 0
  EXPECT_EQ(fromE4M3(toE4M3(1.1875f)), 1.25f); // tie: even mantissa 2
  EXPECT_EQ(fromE4M3(toE4M3(1.07f)), 1.125f);
  EXPECT_EQ(fromE4M3(toE4M3(1.97f)), 2.0f);    // into the next binade
  EXPECT_EQ(fromE4M3(toE4M3(0.0155f)), std::ldexp(1.0f, -6)); // to normal
  // A subnormal tie, 1.5 quanta: to 2 quanta (even).
  EXPECT_EQ(fromE4M3(toE4M3(std::ldexp(3.0f, -10))), std::ldexp(1.0f, -8));
  EXPECT_EQ(toE4M3(std::ldexp(1.0f, -11)), 0); // below half the quantum
  EXPECT_EQ(toE4M3(440.0f), 0x7E);
  EXPECT_EQ(toE4M3(1e6f), 0x7E);
  EXPECT_EQ(toE4M3(-INFINITY), 0xFE);
  EXPECT_EQ(toE4M3(NAN), 0x7F);
  EXPECT_EQ(toE4M3(-0.0f), 0x80);
}

// Q of 4 heads over 2 KV heads: heads 0, 1 share a scale, 2, 3 another.
TEST(Fp8Inputs, QuantizesPerBatchAndKVHead) {
  std::vector<float> x(2 * 4 * 2 * 1, 1.0f); // [B=2, H=4, N=2, D=1]
  x[1] = -896.0f;      // b 0, head 0
  x[2 * 2 + 1] = 2.0f; // b 0, head 2 (KV head 1)
  for (int i = 8; i < 16; ++i)
    x[i] = 0.0f;       // b 1: all zero
  Quantized q = quantizePerKVHead(x, 2, 4, 2, 2, 1);
  EXPECT_EQ(q.descale, (std::vector<float>{2.0f, 2.0f / 448, 1.0f, 1.0f}));
  EXPECT_EQ(q.bytes[1], 0xFE);                  // -448: the group's amax
  EXPECT_EQ(q.dequantized[1], -896.0f);
  EXPECT_FLOAT_EQ(q.dequantized[2 * 2 + 1], 2.0f); // amax of its group
  EXPECT_EQ(q.dequantized[2], 1.0f);            // head 1 uses head 0's scale
  EXPECT_EQ(q.bytes[8], 0);
  EXPECT_EQ(q.dequantized[8], 0.0f);
}

TEST(Fp8Inputs, VtIsTransposedAndPadded) {
  // [B=1, H=1, N=3, D=2] -> [1, 1, 2, 16]
  std::vector<uint8_t> v = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> vt = toVt(v, 1, 1, 3, 2, 16);
  ASSERT_EQ(vt.size(), 32u);
  EXPECT_EQ((std::vector<uint8_t>(vt.begin(), vt.begin() + 4)),
            (std::vector<uint8_t>{1, 3, 5, 0}));
  EXPECT_EQ((std::vector<uint8_t>(vt.begin() + 16, vt.begin() + 19)),
            (std::vector<uint8_t>{2, 4, 6}));
}

} // namespace

//===- CpuFp8ConversionTest.cpp - host f8E4M3FN <-> f32 conversions -------===//
//
// attn-lower-to-cpu expands f8E4M3FN <-> f32 conversions to integer
// arithmetic. This runs the expansion, vector and scalar, on all 256 E4M3FN
// patterns (extension, exact) and on every E4M3FN value, the midpoints
// between neighbours (ties), their f32 neighbours, subnormals, overflow,
// NaN, -0 and random f32 patterns (truncation: round to nearest even,
// satfinite), and compares the bits with APFloat's Float8E4M3FN.
//
//===----------------------------------------------------------------------===//

#include "ConversionKernels.h"
#include "Fp8.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::attn::test;

namespace {

float valueOf(uint8_t bits) { return attn::test::fromE4M3(bits); }

bool isNaN8(uint8_t b) { return (b & 0x7f) == 0x7f; }

/// Every E4M3FN value, midpoints between neighbours and their f32
/// neighbours, special values and random f32 patterns.
std::vector<float> truncationInputs() {
  std::vector<float> in;
  for (uint32_t b = 0; b < 256; ++b) {
    float x = valueOf(b);
    in.push_back(x);
    if (std::isnan(x) || (b & 0x7f) >= 0x7e)
      continue;
    float mid = x + (valueOf(b + 1) - x) / 2; // exact in f32
    for (float y : {mid, std::nextafter(mid, 0.0f),
                    std::nextafter(mid, std::copysign(INFINITY, mid))})
      in.push_back(y);
  }
  for (float x :
       {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 448.0f, -448.0f, 464.0f,
        std::nextafter(464.0f, 0.0f), 480.0f, 1e6f, -1e30f,
        std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
        std::numeric_limits<float>::denorm_min(), 0x1p-9f, 0x1p-10f,
        0x1.8p-10f, 0x1p-11f, 0x1.fp-7f, 0x1.ep-7f})
    in.push_back(x);
  in.push_back(fromBits(0x7f800001)); // signaling NaN
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> exponent(-14.0f, 10.0f);
  for (int i = 0; i < (1 << 16); ++i) {
    in.push_back(fromBits(rng()));
    in.push_back((i & 1 ? -1.0f : 1.0f) * std::exp2(exponent(rng)));
  }
  in.resize((in.size() + 7) / 8 * 8, 1.0f);
  return in;
}

class CpuFp8Conversion : public ::testing::Test {
protected:
  void SetUp() override {
    auto created = compileConversions("f8E4M3FN");
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    engine = std::move(*created);
  }

  template <typename In, typename Out>
  void run(const char *fn, std::vector<In> &in, std::vector<Out> &out) {
    llvm::Error err = invokeConversion(*engine, fn, in, out);
    ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  }

  std::unique_ptr<ExecutionEngine> engine;
};

TEST_F(CpuFp8Conversion, ExtendsAll256PatternsExactly) {
  std::vector<uint8_t> in(256);
  for (uint32_t b = 0; b < 256; ++b)
    in[b] = b;
  for (const char *fn : {"extend", "extend_scalar"}) {
    std::vector<float> out(in.size(), 0.0f);
    run(fn, in, out);
    for (uint32_t b = 0; b < 256; ++b) {
      float want = valueOf(b);
      bool ok = std::isnan(want) ? std::isnan(out[b])
                                 : bitsOf(out[b]) == bitsOf(want); // -0 too
      EXPECT_TRUE(ok) << fn << llvm::formatv("(0x{0:x-2}) = ", b).str()
                      << out[b] << ", expected " << want;
    }
  }
}

TEST_F(CpuFp8Conversion, TruncatesToNearestEvenSatfinite) {
  std::vector<float> in = truncationInputs();
  for (const char *fn : {"truncate", "truncate_scalar"}) {
    std::vector<uint8_t> out(in.size(), 0);
    run(fn, in, out);
    int mismatches = 0;
    for (size_t i = 0; i < in.size() && mismatches < 8; ++i) {
      uint8_t want = toE4M3(in[i]);
      bool ok = isNaN8(want) ? isNaN8(out[i]) : out[i] == want;
      if (!ok)
        ADD_FAILURE() << fn
                      << llvm::formatv("({0:e}, bits 0x{1:x-8}) = 0x{2:x-2}, "
                                       "expected 0x{3:x-2}",
                                       in[i], bitsOf(in[i]), out[i], want)
                             .str()
                      << " (" << ++mismatches << ")";
    }
  }
}

/// The reference itself: satfinite and ties to even on known values.
TEST(Fp8Reference, KnownValues) {
  EXPECT_EQ(toE4M3(448.0f), 0x7e);
  EXPECT_EQ(toE4M3(INFINITY), 0x7e);
  EXPECT_EQ(toE4M3(-1e30f), 0xfe);
  EXPECT_EQ(toE4M3(464.0f), 0x7e); // tie: 448 has the even mantissa
  EXPECT_EQ(toE4M3(-0.0f), 0x80);
  EXPECT_EQ(toE4M3(0x1p-10f), 0x00);   // tie between 0 and 2^-9
  EXPECT_EQ(toE4M3(0x1.8p-9f), 0x02);  // tie 1.5 * 2^-9 -> 2 * 2^-9
  EXPECT_EQ(toE4M3(1.0625f), 0x38);    // tie 1 + 1/16 -> 1
  EXPECT_TRUE(isNaN8(toE4M3(NAN)));
}

} // namespace

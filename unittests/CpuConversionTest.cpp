//===- CpuConversionTest.cpp - host f16/bf16 <-> f32 conversions ----------===//
//
// attn-lower-to-cpu expands f16/bf16 <-> f32 conversions to integer
// arithmetic (no CPU feature, no libgcc call). This runs the expansion on
// every 16-bit pattern (extension) and on every 16-bit value, the midpoints
// between neighbours, their f32 neighbours and random f32 patterns
// (truncation, round to nearest even), vector and scalar, and compares the
// bits with APFloat.
//
//===----------------------------------------------------------------------===//

#include "ConversionKernels.h"

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

struct Case {
  const char *name;
  bool bf16;
  TargetCpu cpu;
};

/// Every value of the 16-bit type, the midpoints between neighbours (ties),
/// the f32 values next to them, special values and random f32 patterns.
std::vector<float> truncationInputs(const llvm::fltSemantics &sem) {
  std::vector<float> in;
  auto value = [&](uint16_t h) {
    return llvm::APFloat(sem, llvm::APInt(16, h)).convertToFloat();
  };
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float x = value(h);
    in.push_back(x);
    if (std::isnan(x) || (h & 0x7fff) == 0x7fff)
      continue;
    float next = value(h + 1);
    if (std::isnan(next) || std::signbit(next) != std::signbit(x))
      continue;
    // Exact in f32, which has more than one bit more than the type; past
    // the largest finite value, the overflow threshold.
    float mid =
        std::isinf(next) ? x + (x - value(h - 1)) / 2 : x + (next - x) / 2;
    in.push_back(mid);
    in.push_back(std::nextafter(mid, 0.0f));
    in.push_back(std::nextafter(mid, std::copysign(INFINITY, mid)));
  }
  for (float x :
       {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
        std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
        std::numeric_limits<float>::denorm_min(), 65504.0f, 65520.0f,
        std::nextafter(65520.0f, 0.0f), 0x1p-25f, 0x1.8p-25f, 0x1p-24f,
        0x1.8p-24f})
    in.push_back(x);
  in.push_back(fromBits(0x7f800001)); // signaling NaN
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < (1 << 18); ++i)
    in.push_back(fromBits(rng()));
  in.resize((in.size() + 7) / 8 * 8, 1.0f);
  return in;
}

bool isNaN16(uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7f80) == 0x7f80 && (h & 0x7f)
              : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class CpuConversion : public ::testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    auto created = compileConversions(GetParam().bf16 ? "bf16" : "f16",
                                      GetParam().cpu);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    engine = std::move(*created);
  }

  const llvm::fltSemantics &sem() const {
    return GetParam().bf16 ? llvm::APFloat::BFloat()
                           : llvm::APFloat::IEEEhalf();
  }

  std::unique_ptr<ExecutionEngine> engine;
};

TEST_P(CpuConversion, ExtendsEveryValueExactly) {
  std::vector<uint16_t> in(0x10000);
  for (uint32_t h = 0; h < in.size(); ++h)
    in[h] = h;
  for (const char *fn : {"extend", "extend_scalar"}) {
    std::vector<float> out(in.size(), 0.0f);
    llvm::Error err = invokeConversion(*engine, fn, in, out);
    ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
    int mismatches = 0;
    for (uint32_t h = 0; h < in.size() && mismatches < 8; ++h) {
      float want = llvm::APFloat(sem(), llvm::APInt(16, h)).convertToFloat();
      bool ok = std::isnan(want) ? std::isnan(out[h])
                                 : bitsOf(out[h]) == bitsOf(want);
      if (!ok)
        ADD_FAILURE() << fn << llvm::formatv("(0x{0:x-4}) = ", h).str()
                      << out[h] << ", expected " << want << " (" << ++mismatches
                      << ")";
    }
  }
}

TEST_P(CpuConversion, TruncatesToNearestEven) {
  std::vector<float> in = truncationInputs(sem());
  for (const char *fn : {"truncate", "truncate_scalar"}) {
    std::vector<uint16_t> out(in.size(), 0);
    llvm::Error err = invokeConversion(*engine, fn, in, out);
    ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
    int mismatches = 0;
    for (size_t i = 0; i < in.size() && mismatches < 8; ++i) {
      llvm::APFloat want(in[i]);
      bool lost;
      want.convert(sem(), llvm::APFloat::rmNearestTiesToEven, &lost);
      uint16_t wantBits = want.bitcastToAPInt().getZExtValue();
      bool ok =
          want.isNaN() ? isNaN16(out[i], GetParam().bf16) : out[i] == wantBits;
      if (!ok)
        ADD_FAILURE() << fn
                      << llvm::formatv("({0:e}, bits 0x{1:x-8}) = 0x{2:x-4}, "
                                       "expected 0x{3:x-4}",
                                       in[i], bitsOf(in[i]), out[i], wantBits)
                             .str()
                      << " (" << ++mismatches << ")";
    }
  }
}

const Case kCases[] = {
    {"f16", false, TargetCpu::Baseline},
    {"bf16", true, TargetCpu::Baseline},
    {"f16_host", false, TargetCpu::Host},
    {"bf16_host", true, TargetCpu::Host},
};

INSTANTIATE_TEST_SUITE_P(HalfFloats, CpuConversion, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace

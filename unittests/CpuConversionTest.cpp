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

#include "CpuJit.h"
#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using mlir::attn::test::TargetCpu;

namespace {

struct Case {
  const char *name;
  bool bf16;
  TargetCpu cpu;
};

/// @extend and @truncate convert a memref<?xHALF> elementwise, in vectors of
/// 8 (the length is a multiple of 8); @extend_scalar and @truncate_scalar one
/// element at a time.
constexpr const char *kModule = R"mlir(
func.func @extend(%in: memref<?xHALF>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %in, %c0 : memref<?xHALF>
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %in[%i] : memref<?xHALF>, vector<8xHALF>
    %y = arith.extf %x : vector<8xHALF> to vector<8xf32>
    vector.store %y, %out[%i] : memref<?xf32>, vector<8xf32>
  }
  return
}
func.func @truncate(%in: memref<?xf32>, %out: memref<?xHALF>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %in[%i] : memref<?xf32>, vector<8xf32>
    %y = arith.truncf %x : vector<8xf32> to vector<8xHALF>
    vector.store %y, %out[%i] : memref<?xHALF>, vector<8xHALF>
  }
  return
}
func.func @extend_scalar(%in: memref<?xHALF>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xHALF>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xHALF>
    %y = arith.extf %x : HALF to f32
    memref.store %y, %out[%i] : memref<?xf32>
  }
  return
}
func.func @truncate_scalar(%in: memref<?xf32>, %out: memref<?xHALF>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xf32>
    %y = arith.truncf %x : f32 to HALF
    memref.store %y, %out[%i] : memref<?xHALF>
  }
  return
}
)mlir";

template <typename T> StridedMemRefType<T, 1> view(std::vector<T> &v) {
  return {v.data(), v.data(), 0, {int64_t(v.size())}, {1}};
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

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
    attn::registerAttnDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    std::string src = kModule;
    for (size_t at; (at = src.find("HALF")) != std::string::npos;)
      src.replace(at, 4, GetParam().bf16 ? "bf16" : "f16");
    module = parseSourceString<ModuleOp>(src, ctx.get());
    ASSERT_TRUE(module) << src;
    PassManager pm(ctx.get());
    pm.addPass(attn::createAttnLowerToCPU());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    auto created = attn::test::createEngine(*module, GetParam().cpu);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    engine = std::move(*created);
  }

  const llvm::fltSemantics &sem() const {
    return GetParam().bf16 ? llvm::APFloat::BFloat()
                           : llvm::APFloat::IEEEhalf();
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> engine;
};

TEST_P(CpuConversion, ExtendsEveryValueExactly) {
  std::vector<uint16_t> in(0x10000);
  for (uint32_t h = 0; h < in.size(); ++h)
    in[h] = h;
  for (const char *fn : {"extend", "extend_scalar"}) {
    std::vector<float> out(in.size(), 0.0f);
    auto inDesc = view(in);
    auto outDesc = view(out);
    auto *ip = &inDesc;
    auto *op = &outDesc;
    llvm::Error err = engine->invoke(fn, ip, op);
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
    auto inDesc = view(in);
    auto outDesc = view(out);
    auto *ip = &inDesc;
    auto *op = &outDesc;
    llvm::Error err = engine->invoke(fn, ip, op);
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

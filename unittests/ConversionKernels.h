//===- ConversionKernels.h - JIT'd float conversion kernels -----*- C++ -*-===//
//
// The kernels the host conversion tests (f16/bf16 and f8E4M3FN <-> f32) run
// through attn-lower-to-cpu, and the helpers to call them and compare bits.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_CONVERSIONKERNELS_H
#define ATTN_UNITTESTS_CONVERSIONKERNELS_H

#include "CpuJit.h"

#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstring>
#include <string>
#include <vector>

namespace mlir::attn::test {

/// @extend and @truncate convert a memref<?x`type`> elementwise, in
/// vectors of 8 (the length is a multiple of 8); @extend_scalar and
/// @truncate_scalar one element at a time.
inline std::string conversionModule(llvm::StringRef type) {
  std::string src = R"mlir(
func.func @extend(%in: memref<?xELT>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %in, %c0 : memref<?xELT>
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %in[%i] : memref<?xELT>, vector<8xELT>
    %y = arith.extf %x : vector<8xELT> to vector<8xf32>
    vector.store %y, %out[%i] : memref<?xf32>, vector<8xf32>
  }
  return
}
func.func @truncate(%in: memref<?xf32>, %out: memref<?xELT>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %in[%i] : memref<?xf32>, vector<8xf32>
    %y = arith.truncf %x : vector<8xf32> to vector<8xELT>
    vector.store %y, %out[%i] : memref<?xELT>, vector<8xELT>
  }
  return
}
func.func @extend_scalar(%in: memref<?xELT>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xELT>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xELT>
    %y = arith.extf %x : ELT to f32
    memref.store %y, %out[%i] : memref<?xf32>
  }
  return
}
func.func @truncate_scalar(%in: memref<?xf32>, %out: memref<?xELT>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xf32>
    %y = arith.truncf %x : f32 to ELT
    memref.store %y, %out[%i] : memref<?xELT>
  }
  return
}
)mlir";
  for (size_t at; (at = src.find("ELT")) != std::string::npos;)
    src.replace(at, 3, type.str());
  return src;
}

/// conversionModule(`type`) lowered by attn-lower-to-cpu and JIT-compiled.
inline llvm::Expected<std::unique_ptr<ExecutionEngine>>
compileConversions(llvm::StringRef type, TargetCpu cpu = TargetCpu::Baseline) {
  DialectRegistry registry;
  registerAttnDialects(registry);
  MLIRContext ctx(registry);
  std::string src = conversionModule(type);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(src, &ctx);
  if (!module)
    return llvm::createStringError("cannot parse:\n" + src);
  PassManager pm(&ctx);
  pm.addPass(createAttnLowerToCPU());
  if (failed(pm.run(*module)))
    return llvm::createStringError("attn-lower-to-cpu failed");
  return createEngine(*module, cpu);
}

template <typename T> StridedMemRefType<T, 1> view(std::vector<T> &v) {
  return {v.data(), v.data(), 0, {int64_t(v.size())}, {1}};
}

/// Calls kernel `fn` of `engine` on (in, out).
template <typename In, typename Out>
llvm::Error invokeConversion(ExecutionEngine &engine, const char *fn,
                             std::vector<In> &in, std::vector<Out> &out) {
  auto inDesc = view(in);
  auto outDesc = view(out);
  auto *ip = &inDesc;
  auto *op = &outDesc;
  return engine.invoke(fn, ip, op);
}

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_CONVERSIONKERNELS_H

// RUN: attn-opt %s --split-input-file --attn-lower-to-cpu -verify-diagnostics | FileCheck %s

// f8E4M3FN <-> f32 conversions become integer arithmetic (LLVM has no FP8
// type), and FP8 data is moved as i8. Extension is exact; truncation rounds
// to nearest even and saturates to +-448 (NaN stays NaN). The values are
// checked bit by bit in unittests/CpuFp8ConversionTest.cpp.
// CHECK-LABEL: llvm.func @conversions(
//  CHECK-SAME:   vector<4xi8>
//   CHECK-NOT:   {{f8E4M3FN|fpext|fptrunc}}
// truncation: the satfinite threshold 448.0 (0x43E00000) and the largest
// finite E4M3FN pattern 0x7E
//   CHECK-DAG:   llvm.mlir.constant(1138753536 : i32)
//   CHECK-DAG:   llvm.mlir.constant(126 : i32)
//       CHECK:   llvm.return
func.func @conversions(%a: vector<4xf8E4M3FN>, %b: f8E4M3FN, %x: vector<4xf32>,
                       %y: f32) -> (vector<4xf32>, f32, vector<4xf8E4M3FN>,
                                    f8E4M3FN) {
  %0 = arith.extf %a : vector<4xf8E4M3FN> to vector<4xf32>
  %1 = arith.extf %b : f8E4M3FN to f32
  %2 = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  %3 = arith.truncf %y : f32 to f8E4M3FN
  return %0, %1, %2, %3 : vector<4xf32>, f32, vector<4xf8E4M3FN>, f8E4M3FN
}

// -----

// Arithmetic on FP8 has no self-contained lowering: an error.
func.func @fp8_arithmetic(%a: f8E4M3FN, %b: f8E4M3FN) -> f8E4M3FN {
  // expected-error @below {{attn-lower-to-cpu: arith.mulf on a type narrower than f32 has no self-contained host lowering}}
  %0 = arith.mulf %a, %b : f8E4M3FN
  return %0 : f8E4M3FN
}

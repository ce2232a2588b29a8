// RUN: attn-opt %s --split-input-file --attn-lower-to-cpu -verify-diagnostics | FileCheck %s

// f16/bf16 <-> f32 conversions become integer arithmetic (a libgcc call on
// x86-64 without F16C / AVX-512 BF16), and 16-bit floats are moved as i16.
// CHECK-LABEL: llvm.func @conversions(
//   CHECK-NOT:   {{f16|bf16|fpext|fptrunc}}
//       CHECK:   llvm.return
func.func @conversions(%h: vector<4xf16>, %b: bf16, %x: vector<4xf32>,
                       %y: f32) -> (vector<4xf32>, f32, vector<4xf16>, bf16) {
  %0 = arith.extf %h : vector<4xf16> to vector<4xf32>
  %1 = arith.extf %b : bf16 to f32
  %2 = arith.truncf %x : vector<4xf32> to vector<4xf16>
  %3 = arith.truncf %y : f32 to bf16
  return %0, %1, %2, %3 : vector<4xf32>, f32, vector<4xf16>, bf16
}

// -----

// Arithmetic on a 16-bit float has no self-contained lowering: an error, not
// a library call in the output.
func.func @half_arithmetic(%a: f16, %b: f16) -> f16 {
  // expected-error @below {{attn-lower-to-cpu: arith.addf on a type narrower than f32 has no self-contained host lowering}}
  %0 = arith.addf %a, %b : f16
  return %0 : f16
}

// -----

func.func @half_reduction(%v: vector<4xbf16>) -> bf16 {
  // expected-error @below {{attn-lower-to-cpu: vector.reduction on a type narrower than f32 has no self-contained host lowering}}
  %0 = vector.reduction <add>, %v : vector<4xbf16> into bf16
  return %0 : bf16
}

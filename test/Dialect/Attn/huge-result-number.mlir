// RUN: not attn-opt %s 2>&1 | FileCheck %s
// RUN: not attn-compile %s -o %t 2>&1 | FileCheck %s

// Found by attn-fuzz: MLIR's parser keeps a placeholder per result number a
// use names, so `%3#2147483647` made attn-opt (and upstream mlir-opt) abort
// with "LLVM ERROR: out of memory". The tools refuse it before parsing.

// CHECK: huge-result-number.mlir:[[# @LINE + 7]]:26: error: result number 2147483647 is out of range (at most 1048576)
func.func @f(%q: memref<1x1x8x16xf16>, %k: memref<1x1x8x16xf16>,
             %v: memref<1x1x8x16xf16>, %o: memref<1x1x8x16xf16>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant dense<0.000000e+00> : vector<8x16xf32>
  %m = arith.constant dense<0.000000e+00> : vector<8xf32>
  %r:2 = "test.op"() : () -> (vector<8xf32>, vector<8xf32>)
  attn.epilogue state(%r#2147483647, %r#1, %cst : vector<8xf32>, vector<8xf32>, vector<8x16xf32>) to %o[%c0, %c0, %c0, %c0] : memref<1x1x8x16xf16>
  return
}

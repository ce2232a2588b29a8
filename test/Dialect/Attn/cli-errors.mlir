// RUN: not attn-opt %s 2>&1 | FileCheck %s

// A malformed input (Q of rank 3: the head axis is missing) is rejected at
// parse-time verification with a diagnostic that names the operand, its
// expected layout and what it got; attn-opt prints no IR and exits non-zero.

// CHECK: cli-errors.mlir:[[# @LINE + 7]]:3: error: 'attn.attention' op operand 'q' must be a rank-4 memref [B, Hq, Nq, D], but got rank 3
// CHECK-NOT: module
func.func @q_rank3(%q: memref<1x8192x128xbf16>,
                   %k: memref<1x8x8192x128xbf16>,
                   %v: memref<1x8x8192x128xbf16>,
                   %o: memref<1x32x8192x128xbf16>,
                   %lse: memref<1x32x8192xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x8192x128xbf16>,
                     memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
                 outs(%o : memref<1x32x8192x128xbf16>)
                 lse(%lse : memref<1x32x8192xf32>) {causal}
  return
}

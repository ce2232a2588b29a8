// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=head | FileCheck %s
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head hadamard=true" | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8 qk-granularity=head: bf16 attn.attention -> quantize
// Q, K, V per (batch, KV head) -> FP8 attn.attention with [B, Hkv] descales
// (the other granularities: attn-quantize-fp8-granularity.mlir). GQA Hq = 4,
// Hkv = 2: Q's scale of KV head hk covers query heads 2 hk, 2 hk + 1.
//   amax    = max |x| over the slice
//   descale = amax > 0 ? amax / 448 : 1
//   x_fp8   = truncf(x / descale)        (round to nearest even, satfinite)
// CHECK-LABEL: func.func @gqa
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[K:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[V:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[O:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[LSE:[a-z0-9]+]]: memref<2x4x8xf32>)
//       CHECK:   %[[Q8:.*]] = memref.alloc() : memref<2x4x8x16xf8E4M3FN>
//       CHECK:   %[[QD:.*]] = memref.alloc() : memref<2x2xf32>
// for b, hk: amax over h in [2 hk, 2 hk + 2), n, j
//       CHECK:   scf.for %[[B:.*]] = {{.*}} {
//       CHECK:     scf.for %[[HK:.*]] = {{.*}} {
//       CHECK:       %[[H0:.*]] = arith.muli %[[HK]], %c2
//       CHECK:       %[[B1:.*]] = arith.addi %[[B]], %c1
//       CHECK:       %[[H1:.*]] = arith.addi %[[H0]], %c2
//       CHECK:       %[[AMAX:.*]] = scf.for %{{.*}} = %[[B]] to %[[B1]]
//       CHECK:         scf.for %{{.*}} = %[[H0]] to %[[H1]]
//       CHECK:         memref.load %[[Q]]
//       CHECK:         math.absf
//       CHECK:         arith.maximumf
//       CHECK:       %[[POS:.*]] = arith.cmpf ogt, %[[AMAX]]
//       CHECK:       %[[DIV:.*]] = arith.divf %[[AMAX]], %{{.*}} : f32
//       CHECK:       %[[SCALE:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : f32
//       CHECK:       memref.store %[[SCALE]], %[[QD]][%[[B]], %[[HK]]] : memref<2x2xf32>
//       CHECK:       scf.for %{{.*}} = %[[H0]] to %[[H1]]
//       CHECK:         %[[X:.*]] = memref.load %[[Q]]
//       CHECK:         %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
//       CHECK:         %[[XS:.*]] = arith.divf %[[XF]], %[[SCALE]] : f32
//       CHECK:         %[[X8:.*]] = arith.truncf %[[XS]] : f32 to f8E4M3FN
//       CHECK:         memref.store %[[X8]], %[[Q8]]
//   CHECK-NOT:   math.ctpop
//       CHECK:   %[[K8:.*]] = memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       CHECK:   %[[KD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   %[[V8:.*]] = memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       CHECK:   %[[VD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   attn.attention ins(%[[Q8]], %[[K8]], %[[V8]] : memref<2x4x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN>) outs(%[[O]] : memref<2x4x8x16xbf16>) lse(%[[LSE]] : memref<2x4x8xf32>) descale(%[[QD]], %[[KD]], %[[VD]] : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>) {causal, scale = 5.000000e-01 : f32}
//       CHECK:   memref.dealloc %[[Q8]]
//       CHECK:   memref.dealloc %[[VD]]
//   CHECK-NOT:   attn.attention
//       CHECK:   return
// hadamard=true: Q and K elements are sum_i x_i * s_i * (-1)^popcount(i & j)
// / sqrt(16) (fixed random signs s); V is not rotated.
// HAD-LABEL: func.func @gqa
//       HAD:   %[[SIGNS:.*]] = arith.constant dense<[{{.*}}]> : vector<16xf32>
//       HAD:   scf.for
//       HAD:     arith.andi
//       HAD:     math.ctpop
//       HAD:     %[[S:.*]] = vector.extract %[[SIGNS]][%{{.*}}] : f32 from vector<16xf32>
//       HAD:     arith.negf %[[S]]
//       HAD:   %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
//       HAD:   arith.mulf %{{.*}}, %[[QUARTER]] : f32
//       HAD:   memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       HAD:   math.ctpop
//       HAD:   memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//   HAD-NOT:   math.ctpop
//       HAD:   attn.attention
func.func @gqa(%q: memref<2x4x8x16xbf16>, %k: memref<2x2x8x16xbf16>,
               %v: memref<2x2x8x16xbf16>, %o: memref<2x4x8x16xbf16>,
               %lse: memref<2x4x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x4x8x16xbf16>, memref<2x2x8x16xbf16>,
                     memref<2x2x8x16xbf16>) outs(%o : memref<2x4x8x16xbf16>)
                 lse(%lse : memref<2x4x8xf32>) {causal, scale = 0.5 : f32}
  return
}

// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=head --cse | FileCheck %s
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8 qk-granularity=head: bf16 attn.attention -> quantize
// Q, K, V per (batch, KV head) -> FP8 attn.attention with [B, Hkv] descales
// (the other granularities: attn-quantize-fp8-granularity.mlir). GQA Hq = 4,
// Hkv = 2: Q's scale of KV head hk covers query heads 2 hk, 2 hk + 1.
// Per operand, four grids (scf.forall on #gpu.block around scf.forall on
// #gpu.thread: loops on the host, kernels on the GPU):
//   amax[g]    = 0
//   amax[g]    = atomic max over threads of bits(max |x|), x strided over g
//   descale[e] = amax > 0 ? amax / 448 : 1
//   x_fp8      = truncf(x / descale)  (round to nearest even, satfinite)
// CHECK-LABEL: func.func @gqa
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[K:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[V:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[O:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[LSE:[a-z0-9]+]]: memref<2x4x8xf32>)
//       CHECK:   %[[Q8:.*]] = memref.alloc() : memref<2x4x8x16xf8E4M3FN>
//       CHECK:   %[[QD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   %[[AMAX:.*]] = memref.alloc() : memref<2x2xi32>
// amax[b, hk] = 0
//       CHECK:   scf.forall (%[[B:.*]], %[[HK:.*]]) in (2, 2) {
//       CHECK:     scf.forall (%{{.*}}) in (1) {
//       CHECK:       memref.store %{{.*}}, %[[AMAX]][%[[B]], %[[HK]]] : memref<2x2xi32>
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// One CTA of 256 threads per (b, hk) (2 x 8 x 16 elements: one CTA); the
// group spans whole rows, so thread t takes 16-byte chunks (8 elements) t,
// t + 256, .. of h in [2 hk, 2 hk + 2), n, and chunk j / 8 of the row.
//       CHECK:   scf.forall (%[[B:.*]], %[[HK:.*]], %[[C:.*]]) in (2, 2, 1) {
//       CHECK:     scf.forall (%[[T:.*]]) in (256) {
//       CHECK:       %[[H0:.*]] = arith.muli %[[HK]], %c2
//       CHECK:       %[[C0:.*]] = arith.muli %[[C]], %c256
//       CHECK:       %[[FIRST:.*]] = arith.addi %[[C0]], %[[T]]
//       CHECK:       %[[MAX:.*]] = scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c256 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
//       CHECK:         %[[H:.*]] = arith.addi %[[H0]], %{{.*}}
//       CHECK:         %[[J:.*]] = arith.muli %{{.*}}, %c8
//       CHECK:         %[[X:.*]] = vector.load %[[Q]][%{{.*}}, %[[H]], %{{.*}}, %[[J]]] : memref<2x4x8x16xbf16>, vector<8xbf16>
//       CHECK:         arith.extf %[[X]] : vector<8xbf16> to vector<8xf32>
//       CHECK:         %[[ABS:.*]] = math.absf
//       CHECK:         arith.maximumf %[[ACC]], %[[ABS]]
// CHECK-COUNT-7:       arith.maximumf
//       CHECK:         scf.yield
//       CHECK:       %[[BITS:.*]] = arith.bitcast %[[MAX]] : f32 to i32
//       CHECK:       memref.atomic_rmw maxs %[[BITS]], %[[AMAX]][%[[B]], %[[HK]]] : (i32, memref<2x2xi32>) -> i32
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
// descale[b, hk] = amax > 0 ? amax / 448 : 1
//       CHECK:   scf.forall (%[[B:.*]], %[[HK:.*]]) in (2, 2) {
//       CHECK:     %[[BITS:.*]] = memref.load %[[AMAX]][%[[B]], %[[HK]]]
//       CHECK:     %[[A:.*]] = arith.bitcast %[[BITS]] : i32 to f32
//       CHECK:     %[[POS:.*]] = arith.cmpf ogt, %[[A]]
//       CHECK:     %[[DIV:.*]] = arith.divf %[[A]], %{{.*}} : f32
//       CHECK:     %[[SCALE:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : f32
//       CHECK:     memref.store %[[SCALE]], %[[QD]][%[[B]], %[[HK]]] : memref<2x2xf32>
//       CHECK:   memref.dealloc %[[AMAX]]
// CTAs of 16 rows (b, h, row block), one thread per column j looping over
// the block's rows (8 here).
//       CHECK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[NB:.*]]) in (2, 4, 1) {
//       CHECK:     scf.forall (%[[J:.*]]) in (16) {
//       CHECK:       %[[N0:.*]] = arith.muli %[[NB]], %c16
//       CHECK:       %[[N1:.*]] = arith.addi %[[N0]], %c16
//       CHECK:       %[[NE:.*]] = arith.minui %[[N1]], %c8
//       CHECK:       scf.for %[[N:.*]] = %[[N0]] to %[[NE]] step %c1 {
//       CHECK:       %[[X:.*]] = memref.load %[[Q]][%[[B]], %[[H]], %[[N]], %[[J]]]
//       CHECK:       %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
//       CHECK:       %[[HK:.*]] = arith.divui %[[H]], %c2
//       CHECK:       %[[S:.*]] = memref.load %[[QD]][%[[B]], %[[HK]]] : memref<2x2xf32>
//       CHECK:       %[[XS:.*]] = arith.divf %[[XF]], %[[S]] : f32
//       CHECK:       %[[X8:.*]] = arith.truncf %[[XS]] : f32 to f8E4M3FN
//       CHECK:       memref.store %[[X8]], %[[Q8]][%[[B]], %[[H]], %[[N]], %[[J]]]
//       CHECK:       }
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
//   CHECK-NOT:   arith.xori
//       CHECK:   %[[K8:.*]] = memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       CHECK:   %[[KD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   memref.atomic_rmw maxs
// V is stored as V^T ([B, Hkv, D, Nk], rows padded to 16 bytes: Nk 8 -> 16)
// and written through its transposed view: the FP8 attention's V has unit
// stride along Nk.
//       CHECK:   %[[VT:.*]] = memref.alloc() : memref<2x2x16x16xf8E4M3FN>
//       CHECK:   %[[ROWS:.*]] = memref.subview %[[VT]][0, 0, 0, 0] [2, 2, 16, 8] [1, 1, 1, 1]
//       CHECK:   %[[V8:.*]] = memref.transpose %[[ROWS]] (d0, d1, d2, d3) -> (d0, d1, d3, d2) : memref<2x2x16x8xf8E4M3FN, strided<[512, 256, 16, 1]>> to memref<2x2x8x16xf8E4M3FN, strided<[512, 256, 1, 16]>>
//       CHECK:   %[[VD:.*]] = memref.alloc() : memref<2x2xf32>
// V^T through a tile in shared memory: CTAs of 256 threads per 128 keys of
// a head. Phase 1: 8-element chunks of V's rows (keys past Nk: zeros) are
// quantized and stored transposed into the tile; phase 2 copies the tile's
// rows into V^T's storage with 16-byte stores (its padding included).
// The CTA's one descale d (V per head) divides as x r, corrected by two
// fmas (r = 1 / d; -0 kept), where d is in [2^-126, 2^126]; by division
// otherwise.
//       CHECK:   scf.forall (%[[NB:.*]], %[[HK:.*]], %[[B:.*]]) in (1, 2, 2) {
//       CHECK:     %[[TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     scf.forall (%{{.*}}) in (256) {
//       CHECK:       %[[D:.*]] = memref.load %[[VD]][%[[B]], %{{.*}}] : memref<2x2xf32>
//   CHECK-DAG:       %[[LE:.*]] = arith.cmpf ole, %[[D]], %{{.*}}
//   CHECK-DAG:       %[[GE:.*]] = arith.cmpf oge, %[[D]], %{{.*}}
//       CHECK:       %[[NORMAL:.*]] = arith.andi %[[GE]], %[[LE]]
//       CHECK:       scf.if %[[NORMAL]] {
//       CHECK:         %[[NEGD:.*]] = arith.negf %[[D]]
//       CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %[[D]]
//       CHECK:         scf.for
//       CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c8
//       CHECK:           %[[CH:.*]] = scf.if %[[IN]] -> (vector<8xf8E4M3FN>) {
//       CHECK:             vector.load %[[V]][%[[B]], %[[HK]], %{{.*}}, %{{.*}}] : memref<2x2x8x16xbf16>, vector<8xbf16>
//       CHECK:             %[[X:.*]] = vector.extract
//       CHECK:             %[[QX:.*]] = arith.mulf %[[X]], %[[R]]
//       CHECK:             %[[RES:.*]] = math.fma %[[NEGD]], %[[QX]], %[[X]]
//       CHECK:             %[[COR:.*]] = math.fma %[[RES]], %[[R]], %[[QX]]
//       CHECK:             %[[Z:.*]] = arith.cmpf oeq, %[[X]]
//       CHECK:             %[[SEL:.*]] = arith.select %[[Z]], %[[X]], %[[COR]]
//       CHECK:             arith.truncf %[[SEL]] : f32 to f8E4M3FN
// CHECK-COUNT-7:           arith.truncf %{{.*}} : f32 to f8E4M3FN
//       CHECK:           } else {
//       CHECK:             arith.constant dense<0.000000e+00> : vector<8xf8E4M3FN>
// CHECK-COUNT-8:         memref.store %{{.*}}, %[[TILE]][%{{.*}}, %{{.*}}] : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:       } else {
//       CHECK:         scf.for
//       CHECK:           vector.load %[[V]]
// CHECK-COUNT-8:         arith.divf %{{.*}}, %[[D]] : f32
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     scf.forall (%{{.*}}) in (256) {
//       CHECK:       %[[ROW:.*]] = vector.load %[[TILE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
//       CHECK:       vector.store %[[ROW]], %[[VT]][%[[B]], %[[HK]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x2x16x16xf8E4M3FN>, vector<16xf8E4M3FN>
//       CHECK:   attn.attention ins(%[[Q8]], %[[K8]], %[[V8]] : memref<2x4x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN, strided<[512, 256, 1, 16]>>) outs(%[[O]] : memref<2x4x8x16xbf16>) lse(%[[LSE]] : memref<2x4x8xf32>) descale(%[[QD]], %[[KD]], %[[VD]] : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>) {causal, scale = 5.000000e-01 : f32}
//       CHECK:   memref.dealloc %[[Q8]]
//       CHECK:   memref.dealloc %[[K8]]
//       CHECK:   memref.dealloc %[[VT]]
//       CHECK:   memref.dealloc %[[VD]]
//   CHECK-NOT:   attn.attention
//       CHECK:   return
// hadamard=true: Q and K elements are sum_i x_i * s_i * (-1)^parity(i & j)
// / sqrt(16) (fixed random signs s, bit i of the integer 36005 set where
// s_i = -1; the parity of the 4 bits of i & j by x ^= x >> 2, x ^= x >> 1),
// in the amax grid and the quantize grid; V is not rotated.
// HAD-LABEL: func.func @gqa
//       HAD:   scf.for
//       HAD:     %[[IJ:.*]] = arith.andi
//       HAD:     %[[S2:.*]] = arith.shrui %[[IJ]], %c2_i32
//       HAD:     %[[X2:.*]] = arith.xori %[[IJ]], %[[S2]]
//       HAD:     %[[S1:.*]] = arith.shrui %[[X2]], %c1_i32
//       HAD:     %[[X1:.*]] = arith.xori %[[X2]], %[[S1]]
//       HAD:     %[[PAR:.*]] = arith.andi %[[X1]], %c1_i32
//       HAD:     %[[ODD:.*]] = arith.cmpi ne, %[[PAR]]
//       HAD:     %[[SIGNS:.*]] = arith.constant 36005 : i64
//       HAD:     %[[SHIFTED:.*]] = arith.shrui %[[SIGNS]], %{{.*}} : i64
//       HAD:     %[[BIT:.*]] = arith.andi %[[SHIFTED]], %c1_i64
//       HAD:     %[[NEG:.*]] = arith.cmpi ne, %[[BIT]]
//       HAD:     %[[FLIP:.*]] = arith.xori %[[ODD]], %[[NEG]] : i1
//       HAD:     %[[H:.*]] = arith.select %[[FLIP]], %{{.*}}, %{{.*}} : f32
//       HAD:     arith.mulf %{{.*}}, %[[H]] : f32
//       HAD:   %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
//       HAD:   arith.mulf %{{.*}}, %[[QUARTER]] : f32
//       HAD:   memref.atomic_rmw maxs
//       HAD:   scf.forall (%{{.*}}) in (16) {
//       HAD:     arith.xori
//       HAD:     arith.truncf
//       HAD:   memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       HAD:   arith.xori
//       HAD:   memref.alloc() : memref<2x2x16x16xf8E4M3FN>
//   HAD-NOT:   arith.xori
//       HAD:   attn.attention
func.func @gqa(%q: memref<2x4x8x16xbf16>, %k: memref<2x2x8x16xbf16>,
               %v: memref<2x2x8x16xbf16>, %o: memref<2x4x8x16xbf16>,
               %lse: memref<2x4x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x4x8x16xbf16>, memref<2x2x8x16xbf16>,
                     memref<2x2x8x16xbf16>) outs(%o : memref<2x4x8x16xbf16>)
                 lse(%lse : memref<2x4x8xf32>) {causal, scale = 0.5 : f32}
  return
}

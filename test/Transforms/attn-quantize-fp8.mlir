// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=head --cse | FileCheck %s
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8 qk-granularity=head: bf16 attn.attention -> quantize
// Q, K, V per (batch, KV head) -> FP8 attn.attention with [B, Hkv] descales
// (the other granularities: attn-quantize-fp8-granularity.mlir). GQA Hq = 4,
// Hkv = 2: Q's scale of KV head hk covers query heads 2 hk, 2 hk + 1.
// Two launches (grids of scf.forall on #gpu.block around scf.forall on
// #gpu.thread: loops on the host, kernels on the GPU):
//   1. every amax in one grid: per operand, each (batch, KV head) group cut
//      across CTAs of 256 threads; a thread's max |x| over its 16-byte
//      chunks into a workgroup buffer, the CTA's max (two levels of 16),
//      stored by thread 0 to partials[group, cta];
//   2. per operand, its copy: the descale from the group's partials
//      (amax > 0 ? amax / 448 : 1; stored by one CTA per entry), then
//      x_fp8 = truncf(x / descale) (round to nearest even, satfinite).
// CHECK-LABEL: func.func @gqa
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[K:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[V:[a-z0-9]+]]: memref<2x2x8x16xbf16>, %[[O:[a-z0-9]+]]: memref<2x4x8x16xbf16>, %[[LSE:[a-z0-9]+]]: memref<2x4x8xf32>)
//       CHECK:   %[[Q8:.*]] = memref.alloc() : memref<2x4x8x16xf8E4M3FN>
//       CHECK:   %[[QD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   %[[QP:.*]] = memref.alloc() : memref<2x2x1xf32>
//       CHECK:   %[[K8:.*]] = memref.alloc() : memref<2x2x8x16xf8E4M3FN>
//       CHECK:   %[[KD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   %[[KP:.*]] = memref.alloc() : memref<2x2x1xf32>
// V is stored as V^T ([B, Hkv, D, Nk], rows padded to 16 bytes: Nk 8 -> 16)
// and written through its transposed view: the FP8 attention's V has unit
// stride along Nk.
//       CHECK:   %[[VT:.*]] = memref.alloc() : memref<2x2x16x16xf8E4M3FN>
//       CHECK:   %[[ROWS:.*]] = memref.subview %[[VT]][0, 0, 0, 0] [2, 2, 16, 8] [1, 1, 1, 1]
//       CHECK:   %[[V8:.*]] = memref.transpose %[[ROWS]] (d0, d1, d2, d3) -> (d0, d1, d3, d2) : memref<2x2x16x8xf8E4M3FN, strided<[512, 256, 16, 1]>> to memref<2x2x8x16xf8E4M3FN, strided<[512, 256, 1, 16]>>
//       CHECK:   %[[VD:.*]] = memref.alloc() : memref<2x2xf32>
//       CHECK:   %[[VP:.*]] = memref.alloc() : memref<2x2x1xf32>
// Launch 1: 4 CTAs per operand (one per (b, hk): 2 x 8 x 16 elements of Q
// are 32 chunks), Q's first. Q's group hk covers heads 2 hk, 2 hk + 1.
//   CHECK-NOT:   memref.atomic_rmw
//       CHECK:   scf.forall (%[[ID:.*]]) in (12) {
//       CHECK:     %[[PART:.*]] = memref.alloca() : memref<256xf32, #gpu.address_space<workgroup>>
//       CHECK:     scf.forall (%[[T:.*]]) in (256) {
//       CHECK:       %[[ISQ:.*]] = arith.cmpi ult, %[[ID]], %c4
//       CHECK:       scf.if %[[ISQ]] {
//       CHECK:         %[[H0:.*]] = arith.muli %{{.*}}, %c2
//       CHECK:         %[[MAX:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
//       CHECK:           %[[H:.*]] = arith.addi %[[H0]], %{{.*}}
//       CHECK:           %[[J:.*]] = arith.muli %{{.*}}, %c8
//       CHECK:           %[[X:.*]] = vector.load %[[Q]][%{{.*}}, %[[H]], %{{.*}}, %[[J]]] : memref<2x4x8x16xbf16>, vector<8xbf16>
//       CHECK:           arith.extf %[[X]] : vector<8xbf16> to vector<8xf32>
//       CHECK:           %[[ABS:.*]] = math.absf
//       CHECK:           arith.maximumf %[[ACC]], %[[ABS]]
// CHECK-COUNT-7:         arith.maximumf
//       CHECK:           scf.yield
//       CHECK:         memref.store %[[MAX]], %[[PART]][%[[T]]]
//       CHECK:       } else {
//       CHECK:         %[[ISK:.*]] = arith.cmpi ult, %[[ID]], %c8
//       CHECK:         scf.if %[[ISK]] {
//       CHECK:           vector.load %[[K]]
//       CHECK:         } else {
//       CHECK:           vector.load %[[V]]
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     scf.forall (%{{.*}}) in (16) {
//       CHECK:     scf.forall (%{{.*}}) in (1) {
//       CHECK:     scf.forall (%[[T:.*]]) in (256) {
//       CHECK:       %[[AMAX:.*]] = memref.load %[[PART]][%c0]
//       CHECK:       scf.if
//       CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
//       CHECK:         scf.if %[[FIRST]] {
//       CHECK:           memref.store %[[AMAX]], %[[QP]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x2x1xf32>
//       CHECK:           memref.store %[[AMAX]], %[[KP]]
//       CHECK:           memref.store %[[AMAX]], %[[VP]]
//       CHECK:   } {mapping = [#gpu.block<x>]}
// Launch 2, Q: CTAs of 16 rows (b, h, row block); one thread takes the
// descale of KV head h / 2 from its partials and stores it where h is the
// group's first head and the rows are the first; one thread per column j
// loops over the block's rows (8 here), dividing as x r corrected by two
// fmas (r = 1 / d) where d is in [2^-88, 2^126], by division otherwise.
//       CHECK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[NB:.*]]) in (2, 4, 1) {
//       CHECK:     %[[SC:.*]] = memref.alloca() : memref<1xf32, #gpu.address_space<workgroup>>
//       CHECK:     %[[N0:.*]] = arith.muli %[[NB]], %c16
//       CHECK:     %[[N1:.*]] = arith.addi %[[N0]], %c16
//       CHECK:     %[[NE:.*]] = arith.minui %[[N1]], %c8
//       CHECK:     scf.forall (%{{.*}}) in (1) {
//       CHECK:       %[[HK:.*]] = arith.divui %[[H]], %c2
//       CHECK:       %[[A:.*]] = scf.for %[[C:.*]] = %c0 to %c1 step %c1 iter_args(%[[M:.*]] = %{{.*}}) -> (f32) {
//       CHECK:         %[[P:.*]] = memref.load %[[QP]][%[[B]], %[[HK]], %[[C]]] : memref<2x2x1xf32>
//       CHECK:         arith.maximumf %[[M]], %[[P]]
//       CHECK:       %[[POS:.*]] = arith.cmpf ogt, %[[A]]
//       CHECK:       %[[DIV:.*]] = arith.divf %[[A]], %{{.*}} : f32
//       CHECK:       %[[S:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : f32
//       CHECK:       memref.store %[[S]], %[[SC]][%c0]
//       CHECK:       %[[HR:.*]] = arith.remui %[[H]], %c2
//       CHECK:       %[[H1:.*]] = arith.cmpi eq, %[[HR]], %c0
//       CHECK:       %[[R0:.*]] = arith.cmpi eq, %[[NB]], %c0
//       CHECK:       %[[W:.*]] = arith.andi %[[R0]], %[[H1]]
//       CHECK:       scf.if %[[W]] {
//       CHECK:         memref.store %[[S]], %[[QD]][%[[B]], %[[HK]]] : memref<2x2xf32>
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     scf.forall (%[[J:.*]]) in (16) {
//       CHECK:       %[[D:.*]] = memref.load %[[SC]][%c0]
//       CHECK:       scf.if
//       CHECK:         %[[NEGD:.*]] = arith.negf %[[D]]
//       CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %[[D]]
//       CHECK:         scf.for %[[N:.*]] = %[[N0]] to %[[NE]] step %c1 {
//       CHECK:           %[[X:.*]] = memref.load %[[Q]][%[[B]], %[[H]], %[[N]], %[[J]]]
//       CHECK:           %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
//       CHECK:           %[[XR:.*]] = arith.mulf %[[XF]], %[[R]]
//       CHECK:           %[[RES:.*]] = math.fma %[[NEGD]], %[[XR]], %[[XF]]
//       CHECK:           %[[COR:.*]] = math.fma %[[RES]], %[[R]], %[[XR]]
//       CHECK:           %[[Z:.*]] = arith.cmpf oeq, %[[XF]]
//       CHECK:           %[[XS:.*]] = arith.select %[[Z]], %[[XF]], %[[COR]]
//       CHECK:           %[[X8:.*]] = arith.truncf %[[XS]] : f32 to f8E4M3FN
//       CHECK:           memref.store %[[X8]], %[[Q8]][%[[B]], %[[H]], %[[N]], %[[J]]]
//       CHECK:       } else {
//       CHECK:           arith.divf %{{.*}}, %[[D]] : f32
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
//       CHECK:   memref.dealloc %[[QP]]
//   CHECK-NOT:   arith.xori
//       CHECK:   memref.load %[[KP]]
//       CHECK:   memref.dealloc %[[KP]]
// Launch 2, V: V^T through a tile in shared memory: CTAs of 256 threads
// per 128 keys of a head. Phase 0: one thread takes the head's descale d
// from its partials (stored by the head's first CTA); phase 1: 8-element
// chunks of V's rows (keys past Nk: zeros) are quantized and stored
// transposed into the tile; phase 2 copies the tile's rows into V^T's
// storage with 16-byte stores (its padding included). d divides as x r,
// corrected by two fmas (r = 1 / d; -0 kept), where d is in [2^-88,
// 2^126]; by division otherwise.
//       CHECK:   scf.forall (%[[NB:.*]], %[[HK:.*]], %[[B:.*]]) in (1, 2, 2) {
//       CHECK:     %[[TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<16x128xf8E4M3FN, #gpu.address_space<workgroup>>
//       CHECK:     %[[SC:.*]] = memref.alloca() : memref<1xf32, #gpu.address_space<workgroup>>
//       CHECK:     scf.forall (%[[T:.*]]) in (1) {
//       CHECK:       %[[HKE:.*]] = arith.divui %[[HK]], %c1
//       CHECK:       memref.load %[[VP]][%[[B]], %[[HKE]], %{{.*}}] : memref<2x2x1xf32>
//       CHECK:       %[[S:.*]] = arith.select
//       CHECK:       memref.store %[[S]], %[[SC]][%[[T]]]
//       CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %[[NB]], %c0
//       CHECK:       scf.if %[[FIRST]] {
//       CHECK:         memref.store %[[S]], %[[VD]][%[[B]], %[[HKE]]] : memref<2x2xf32>
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     scf.forall (%{{.*}}) in (256) {
//       CHECK:       %[[D:.*]] = memref.load %[[SC]][%c0]
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
//       CHECK:   memref.dealloc %[[VP]]
//       CHECK:   attn.attention
//  CHECK-SAME:   ins(%[[Q8]], %[[K8]], %[[V8]] : memref<2x4x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN>, memref<2x2x8x16xf8E4M3FN, strided<[512, 256, 1, 16]>>) outs(%[[O]] : memref<2x4x8x16xbf16>) lse(%[[LSE]] : memref<2x4x8xf32>) descale(%[[QD]], %[[KD]], %[[VD]] : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>) {causal, scale = 5.000000e-01 : f32}
//       CHECK:   memref.dealloc %[[Q8]]
//       CHECK:   memref.dealloc %[[K8]]
//       CHECK:   memref.dealloc %[[VT]]
//       CHECK:   memref.dealloc %[[VD]]
//   CHECK-NOT:   attn.attention
//       CHECK:   return
// hadamard=true: Q and K elements are sum_i x_i * s_i * (-1)^parity(i & j)
// / sqrt(16) (fixed random signs s, bit i of the integer 36005 set where
// s_i = -1; the parity of the 4 bits of i & j by x ^= x >> 2, x ^= x >> 1),
// in the amax launch and the quantize grids; V is not rotated.
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
//       HAD:   memref.store %{{.*}}, %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
//       HAD:   arith.xori
//       HAD:   memref.store %{{.*}}, %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
// V's amax (the third program) is not rotated.
//   HAD-NOT:   arith.xori
//       HAD:   memref.store %{{.*}}, %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
//       HAD:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 1) {
//       HAD:     arith.xori
//       HAD:     arith.truncf
//       HAD:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 1) {
//       HAD:     arith.xori
//       HAD:     arith.truncf
//       HAD:   scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 2) {
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

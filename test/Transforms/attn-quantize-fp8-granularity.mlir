// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4" --cse | FileCheck %s --check-prefix=BLOCK
// RUN: attn-opt %s --attn-quantize-fp8 --cse | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-quantize-fp8=qk-granularity=tensor --cse | FileCheck %s --check-prefix=TENSOR
// RUN: attn-opt %s --attn-quantize-fp8="qk-granularity=head v-granularity=channel" --cse | FileCheck %s --check-prefix=CHANNEL
// RUN: attn-opt %s --attn-quantize-fp8="block-m=4 block-n=4 hadamard=true" --cse | FileCheck %s --check-prefix=HAD

// attn-quantize-fp8's scale groups. B = 1, Hq = 4, Hkv = 2, Nq = 10, Nk = 6,
// D = 16. Every group: amax = max |x| over it, descale = amax / 448 (1 if
// amax = 0), x_fp8 = truncf(x / descale).

// qk-granularity=block (the default), block-m = block-n = 4: Q per 4 rows of
// one query head, [B, Hq, ceil(10 / 4)] = [1, 4, 3] (the last block has 2
// rows); K per 4 keys of one KV head, [1, 2, ceil(6 / 4)] = [1, 2, 2]; V per
// KV head, [1, 2]. The FP8 attention records the block sizes.
// BLOCK-LABEL: func.func @gqa
//  BLOCK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x4x10x16xbf16>
//       BLOCK:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       BLOCK:   %[[QD:.*]] = memref.alloc() : memref<1x4x3xf32>
// for b, h, block i: rows [4 i, min(4 i + 4, 10))
//       BLOCK:   scf.for %[[B:.*]] = %c0 to %c1
//       BLOCK:     scf.for %[[H:.*]] = %c0 to %c4
//       BLOCK:       scf.for %[[I:.*]] = %c0 to %c3
//       BLOCK:         %[[N0:.*]] = arith.muli %[[I]], %c4
//       BLOCK:         %[[N4:.*]] = arith.addi %[[N0]], %c4
//       BLOCK:         %[[N1:.*]] = arith.minui %[[N4]], %c10
//       BLOCK:         %[[B1:.*]] = arith.addi %[[B]], %c1
//       BLOCK:         %[[H1:.*]] = arith.addi %[[H]], %c1
//       BLOCK:         %[[AMAX:.*]] = scf.for %{{.*}} = %[[B]] to %[[B1]]
//       BLOCK:           scf.for %{{.*}} = %[[H]] to %[[H1]]
//       BLOCK:             scf.for %{{.*}} = %[[N0]] to %[[N1]]
//       BLOCK:               scf.for %{{.*}} = %c0 to %c16
//       BLOCK:                 memref.load %[[Q]]
//       BLOCK:                 math.absf
//       BLOCK:                 arith.maximumf
//       BLOCK:         %[[DIV:.*]] = arith.divf %[[AMAX]], %{{.*}} : f32
//       BLOCK:         %[[SCALE:.*]] = arith.select %{{.*}}, %[[DIV]], %{{.*}} : f32
//       BLOCK:         memref.store %[[SCALE]], %[[QD]][%[[B]], %[[H]], %[[I]]] : memref<1x4x3xf32>
//       BLOCK:         scf.for %{{.*}} = %[[B]] to %[[B1]]
//       BLOCK:           scf.for %{{.*}} = %[[H]] to %[[H1]]
//       BLOCK:             scf.for %{{.*}} = %[[N0]] to %[[N1]]
//       BLOCK:               arith.divf %{{.*}}, %[[SCALE]] : f32
//       BLOCK:               arith.truncf %{{.*}} : f32 to f8E4M3FN
//       BLOCK:   %[[K8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       BLOCK:   %[[KD:.*]] = memref.alloc() : memref<1x2x2xf32>
//       BLOCK:         arith.minui %{{.*}}, %c6
//       BLOCK:   %[[V8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       BLOCK:   %[[VD:.*]] = memref.alloc() : memref<1x2xf32>
//       BLOCK:   attn.attention ins(%[[Q8]], %[[K8]], %[[V8]] : {{.*}}) descale(%[[QD]], %[[KD]], %[[VD]] : memref<1x4x3xf32>, memref<1x2x2xf32>, memref<1x2xf32>) {k_descale_block = 4 : i64, q_descale_block = 4 : i64}
//   BLOCK-NOT:   math.ctpop

// Block sizes 0 (the default) are the FP8 tensor-core tile's: BLOCK_N = 128
// and, for D = 16 and Nq = 10, BLOCK_M = 128: one block per head here.
// DEFAULT-LABEL: func.func @gqa
//       DEFAULT:   attn.attention {{.*}} descale({{.*}} : memref<1x4x1xf32>, memref<1x2x1xf32>, memref<1x2xf32>) {k_descale_block = 128 : i64, q_descale_block = 128 : i64}

// qk-granularity=tensor: one amax over all of Q (and of K), repeated into
// the [B, Hkv] operand; no block attributes.
// TENSOR-LABEL: func.func @gqa
//       TENSOR:   %[[Q8:.*]] = memref.alloc() : memref<1x4x10x16xf8E4M3FN>
//       TENSOR:   %[[ONE:.*]] = memref.alloc() : memref<1x1xf32>
//       TENSOR:   scf.for %{{.*}} = %c0 to %c1
//       TENSOR:     scf.for %{{.*}} = %c0 to %c1
//       TENSOR:       scf.for %{{.*}} = %c0 to %c1
//       TENSOR:         scf.for %{{.*}} = %c0 to %c4
//       TENSOR:           scf.for %{{.*}} = %c0 to %c10
//       TENSOR:             scf.for %{{.*}} = %c0 to %c16
//       TENSOR:   %[[QD:.*]] = memref.alloc() : memref<1x2xf32>
//       TENSOR:   %[[X:.*]] = memref.load %[[ONE]][%c0, %c0] : memref<1x1xf32>
//       TENSOR:   scf.for %[[B:.*]] = %c0 to %c1
//       TENSOR:     scf.for %[[G:.*]] = %c0 to %c2
//       TENSOR:       memref.store %[[X]], %[[QD]][%[[B]], %[[G]]] : memref<1x2xf32>
//       TENSOR:   memref.dealloc %[[ONE]]
//       TENSOR:   attn.attention {{.*}} descale(%[[QD]], %{{.*}}, %{{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>){{$}}

// v-granularity=channel: V per (b, KV head, column c), amax over the Nk
// rows of column c: [1, 2, 16].
// CHANNEL-LABEL: func.func @gqa
//  CHANNEL-SAME:   %{{[a-z0-9]+}}: memref<1x2x6x16xbf16>, %[[V:[a-z0-9]+]]: memref<1x2x6x16xbf16>
//       CHANNEL:   %[[V8:.*]] = memref.alloc() : memref<1x2x6x16xf8E4M3FN>
//       CHANNEL:   %[[VD:.*]] = memref.alloc() : memref<1x2x16xf32>
//       CHANNEL:   scf.for %[[B:.*]] = %c0 to %c1
//       CHANNEL:     scf.for %[[G:.*]] = %c0 to %c2
//       CHANNEL:       scf.for %[[C:.*]] = %c0 to %c16
//       CHANNEL:         %[[C1:.*]] = arith.addi %[[C]], %c1
//       CHANNEL:         scf.for %{{.*}} = %c0 to %c6
//       CHANNEL:           scf.for %{{.*}} = %[[C]] to %[[C1]]
//       CHANNEL:             memref.load %[[V]]
//       CHANNEL:         memref.store %{{.*}}, %[[VD]][%[[B]], %[[G]], %[[C]]] : memref<1x2x16xf32>
//       CHANNEL:   attn.attention {{.*}} descale({{.*}} : memref<1x2xf32>, memref<1x2xf32>, memref<1x2x16xf32>){{$}}

// hadamard=true with blocks: amax and quantization of the rotated rows
// (sum over the 16 columns with signs) in each block of Q and K; V plain.
// HAD-LABEL: func.func @gqa
//       HAD:   memref.alloc() : memref<1x4x3xf32>
//       HAD:   arith.minui
//       HAD:   math.ctpop
//       HAD:   memref.alloc() : memref<1x2x2xf32>
//       HAD:   math.ctpop
//       HAD:   memref.alloc() : memref<1x2xf32>
//   HAD-NOT:   math.ctpop
//       HAD:   attn.attention
func.func @gqa(%q: memref<1x4x10x16xbf16>, %k: memref<1x2x6x16xbf16>,
               %v: memref<1x2x6x16xbf16>, %o: memref<1x4x10x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x10x16xbf16>, memref<1x2x6x16xbf16>,
                     memref<1x2x6x16xbf16>) outs(%o : memref<1x4x10x16xbf16>)
  return
}

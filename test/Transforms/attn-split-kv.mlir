// RUN: attn-opt %s --split-input-file --attn-split-kv=splits=4 | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-split-kv=splits=1 | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s --split-input-file --attn-split-kv | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --split-input-file --attn-split-kv="splits=0 sm-count=16" | FileCheck %s --check-prefix=SM16
// RUN: not attn-opt %s --attn-split-kv=splits=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not attn-opt %s --attn-split-kv=splits=257 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not attn-opt %s --attn-split-kv=sm-count=0 2>&1 | FileCheck %s --check-prefix=SM0

// attn-split-kv: attn.attention -> split-KV (flash-decoding)
//   o_part   = memref.alloc : [S, B, Hq, Nq, D] f32      the workspace
//   lse_part = memref.alloc : [S, B, Hq, Nq] f32
//   attn.partial_attention Q, K, V -> (o_part, lse_part)  per split s:
//       O_s = softmax(Q K_s^T) V_s, LSE_s (-inf for a split without keys)
//   attn.decode_combine (o_part, lse_part) -> O, LSE      LSE = logsumexp_s LSE_s,
//       O = sum_s exp(LSE_s - LSE) O_s
//   memref.dealloc o_part, lse_part

// NEG: error: attn-split-kv: splits must be in [0, 256] (0: chosen per shape) and sm-count at least 1, but got splits=-1 sm-count=132
// BIG: error: attn-split-kv: splits must be in [0, 256] (0: chosen per shape) and sm-count at least 1, but got splits=257 sm-count=132
// SM0: error: attn-split-kv: splits must be in [0, 256] (0: chosen per shape) and sm-count at least 1, but got splits=0 sm-count=0

// Decode with GQA, B1 Hq16 Hkv8 Nq1 Nk4096: W = B * Hq * ceil(Nq / 64) = 16
// CTAs of work; splits=0 takes S = min(ceil(132 / 16), 4096 / 256, 128) = 9;
// with 16 SMs, 16 CTAs fill them: unsplit.
// CHECK-LABEL: func.func @decode
//  CHECK-SAME:   (%[[Q:.*]]: memref<1x16x1x128xbf16>, %[[K:.*]]: memref<1x8x4096x128xbf16>, %[[V:.*]]: memref<1x8x4096x128xbf16>, %[[O:.*]]: memref<1x16x1x128xbf16>, %[[LSE:.*]]: memref<1x16x1xf32>)
//       CHECK:   %[[OP:.*]] = memref.alloc() : memref<4x1x16x1x128xf32>
//       CHECK:   %[[LP:.*]] = memref.alloc() : memref<4x1x16x1xf32>
//       CHECK:   attn.partial_attention ins(%[[Q]], %[[K]], %[[V]] : memref<1x16x1x128xbf16>, memref<1x8x4096x128xbf16>, memref<1x8x4096x128xbf16>)
//  CHECK-SAME:       outs(%[[OP]], %[[LP]] : memref<4x1x16x1x128xf32>, memref<4x1x16x1xf32>) {causal, scale = 1.250000e-01 : f32}
//       CHECK:   attn.decode_combine ins(%[[OP]], %[[LP]] : memref<4x1x16x1x128xf32>, memref<4x1x16x1xf32>) outs(%[[O]] : memref<1x16x1x128xbf16>) lse(%[[LSE]] : memref<1x16x1xf32>)
//       CHECK:   memref.dealloc %[[OP]] : memref<4x1x16x1x128xf32>
//       CHECK:   memref.dealloc %[[LP]] : memref<4x1x16x1xf32>
//   CHECK-NOT:   attn.attention
// ONE-LABEL: func.func @decode
//       ONE:   attn.attention
//   ONE-NOT:   attn.partial_attention
// AUTO-LABEL: func.func @decode
//       AUTO:   memref.alloc() : memref<9x1x16x1x128xf32>
//       AUTO:   attn.partial_attention
// SM16-LABEL: func.func @decode
//       SM16:   attn.attention
func.func @decode(%q: memref<1x16x1x128xbf16>, %k: memref<1x8x4096x128xbf16>,
                  %v: memref<1x8x4096x128xbf16>, %o: memref<1x16x1x128xbf16>,
                  %lse: memref<1x16x1xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x16x1x128xbf16>, memref<1x8x4096x128xbf16>,
                     memref<1x8x4096x128xbf16>) outs(%o : memref<1x16x1x128xbf16>)
                 lse(%lse : memref<1x16x1xf32>) {causal, scale = 0.125 : f32}
  return
}

// -----

// Dynamic Nq and Nk, no LSE: the workspace is sized from Q's dimensions;
// splits=0 keeps a dynamic Nq unsplit.
// CHECK-LABEL: func.func @dynamic
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<2x4x?x64xf16>
//       CHECK:   %[[NQ:.*]] = memref.dim %[[Q]], %{{.*}} : memref<2x4x?x64xf16>
//       CHECK:   %[[OP:.*]] = memref.alloc(%[[NQ]]) : memref<4x2x4x?x64xf32>
//       CHECK:   %[[NQ2:.*]] = memref.dim %[[Q]], %{{.*}} : memref<2x4x?x64xf16>
//       CHECK:   %[[LP:.*]] = memref.alloc(%[[NQ2]]) : memref<4x2x4x?xf32>
//       CHECK:   attn.partial_attention
//  CHECK-SAME:       outs(%[[OP]], %[[LP]] : memref<4x2x4x?x64xf32>, memref<4x2x4x?xf32>)
//   CHECK-NOT:   causal
//       CHECK:   attn.decode_combine ins(%[[OP]], %[[LP]] : memref<4x2x4x?x64xf32>, memref<4x2x4x?xf32>) outs(%{{.*}} : memref<2x4x?x64xf16>)
//   CHECK-NOT:   lse(
// AUTO-LABEL: func.func @dynamic
//       AUTO:   attn.attention
func.func @dynamic(%q: memref<2x4x?x64xf16>, %k: memref<2x2x?x64xf16>,
                   %v: memref<2x2x?x64xf16>, %o: memref<2x4x?x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x4x?x64xf16>, memref<2x2x?x64xf16>,
                     memref<2x2x?x64xf16>) outs(%o : memref<2x4x?x64xf16>)
  return
}

// -----

// A short cache (Nk = 512): at least 256 keys per split, so splits=0 takes
// S = min(ceil(132 / 4), 512 / 256) = 2. A dynamic Nk bounds nothing.
// AUTO-LABEL: func.func @short_cache
//       AUTO:   memref.alloc() : memref<2x1x4x1x64xf32>
// AUTO-LABEL: func.func @dynamic_cache
//       AUTO:   memref.alloc() : memref<66x1x2x1x64xf32>
func.func @short_cache(%q: memref<1x4x1x64xf16>, %k: memref<1x4x512x64xf16>,
                       %v: memref<1x4x512x64xf16>, %o: memref<1x4x1x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x1x64xf16>, memref<1x4x512x64xf16>,
                     memref<1x4x512x64xf16>) outs(%o : memref<1x4x1x64xf16>)
  return
}
func.func @dynamic_cache(%q: memref<1x2x1x64xf16>, %k: memref<1x2x?x64xf16>,
                         %v: memref<1x2x?x64xf16>, %o: memref<1x2x1x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x1x64xf16>, memref<1x2x?x64xf16>,
                     memref<1x2x?x64xf16>) outs(%o : memref<1x2x1x64xf16>)
  return
}

// -----

// Prefill, B1 Hq32 Nq8192: 4096 CTAs fill the GPU; splits=0 leaves it.
// AUTO-LABEL: func.func @prefill
//       AUTO:   attn.attention
//   AUTO-NOT:   attn.partial_attention
func.func @prefill(%q: memref<1x32x8192x128xbf16>, %k: memref<1x8x8192x128xbf16>,
                   %v: memref<1x8x8192x128xbf16>, %o: memref<1x32x8192x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x32x8192x128xbf16>, memref<1x8x8192x128xbf16>,
                     memref<1x8x8192x128xbf16>) outs(%o : memref<1x32x8192x128xbf16>) {causal}
  return
}

// -----

// FP8 has no split-KV form (nor a lowering yet): left alone.
// CHECK-LABEL: func.func @fp8
//       CHECK:   attn.attention
//   CHECK-NOT:   attn.partial_attention
func.func @fp8(%q: memref<1x2x1x16xf8E4M3FN>, %k: memref<1x2x64x16xf8E4M3FN>,
               %v: memref<1x2x64x16xf8E4M3FN>, %o: memref<1x2x1x16xbf16>,
               %qd: memref<1x2xf32>, %kd: memref<1x2xf32>, %vd: memref<1x2xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x1x16xf8E4M3FN>,
                     memref<1x2x64x16xf8E4M3FN>, memref<1x2x64x16xf8E4M3FN>)
      outs(%o : memref<1x2x1x16xbf16>)
      descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>, memref<1x2xf32>)
  return
}

// -----

// Varlen keeps its form and gets the workspace [S, total_q, Hq, D] and
// [S, Hq, total_q], sized from q's total_q, freed after it; only an
// explicit split count applies (its lengths are values).
// CHECK-LABEL: func.func @varlen_paged
//       CHECK:   %[[T0:.*]] = memref.dim %[[Q:.*]], %c0
//       CHECK:   %[[WO:.*]] = memref.alloc(%[[T0]]) : memref<4x?x8x64xf32>
//       CHECK:   %[[T1:.*]] = memref.dim %[[Q]], %c0
//       CHECK:   %[[WL:.*]] = memref.alloc(%[[T1]]) : memref<4x8x?xf32>
//       CHECK:   attn.varlen_attention {{.*}} paged(%{{.*}} : memref<?x?xi32>) outs(%{{.*}} : memref<?x8x64xbf16>) workspace(%[[WO]], %[[WL]] : memref<4x?x8x64xf32>, memref<4x8x?xf32>) {causal}
//       CHECK:   memref.dealloc %[[WO]]
//       CHECK:   memref.dealloc %[[WL]]
// ONE-LABEL: func.func @varlen_paged
//   ONE-NOT:   memref.alloc
//   ONE-NOT:   workspace
// AUTO-LABEL: func.func @varlen_paged
//   AUTO-NOT:   workspace
// SM16-LABEL: func.func @varlen_paged
//   SM16-NOT:   workspace
func.func @varlen_paged(%q: memref<?x8x64xbf16>, %k: memref<?x16x2x64xbf16>, %v: memref<?x16x2x64xbf16>,
                        %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                        %table: memref<?x?xi32>, %o: memref<?x8x64xbf16>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x16x2x64xbf16>, memref<?x16x2x64xbf16>)
      seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) max(%max_q, %max_k)
      paged(%table : memref<?x?xi32>) outs(%o : memref<?x8x64xbf16>) {causal}
  return
}

// -----

// An empty O (static B, Hq or Nq of 0) has nothing to split: every split
// count leaves the op alone, no workspace (its subviews would index an empty
// dimension).
// CHECK-LABEL: func.func @empty
//   CHECK-NOT:   memref.alloc
//       CHECK:   attn.attention
//       CHECK:   attn.attention
//       CHECK:   attn.attention
//   CHECK-NOT:   attn.partial_attention
// AUTO-LABEL: func.func @empty
//   AUTO-NOT:   attn.partial_attention
func.func @empty(%q0: memref<0x4x128x64xbf16>, %kv0: memref<0x4x4096x64xbf16>, %o0: memref<0x4x128x64xbf16>,
                 %q1: memref<1x0x1x64xbf16>, %kv1: memref<1x4x4096x64xbf16>, %o1: memref<1x0x1x64xbf16>,
                 %q2: memref<1x4x0x64xbf16>, %o2: memref<1x4x0x64xbf16>) {
  attn.attention ins(%q0, %kv0, %kv0 : memref<0x4x128x64xbf16>, memref<0x4x4096x64xbf16>, memref<0x4x4096x64xbf16>) outs(%o0 : memref<0x4x128x64xbf16>) {causal}
  attn.attention ins(%q1, %kv1, %kv1 : memref<1x0x1x64xbf16>, memref<1x4x4096x64xbf16>, memref<1x4x4096x64xbf16>) outs(%o1 : memref<1x0x1x64xbf16>)
  attn.attention ins(%q2, %kv1, %kv1 : memref<1x4x0x64xbf16>, memref<1x4x4096x64xbf16>, memref<1x4x4096x64xbf16>) outs(%o2 : memref<1x4x0x64xbf16>)
  return
}

// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s

// Round-trip (parse, print, parse, print) of every attn op in its custom
// syntax. The contract these ops keep is docs/ir.md.

// Llama-3-8B prefill: bf16, GQA 32/8, causal, with LSE.
// CHECK-LABEL: func.func @bf16_causal_lse
//  CHECK-SAME:   (%[[Q:.*]]: memref<1x32x8192x128xbf16>, %[[K:.*]]: memref<1x8x8192x128xbf16>, %[[V:.*]]: memref<1x8x8192x128xbf16>, %[[O:.*]]: memref<1x32x8192x128xbf16>, %[[LSE:.*]]: memref<1x32x8192xf32>)
//       CHECK:   attn.attention ins(%[[Q]], %[[K]], %[[V]] : memref<1x32x8192x128xbf16>, memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
//  CHECK-SAME:     outs(%[[O]] : memref<1x32x8192x128xbf16>)
//  CHECK-SAME:     lse(%[[LSE]] : memref<1x32x8192xf32>) {causal}
func.func @bf16_causal_lse(%q: memref<1x32x8192x128xbf16>,
                           %k: memref<1x8x8192x128xbf16>,
                           %v: memref<1x8x8192x128xbf16>,
                           %o: memref<1x32x8192x128xbf16>,
                           %lse: memref<1x32x8192xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x32x8192x128xbf16>,
                     memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
                 outs(%o : memref<1x32x8192x128xbf16>)
                 lse(%lse : memref<1x32x8192xf32>) {causal}
  return
}

// -----

// f16, MHA, non-causal, no LSE, default scale (no attribute printed).
// CHECK-LABEL: func.func @f16_noncausal
//       CHECK:   attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x16x1024x64xf16>, memref<2x16x512x64xf16>, memref<2x16x512x64xf16>)
//  CHECK-SAME:     outs(%{{.*}} : memref<2x16x1024x64xf16>){{$}}
//   CHECK-NOT:   lse
//   CHECK-NOT:   causal
//       CHECK:   return
func.func @f16_noncausal(%q: memref<2x16x1024x64xf16>,
                         %k: memref<2x16x512x64xf16>,
                         %v: memref<2x16x512x64xf16>,
                         %o: memref<2x16x1024x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x16x1024x64xf16>,
                     memref<2x16x512x64xf16>, memref<2x16x512x64xf16>)
                 outs(%o : memref<2x16x1024x64xf16>)
  return
}

// -----

// Explicit softmax scale (instead of the default 1/sqrt(D)).
// CHECK-LABEL: func.func @explicit_scale
//       CHECK:   attn.attention ins({{.*}}) outs({{.*}}) {causal, scale = 1.250000e-01 : f32}
func.func @explicit_scale(%q: memref<1x4x256x128xbf16>,
                          %k: memref<1x4x256x128xbf16>,
                          %v: memref<1x4x256x128xbf16>,
                          %o: memref<1x4x256x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x256x128xbf16>,
                     memref<1x4x256x128xbf16>, memref<1x4x256x128xbf16>)
                 outs(%o : memref<1x4x256x128xbf16>)
                 {causal, scale = 0.125 : f32}
  return
}

// -----

// GQA: Hq = 32, Hkv = 4 (group of 8 query heads per KV head).
// CHECK-LABEL: func.func @gqa
//       CHECK:   attn.attention ins({{.*}} : memref<1x32x512x128xf16>, memref<1x4x512x128xf16>, memref<1x4x512x128xf16>)
//  CHECK-SAME:     outs({{.*}} : memref<1x32x512x128xf16>)
func.func @gqa(%q: memref<1x32x512x128xf16>, %k: memref<1x4x512x128xf16>,
               %v: memref<1x4x512x128xf16>, %o: memref<1x32x512x128xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x32x512x128xf16>,
                     memref<1x4x512x128xf16>, memref<1x4x512x128xf16>)
                 outs(%o : memref<1x32x512x128xf16>)
  return
}

// -----

// MQA: Hkv = 1, every query head reads the one KV head.
// CHECK-LABEL: func.func @mqa
//       CHECK:   attn.attention ins({{.*}} : memref<4x16x64x64xbf16>, memref<4x1x2048x64xbf16>, memref<4x1x2048x64xbf16>)
//  CHECK-SAME:     outs({{.*}} : memref<4x16x64x64xbf16>)
//  CHECK-SAME:     lse({{.*}} : memref<4x16x64xf32>) {causal}
func.func @mqa(%q: memref<4x16x64x64xbf16>, %k: memref<4x1x2048x64xbf16>,
               %v: memref<4x1x2048x64xbf16>, %o: memref<4x16x64x64xbf16>,
               %lse: memref<4x16x64xf32>) {
  attn.attention ins(%q, %k, %v : memref<4x16x64x64xbf16>,
                     memref<4x1x2048x64xbf16>, memref<4x1x2048x64xbf16>)
                 outs(%o : memref<4x16x64x64xbf16>)
                 lse(%lse : memref<4x16x64xf32>) {causal}
  return
}

// -----

// Dynamic sequence lengths (Nq and Nk independent), dynamic batch.
// CHECK-LABEL: func.func @dynamic_seq
//       CHECK:   attn.attention ins({{.*}} : memref<1x8x?x64xf16>, memref<1x8x?x64xf16>, memref<1x8x?x64xf16>)
//  CHECK-SAME:     outs({{.*}} : memref<1x8x?x64xf16>)
//  CHECK-SAME:     lse({{.*}} : memref<1x8x?xf32>) {causal}
// CHECK-LABEL: func.func @dynamic_batch
//       CHECK:   attn.attention ins({{.*}} : memref<?x8x?x128xbf16>, memref<?x2x?x128xbf16>, memref<?x2x?x128xbf16>)
//  CHECK-SAME:     outs({{.*}} : memref<?x8x?x128xbf16>)
func.func @dynamic_seq(%q: memref<1x8x?x64xf16>, %k: memref<1x8x?x64xf16>,
                       %v: memref<1x8x?x64xf16>, %o: memref<1x8x?x64xf16>,
                       %lse: memref<1x8x?xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x8x?x64xf16>, memref<1x8x?x64xf16>,
                     memref<1x8x?x64xf16>)
                 outs(%o : memref<1x8x?x64xf16>)
                 lse(%lse : memref<1x8x?xf32>) {causal}
  return
}
func.func @dynamic_batch(%q: memref<?x8x?x128xbf16>,
                         %k: memref<?x2x?x128xbf16>,
                         %v: memref<?x2x?x128xbf16>,
                         %o: memref<?x8x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x8x?x128xbf16>,
                     memref<?x2x?x128xbf16>, memref<?x2x?x128xbf16>)
                 outs(%o : memref<?x8x?x128xbf16>)
  return
}

// -----

// FlashAttention's [B, N, H, D] buffers (1x128x8x64, contiguous strides
// [65536, 512, 64, 1]) seen as [B, H, N, D] views: strides [65536, 64, 512, 1],
// unit stride on D, dynamic offset.
// CHECK-LABEL: func.func @strided_bnhd
//       CHECK:   attn.attention ins({{.*}} : memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>, memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>, memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>)
//  CHECK-SAME:     outs({{.*}} : memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>)
//  CHECK-SAME:     {causal}
func.func @strided_bnhd(
    %q: memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>,
    %k: memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>,
    %v: memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>,
    %o: memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>) {
  attn.attention
      ins(%q, %k, %v : memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>,
                       memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>,
                       memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>)
      outs(%o : memref<1x8x128x64xbf16, strided<[65536, 64, 512, 1], offset: ?>>)
      {causal}
  return
}

// -----

// The same view made in IR: memref.transpose of a contiguous [B, N, H, D]
// buffer swaps N and H without copying.
// CHECK-LABEL: func.func @transposed_bnhd
//       CHECK:   %[[QT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   attn.attention ins(%[[QT]], %{{.*}}, %{{.*}} : memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>,
func.func @transposed_bnhd(%q: memref<2x128x8x64xf16>,
                           %k: memref<2x128x8x64xf16>,
                           %v: memref<2x128x8x64xf16>,
                           %o: memref<2x128x8x64xf16>) {
  %qt = memref.transpose %q (d0, d1, d2, d3) -> (d0, d2, d1, d3)
      : memref<2x128x8x64xf16> to memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>
  %kt = memref.transpose %k (d0, d1, d2, d3) -> (d0, d2, d1, d3)
      : memref<2x128x8x64xf16> to memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>
  %vt = memref.transpose %v (d0, d1, d2, d3) -> (d0, d2, d1, d3)
      : memref<2x128x8x64xf16> to memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>
  %ot = memref.transpose %o (d0, d1, d2, d3) -> (d0, d2, d1, d3)
      : memref<2x128x8x64xf16> to memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>
  attn.attention ins(%qt, %kt, %vt : memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>,
                     memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>,
                     memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>)
                 outs(%ot : memref<2x8x128x64xf16, strided<[65536, 64, 512, 1]>>)
  return
}

// -----

// FP8 (FlashAttention-3): f8E4M3FN Q/K/V, fp32 descales [B, Hkv], bf16 O.
// CHECK-LABEL: func.func @fp8_descale
//  CHECK-SAME:   %[[QD:[a-z0-9]+]]: memref<2x4xf32>, %[[KD:[a-z0-9]+]]: memref<2x4xf32>, %[[VD:[a-z0-9]+]]: memref<2x4xf32>
//       CHECK:   attn.attention ins({{.*}} : memref<2x16x256x128xf8E4M3FN>, memref<2x4x256x128xf8E4M3FN>, memref<2x4x256x128xf8E4M3FN>)
//  CHECK-SAME:     outs({{.*}} : memref<2x16x256x128xbf16>)
//  CHECK-SAME:     lse({{.*}} : memref<2x16x256xf32>)
//  CHECK-SAME:     descale(%[[QD]], %[[KD]], %[[VD]] : memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>) {causal}
func.func @fp8_descale(%q: memref<2x16x256x128xf8E4M3FN>,
                       %k: memref<2x4x256x128xf8E4M3FN>,
                       %v: memref<2x4x256x128xf8E4M3FN>,
                       %o: memref<2x16x256x128xbf16>,
                       %lse: memref<2x16x256xf32>,
                       %qd: memref<2x4xf32>, %kd: memref<2x4xf32>,
                       %vd: memref<2x4xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x16x256x128xf8E4M3FN>,
                     memref<2x4x256x128xf8E4M3FN>, memref<2x4x256x128xf8E4M3FN>)
                 outs(%o : memref<2x16x256x128xbf16>)
                 lse(%lse : memref<2x16x256xf32>)
                 descale(%qd, %kd, %vd : memref<2x4xf32>, memref<2x4xf32>,
                         memref<2x4xf32>) {causal}
  return
}

// -----

// FP8 with per-block Q/K descales (128 rows of a query head, 128 keys of a
// KV head; Nk = 200 gives two K blocks) and per-channel V descales, and the
// tile ops that carry them (attn-tile's form, host lowering only).
// CHECK-LABEL: func.func @fp8_block_descale
//       CHECK:   attn.attention {{.*}} descale(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x16x2xf32>, memref<2x4x2xf32>, memref<2x4x128xf32>) {causal, k_descale_block = 128 : i64, q_descale_block = 128 : i64}
//       CHECK:   attn.load_rows %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {gqa_pack = 4 : i64, row_block = 128 : i64} : memref<2x16x2xf32> -> vector<64xf32>
//       CHECK:   attn.online_attention
//  CHECK-SAME:     row_descale(%{{.*}} : vector<64xf32>) key_descale(%{{.*}} : vector<32xf32>) {block_n = 32 : i64
//       CHECK:   attn.epilogue
//  CHECK-SAME:     channel_descale(%{{.*}} : vector<128xf32>) : memref<2x16x256x128xbf16>
func.func @fp8_block_descale(%q: memref<2x16x256x128xf8E4M3FN>,
                             %k: memref<2x4x200x128xf8E4M3FN>,
                             %v: memref<2x4x200x128xf8E4M3FN>,
                             %o: memref<2x16x256x128xbf16>,
                             %qd: memref<2x16x2xf32>, %kd: memref<2x4x2xf32>,
                             %vd: memref<2x4x128xf32>, %i: index,
                             %qt: vector<64x128xf8E4M3FN>, %m: vector<64xf32>,
                             %acc: vector<64x128xf32>, %keys: vector<32xf32>,
                             %ch: vector<128xf32>) {
  attn.attention ins(%q, %k, %v : memref<2x16x256x128xf8E4M3FN>,
                     memref<2x4x200x128xf8E4M3FN>, memref<2x4x200x128xf8E4M3FN>)
                 outs(%o : memref<2x16x256x128xbf16>)
                 descale(%qd, %kd, %vd : memref<2x16x2xf32>, memref<2x4x2xf32>,
                         memref<2x4x128xf32>)
                 {causal, q_descale_block = 128 : i64, k_descale_block = 128 : i64}
  %rows = attn.load_rows %qd[%i, %i, %i] {row_block = 128 : i64, gqa_pack = 4 : i64}
      : memref<2x16x2xf32> -> vector<64xf32>
  %m1, %l1, %a1 = attn.online_attention q(%qt : vector<64x128xf8E4M3FN>)
      kv(%k, %v : memref<2x4x200x128xf8E4M3FN>, memref<2x4x200x128xf8E4M3FN>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %m, %acc : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      row_descale(%rows : vector<64xf32>) key_descale(%keys : vector<32xf32>)
      {block_n = 32 : i64, mask = #attn.mask<bounds>, scale = 0.125 : f32}
  attn.epilogue state(%m1, %l1, %a1 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      to %o[%i, %i, %i, %i] channel_descale(%ch : vector<128xf32>)
      : memref<2x16x256x128xbf16>
  return
}

// -----

// FP8 V stored V^T (unit stride along Nk): the layout the wgmma path reads.
// CHECK-LABEL: func.func @fp8_vt
//       CHECK:   attn.attention ins({{.*}} : memref<1x4x64x64xf8E4M3FN>, memref<1x4x64x64xf8E4M3FN>, memref<1x4x64x64xf8E4M3FN, strided<[16384, 4096, 1, 64]>>)
func.func @fp8_vt(%q: memref<1x4x64x64xf8E4M3FN>, %k: memref<1x4x64x64xf8E4M3FN>,
                  %v: memref<1x4x64x64xf8E4M3FN, strided<[16384, 4096, 1, 64]>>,
                  %o: memref<1x4x64x64xbf16>, %qd: memref<1x4xf32>,
                  %kd: memref<1x4xf32>, %vd: memref<1x4xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf8E4M3FN>,
                     memref<1x4x64x64xf8E4M3FN>,
                     memref<1x4x64x64xf8E4M3FN, strided<[16384, 4096, 1, 64]>>)
                 outs(%o : memref<1x4x64x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x4xf32>, memref<1x4xf32>,
                         memref<1x4xf32>)
  return
}

// -----

// FP8 without LSE, explicit scale.
// CHECK-LABEL: func.func @fp8_no_lse
//       CHECK:   attn.attention ins({{.*}}) outs({{.*}} : memref<1x8x64x64xbf16>) descale({{.*}} : memref<1x8xf32>, memref<1x8xf32>, memref<1x8xf32>) {scale = 5.000000e-01 : f32}
func.func @fp8_no_lse(%q: memref<1x8x64x64xf8E4M3FN>,
                      %k: memref<1x8x64x64xf8E4M3FN>,
                      %v: memref<1x8x64x64xf8E4M3FN>,
                      %o: memref<1x8x64x64xbf16>, %qd: memref<1x8xf32>,
                      %kd: memref<1x8xf32>, %vd: memref<1x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x8x64x64xf8E4M3FN>,
                     memref<1x8x64x64xf8E4M3FN>, memref<1x8x64x64xf8E4M3FN>)
                 outs(%o : memref<1x8x64x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x8xf32>, memref<1x8xf32>,
                         memref<1x8xf32>) {scale = 0.5 : f32}
  return
}

// -----

// Tile ops as attn-tile / attn-causal-split print them (BLOCK_M = BLOCK_N = 64,
// D = 128): load the Q tile, fold K/V blocks into the online-softmax state
// (m, l, acc) with each mask kind, then normalize and store.
// CHECK-LABEL: func.func @tile_ops
//  CHECK-SAME:   (%[[Q:[a-z0-9]+]]: memref<1x32x8192x128xbf16>, %[[K:[a-z0-9]+]]: memref<1x8x8192x128xbf16>, %[[V:[a-z0-9]+]]: memref<1x8x8192x128xbf16>, %[[O:[a-z0-9]+]]: memref<1x32x8192x128xbf16>, %[[LSE:[a-z0-9]+]]: memref<1x32x8192xf32>,
//  CHECK-SAME:    %[[B:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: index, %[[HKV:[a-z0-9]+]]: index, %[[ROW:[a-z0-9]+]]: index, %[[KPOS:[a-z0-9]+]]: index, %[[OFF:[a-z0-9]+]]: index, %[[C0:[a-z0-9]+]]: index,
//  CHECK-SAME:    %[[M:[a-z0-9]+]]: vector<64xf32>, %[[L:[a-z0-9]+]]: vector<64xf32>, %[[ACC:[a-z0-9]+]]: vector<64x128xf32>)
//       CHECK:   %[[QT:.*]] = attn.load_tile %[[Q]][%[[B]], %[[H]], %[[ROW]], %[[C0]]] : memref<1x32x8192x128xbf16> -> vector<64x128xbf16>
//       CHECK:   %[[M1:.*]], %[[L1:.*]], %[[A1:.*]] = attn.online_attention q(%[[QT]] : vector<64x128xbf16>) kv(%[[K]], %[[V]] : memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>) at[%[[B]], %[[HKV]], %[[KPOS]], %[[C0]]] rows(%[[ROW]]) state(%[[M]], %[[L]], %[[ACC]] : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
//  CHECK-SAME:     {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.0883883461 : f32}
//       CHECK:   %[[M2:.*]], %[[L2:.*]], %[[A2:.*]] = attn.online_attention q(%[[QT]] : vector<64x128xbf16>) kv(%[[K]], %[[V]] : {{.*}}) at[%[[B]], %[[HKV]], %[[KPOS]], %[[C0]]] rows(%[[ROW]]) state(%[[M1]], %[[L1]], %[[A1]] : {{.*}})
//  CHECK-SAME:     {block_n = 64 : i64, mask = #attn.mask<bounds>, scale = 0.0883883461 : f32}
//       CHECK:   %[[M3:.*]], %[[L3:.*]], %[[A3:.*]] = attn.online_attention q(%[[QT]] : vector<64x128xbf16>) kv(%[[K]], %[[V]] : {{.*}}) at[%[[B]], %[[HKV]], %[[KPOS]], %[[C0]]] rows(%[[ROW]], causal_offset %[[OFF]]) state(%[[M2]], %[[L2]], %[[A2]] : {{.*}})
//  CHECK-SAME:     {block_n = 32 : i64, mask = #attn.mask<causal>, scale = 0.0883883461 : f32}
//       CHECK:   attn.epilogue state(%[[M3]], %[[L3]], %[[A3]] : vector<64xf32>, vector<64xf32>, vector<64x128xf32>) to %[[O]], lse %[[LSE]][%[[B]], %[[H]], %[[ROW]], %[[C0]]] : memref<1x32x8192x128xbf16>, memref<1x32x8192xf32>
//       CHECK:   attn.epilogue state(%[[M3]], %[[L3]], %[[A3]] : vector<64xf32>, vector<64xf32>, vector<64x128xf32>) to %[[O]][%[[B]], %[[H]], %[[ROW]], %[[C0]]] : memref<1x32x8192x128xbf16>{{$}}
func.func @tile_ops(%q: memref<1x32x8192x128xbf16>,
                    %k: memref<1x8x8192x128xbf16>,
                    %v: memref<1x8x8192x128xbf16>,
                    %o: memref<1x32x8192x128xbf16>,
                    %lse: memref<1x32x8192xf32>,
                    %b: index, %h: index, %hkv: index, %row: index,
                    %kpos: index, %off: index, %c0: index,
                    %m: vector<64xf32>, %l: vector<64xf32>,
                    %acc: vector<64x128xf32>) {
  %qt = attn.load_tile %q[%b, %h, %row, %c0]
      : memref<1x32x8192x128xbf16> -> vector<64x128xbf16>
  // Block fully below the diagonal: no mask.
  %m1, %l1, %a1 = attn.online_attention q(%qt : vector<64x128xbf16>)
      kv(%k, %v : memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
      at[%b, %hkv, %kpos, %c0] rows(%row)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.0883883461 : f32}
  // Tail block: keys at or past Nk are -inf.
  %m2, %l2, %a2 = attn.online_attention q(%qt : vector<64x128xbf16>)
      kv(%k, %v : memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
      at[%b, %hkv, %kpos, %c0] rows(%row)
      state(%m1, %l1, %a1 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      {block_n = 64 : i64, mask = #attn.mask<bounds>, scale = 0.0883883461 : f32}
  // Diagonal block: key j > row i + causal_offset (= Nk - Nq) is -inf.
  %m3, %l3, %a3 = attn.online_attention q(%qt : vector<64x128xbf16>)
      kv(%k, %v : memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
      at[%b, %hkv, %kpos, %c0] rows(%row, causal_offset %off)
      state(%m2, %l2, %a2 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      {block_n = 32 : i64, mask = #attn.mask<causal>, scale = 0.0883883461 : f32}
  attn.epilogue state(%m3, %l3, %a3 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      to %o, lse %lse[%b, %h, %row, %c0]
      : memref<1x32x8192x128xbf16>, memref<1x32x8192xf32>
  attn.epilogue state(%m3, %l3, %a3 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      to %o[%b, %h, %row, %c0] : memref<1x32x8192x128xbf16>
  return
}

// -----

// Tile ops on a dynamic, strided [B, N, H, D] view with f16 and D = 64.
// CHECK-LABEL: func.func @tile_ops_dynamic_strided
//       CHECK:   attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>> -> vector<128x64xf16>
//       CHECK:   attn.online_attention q(%{{.*}} : vector<128x64xf16>) kv(%{{.*}}, %{{.*}} : memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>, memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>)
//  CHECK-SAME:     state({{.*}} : vector<128xf32>, vector<128xf32>, vector<128x64xf32>) {block_n = 128 : i64, mask = #attn.mask<bounds>, scale = 1.250000e-01 : f32}
//       CHECK:   attn.epilogue state({{.*}}) to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>
func.func @tile_ops_dynamic_strided(
    %q: memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>,
    %k: memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>,
    %v: memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>,
    %o: memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>,
    %i: index, %m: vector<128xf32>, %l: vector<128xf32>,
    %acc: vector<128x64xf32>) {
  %qt = attn.load_tile %q[%i, %i, %i, %i]
      : memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>> -> vector<128x64xf16>
  %m1, %l1, %a1 = attn.online_attention q(%qt : vector<128x64xf16>)
      kv(%k, %v : memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>,
                  memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
      {block_n = 128 : i64, mask = #attn.mask<bounds>, scale = 0.125 : f32}
  attn.epilogue state(%m1, %l1, %a1 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
      to %o[%i, %i, %i, %i] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>
  return
}

// -----

// One query row per thread group (attn-distribute-rows): each of 4 lanes
// holds a 32-column slice of D = 128 starting at %col; row_lanes = 4 sums the
// partial dot products across the lanes.
// CHECK-LABEL: func.func @tile_ops_d_slice
//       CHECK:   %[[QT:.*]] = attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL:[a-z0-9]+]]] : memref<1x32x8192x128xbf16> -> vector<1x32xbf16>
//       CHECK:   attn.online_attention q(%[[QT]] : vector<1x32xbf16>) kv({{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]] rows(%{{[a-z0-9]+}}, causal_offset %{{[a-z0-9]+}})
//  CHECK-SAME:     state({{.*}} : vector<1xf32>, vector<1xf32>, vector<1x32xf32>) {block_n = 16 : i64, mask = #attn.mask<causal>, row_lanes = 4 : i64, scale = 0.0883883461 : f32}
//       CHECK:   attn.epilogue state({{.*}} : vector<1xf32>, vector<1xf32>, vector<1x32xf32>) to %{{.*}}, lse %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]]
func.func @tile_ops_d_slice(%q: memref<1x32x8192x128xbf16>,
                            %k: memref<1x8x8192x128xbf16>,
                            %v: memref<1x8x8192x128xbf16>,
                            %o: memref<1x32x8192x128xbf16>,
                            %lse: memref<1x32x8192xf32>, %i: index,
                            %col: index, %m: vector<1xf32>, %l: vector<1xf32>,
                            %acc: vector<1x32xf32>) {
  %qt = attn.load_tile %q[%i, %i, %i, %col]
      : memref<1x32x8192x128xbf16> -> vector<1x32xbf16>
  %m1, %l1, %a1 = attn.online_attention q(%qt : vector<1x32xbf16>)
      kv(%k, %v : memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
      at[%i, %i, %i, %col] rows(%i, causal_offset %i)
      state(%m, %l, %acc : vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
      {block_n = 16 : i64, mask = #attn.mask<causal>, row_lanes = 4 : i64,
       scale = 0.0883883461 : f32}
  attn.epilogue state(%m1, %l1, %a1 : vector<1xf32>, vector<1xf32>, vector<1x32xf32>)
      to %o, lse %lse[%i, %i, %i, %col]
      : memref<1x32x8192x128xbf16>, memref<1x32x8192xf32>
  return
}

// -----

// The Hopper forms (attn-async-pipeline): warp specialization, a step on
// shared-memory tiles, and an epilogue with a staging tile.
!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @hopper
func.func @hopper(%q: !qs, %k: !kvs, %v: !kvs, %kpos: index, %nk: index,
                  %qpos: index, %off: index, %m: vector<128xf32>,
                  %l: vector<128xf32>, %acc: vector<128x128xf32>,
                  %o: memref<1x2x256x128xbf16>, %b: index, %h: index) {
  // CHECK: attn.warp_specialize consumers(2) registers(24, 240) producer {
  // CHECK: } consumer {
  attn.warp_specialize consumers(2) registers(24, 240) producer {
    gpu.barrier
  } consumer {
    // CHECK: attn.online_attention_mma q(%{{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>) kv(%{{.*}}, %{{.*}} : memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>) keys(%{{.*}}, %{{.*}}) rows(%{{.*}}, causal_offset %{{.*}}) state(%{{.*}}, %{{.*}}, %{{.*}} : vector<128xf32>, vector<128xf32>, vector<128x128xf32>) {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = {{.*}} : f32}
    %m1, %l1, %a1 = attn.online_attention_mma q(%q : !qs) kv(%k, %v : !kvs, !kvs)
        keys(%kpos, %nk) rows(%qpos, causal_offset %off)
        state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x128xf32>)
        {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = 0.0883789 : f32}
    // CHECK: attn.epilogue state({{.*}}) to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] staging(%{{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>) : memref<1x2x256x128xbf16>
    attn.epilogue state(%m1, %l1, %a1 : vector<128xf32>, vector<128xf32>, vector<128x128xf32>)
        to %o[%b, %h, %qpos, %b] staging(%q : !qs) : memref<1x2x256x128xbf16>
  }
  return
}

// -----

// The FP8 Hopper forms: 128-column chunks, V^T in 'v' ([BLOCK_N / 128, D,
// 128]), the step's qk_descale, and the epilogue's v_descale with a bf16
// staging tile of its own.
!qs = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!ks = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!vts = memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
!st = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @hopper_fp8
func.func @hopper_fp8(%q: !qs, %k: !ks, %v: !vts, %kpos: index, %nk: index,
                      %qpos: index, %qk: f32, %vd: f32, %m: vector<128xf32>,
                      %acc: vector<128x64xf32>, %s: !st,
                      %o: memref<1x2x256x64xbf16>, %b: index) {
  // CHECK: attn.online_attention_mma {{.*}} keys(%{{.*}}, %{{.*}}) rows(%{{.*}}) descale(%{{.*}}) state(
  %m1, %l1, %a1 = attn.online_attention_mma q(%q : !qs) kv(%k, %v : !ks, !vts)
      keys(%kpos, %nk) rows(%qpos) descale(%qk)
      state(%m, %m, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
      {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  // CHECK: attn.epilogue {{.*}} staging(%{{.*}} : memref<1x128x64xbf16, #gpu.address_space<workgroup>>) descale(%{{.*}})
  attn.epilogue state(%m1, %l1, %a1 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
      to %o[%b, %b, %qpos, %b] staging(%s : !st) descale(%vd) : memref<1x2x256x64xbf16>
  return
}

// -----

// The backward: GQA 4/2, causal, explicit scale, FlashAttention's
// [B, N, H, D] layout seen as [B, H, N, D] (strided views, unit D stride).
!qg = memref<2x4x96x64xbf16, strided<[24576, 64, 256, 1], offset: ?>>
!kg = memref<2x2x80x64xbf16, strided<[10240, 64, 128, 1], offset: ?>>
// CHECK-LABEL: func.func @attention_grad
//       CHECK:   attn.attention_grad ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<2x4x96x64xbf16, strided<[24576, 64, 256, 1], offset: ?>>, memref<2x2x80x64xbf16, strided<[10240, 64, 128, 1], offset: ?>>, memref<2x2x80x64xbf16, strided<[10240, 64, 128, 1], offset: ?>>, memref<2x4x96x64xbf16, strided<[24576, 64, 256, 1], offset: ?>>, memref<2x4x96x64xbf16, strided<[24576, 64, 256, 1], offset: ?>>, memref<2x4x96xf32>)
//  CHECK-SAME:     outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x4x96x64xbf16, strided<[24576, 64, 256, 1], offset: ?>>, memref<2x2x80x64xbf16, strided<[10240, 64, 128, 1], offset: ?>>, memref<2x2x80x64xbf16, strided<[10240, 64, 128, 1], offset: ?>>)
//  CHECK-SAME:     {causal, scale = 1.250000e-01 : f32}
func.func @attention_grad(%q: !qg, %k: !kg, %v: !kg, %o: !qg, %do: !qg,
                          %lse: memref<2x4x96xf32>, %dq: !qg, %dk: !kg,
                          %dv: !kg) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : !qg, !kg, !kg, !qg, !qg,
                          memref<2x4x96xf32>)
                      outs(%dq, %dk, %dv : !qg, !kg, !kg)
                      {causal, scale = 0.125 : f32}
  return
}

// -----

// f32, dynamic lengths, default scale, not causal.
// CHECK-LABEL: func.func @attention_grad_f32_dynamic
//       CHECK:   attn.attention_grad ins({{.*}} : memref<1x2x?x32xf32>, memref<1x1x?x32xf32>, memref<1x1x?x32xf32>, memref<1x2x?x32xf32>, memref<1x2x?x32xf32>, memref<1x2x?xf32>)
//  CHECK-SAME:     outs({{.*}} : memref<1x2x?x32xf32>, memref<1x1x?x32xf32>, memref<1x1x?x32xf32>){{$}}
func.func @attention_grad_f32_dynamic(
    %q: memref<1x2x?x32xf32>, %k: memref<1x1x?x32xf32>,
    %v: memref<1x1x?x32xf32>, %o: memref<1x2x?x32xf32>,
    %do: memref<1x2x?x32xf32>, %lse: memref<1x2x?xf32>,
    %dq: memref<1x2x?x32xf32>, %dk: memref<1x1x?x32xf32>,
    %dv: memref<1x1x?x32xf32>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x2x?x32xf32>,
      memref<1x1x?x32xf32>, memref<1x1x?x32xf32>, memref<1x2x?x32xf32>,
      memref<1x2x?x32xf32>, memref<1x2x?xf32>)
      outs(%dq, %dk, %dv : memref<1x2x?x32xf32>, memref<1x1x?x32xf32>,
           memref<1x1x?x32xf32>)
  return
}

// -----

// The backward tile ops (attn-tile-grad): rows of LSE / Delta, the
// preprocess, the dK/dV and dQ steps and the gradient store.
// CHECK-LABEL: func.func @grad_tiles
func.func @grad_tiles(%qm: memref<1x4x40x16xf16>, %km: memref<1x2x24x16xf16>,
                      %lse: memref<1x4x40xf32>, %i: index,
                      %q: vector<8x16xf16>, %k: vector<4x16xf16>,
                      %dk: vector<4x16xf32>, %dq: vector<8x16xf32>) {
  // CHECK: %[[R:.*]] = attn.load_rows %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x4x40xf32> -> vector<8xf32>
  %rows = attn.load_rows %lse[%i, %i, %i] : memref<1x4x40xf32> -> vector<8xf32>
  // CHECK: %[[D:.*]] = attn.grad_delta %{{.*}}, %{{.*}} : vector<8x16xf16>, vector<8x16xf16> -> vector<8xf32>
  %delta = attn.grad_delta %q, %q : vector<8x16xf16>, vector<8x16xf16> -> vector<8xf32>
  // CHECK: attn.store_rows %[[D]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : vector<8xf32>, memref<1x4x40xf32>
  attn.store_rows %delta, %lse[%i, %i, %i] : vector<8xf32>, memref<1x4x40xf32>
  // CHECK: attn.grad_dkdv q(%{{.*}}, %{{.*}} : vector<8x16xf16>, vector<8x16xf16>) lse_delta(%[[R]], %[[D]] : vector<8xf32>, vector<8xf32>) kv(%{{.*}}, %{{.*}} : vector<4x16xf16>, vector<4x16xf16>) at(%{{.*}}, %{{.*}}, causal_offset %{{.*}}) state(%{{.*}}, %{{.*}} : vector<4x16xf32>, vector<4x16xf32>) {mask = #attn.mask<causal>, scale = 2.500000e-01 : f32}
  %dk1, %dv1 = attn.grad_dkdv q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%rows, %delta : vector<8xf32>, vector<8xf32>)
      kv(%k, %k : vector<4x16xf16>, vector<4x16xf16>)
      at(%i, %i, causal_offset %i) state(%dk, %dk : vector<4x16xf32>, vector<4x16xf32>)
      {mask = #attn.mask<causal>, scale = 0.25 : f32}
  // CHECK: attn.grad_dq q(%{{.*}}, %{{.*}} : vector<8x16xf16>, vector<8x16xf16>) lse_delta(%[[R]], %[[D]] : vector<8xf32>, vector<8xf32>) kv(%{{.*}}, %{{.*}} : memref<1x2x24x16xf16>, memref<1x2x24x16xf16>) at[%{{.*}}, %{{.*}}, %{{.*}}] rows(%{{.*}}) state(%{{.*}} : vector<8x16xf32>) {block_n = 4 : i64, mask = #attn.mask<bounds>, scale = 2.500000e-01 : f32}
  %dq1 = attn.grad_dq q(%q, %q : vector<8x16xf16>, vector<8x16xf16>)
      lse_delta(%rows, %delta : vector<8xf32>, vector<8xf32>)
      kv(%km, %km : memref<1x2x24x16xf16>, memref<1x2x24x16xf16>)
      at[%i, %i, %i] rows(%i) state(%dq : vector<8x16xf32>)
      {block_n = 4 : i64, mask = #attn.mask<bounds>, scale = 0.25 : f32}
  // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : vector<8x16xf32>, memref<1x4x40x16xf16>
  attn.store_tile %dq1, %qm[%i, %i, %i] : vector<8x16xf32>, memref<1x4x40x16xf16>
  attn.store_tile %dv1, %km[%i, %i, %i] : vector<4x16xf32>, memref<1x2x24x16xf16>
  return
}

// -----

// Split-KV (attn-split-kv): the partial attention over S = 3 splits writes
// the fp32 workspace; the combine merges it into O and LSE. f32 attention.
// CHECK-LABEL: func.func @split_kv
func.func @split_kv(%q: memref<1x4x1x16xf32>, %k: memref<1x2x37x16xf32>,
                    %op: memref<3x1x4x1x16xf32>, %lp: memref<3x1x4x1xf32>,
                    %o: memref<1x4x1x16xf32>, %lse: memref<1x4x1xf32>) {
  // CHECK: attn.partial_attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x4x1x16xf32>, memref<1x2x37x16xf32>, memref<1x2x37x16xf32>) outs(%{{.*}}, %{{.*}} : memref<3x1x4x1x16xf32>, memref<3x1x4x1xf32>) {causal, scale = 2.500000e-01 : f32}
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x16xf32>, memref<1x2x37x16xf32>,
                             memref<1x2x37x16xf32>)
      outs(%op, %lp : memref<3x1x4x1x16xf32>, memref<3x1x4x1xf32>) {causal, scale = 0.25 : f32}
  // CHECK: attn.decode_combine ins(%{{.*}}, %{{.*}} : memref<3x1x4x1x16xf32>, memref<3x1x4x1xf32>) outs(%{{.*}} : memref<1x4x1x16xf32>) lse(%{{.*}} : memref<1x4x1xf32>)
  attn.decode_combine ins(%op, %lp : memref<3x1x4x1x16xf32>, memref<3x1x4x1xf32>)
      outs(%o : memref<1x4x1x16xf32>) lse(%lse : memref<1x4x1xf32>)
  // CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x4x1x16xf32>, memref<1x2x37x16xf32>, memref<1x2x37x16xf32>) outs(%{{.*}} : memref<1x4x1x16xf32>)
  attn.attention ins(%q, %k, %k : memref<1x4x1x16xf32>, memref<1x2x37x16xf32>,
                     memref<1x2x37x16xf32>) outs(%o : memref<1x4x1x16xf32>)
  return
}

// -----

// The combine's step and GQA packing (gqa_pack = 2: rows are (query, head
// in group) pairs) on the tile ops.
// CHECK-LABEL: func.func @combine_step_and_packing
func.func @combine_step_and_packing(%os: vector<4x16xf32>, %r: vector<4xf32>,
    %q: memref<1x4x1x16xbf16>, %k: memref<1x2x37x16xbf16>, %i: index) {
  // CHECK: attn.combine_step partial(%{{.*}}, %{{.*}} : vector<4x16xf32>, vector<4xf32>) state(%{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
  %m, %l, %acc = attn.combine_step partial(%os, %r : vector<4x16xf32>, vector<4xf32>)
      state(%r, %r, %os : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
  // CHECK: attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {gqa_pack = 2 : i64}
  %t = attn.load_tile %q[%i, %i, %i, %i] {gqa_pack = 2 : i64} : memref<1x4x1x16xbf16> -> vector<4x16xbf16>
  // CHECK: attn.online_attention {{.*}} gqa_pack = 2 : i64
  %m1, %l1, %a1 = attn.online_attention q(%t : vector<4x16xbf16>)
      kv(%k, %k : memref<1x2x37x16xbf16>, memref<1x2x37x16xbf16>)
      at[%i, %i, %i, %i] rows(%i, causal_offset %i)
      state(%m, %l, %acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      {block_n = 8 : i64, mask = #attn.mask<causal>, scale = 0.25 : f32, gqa_pack = 2 : i64}
  // CHECK: attn.epilogue {{.*}} {gqa_pack = 2 : i64}
  attn.epilogue state(%m1, %l1, %a1 : vector<4xf32>, vector<4xf32>, vector<4x16xf32>)
      to %q[%i, %i, %i, %i] {gqa_pack = 2 : i64} : memref<1x4x1x16xbf16>
  return
}

// -----

// FP8 tile ops: q_descale * k_descale scales S (online_attention's descale),
// v_descale scales O (epilogue's descale).
// CHECK-LABEL: func.func @fp8_tile_ops
//       CHECK:   attn.online_attention q(%{{.*}} : vector<64x128xf8E4M3FN>) kv(%{{.*}}, %{{.*}} : memref<1x8x256x128xf8E4M3FN>, memref<1x8x256x128xf8E4M3FN>) at[%{{.*}}] rows(%{{.*}}) state(%{{.*}} : vector<64xf32>, vector<64xf32>, vector<64x128xf32>) descale(%[[QK:[a-z0-9]+]]) {block_n = 64 : i64
//       CHECK:   attn.epilogue state({{.*}}) to %{{.*}}[%{{.*}}] descale(%[[VD:[a-z0-9]+]]) : memref<1x32x256x128xbf16>{{$}}
func.func @fp8_tile_ops(%qt: vector<64x128xf8E4M3FN>,
                        %k: memref<1x8x256x128xf8E4M3FN>,
                        %v: memref<1x8x256x128xf8E4M3FN>,
                        %o: memref<1x32x256x128xbf16>, %i: index,
                        %m: vector<64xf32>, %l: vector<64xf32>,
                        %acc: vector<64x128xf32>, %qk: f32, %vd: f32) {
  %m1, %l1, %a1 = attn.online_attention q(%qt : vector<64x128xf8E4M3FN>)
      kv(%k, %v : memref<1x8x256x128xf8E4M3FN>, memref<1x8x256x128xf8E4M3FN>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      descale(%qk) {block_n = 64 : i64, mask = #attn.mask<none>, scale = 0.0883883461 : f32}
  attn.epilogue state(%m1, %l1, %a1 : vector<64xf32>, vector<64xf32>, vector<64x128xf32>)
      to %o[%i, %i, %i, %i] descale(%vd) : memref<1x32x256x128xbf16>
  return
}

// -----

// Varlen (FlashAttention-2's varlen API): packed [total, H, D] operands,
// i32 cu_seqlens [B + 1], index max_seqlen, LSE [Hq, total_q]; GQA 32/8,
// causal with an explicit scale.
// CHECK-LABEL: func.func @varlen_causal_lse
//  CHECK-SAME:   (%[[Q:[^:]*]]: memref<?x32x128xbf16>, %[[K:[^:]*]]: memref<?x8x128xbf16>, %[[V:[^:]*]]: memref<?x8x128xbf16>, %[[CQ:[^:]*]]: memref<5xi32>, %[[CK:[^:]*]]: memref<5xi32>, %[[MQ:[^:]*]]: index, %[[MK:[^:]*]]: index, %[[O:[^:]*]]: memref<?x32x128xbf16>, %[[LSE:[^:]*]]: memref<32x?xf32>)
//       CHECK:   attn.varlen_attention ins(%[[Q]], %[[K]], %[[V]] : memref<?x32x128xbf16>, memref<?x8x128xbf16>, memref<?x8x128xbf16>)
//  CHECK-SAME:     seqlens(%[[CQ]], %[[CK]] : memref<5xi32>, memref<5xi32>)
//  CHECK-SAME:     max(%[[MQ]], %[[MK]])
//  CHECK-SAME:     outs(%[[O]] : memref<?x32x128xbf16>)
//  CHECK-SAME:     lse(%[[LSE]] : memref<32x?xf32>) {causal, scale = 1.250000e-01 : f32}
func.func @varlen_causal_lse(%q: memref<?x32x128xbf16>, %k: memref<?x8x128xbf16>,
                             %v: memref<?x8x128xbf16>, %cu_q: memref<5xi32>,
                             %cu_k: memref<5xi32>, %max_q: index, %max_k: index,
                             %o: memref<?x32x128xbf16>, %lse: memref<32x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x32x128xbf16>,
                            memref<?x8x128xbf16>, memref<?x8x128xbf16>)
                        seqlens(%cu_q, %cu_k : memref<5xi32>, memref<5xi32>)
                        max(%max_q, %max_k)
                        outs(%o : memref<?x32x128xbf16>)
                        lse(%lse : memref<32x?xf32>) {causal, scale = 0.125 : f32}
  return
}

// -----

// Varlen without LSE, f16, static totals, a strided Q (a slice of a packed
// QKV buffer [total, 3, H, D] seen as [total, H, D]).
// CHECK-LABEL: func.func @varlen_f16_strided
//       CHECK:   attn.varlen_attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<40x4x64xf16, strided<[768, 64, 1], offset: ?>>, memref<56x4x64xf16>, memref<56x4x64xf16>)
//  CHECK-SAME:     seqlens(%{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>)
//  CHECK-SAME:     outs(%{{.*}} : memref<40x4x64xf16>){{$}}
func.func @varlen_f16_strided(%q: memref<40x4x64xf16, strided<[768, 64, 1], offset: ?>>,
                              %k: memref<56x4x64xf16>, %v: memref<56x4x64xf16>,
                              %cu_q: memref<?xi32>, %cu_k: memref<?xi32>,
                              %max_q: index, %max_k: index, %o: memref<40x4x64xf16>) {
  attn.varlen_attention ins(%q, %k, %v : memref<40x4x64xf16, strided<[768, 64, 1], offset: ?>>,
                            memref<56x4x64xf16>, memref<56x4x64xf16>)
                        seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                        max(%max_q, %max_k)
                        outs(%o : memref<40x4x64xf16>)
  return
}

// -----

// Varlen with paged K/V (caches [num_pages, page_size, Hkv, D], block table
// [B, max_pages]) and a split-KV workspace ([S, total_q, Hq, D] and
// [S, Hq, total_q]).
// CHECK-LABEL: func.func @varlen_paged_split
//       CHECK:   attn.varlen_attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x4x64xbf16>, memref<?x256x2x64xbf16>, memref<?x256x2x64xbf16>)
//  CHECK-SAME:     max(%{{.*}}, %{{.*}}) paged(%{{.*}} : memref<?x?xi32>)
//  CHECK-SAME:     outs(%{{.*}} : memref<?x4x64xbf16>) lse(%{{.*}} : memref<4x?xf32>)
//  CHECK-SAME:     workspace(%{{.*}}, %{{.*}} : memref<2x?x4x64xf32>, memref<2x4x?xf32>) {causal}
func.func @varlen_paged_split(%q: memref<?x4x64xbf16>, %k: memref<?x256x2x64xbf16>,
                              %v: memref<?x256x2x64xbf16>, %cu_q: memref<?xi32>,
                              %cu_k: memref<?xi32>, %max_q: index, %max_k: index,
                              %table: memref<?x?xi32>, %o: memref<?x4x64xbf16>,
                              %lse: memref<4x?xf32>, %op: memref<2x?x4x64xf32>,
                              %lp: memref<2x4x?xf32>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x4x64xbf16>, memref<?x256x2x64xbf16>,
                            memref<?x256x2x64xbf16>)
                        seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                        max(%max_q, %max_k) paged(%table : memref<?x?xi32>)
                        outs(%o : memref<?x4x64xbf16>) lse(%lse : memref<4x?xf32>)
                        workspace(%op, %lp : memref<2x?x4x64xf32>, memref<2x4x?xf32>)
                        {causal}
  return
}

// -----

// CHECK-LABEL: func.func @grad_dkdv_mma
// CHECK: attn.grad_dkdv_mma q(%{{.*}}, %{{.*}} : {{.*}}) kv({{.*}}) rows({{.*}}) dq({{.*}}) scratch({{.*}}) at[%{{.*}}, %{{.*}}] (%{{.*}}, %{{.*}}, causal_offset %{{.*}}) state(%{{.*}}, %{{.*}} : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>) {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = 1.250000e-01 : f32}
func.func @grad_dkdv_mma(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>,
    %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
    %lse: memref<1x2x64xf32>, %dqa: memref<1x2x1x2x64x64xf32>,
    %st: memref<2x64x64xf32, #gpu.address_space<workgroup>>, %i: index,
    %dk: !attn.wg_fragment<128x128xf32>, %dkm: memref<1x1x300x128xbf16>)
    -> (!attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>) {
  %a, %b = attn.grad_dkdv_mma q(%q, %q : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
      kv(%k, %k : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x64xf32>)
      scratch(%q, %st : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>) at[%i, %i] (%i, %i, causal_offset %i)
      state(%dk, %dk : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>)
      {head_dim = 128 : i64, mask = #attn.mask<causal>, scale = 0.125 : f32}
  // dK, dV stored from the consumer warpgroups' fragments.
  // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !attn.wg_fragment<128x128xf32>, memref<1x1x300x128xbf16>
  attn.store_tile %a, %dkm[%i, %i, %i] : !attn.wg_fragment<128x128xf32>, memref<1x1x300x128xbf16>
  return %a, %b : !attn.wg_fragment<128x128xf32>, !attn.wg_fragment<128x128xf32>
}

// -----

// The online-softmax state of a warp-specialized consumer as warpgroup
// fragments (attn-tma-ring): the initial vectors converted once, then the
// step and the epilogue on !attn.wg_fragment.
!qs = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!kvs = memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @fragments
func.func @fragments(%q: !qs, %k: !kvs, %v: !kvs, %kpos: index, %nk: index,
                     %qpos: index, %m: vector<128xf32>,
                     %acc: vector<128x128xf32>,
                     %o: memref<1x2x256x128xbf16>, %b: index) {
  attn.warp_specialize consumers(2) registers(24, 240) producer {
    gpu.barrier
  } consumer {
    // CHECK: attn.to_wg_fragment %{{.*}} : vector<128xf32> to !attn.wg_fragment<128xf32>
    // CHECK: attn.to_wg_fragment %{{.*}} : vector<128x128xf32> to !attn.wg_fragment<128x128xf32>
    %mf = attn.to_wg_fragment %m : vector<128xf32> to !attn.wg_fragment<128xf32>
    %af = attn.to_wg_fragment %acc : vector<128x128xf32> to !attn.wg_fragment<128x128xf32>
    // CHECK: attn.online_attention_mma {{.*}} state(%{{.*}}, %{{.*}}, %{{.*}} : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x128xf32>)
    %m1, %l1, %a1 = attn.online_attention_mma q(%q : !qs) kv(%k, %v : !kvs, !kvs)
        keys(%kpos, %nk) rows(%qpos)
        state(%mf, %mf, %af : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x128xf32>)
        {head_dim = 128 : i64, mask = #attn.mask<none>, scale = 0.0883789 : f32}
    // CHECK: attn.epilogue state({{.*}} : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x128xf32>)
    attn.epilogue state(%m1, %l1, %a1 : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x128xf32>)
        to %o[%b, %b, %qpos, %b] staging(%q : !qs) : memref<1x2x256x128xbf16>
  }
  return
}

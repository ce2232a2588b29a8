// RUN: attn-opt %s --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s

// #attn.key_mask on the forward ops: printed with its given parameters
// only (left and right default to -1, chunk and prefix to none).

// CHECK-LABEL: func.func @window
//       CHECK:   attn.attention {{.*}} {key_mask = #attn.key_mask<left = 4095, right = 0>}
func.func @window(%q: memref<1x32x8192x128xbf16>, %k: memref<1x8x8192x128xbf16>,
                  %v: memref<1x8x8192x128xbf16>, %o: memref<1x32x8192x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x32x8192x128xbf16>,
      memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
      outs(%o : memref<1x32x8192x128xbf16>)
      {key_mask = #attn.key_mask<left = 4095, right = 0>}
  return
}

// -----

// CHECK-LABEL: func.func @chunked_causal
//       CHECK:   attn.attention {{.*}} {causal, key_mask = #attn.key_mask<chunk = 8192>}
func.func @chunked_causal(%q: memref<1x40x?x128xbf16>, %k: memref<1x8x?x128xbf16>,
                          %v: memref<1x8x?x128xbf16>, %o: memref<1x40x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x40x?x128xbf16>,
      memref<1x8x?x128xbf16>, memref<1x8x?x128xbf16>)
      outs(%o : memref<1x40x?x128xbf16>)
      {causal, key_mask = #attn.key_mask<chunk = 8192>}
  return
}

// -----

// CHECK-LABEL: func.func @prefix_lm
//       CHECK:   attn.partial_attention {{.*}} {causal, key_mask = #attn.key_mask<prefix = 16>}
func.func @prefix_lm(%q: memref<2x4x64x64xf16>, %k: memref<2x4x64x64xf16>,
                     %v: memref<2x4x64x64xf16>, %op: memref<4x2x4x64x64xf32>,
                     %lp: memref<4x2x4x64xf32>) {
  attn.partial_attention ins(%q, %k, %v : memref<2x4x64x64xf16>,
      memref<2x4x64x64xf16>, memref<2x4x64x64xf16>)
      outs(%op, %lp : memref<4x2x4x64x64xf32>, memref<4x2x4x64xf32>)
      {causal, key_mask = #attn.key_mask<prefix = 16>}
  return
}

// -----

// A right-only window (FlashAttention's window_size = (-1, 2)).
// CHECK-LABEL: func.func @right_only
//       CHECK:   key_mask = #attn.key_mask<right = 2>
func.func @right_only(%q: memref<?x32x128xbf16>, %k: memref<?x8x128xbf16>,
                      %v: memref<?x8x128xbf16>, %cq: memref<5xi32>,
                      %ck: memref<5xi32>, %mq: index, %mk: index,
                      %o: memref<?x32x128xbf16>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x32x128xbf16>,
      memref<?x8x128xbf16>, memref<?x8x128xbf16>)
      seqlens(%cq, %ck : memref<5xi32>, memref<5xi32>)
      max(%mq, %mk) outs(%o : memref<?x32x128xbf16>)
      {key_mask = #attn.key_mask<right = 2>}
  return
}

// -----

// Softcapping and learned sinks (gpt-oss: one f32 logit per query head);
// the sinks clause comes last, on attn.decode_combine too.
// CHECK-LABEL: func.func @alibi
//       CHECK:   attn.attention {{.*}} alibi(%{{.*}} : memref<32xf32>) sinks(%{{.*}} : memref<32xf32>) {causal}
//       CHECK:   attn.partial_attention {{.*}} alibi(%{{.*}} : memref<32xf32>) {causal}
func.func @alibi(%q: memref<2x32x64x128xbf16>, %o: memref<2x32x64x128xbf16>,
                 %slopes: memref<32xf32>, %sinks: memref<32xf32>,
                 %op: memref<2x2x32x64x128xf32>, %lp: memref<2x2x32x64xf32>) {
  attn.attention ins(%q, %q, %q : memref<2x32x64x128xbf16>,
      memref<2x32x64x128xbf16>, memref<2x32x64x128xbf16>)
      outs(%o : memref<2x32x64x128xbf16>) alibi(%slopes : memref<32xf32>)
      sinks(%sinks : memref<32xf32>) {causal}
  attn.partial_attention ins(%q, %q, %q : memref<2x32x64x128xbf16>,
      memref<2x32x64x128xbf16>, memref<2x32x64x128xbf16>)
      outs(%op, %lp : memref<2x2x32x64x128xf32>, memref<2x2x32x64xf32>)
      alibi(%slopes : memref<32xf32>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @gemma_gpt_oss
//       CHECK:   attn.attention ins({{.*}}) outs({{.*}}) sinks(%{{.*}} : memref<64xf32>) {causal, key_mask = #attn.key_mask<left = 127>, softcap = 5.000000e+01 : f32}
//       CHECK:   attn.decode_combine ins({{.*}}) outs({{.*}}) lse(%{{.*}} : memref<1x64x1xf32>) sinks(%{{.*}} : memref<64xf32>)
func.func @gemma_gpt_oss(%q: memref<1x64x1x64xbf16>, %k: memref<1x8x512x64xbf16>,
                         %o: memref<1x64x1x64xbf16>, %sinks: memref<64xf32>,
                         %op: memref<4x1x64x1x64xf32>, %lp: memref<4x1x64x1xf32>,
                         %lse: memref<1x64x1xf32>) {
  attn.attention ins(%q, %k, %k : memref<1x64x1x64xbf16>,
      memref<1x8x512x64xbf16>, memref<1x8x512x64xbf16>)
      outs(%o : memref<1x64x1x64xbf16>) sinks(%sinks : memref<64xf32>)
      {causal, key_mask = #attn.key_mask<left = 127>, softcap = 50.0 : f32}
  attn.decode_combine ins(%op, %lp : memref<4x1x64x1x64xf32>, memref<4x1x64x1xf32>)
      outs(%o : memref<1x64x1x64xbf16>) lse(%lse : memref<1x64x1xf32>)
      sinks(%sinks : memref<64xf32>)
  return
}

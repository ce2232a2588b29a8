// RUN: attn-opt %s --split-input-file -verify-diagnostics

// The attention variants' verifiers, one case per message: #attn.key_mask,
// the tile step's check that a key mask is placed by causal_offset,
// `softcap` (0 = off on the ops users write, positive on the tile step),
// sinks and ALiBi slopes.

func.func @left(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{window sides left and right must be -1 (unbounded) or at least 0, but got left = -2, right = 0}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = #attn.key_mask<left = -2, right = 0>}
  return
}

// -----

func.func @right(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{window sides left and right must be -1 (unbounded) or at least 0, but got left = 3, right = -5}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = #attn.key_mask<left = 3, right = -5>}
  return
}

// -----

func.func @chunk(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{chunk must be a positive number of positions, but got 0}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {causal, key_mask = #attn.key_mask<chunk = 0>}
  return
}

// -----

func.func @prefix(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{prefix must be 0 or more keys, but got -1}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {causal, key_mask = #attn.key_mask<prefix = -1>}
  return
}

// -----

func.func @prefix_window(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{prefix takes no left window and no chunk (a query's keys must stay one interval)}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {causal, key_mask = #attn.key_mask<left = 4, prefix = 2>}
  return
}

// -----

func.func @empty(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{a key mask with no window side, chunk or prefix masks nothing: leave it out}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = #attn.key_mask<left = -1>}
  return
}

// -----

func.func @not_a_key_mask(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{attribute 'key_mask' failed to satisfy constraint}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = 4 : i64}
  return
}

// -----

func.func @step_without_causal(%q: vector<8x64xf16>, %k: memref<1x1x8x64xf16>,
                               %i: index, %m: vector<8xf32>, %l: vector<8xf32>,
                               %acc: vector<8x64xf32>) {
  // expected-error @+1 {{attribute 'key_mask' needs mask causal (its interval is placed by causal_offset)}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<8x64xf16>)
      kv(%k, %k : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<8xf32>, vector<8xf32>, vector<8x64xf32>)
      {block_n = 4 : i64, mask = #attn.mask<bounds>, scale = 0.125 : f32,
       key_mask = #attn.key_mask<left = 2, right = 0>}
  return
}

// -----

func.func @softcap_negative(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'softcap' must be a positive normal f32 at most 2.35866e+38 (softcap * log2(e) must be finite) or 0 (off), but got -50}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>) {softcap = -50.0 : f32}
  return
}

// -----

func.func @softcap_inf(%q: memref<1x1x8x64xf16>, %op: memref<2x1x1x8x64xf32>,
                       %lp: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op attribute 'softcap' must be a positive normal f32 at most 2.35866e+38 (softcap * log2(e) must be finite) or 0 (off), but got inf}}
  attn.partial_attention ins(%q, %q, %q : memref<1x1x8x64xf16>,
      memref<1x1x8x64xf16>, memref<1x1x8x64xf16>)
      outs(%op, %lp : memref<2x1x1x8x64xf32>, memref<2x1x1x8xf32>)
      {softcap = 0x7F800000 : f32}
  return
}

// -----

func.func @softcap_subnormal(%q: memref<?x2x64xf16>, %c: memref<3xi32>,
                             %n: index, %o: memref<?x2x64xf16>) {
  // expected-error @+1 {{'attn.varlen_attention' op attribute 'softcap' must be a positive normal f32 at most 2.35866e+38 (softcap * log2(e) must be finite) or 0 (off), but got 1.4013e-45}}
  attn.varlen_attention ins(%q, %q, %q : memref<?x2x64xf16>,
      memref<?x2x64xf16>, memref<?x2x64xf16>)
      seqlens(%c, %c : memref<3xi32>, memref<3xi32>)
      max(%n, %n) outs(%o : memref<?x2x64xf16>) {softcap = 0x00000001 : f32}
  return
}

// -----

func.func @step_softcap_off(%q: vector<8x64xf16>, %k: memref<1x1x8x64xf16>,
                            %i: index, %m: vector<8xf32>, %l: vector<8xf32>,
                            %acc: vector<8x64xf32>) {
  // expected-error @+1 {{attribute 'softcap' must be a positive normal f32 at most 2.35866e+38 (softcap * log2(e) must be finite), but got 0}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<8x64xf16>)
      kv(%k, %k : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<8xf32>, vector<8xf32>, vector<8x64xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.125 : f32,
       softcap = 0.0 : f32}
  return
}

// -----

func.func @sinks_shape(%q: memref<1x4x8x64xf16>, %o: memref<1x4x8x64xf16>,
                       %s: memref<8xf32>) {
  // expected-error @+1 {{operand 'sinks' must have one value per query head, Hq = 4, but got 8}}
  attn.attention ins(%q, %q, %q : memref<1x4x8x64xf16>, memref<1x4x8x64xf16>,
                     memref<1x4x8x64xf16>)
      outs(%o : memref<1x4x8x64xf16>) sinks(%s : memref<8xf32>)
  return
}

// -----

func.func @sinks_type(%q: memref<1x4x8x64xf16>, %o: memref<1x4x8x64xf16>,
                      %s: memref<4xf16>) {
  // expected-error @+1 {{operand 'sinks' element type must be f32, but got 'f16'}}
  attn.attention ins(%q, %q, %q : memref<1x4x8x64xf16>, memref<1x4x8x64xf16>,
                     memref<1x4x8x64xf16>)
      outs(%o : memref<1x4x8x64xf16>) sinks(%s : memref<4xf16>)
  return
}

// -----

func.func @sinks_rank(%op: memref<2x1x4x1x64xf32>, %lp: memref<2x1x4x1xf32>,
                      %o: memref<1x4x1x64xbf16>, %s: memref<1x4xf32>) {
  // expected-error @+1 {{operand 'sinks' must be a rank-1 memref [Hq], but got rank 2}}
  attn.decode_combine ins(%op, %lp : memref<2x1x4x1x64xf32>, memref<2x1x4x1xf32>)
      outs(%o : memref<1x4x1x64xbf16>) sinks(%s : memref<1x4xf32>)
  return
}

// -----

func.func @sinks_varlen(%q: memref<?x2x64xf16>, %c: memref<3xi32>, %n: index,
                        %o: memref<?x2x64xf16>, %s: memref<3xf32>) {
  // expected-error @+1 {{operand 'sinks' must have one value per query head, Hq = 2, but got 3}}
  attn.varlen_attention ins(%q, %q, %q : memref<?x2x64xf16>,
      memref<?x2x64xf16>, memref<?x2x64xf16>)
      seqlens(%c, %c : memref<3xi32>, memref<3xi32>)
      max(%n, %n) outs(%o : memref<?x2x64xf16>) sinks(%s : memref<3xf32>)
  return
}

// -----

func.func @sinks_twice(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>,
                       %s: memref<1xf32>) {
  // expected-error @+3 {{clause 'sinks' is out of order or given twice}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>) sinks(%s : memref<1xf32>) sinks(%s : memref<1xf32>)
  return
}

// -----

func.func @alibi_shape(%q: memref<1x4x8x64xf16>, %op: memref<2x1x4x8x64xf32>,
                       %lp: memref<2x1x4x8xf32>, %s: memref<2xf32>) {
  // expected-error @+1 {{operand 'alibi_slopes' must have one value per query head, Hq = 4, but got 2}}
  attn.partial_attention ins(%q, %q, %q : memref<1x4x8x64xf16>,
      memref<1x4x8x64xf16>, memref<1x4x8x64xf16>)
      outs(%op, %lp : memref<2x1x4x8x64xf32>, memref<2x1x4x8xf32>)
      alibi(%s : memref<2xf32>)
  return
}

// -----

func.func @alibi_type(%q: memref<1x4x8x64xf16>, %o: memref<1x4x8x64xf16>,
                      %s: memref<4xi32>) {
  // expected-error @+1 {{operand 'alibi_slopes' element type must be f32, but got 'i32'}}
  attn.attention ins(%q, %q, %q : memref<1x4x8x64xf16>, memref<1x4x8x64xf16>,
                     memref<1x4x8x64xf16>)
      outs(%o : memref<1x4x8x64xf16>) alibi(%s : memref<4xi32>)
  return
}

// -----

func.func @alibi_after_sinks(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>,
                             %s: memref<1xf32>) {
  // expected-error @+3 {{clause 'alibi' is out of order or given twice}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>) sinks(%s : memref<1xf32>) alibi(%s : memref<1xf32>)
  return
}

// -----

func.func @step_alibi_without_offset(%q: vector<8x64xf16>,
                                     %k: memref<1x1x8x64xf16>, %i: index,
                                     %m: vector<8xf32>, %l: vector<8xf32>,
                                     %acc: vector<8x64xf32>,
                                     %slopes: vector<8xf32>) {
  // expected-error @+1 {{operand 'causal_offset' (the rows' key positions) is required with alibi_slopes}}
  %m1, %l1, %a1 = attn.online_attention q(%q : vector<8x64xf16>)
      kv(%k, %k : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>)
      at[%i, %i, %i, %i] rows(%i)
      state(%m, %l, %acc : vector<8xf32>, vector<8xf32>, vector<8x64xf32>)
      alibi(%slopes : vector<8xf32>)
      {block_n = 4 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

func.func @window_too_long(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{right must be at most 2147483647 (the longest sequence), but got 9223372036854775807}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = #attn.key_mask<left = 4, right = 9223372036854775807>}
  return
}

// -----

func.func @softcap_too_large(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+1 {{attribute 'softcap' must be a positive normal f32 at most 2.35866e+38 (softcap * log2(e) must be finite) or 0 (off), but got 3e+38}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>) {softcap = 3.0e38 : f32}
  return
}

// -----

func.func @prefix_alone(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+1 {{attribute 'key_mask' has a prefix but no right side and the op is not causal: every key is visible (prefix-LM is a prefix under `causal` or `right`)}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>) {key_mask = #attn.key_mask<prefix = 5>}
  return
}

// -----

func.func @left_too_long(%q: memref<1x1x8x64xf16>, %o: memref<1x1x8x64xf16>) {
  // expected-error @+4 {{left must be at most 2147483647 (the longest sequence), but got 2147483648}}
  attn.attention ins(%q, %q, %q : memref<1x1x8x64xf16>, memref<1x1x8x64xf16>,
                     memref<1x1x8x64xf16>)
      outs(%o : memref<1x1x8x64xf16>)
      {key_mask = #attn.key_mask<left = 2147483648>}
  return
}

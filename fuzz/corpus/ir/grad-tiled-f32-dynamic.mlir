// The backward's tile ops (attn-tile-grad output), f32, dynamic lengths.
func.func @tiles(%q: memref<1x2x?x8xf32>, %k: memref<1x1x?x8xf32>,
                 %lse: memref<1x2x?xf32>, %i: index, %off: index) {
  %cst = arith.constant dense<0.000000e+00> : vector<4x8xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : vector<2x8xf32>
  %qt = attn.load_tile %q[%i, %i, %i, %i] : memref<1x2x?x8xf32> -> vector<4x8xf32>
  %kt = attn.load_tile %k[%i, %i, %i, %i] : memref<1x1x?x8xf32> -> vector<2x8xf32>
  %r = attn.load_rows %lse[%i, %i, %i] : memref<1x2x?xf32> -> vector<4xf32>
  %d = attn.grad_delta %qt, %qt : vector<4x8xf32>, vector<4x8xf32> -> vector<4xf32>
  attn.store_rows %d, %lse[%i, %i, %i] : vector<4xf32>, memref<1x2x?xf32>
  %dk, %dv = attn.grad_dkdv q(%qt, %qt : vector<4x8xf32>, vector<4x8xf32>)
      lse_delta(%r, %d : vector<4xf32>, vector<4xf32>)
      kv(%kt, %kt : vector<2x8xf32>, vector<2x8xf32>) at(%i, %i, causal_offset %off)
      state(%cst_0, %cst_0 : vector<2x8xf32>, vector<2x8xf32>)
      {mask = #attn.mask<causal>, scale = 0.35 : f32}
  %dq = attn.grad_dq q(%qt, %qt : vector<4x8xf32>, vector<4x8xf32>)
      lse_delta(%r, %d : vector<4xf32>, vector<4xf32>)
      kv(%k, %k : memref<1x1x?x8xf32>, memref<1x1x?x8xf32>)
      at[%i, %i, %i] rows(%i) state(%cst : vector<4x8xf32>)
      {block_n = 2 : i64, mask = #attn.mask<bounds>, scale = 0.35 : f32}
  attn.store_tile %dq, %q[%i, %i, %i] : vector<4x8xf32>, memref<1x2x?x8xf32>
  attn.store_tile %dk, %k[%i, %i, %i] : vector<2x8xf32>, memref<1x1x?x8xf32>
  attn.store_tile %dv, %k[%i, %i, %i] : vector<2x8xf32>, memref<1x1x?x8xf32>
  return
}

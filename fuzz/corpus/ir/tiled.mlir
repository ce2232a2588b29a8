// attn-tile output (block-m=4 block-n=2): seeds the later passes directly.
func.func @tiled(%arg0: memref<1x2x6x16xf16>, %arg1: memref<1x1x6x16xf16>, %arg2: memref<1x1x6x16xf16>, %arg3: memref<1x2x6x16xf16>, %arg4: memref<1x2x6xf32>) {
  %c3 = arith.constant 3 : index
  %cst = arith.constant dense<0.000000e+00> : vector<4x16xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : vector<4xf32>
  %cst_1 = arith.constant dense<0xFF800000> : vector<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.forall (%arg5, %arg6, %arg7) in (2, 2, 1) {
    %0 = arith.muli %arg5, %c4 : index
    %1 = arith.divui %arg6, %c2 : index
    %2 = attn.load_tile %arg0[%arg7, %arg6, %0, %c0] : memref<1x2x6x16xf16> -> vector<4x16xf16>
    %3:3 = scf.for %arg8 = %c0 to %c3 step %c1 iter_args(%arg9 = %cst_1, %arg10 = %cst_0, %arg11 = %cst) -> (vector<4xf32>, vector<4xf32>, vector<4x16xf32>) {
      %4 = arith.muli %arg8, %c2 : index
      %new_m, %new_l, %new_acc = attn.online_attention q(%2 : vector<4x16xf16>) kv(%arg1, %arg2 : memref<1x1x6x16xf16>, memref<1x1x6x16xf16>) at[%arg7, %1, %4, %c0] rows(%0, causal_offset %c0) state(%arg9, %arg10, %arg11 : vector<4xf32>, vector<4xf32>, vector<4x16xf32>) {block_n = 2 : i64, mask = #attn.mask<causal>, scale = 2.500000e-01 : f32}
      scf.yield %new_m, %new_l, %new_acc : vector<4xf32>, vector<4xf32>, vector<4x16xf32>
    }
    attn.epilogue state(%3#0, %3#1, %3#2 : vector<4xf32>, vector<4xf32>, vector<4x16xf32>) to %arg3, lse %arg4[%arg7, %arg6, %0, %c0] : memref<1x2x6x16xf16>, memref<1x2x6xf32>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// RUN: attn-opt %s --attn-quantize-fp8=block-m=100 -verify-diagnostics -o /dev/null

// A block size left 0 is the FP8 attention's tile, which attn-select-config
// chooses: a BLOCK_M it cannot run is its error, at the op.
func.func @odd_block_m(%q: memref<1x4x256x128xbf16>, %k: memref<1x4x256x128xbf16>,
                       %v: memref<1x4x256x128xbf16>, %o: memref<1x4x256x128xbf16>) {
  // expected-error @+1 {{attn-select-config: BLOCK_M must be 64, 128 or 192 (one to three consumer warpgroups of 64 rows), but got 100}}
  attn.attention ins(%q, %k, %v : memref<1x4x256x128xbf16>, memref<1x4x256x128xbf16>,
                     memref<1x4x256x128xbf16>) outs(%o : memref<1x4x256x128xbf16>)
  return
}

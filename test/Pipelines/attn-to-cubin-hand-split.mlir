// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s

// attn.partial_attention + attn.decode_combine written by hand (no
// attn-split-kv): the tensor-core pipeline lowers the partial attention to
// wgmma and the combine through the CUDA-core passes, as for splits=S
// (the combine's passes used to run only with splits != 1, which left
// its tile ops for attn-lower-to-nvvm to refuse).
// CHECK-LABEL: func.func @hand_split
//       CHECK:   gpu.launch_func
//       CHECK:   gpu.launch_func
//   CHECK-NOT:   attn.
func.func @hand_split(%q: memref<1x4x3x64xbf16>, %k: memref<1x2x40x64xbf16>,
                      %op: memref<4x1x4x3x64xf32>, %lp: memref<4x1x4x3xf32>,
                      %o: memref<1x4x3x64xbf16>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x3x64xbf16>, memref<1x2x40x64xbf16>, memref<1x2x40x64xbf16>)
      outs(%op, %lp : memref<4x1x4x3x64xf32>, memref<4x1x4x3xf32>) {causal}
  attn.decode_combine ins(%op, %lp : memref<4x1x4x3x64xf32>, memref<4x1x4x3xf32>) outs(%o : memref<1x4x3x64xbf16>)
  return
}

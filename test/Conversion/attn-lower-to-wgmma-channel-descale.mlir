// RUN: not attn-opt %s --attn-lower-to-wgmma 2>&1 | FileCheck %s

// Per-channel V descales (attn-quantize-fp8 v-granularity=channel) lower to
// the host only: the tensor-core lowering refuses an epilogue that carries
// them rather than dropping the factors.
// CHECK: error: attn-lower-to-wgmma: per-channel V descales (channel_descale) have no GPU lowering (the tensor-core path takes fp32 [B, Hkv] descales); they lower to the host only: --attn-to-cpu
func.func @channel_descale(%m: vector<64xf32>, %acc: vector<64x64xf32>,
                           %o: memref<1x2x128x64xbf16>, %i: index,
                           %c: vector<64xf32>) {
  attn.epilogue state(%m, %m, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>)
      to %o[%i, %i, %i, %i] channel_descale(%c : vector<64xf32>) : memref<1x2x128x64xbf16>
  return
}

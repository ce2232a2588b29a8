// RUN: attn-opt %s --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring | FileCheck %s

// A sliding window through the tensor-core ring: the three K/V stages of
// attn-causal-split (masked left edge, mask-free middle, masked diagonal)
// become the consumer's loops over one ring, the masked steps keeping the
// key mask for attn-lower-to-wgmma.
// CHECK-LABEL: func.func @window
//       CHECK:   attn.warp_specialize
//       CHECK:   consumer {
//       CHECK:     scf.for
//       CHECK:       attn.online_attention_mma
//  CHECK-SAME:         key_mask = #attn.key_mask<left = 511, right = 0>
//  CHECK-SAME:         mask = #attn.mask<causal>
//       CHECK:     scf.for
//       CHECK:       attn.online_attention_mma
//   CHECK-NOT:         key_mask
//  CHECK-SAME:         mask = #attn.mask<none>
//       CHECK:     scf.for
//       CHECK:       attn.online_attention_mma
//  CHECK-SAME:         key_mask = #attn.key_mask<left = 511, right = 0>
//       CHECK:     attn.epilogue
func.func @window(%q: memref<1x4x2048x64xbf16>, %o: memref<1x4x2048x64xbf16>) {
  attn.attention ins(%q, %q, %q : memref<1x4x2048x64xbf16>, memref<1x4x2048x64xbf16>,
      memref<1x4x2048x64xbf16>) outs(%o : memref<1x4x2048x64xbf16>)
      {causal, key_mask = #attn.key_mask<left = 511>}
  return
}

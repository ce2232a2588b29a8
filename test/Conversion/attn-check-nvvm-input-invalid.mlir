// RUN: attn-opt %s --split-input-file --attn-check-nvvm-input -verify-diagnostics -o /dev/null

// An attention op not tiled yet.
func.func @untiled(%q: memref<1x1x64x64xbf16>, %o: memref<1x1x64x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile, attn-causal-split, then attn-async-pipeline and attn-lower-to-wgmma, or attn-distribute-rows and attn-online-softmax first (or --attn-to-cubin)}}
  attn.attention ins(%q, %q, %q : memref<1x1x64x64xbf16>, memref<1x1x64x64xbf16>,
                     memref<1x1x64x64xbf16>) outs(%o : memref<1x1x64x64xbf16>)
  return
}

// -----

// A CTA loop with no thread loop: every row would run on one thread.
func.func @unmapped(%out: memref<4x64xf32>) {
  scf.forall (%i) in (4) {
    // expected-error @+1 {{attn-lower-to-nvvm needs the CTA loop mapped to threads: run attn-distribute-rows before attn-online-softmax (or attn-async-pipeline and attn-lower-to-wgmma)}}
    scf.forall (%t) in (64) {
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%i, %t] : memref<4x64xf32>
    }
  } {mapping = [#gpu.block<x>]}
  return
}


// -----

// The backward is lowered by the tensor-core path only.
func.func @grad(%q: memref<1x2x8x16xf16>, %lse: memref<1x2x8xf32>,
                %dq: memref<1x2x8x16xf16>, %dk: memref<1x2x8x16xf16>,
                %dv: memref<1x2x8x16xf16>) {
  // expected-error @+1 {{'attn.attention_grad' op attn-lower-to-nvvm needs it lowered: run attn-grad-async-pipeline and attn-lower-to-wgmma first (or --attn-to-cubin, path=wgmma)}}
  attn.attention_grad ins(%q, %q, %q, %q, %q, %lse : memref<1x2x8x16xf16>,
      memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
      memref<1x2x8x16xf16>, memref<1x2x8xf32>)
      outs(%dq, %dk, %dv : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
           memref<1x2x8x16xf16>)
  return
}

// RUN: attn-opt %s --attn-launch-hopper-ctas -verify-diagnostics -o /dev/null

func.func @two_d(%out: memref<4xf32>) {
  // expected-error @+1 {{attn-lower-to-nvvm: expected the 3-D CTA loop (Q block, head, batch) of attn-tile}}
  scf.forall (%q, %h) in (4, 1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %out[%q] : memref<4xf32>
  } {attn.threads = 384 : i64}
  return
}

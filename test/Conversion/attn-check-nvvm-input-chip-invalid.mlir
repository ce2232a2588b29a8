// RUN: attn-opt %s --attn-check-nvvm-input="chip=sm_100a" -verify-diagnostics -o /dev/null

// A tensor-core CTA (warpgroup MMA, setmaxnreg) needs sm_90a.
func.func @hopper(%out: memref<4xf32>) {
  // expected-error @+1 {{attn-lower-to-nvvm: the tensor-core kernel (warpgroup MMA, setmaxnreg) needs chip sm_90a, not sm_100a; use path=fma for other chips}}
  scf.forall (%q, %h, %b) in (4, 1, 1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %out[%q] : memref<4xf32>
  } {attn.threads = 384 : i64}
  return
}

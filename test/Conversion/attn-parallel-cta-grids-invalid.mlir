// RUN: attn-opt %s --attn-parallel-cta-grids -verify-diagnostics -o /dev/null

// scf.parallel has no results for a tensor-valued scf.forall.
func.func @tensor(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'scf.forall' op attn-lower-to-nvvm: expected a bufferized scf.forall (no results)}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    %z = arith.constant dense<0.0> : tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %z into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

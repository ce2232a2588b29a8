// RUN: attn-opt %s --attn-lower-to-cpu -verify-diagnostics

// An op with no lowering to the LLVM dialect is reported by name instead of
// leaving a module that fails later in translation.
func.func @tensor_left(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{attn-lower-to-cpu: tensor.empty is left, with no lowering to the LLVM dialect; the host lowering takes the nest of attn-tile, attn-causal-split and attn-online-softmax on memrefs}}
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// RUN: attn-opt %s --split-input-file --attn-grad-async-pipeline -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-grad-async-pipeline="stages=1" 2>&1 | FileCheck %s --check-prefix=STAGES

// Errors of attn-grad-async-pipeline (lib/Transforms/AttnGradAsyncPipeline.cpp)
// on backward calls the attn.attention_grad verifier accepts.

// STAGES: error: attn-grad-async-pipeline: stages must be in [2, 4], but got 1
// RUN: not attn-opt %S/attn-grad-async-pipeline.mlir --attn-grad-async-pipeline="stages=3" 2>&1 | FileCheck %s --check-prefix=SMEM
// SMEM: error: 'attn.attention_grad' op attn-grad-async-pipeline: 3 stages need 262144 bytes of shared memory at D = 128, but a CTA has 232448 (use fewer stages)

func.func @dynamic(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x8x64xbf16>,
                   %lse: memref<1x2x?xf32>, %dq: memref<1x2x?x64xbf16>,
                   %dk: memref<1x2x8x64xbf16>, %dv: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'attn.attention_grad' op attn-grad-async-pipeline needs static shapes, but operand 'memref<1x2x?x64xbf16>' has a dynamic size}}
  attn.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<1x2x?x64xbf16>,
      memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x?x64xbf16>,
      memref<1x2x?x64xbf16>, memref<1x2x?xf32>)
      outs(%dq, %dk, %dv : memref<1x2x?x64xbf16>, memref<1x2x8x64xbf16>,
           memref<1x2x8x64xbf16>)
  return
}

// -----

func.func @head_dim(%q: memref<1x2x8x32xbf16>, %lse: memref<1x2x8xf32>,
    %dq: memref<1x2x8x32xbf16>, %dk: memref<1x2x8x32xbf16>, %dv: memref<1x2x8x32xbf16>) {
  // expected-error @+1 {{'attn.attention_grad' op attn-grad-async-pipeline needs head dim D = 64 or 128 (dK and dV stay in registers), but got 32}}
  attn.attention_grad ins(%q, %q, %q, %q, %q, %lse : memref<1x2x8x32xbf16>,
      memref<1x2x8x32xbf16>, memref<1x2x8x32xbf16>, memref<1x2x8x32xbf16>,
      memref<1x2x8x32xbf16>, memref<1x2x8xf32>)
      outs(%dq, %dk, %dv : memref<1x2x8x32xbf16>, memref<1x2x8x32xbf16>,
           memref<1x2x8x32xbf16>)
  return
}

// -----

func.func @f32(%q: memref<1x2x8x64xf32>, %lse: memref<1x2x8xf32>,
    %dq: memref<1x2x8x64xf32>, %dk: memref<1x2x8x64xf32>, %dv: memref<1x2x8x64xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op attn-grad-async-pipeline needs f16 or bf16 inputs, but got 'f32'}}
  attn.attention_grad ins(%q, %q, %q, %q, %q, %lse : memref<1x2x8x64xf32>,
      memref<1x2x8x64xf32>, memref<1x2x8x64xf32>, memref<1x2x8x64xf32>,
      memref<1x2x8x64xf32>, memref<1x2x8xf32>)
      outs(%dq, %dk, %dv : memref<1x2x8x64xf32>, memref<1x2x8x64xf32>,
           memref<1x2x8x64xf32>)
  return
}

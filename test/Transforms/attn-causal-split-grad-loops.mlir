// RUN: attn-opt %s --split-input-file --attn-tile-grad="block-m=16 block-n=8" --canonicalize --attn-causal-split-grad -verify-diagnostics | FileCheck %s

// attn-causal-split-grad splits only the block loops of attn-tile-grad (the
// step's block position is iv * BLOCK): a loop canonicalize has inlined
// leaves its step masked (still correct), and the GQA heads loop around it
// is not mistaken for a Q-block loop.

// Nq = 6 <= BLOCK_M: one Q block, whose loop canonicalize inlines into the
// heads loop (g < Hq / Hkv = 2).
// CHECK-LABEL: func.func @one_q_block
//       CHECK:   scf.forall {{.*}} in (2, 2, 1) {
//       CHECK:     scf.for %{{.*}} = %c0 to %c2 step %c1
//       CHECK:       attn.grad_dkdv
//  CHECK-SAME:         mask = #attn.mask<causal>
//   CHECK-NOT:     attn.stage
//       CHECK:   } {mapping
func.func @one_q_block(%q: memref<1x4x6x16xf16>, %k: memref<1x2x9x16xf16>,
                       %lse: memref<1x4x6xf32>,
                       %dq: memref<1x4x6x16xf16>, %dk: memref<1x2x9x16xf16>,
                       %dv: memref<1x2x9x16xf16>) {
  attn.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<1x4x6x16xf16>,
      memref<1x2x9x16xf16>, memref<1x2x9x16xf16>, memref<1x4x6x16xf16>,
      memref<1x4x6x16xf16>, memref<1x4x6xf32>)
      outs(%dq, %dk, %dv : memref<1x4x6x16xf16>, memref<1x2x9x16xf16>,
           memref<1x2x9x16xf16>) {causal}
  return
}

// -----

// Hand-written: a block loop whose dQ step takes q_pos from inside it; the
// bounds would be computed before the loop.
func.func @qpos_in_loop(%q: vector<4x8xf16>, %r: vector<4xf32>,
                        %k: memref<1x1x9x8xf16>, %off: index) -> vector<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : vector<4x8xf32>
  %dq = scf.for %kb = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (vector<4x8xf32>) {
    %kpos = arith.muli %kb, %c2 : index
    // expected-error @+1 {{attn-causal-split-grad needs the block position of the other operand, causal_offset and k defined outside the loop}}
    %s = attn.grad_dq q(%q, %q : vector<4x8xf16>, vector<4x8xf16>)
        lse_delta(%r, %r : vector<4xf32>, vector<4xf32>)
        kv(%k, %k : memref<1x1x9x8xf16>, memref<1x1x9x8xf16>)
        at[%c0, %c0, %kpos] rows(%kb, causal_offset %off) state(%acc : vector<4x8xf32>)
        {block_n = 2 : i64, mask = #attn.mask<causal>, scale = 0.25 : f32}
    scf.yield %s : vector<4x8xf32>
  }
  return %dq : vector<4x8xf32>
}

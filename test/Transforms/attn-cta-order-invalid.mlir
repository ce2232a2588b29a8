// The errors of attn-cta-order: its option only (it leaves alone the CTA
// loops it does not order).
// RUN: not attn-opt %s --attn-cta-order=l2-budget=-1 2>&1 | FileCheck %s
// CHECK: attn-opt: error: attn-cta-order: l2-budget must be a byte count >= 0, but got -1
func.func @empty() {
  return
}

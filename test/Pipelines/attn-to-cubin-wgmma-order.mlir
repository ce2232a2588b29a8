// The order of a causal grid in the launched kernel: the launch runs the
// CTA loop Q block fastest, and attn-async-pipeline rebinds the tile so that
// launch position p runs, K and V of all heads fitting in L2 here, Q block
// nQ - 1 - p / (H B) of (head, batch) pair p mod (H B): the longest tiles of
// the whole grid first.
// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s

// BLOCK_M = 192 (D = 64): ceil(300 / 192) = 2 Q blocks x 6 heads x 2
// batches = 24 CTAs; 12 (head, batch) pairs.
!q = memref<2x6x300x64xbf16>
!kv = memref<2x3x300x64xbf16>
func.func @q_block_major(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) {causal}
  return
}
// CHECK-LABEL: func.func @q_block_major
//       CHECK:   gpu.launch_func @q_block_major_kernel::@q_block_major_kernel blocks in (%c24, %c1, %c1)
//       CHECK: llvm.func @q_block_major_kernel(
//   CHECK-DAG:   %[[PAIRS:.*]] = llvm.mlir.constant(12 : index) : i64
//   CHECK-DAG:   %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
//   CHECK-DAG:   %[[HEADS:.*]] = llvm.mlir.constant(6 : index) : i64
//       CHECK:   %[[CTAID:.*]] = nvvm.read.ptx.sreg.ctaid.x
//       CHECK:   %[[ID:.*]] = llvm.sext %[[CTAID]]
// The launch's (q, h, b), Q block fastest, back to p = q + 2 (h + 6 b); then
// pair = p mod 12, Q block = (2 - 1) - p / 12, head = pair mod 6, batch =
// pair / 6.
//       CHECK:   llvm.add %{{.*}}, %{{.*}} : i64
//       CHECK:   %[[POS:.*]] = llvm.add %{{.*}}, %{{.*}} : i64
//       CHECK:   %[[ROUND:.*]] = llvm.udiv %[[POS]], %[[PAIRS]] : i64
//       CHECK:   llvm.sub %[[ONE]], %[[ROUND]] : i64
//       CHECK:   %[[PAIR:.*]] = llvm.urem %[[POS]], %[[PAIRS]] : i64
//       CHECK:   llvm.urem %[[PAIR]], %[[HEADS]] : i64
//       CHECK:   llvm.udiv %[[PAIR]], %[[HEADS]] : i64

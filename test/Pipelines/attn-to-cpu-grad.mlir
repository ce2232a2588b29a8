// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=2" -o %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=CLEAN < %t

// attn-to-cpu on the backward: attn-tile-grad, attn-causal-split-grad,
// attn-decompose-grad (+ LICM, canonicalize, CSE), attn-lower-to-cpu. The
// host function takes nine memref descriptors (eight rank-4 of 11 values,
// LSE rank-3 of 9: 97 arguments), allocates Delta with malloc and frees it,
// and has a C interface. Nothing but the LLVM dialect is left (CLEAN).
// CLEAN-NOT: {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|func|affine|gpu|builtin)\.}}
// CLEAN:     llvm.func @_mlir_ciface_grad(
// CLEAN-NOT: {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|func|affine|gpu|builtin)\.}}

// GQA 2/1, causal, Nq = 6, Nk = 5, D = 16, BM = 4, BN = 2.
// CHECK-DAG:   llvm.func @free(!llvm.ptr)
// CHECK-DAG:   llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @grad(
//  CHECK-SAME:   %arg96: i64) attributes {llvm.emit_c_interface} {
//       CHECK:   llvm.call @malloc
// P recomputed once per key of a block and stage: dK/dV (masked diagonal and
// mask-free Q blocks) and dQ (mask-free and masked K/V blocks), BN = 2 each.
// CHECK-COUNT-8:   llvm.intr.exp2({{.*}}) : (vector<4xf32>) -> vector<4xf32>
//   CHECK-NOT:   llvm.intr.exp2
//       CHECK:   llvm.call @free
//       CHECK:   llvm.return
// CHECK-LABEL: llvm.func @_mlir_ciface_grad(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface} {
//       CHECK:   llvm.call @grad(
func.func @grad(%q: memref<1x2x6x16xf16>, %k: memref<1x1x5x16xf16>,
                %v: memref<1x1x5x16xf16>, %o: memref<1x2x6x16xf16>,
                %do: memref<1x2x6x16xf16>, %lse: memref<1x2x6xf32>,
                %dq: memref<1x2x6x16xf16>, %dk: memref<1x1x5x16xf16>,
                %dv: memref<1x1x5x16xf16>) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x2x6x16xf16>,
      memref<1x1x5x16xf16>, memref<1x1x5x16xf16>, memref<1x2x6x16xf16>,
      memref<1x2x6x16xf16>, memref<1x2x6xf32>)
      outs(%dq, %dk, %dv : memref<1x2x6x16xf16>, memref<1x1x5x16xf16>,
           memref<1x1x5x16xf16>) {causal}
  return
}

// RUN: attn-opt %s --split-input-file --attn-to-cpu="block-m=4 block-n=2" -o %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=CLEAN < %t
// RUN: attn-opt %s --split-input-file --attn-to-cpu | FileCheck %s --check-prefix=DEFAULT

// attn-to-cpu = attn-tile, attn-causal-split, attn-online-softmax (+ LICM,
// canonicalize, CSE), attn-lower-to-cpu: a host function in the LLVM
// dialect with a C interface (_mlir_ciface_<name>) for the ExecutionEngine.
// Nothing of attn, vector, scf, math, memref, arith, cf or func is left
// (prefix CLEAN, over the whole output).
// CLEAN-NOT: {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|func|affine|gpu|builtin)\.}}
// CLEAN:     llvm.func @_mlir_ciface_gqa_bf16(
// CLEAN-NOT: {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|func|affine|gpu|builtin)\.}}

// Causal with LSE, Nq = 6, Nk = 7, D = 8, BM = 4, BN = 2.
// CHECK-NOT: func.func
// CHECK-LABEL: llvm.func @causal_lse(
// Each of Q, K, V, O is a rank-4 memref descriptor (2 pointers, offset,
// 4 sizes, 4 strides = 11 arguments), LSE a rank-3 one (9): 53 in all.
//  CHECK-SAME:   %arg52: i64) attributes {llvm.emit_c_interface} {
// Two K/V stages (full, masked), each with 1 + BN = 3 exp2: alpha, P_0, P_1.
// CHECK-COUNT-6:   llvm.intr.exp2({{.*}}) : (vector<4xf32>) -> vector<4xf32>
//   CHECK-NOT:   llvm.intr.exp2
// LSE: one log2 in the epilogue
//       CHECK:   llvm.intr.log2({{.*}}) : (vector<4xf32>) -> vector<4xf32>
//       CHECK:   llvm.return
//  CHECK-NEXT: }
// The C wrapper takes one pointer per memref descriptor and calls the body.
// CHECK-LABEL: llvm.func @_mlir_ciface_causal_lse(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface} {
//       CHECK:   llvm.call @causal_lse(
//       CHECK:   llvm.return
// DEFAULT-LABEL: llvm.func @causal_lse(
//   DEFAULT-NOT:   {{^ *(%[^ ]+ = )?"?(attn|vector|scf|math|memref|arith|cf|func|affine|gpu|builtin)\.}}
// Default BLOCK_M = 16: the state and exp2 work on 16-row vectors.
//       DEFAULT:   llvm.intr.exp2({{.*}}) : (vector<16xf32>) -> vector<16xf32>
//   DEFAULT-NOT:   llvm.intr.exp2({{.*}}) : (vector<4xf32>)
// DEFAULT-LABEL: llvm.func @_mlir_ciface_causal_lse(
func.func @causal_lse(%q: memref<1x1x6x8xf16>, %k: memref<1x1x7x8xf16>,
                      %v: memref<1x1x7x8xf16>, %o: memref<1x1x6x8xf16>,
                      %lse: memref<1x1x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x8xf16>, memref<1x1x7x8xf16>,
                     memref<1x1x7x8xf16>) outs(%o : memref<1x1x6x8xf16>)
                 lse(%lse : memref<1x1x6xf32>) {causal}
  return
}

// -----

// Non-causal, no LSE, GQA (Hq = 2, Hkv = 1), bf16, Nk = 4 = 2 * BN: a
// single unmasked K/V loop (3 exp2) and no log2.
// CHECK-NOT: func.func
// CHECK-LABEL: llvm.func @gqa_bf16(
//  CHECK-SAME:   attributes {llvm.emit_c_interface} {
// CHECK-COUNT-3:   llvm.intr.exp2
//   CHECK-NOT:   llvm.intr.exp2
//   CHECK-NOT:   llvm.intr.log2
//       CHECK:   llvm.return
// CHECK-LABEL: llvm.func @_mlir_ciface_gqa_bf16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface} {
//       CHECK:   llvm.call @gqa_bf16(
// DEFAULT-LABEL: llvm.func @gqa_bf16(
// DEFAULT-LABEL: llvm.func @_mlir_ciface_gqa_bf16(
func.func @gqa_bf16(%q: memref<1x2x6x8xbf16>, %k: memref<1x1x4x8xbf16>,
                    %v: memref<1x1x4x8xbf16>, %o: memref<1x2x6x8xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x8xbf16>, memref<1x1x4x8xbf16>,
                     memref<1x1x4x8xbf16>) outs(%o : memref<1x2x6x8xbf16>)
  return
}

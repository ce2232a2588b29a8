// The host lowering runs on any x86-64 CPU with nothing but the C library:
// f16/bf16 <-> f32 conversions are integer arithmetic and 16-bit floats are
// moved as i16. Baseline x86-64 code generation would otherwise call libgcc
// (__extendhfsf2, __truncsfhf2, and __truncsfbf2, which Debian 12's libgcc
// lacks, even for a bf16 phi or select). The object compiled for a baseline
// CPU may reference only libm's exp2f and log2f.
// RUN: attn-opt %s --attn-to-cpu="block-m=4 block-n=2" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.mlir -o %t.ll
// RUN: llc -O0 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64 -filetype=obj %t.ll -o %t.O0.o
// RUN: llvm-nm --undefined-only --format=just-symbols %t.O0.o | sed -E '/^(exp2f|log2f)$/d' | not grep .
// RUN: llc -O2 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64 -filetype=obj %t.ll -o %t.O2.o
// RUN: llvm-nm --undefined-only --format=just-symbols %t.O2.o | sed -E '/^(exp2f|log2f)$/d' | not grep .

// No 16-bit float type or conversion is left for LLVM.
// CHECK-LABEL: llvm.func @half_causal_lse(
// CHECK-NOT:   {{f16|bf16|fpext|fptrunc}}
// CHECK-LABEL: llvm.func @bfloat_dynamic(
// CHECK-NOT:   {{f16|bf16|fpext|fptrunc}}
// CHECK-LABEL: llvm.func @_mlir_ciface_bfloat_dynamic(
// CHECK-NOT:   {{f16|bf16|fpext|fptrunc}}
func.func @half_causal_lse(%q: memref<1x2x6x8xf16>, %k: memref<1x1x7x8xf16>,
                          %v: memref<1x1x7x8xf16>, %o: memref<1x2x6x8xf16>,
                          %lse: memref<1x2x6xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x8xf16>, memref<1x1x7x8xf16>,
                     memref<1x1x7x8xf16>) outs(%o : memref<1x2x6x8xf16>)
                 lse(%lse : memref<1x2x6xf32>) {causal}
  return
}

func.func @bfloat_dynamic(%q: memref<1x2x?x8xbf16>, %k: memref<1x2x?x8xbf16>,
                        %v: memref<1x2x?x8xbf16>, %o: memref<1x2x?x8xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x?x8xbf16>, memref<1x2x?x8xbf16>,
                     memref<1x2x?x8xbf16>) outs(%o : memref<1x2x?x8xbf16>)
                 {causal}
  return
}

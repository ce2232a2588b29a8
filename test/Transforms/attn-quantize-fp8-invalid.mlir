// RUN: attn-opt %s --split-input-file --attn-quantize-fp8=hadamard=true -verify-diagnostics

// Errors of attn-quantize-fp8 (lib/Transforms/AttnQuantizeFP8.cpp).

// The FP8 attention writes a bf16 O: f16 would need a conversion of O.
func.func @f16(%q: memref<1x2x8x16xf16>, %o: memref<1x2x8x16xf16>) {
  // expected-error @+1 {{'attn.attention' op attn-quantize-fp8 takes bf16 inputs (the FP8 attention writes a bf16 O), but got 'f16'}}
  attn.attention ins(%q, %q, %q : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
                     memref<1x2x8x16xf16>) outs(%o : memref<1x2x8x16xf16>)
  return
}

// -----

func.func @dynamic(%q: memref<1x2x?x16xbf16>, %o: memref<1x2x?x16xbf16>) {
  // expected-error @+1 {{'attn.attention' op attn-quantize-fp8 needs static shapes, but Q is 'memref<1x2x?x16xbf16>'}}
  attn.attention ins(%q, %q, %q : memref<1x2x?x16xbf16>, memref<1x2x?x16xbf16>,
                     memref<1x2x?x16xbf16>) outs(%o : memref<1x2x?x16xbf16>)
  return
}

// -----

// Every operand counts, not only Q and K: a dynamic V or O is refused by name.
func.func @dynamic_v(%q: memref<1x2x8x16xbf16>, %v: memref<1x2x?x16xbf16>,
                     %o: memref<1x2x8x16xbf16>) {
  // expected-error @+1 {{'attn.attention' op attn-quantize-fp8 needs static shapes, but V is 'memref<1x2x?x16xbf16>'}}
  attn.attention ins(%q, %q, %v : memref<1x2x8x16xbf16>, memref<1x2x8x16xbf16>,
                     memref<1x2x?x16xbf16>) outs(%o : memref<1x2x8x16xbf16>)
  return
}

// -----

func.func @dynamic_o(%q: memref<1x2x8x16xbf16>, %o: memref<1x2x?x16xbf16>) {
  // expected-error @+1 {{'attn.attention' op attn-quantize-fp8 needs static shapes, but O is 'memref<1x2x?x16xbf16>'}}
  attn.attention ins(%q, %q, %q : memref<1x2x8x16xbf16>, memref<1x2x8x16xbf16>,
                     memref<1x2x8x16xbf16>) outs(%o : memref<1x2x?x16xbf16>)
  return
}

// -----

// The Sylvester-Hadamard matrix exists for powers of two only.
func.func @hadamard_d24(%q: memref<1x2x8x24xbf16>, %o: memref<1x2x8x24xbf16>) {
  // expected-error @+1 {{'attn.attention' op attn-quantize-fp8 hadamard=true needs a power-of-two head dim D, but got 24}}
  attn.attention ins(%q, %q, %q : memref<1x2x8x24xbf16>, memref<1x2x8x24xbf16>,
                     memref<1x2x8x24xbf16>) outs(%o : memref<1x2x8x24xbf16>)
  return
}

// -----

// Paged K/V: FP8 attention has no paged form.
func.func @paged(%q: memref<1x4x1x64xbf16>, %k: memref<4x16x4x64xbf16>,
                 %o: memref<1x4x1x64xbf16>, %t: memref<1x4xi32>, %n: memref<1xi32>) {
  // expected-error @+1 {{attn-quantize-fp8 does not take paged K/V (FP8 attention has no paged form)}}
  attn.attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<4x16x4x64xbf16>, memref<4x16x4x64xbf16>)
      outs(%o : memref<1x4x1x64xbf16>) paged(%t, %n : memref<1x4xi32>, memref<1xi32>)
  return
}

// -----

// Option errors (the pass's, and the option parser's for an unknown value).
// RUN: not attn-opt %s --attn-quantize-fp8=block-m=-1 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-quantize-fp8=qk-granularity=row 2>&1 | FileCheck %s --check-prefix=GRAN
// BLOCK: error: attn-quantize-fp8: block-m and block-n must be >= 0 (0: the tensor-core tile's), but got block-m=-1 block-n=0
// GRAN: attn-opt: error: attn-quantize-fp8: qk-granularity: Cannot find option named 'row'

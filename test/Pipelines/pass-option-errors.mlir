// A bad pass-option value is one message (llvm::cl's, naming the option),
// with a non-zero exit and no empty "<unknown>:0: error:" line after it
// (issue 8, finding 11).
// RUN: not attn-opt %s --attn-tile="block-m=abc" 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not attn-opt %s --attn-tile="block-m=abc" 2>&1 | count 1
// RUN: not attn-opt %s --attn-to-cpu="block-n=1.5" 2>&1 | count 1
// RUN: not attn-opt %s --attn-to-cubin="block-m=x format=none" 2>&1 | count 1
// RUN: not attn-opt %s --attn-tile="block-q=3" 2>&1 | FileCheck %s --check-prefix=NAME
// VALUE: attn-opt: for the --block-m option: 'abc' value invalid for long argument!
// NAME: error: <Pass-Options-Parser>: no such option block-q
// NAME-NOT: error:
func.func @tiny(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                     memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
  return
}

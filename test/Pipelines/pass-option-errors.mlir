// Pass and pipeline options are parsed strictly, the same for every attn
// pass and pipeline: a bad value is one message naming the pass, the option
// and why (not llvm::cl's "for the --block-m option", which reads as a flag
// of the tool, nor an empty "<unknown>:0: error:" line after it), with a
// non-zero exit.
// RUN: not attn-opt %s --attn-tile="block-m=abc" 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not attn-opt %s --attn-tile="block-m=abc" 2>&1 | count 1
// RUN: not attn-opt %s --attn-to-cpu="block-n=1.5" 2>&1 | FileCheck %s --check-prefix=CPUVALUE
// RUN: not attn-opt %s --attn-to-cubin="block-m=x format=none" 2>&1 | count 1
// RUN: not attn-opt %s --attn-tile="block-q=3" 2>&1 | FileCheck %s --check-prefix=NAME
// VALUE: attn-opt: error: attn-tile: block-m: 'abc' value invalid for long argument
// VALUE-NOT: for the --block-m option
// CPUVALUE: attn-opt: error: attn-to-cpu: block-n: '1.5' value invalid for long argument
// NAME: attn-opt: error: attn-tile: no such option block-q
// NAME-NOT: error:

// An option given twice is refused (MLIR kept the last one:
// qk-granularity=block qk-granularity=head was head), as attn-compile
// refuses a flag or spec key given twice; so is an element without a name
// ("=" stood for the defaults). Every attn pass and pipeline:
// RUN: not attn-opt %s --attn-quantize-fp8="qk-granularity=block qk-granularity=head" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not attn-opt %s --attn-tile="block-m=16 block-n=16 block-m=32" 2>&1 | FileCheck %s --check-prefix=TWICE-TILE
// RUN: not attn-opt %s --attn-to-cubin="format=none format=isa" 2>&1 | FileCheck %s --check-prefix=TWICE-CUBIN
// RUN: not attn-opt %s --attn-to-cpu="splits=2 splits=2" 2>&1 | FileCheck %s --check-prefix=TWICE-CPU
// RUN: not attn-opt %s --pass-pipeline="builtin.module(func.func(attn-async-pipeline{stages=2 stages=3}))" 2>&1 | FileCheck %s --check-prefix=TWICE-NESTED
// TWICE: attn-opt: error: attn-quantize-fp8: option 'qk-granularity' is given twice (give each once)
// TWICE-TILE: attn-opt: error: attn-tile: option 'block-m' is given twice
// TWICE-CUBIN: attn-opt: error: attn-to-cubin: option 'format' is given twice
// TWICE-CPU: attn-opt: error: attn-to-cpu: option 'splits' is given twice
// TWICE-NESTED: attn-opt: error: attn-async-pipeline: option 'stages' is given twice
// RUN: not attn-opt %s --attn-to-cpu="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-to-cpu
// RUN: not attn-opt %s --attn-to-cubin="format=none =3" 2>&1 | FileCheck %s --check-prefix=NONAME3 -DP=attn-to-cubin
// RUN: not attn-opt %s --attn-split-kv="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-split-kv
// RUN: not attn-opt %s --attn-tile="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-tile
// RUN: not attn-opt %s --attn-quantize-fp8="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-quantize-fp8
// RUN: not attn-opt %s --attn-causal-split="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-causal-split
// RUN: not attn-opt %s --attn-distribute-rows="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-distribute-rows
// RUN: not attn-opt %s --attn-online-softmax="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-online-softmax
// RUN: not attn-opt %s --attn-async-pipeline="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-async-pipeline
// RUN: not attn-opt %s --attn-grad-async-pipeline="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-grad-async-pipeline
// RUN: not attn-opt %s --attn-tile-grad="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-tile-grad
// RUN: not attn-opt %s --attn-causal-split-grad="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-causal-split-grad
// RUN: not attn-opt %s --attn-decompose-grad="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-decompose-grad
// RUN: not attn-opt %s --attn-lower-to-wgmma="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-lower-to-wgmma
// RUN: not attn-opt %s --attn-lower-to-nvvm="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-lower-to-nvvm
// RUN: not attn-opt %s --attn-lower-to-cpu="=" 2>&1 | FileCheck %s --check-prefix=NONAME -DP=attn-lower-to-cpu
// NONAME: attn-opt: error: [[P]]: '=' names no option (give name=value)
// NONAME3: attn-opt: error: [[P]]: '=3' names no option (give name=value)
func.func @tiny(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                     memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
  return
}

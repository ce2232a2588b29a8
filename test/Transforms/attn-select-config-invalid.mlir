// RUN: attn-opt %s --attn-select-config="block-m=32" -verify-diagnostics -o /dev/null
// RUN: not attn-opt %s --attn-select-config="path=mma" 2>&1 | FileCheck %s --check-prefix=PATH
// RUN: not attn-opt %s --attn-select-config="block-m=-1" 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --attn-select-config="block-n=512" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --attn-select-config="stages=1" 2>&1 | FileCheck %s --check-prefix=STAGES

// Errors of attn-select-config. Options: checked before the pass runs, no
// location.
// PATH: attn-opt: error: attn-select-config: path must be wgmma or fma, but got 'mma'
// BLOCKM: attn-opt: error: attn-select-config: block-m must be in [1, 1024] and block-n in [1, 256] (or 0: per D), but got block-m=-1 block-n=0
// BLOCKN: attn-opt: error: attn-select-config: {{.*}} but got block-m=0 block-n=512
// STAGES: attn-opt: error: attn-select-config: stages must be 0 (chosen per D) or at least 2, but got 1

// A BLOCK_M the tensor cores cannot split into warpgroups of 64 rows.
func.func @block_m(%q: memref<1x2x256x64xbf16>, %o: memref<1x2x256x64xbf16>) {
  // expected-error @+1 {{attn-select-config: BLOCK_M must be 64, 128 or 192 (one to three consumer warpgroups of 64 rows), but got 32}}
  attn.attention ins(%q, %q, %q : memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>,
                     memref<1x2x256x64xbf16>) outs(%o : memref<1x2x256x64xbf16>)
  return
}

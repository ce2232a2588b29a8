// Any error printed means a non-zero exit and no output, whichever pass
// reports it: upstream gpu-module-to-binary reports a missing CUDA toolkit
// and succeeds (attn-opt exited 0 and wrote a gpu.binary that any ptxas on
// PATH had assembled).
// RUN: rm -rf %t.out %t.tk
// RUN: not attn-opt %s --attn-to-cubin="format=none" --gpu-module-to-binary="toolkit=%t.none" -o %t.out 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: not ls %t.out
// UPSTREAM: error: CUDA path: {{.*}}.none does not exist

// attn-to-cubin checks its toolkit before it runs: one message naming the
// option, no IR dump, no output.
// RUN: not attn-opt %s --attn-to-cubin="toolkit=%t.none format=bin" -o %t.out 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not attn-opt %s --attn-to-cubin="toolkit=%t.none format=bin" 2>&1 | count 1
// RUN: not ls %t.out
// NODIR: attn-opt: error: attn-to-cubin: toolkit={{.*}}.none: no such directory (format=isa, bin and fatbin link the CUDA toolkit's nvvm/libdevice/libdevice.10.bc; format=none needs no toolkit)
// A directory without libdevice:
// RUN: mkdir -p %t.tk/bin %t.tk/nvvm
// RUN: not attn-opt %s --attn-to-cubin="toolkit=%t.tk format=isa" -o %t.out 2>&1 | FileCheck %s --check-prefix=NOLIB
// RUN: not attn-opt %s --attn-to-cubin="toolkit=%t.tk" 2>&1 | count 1
// RUN: not ls %t.out
// NOLIB: attn-opt: error: attn-to-cubin: toolkit={{.*}}.tk is not a CUDA toolkit: {{.*}}libdevice.10.bc does not exist (format=isa, bin and fatbin link it; format=none needs no toolkit)
// format=none uses no toolkit.
// RUN: attn-opt %s --attn-to-cubin="toolkit=%t.none format=none" | FileCheck %s --check-prefix=NONE
// NONE: gpu.module @tiny_kernel
func.func @tiny(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                     memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
  return
}

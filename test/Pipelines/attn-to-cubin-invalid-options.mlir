// attn-to-cubin refuses options it cannot honor: chips the kernels cannot run
// on (LLVM would otherwise pick a generic target and abort in instruction
// selection) and unknown output formats.
// RUN: not attn-opt %s --attn-to-cubin="chip=garbage format=none" 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_75 format=none" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90b format=none" 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: attn-opt %s --attn-to-cubin="chip=sm_80 format=none" | FileCheck %s --check-prefix=OK
// GARBAGE: error: attn-lower-to-nvvm: chip 'garbage' is not an NVIDIA SM of sm_80 or later (e.g. sm_90a)
// OLD: error: attn-lower-to-nvvm: chip 'sm_75' is not an NVIDIA SM of sm_80 or later
// SUFFIX: error: attn-lower-to-nvvm: chip 'sm_90b' is not an NVIDIA SM
// OK: gpu.module @tiny_kernel [#nvvm.target<O = 3, chip = "sm_80"
func.func @tiny(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                     memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
  return
}

// An unknown output format is a parse error with a non-zero exit.
// RUN: not attn-opt %s --attn-to-cubin="format=bogus" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: for the --format option: Cannot find option named 'bogus'!

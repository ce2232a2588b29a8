// attn-to-cubin refuses options it cannot honor: chips LLVM or ptxas do not
// support (LLVM would abort), PTX versions too old for the chip, the
// tensor-core path on a chip without wgmma. Supported chips get the PTX ISA
// they need.
// RUN: not attn-opt %s --attn-to-cubin="chip=garbage format=none" 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_75 format=none" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90b format=none" 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_999 format=none" 2>&1 | FileCheck %s --check-prefix=FUTURE
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_80a format=none" 2>&1 | FileCheck %s --check-prefix=ARCHSPECIFIC
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_0090a format=none" 2>&1 | FileCheck %s --check-prefix=ZEROS
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_101 format=none" 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_100a features=+ptx80 format=none" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a features=+sm_90a format=none" 2>&1 | FileCheck %s --check-prefix=NOPTX
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_100a path=wgmma format=none" 2>&1 | FileCheck %s --check-prefix=WGMMA
// Features the back end does not know would be dropped with a warning and
// the PTX ISA fall back to 8.0 (+ptx99 emitted .version 8.0).
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a features=+ptx99 format=none" 2>&1 | FileCheck %s --check-prefix=PTX99
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a features=+ptx89 format=none" 2>&1 | FileCheck %s --check-prefix=PTX89
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a features=+ptx80,+fast format=none" 2>&1 | FileCheck %s --check-prefix=UNKNOWNFEATURE
// RUN: attn-opt %s --attn-to-cubin="chip=sm_90a features=+ptx90 format=isa" | FileCheck %s --check-prefix=PTX90
// RUN: attn-opt %s --attn-to-cubin="chip=sm_80 format=none" | FileCheck %s --check-prefix=OK
// RUN: attn-opt %s --attn-to-cubin="chip=sm_100a format=isa" | FileCheck %s --check-prefix=SM100
// RUN: attn-opt %s --attn-to-cubin="chip=sm_120 format=isa" | FileCheck %s --check-prefix=SM120
// GARBAGE: error: attn-lower-to-nvvm: chip 'garbage' is not supported; supported chips: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103, sm_110, sm_120, sm_120a, sm_121
// OLD: error: attn-lower-to-nvvm: chip 'sm_75' is not supported
// SUFFIX: error: attn-lower-to-nvvm: chip 'sm_90b' is not supported
// FUTURE: error: attn-lower-to-nvvm: chip 'sm_999' is not supported
// ARCHSPECIFIC: error: attn-lower-to-nvvm: chip 'sm_80a' is not supported
// ZEROS: error: attn-lower-to-nvvm: chip 'sm_0090a' is not supported
// PTXAS: error: attn-lower-to-nvvm: chip 'sm_101' is not supported
// OLDPTX: error: attn-lower-to-nvvm: chip sm_100a needs PTX ISA 8.6 or newer (features=+ptx86), but features are '+ptx80'
// NOPTX: error: attn-lower-to-nvvm: features '+sm_90a' name no PTX ISA version (+ptxNN)
// WGMMA: error: attn-lower-to-nvvm: the tensor-core kernel (warpgroup MMA, setmaxnreg) needs chip sm_90a, not sm_100a; use path=fma for other chips
// PTX99: error: attn-lower-to-nvvm: feature '+ptx99' is unknown to LLVM's NVPTX back end, which would drop it silently
// PTX89: error: attn-lower-to-nvvm: feature '+ptx89' is unknown to LLVM's NVPTX back end
// UNKNOWNFEATURE: error: attn-lower-to-nvvm: feature '+fast' is unknown to LLVM's NVPTX back end
// PTX90: .version 9.0
// OK: gpu.module @tiny_kernel [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// SM100: gpu.binary @tiny_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">{{.*}}.target sm_100a
// SM120: gpu.binary @tiny_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_120", features = "+ptx87">{{.*}}.target sm_120
func.func @tiny(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                     memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>)
  return
}

// An unknown output format is a parse error with a non-zero exit.
// RUN: not attn-opt %s --attn-to-cubin="format=bogus" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: attn-opt: error: attn-to-cubin: format: Cannot find option named 'bogus'

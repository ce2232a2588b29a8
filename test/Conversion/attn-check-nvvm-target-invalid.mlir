// The target is checked before anything is lowered: chips LLVM's NVPTX
// back end or ptxas 13 refuse, PTX ISAs older than the chip's, features the
// back end would drop. (Errors without a location: they are options.)
// RUN: not attn-opt %s --attn-check-nvvm-input="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %s --attn-check-nvvm-input="chip=sm_100a features=+ptx80" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// RUN: not attn-opt %s --attn-check-nvvm-input="features=+sm_90a" 2>&1 | FileCheck %s --check-prefix=NOPTX
// RUN: not attn-opt %s --attn-check-nvvm-input="features=+ptx80,+fast" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: attn-opt %s --attn-check-nvvm-input="chip=sm_120 features=+ptx87" | FileCheck %s --check-prefix=OK
// OLD: error: attn-lower-to-nvvm: chip 'sm_75' is not supported; supported chips: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103, sm_110, sm_120, sm_120a, sm_121
// OLDPTX: error: attn-lower-to-nvvm: chip sm_100a needs PTX ISA 8.6 or newer (features=+ptx86), but features are '+ptx80'
// NOPTX: error: attn-lower-to-nvvm: features '+sm_90a' name no PTX ISA version (+ptxNN)
// UNKNOWN: error: attn-lower-to-nvvm: feature '+fast' is unknown to LLVM's NVPTX back end, which would drop it silently
// OK: func.func @empty
func.func @empty() {
  return
}

// attn-to-cubin has no FP8 lowering yet (issue 11: e4m3 WGMMA is later work):
// an FP8 attn.attention is refused with an error on both kernel paths, never
// a crash and never a kernel silently computed in another precision. The
// host pipeline (attn-to-cpu) lowers it.
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a format=none" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --attn-to-cubin="chip=sm_90a path=fma format=none" 2>&1 | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-to-cpu | FileCheck %s --check-prefix=CPU

// WGMMA: attn-to-cubin-fp8.mlir:[[# @LINE + 9]]:3: error: 'attn.load_tile' op is FP8 (an f8E4M3FN tile or its descale), but attn-async-pipeline has no FP8 lowering yet: FP8 attention runs on the host only (attn-to-cpu)
// FMA: attn-to-cubin-fp8.mlir:[[# @LINE + 8]]:3: error: 'attn.load_tile' op is FP8 (an f8E4M3FN tile or its descale), but attn-distribute-rows has no FP8 lowering yet: FP8 attention runs on the host only (attn-to-cpu)
// FP8 data is moved as i8 on the host.
// CPU: llvm.func @fp8
// CPU: llvm.load {{.*}} -> vector<64xi8>
// CPU-NOT: f8E4M3FN
func.func @fp8(%q: memref<1x4x64x64xf8E4M3FN>, %k: memref<1x2x64x64xf8E4M3FN>,
               %v: memref<1x2x64x64xf8E4M3FN>, %o: memref<1x4x64x64xbf16>,
               %qd: memref<1x2xf32>, %kd: memref<1x2xf32>, %vd: memref<1x2xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xf8E4M3FN>,
                     memref<1x2x64x64xf8E4M3FN>, memref<1x2x64x64xf8E4M3FN>)
                 outs(%o : memref<1x4x64x64xbf16>)
                 descale(%qd, %kd, %vd : memref<1x2xf32>, memref<1x2xf32>,
                         memref<1x2xf32>) {causal}
  return
}

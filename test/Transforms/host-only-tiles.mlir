// An epilogue with an FP8 v_descale on an otherwise bf16 nest (IR written
// by hand, or a future pass) is refused by the GPU passes, not lowered with
// the descale dropped or half applied: attn-distribute-rows has no FP8
// lowering at all, and attn-async-pipeline lowers FP8 only when the tiles,
// the steps' qk_descale and the epilogue's v_descale agree.
// RUN: attn-opt %s --attn-tile="block-m=128 block-n=64" | sed -e 's/\] : memref<1x2x128x64xbf16>$/] descale(%arg4) : memref<1x2x128x64xbf16>/' > %t.mlir
// RUN: FileCheck %s --check-prefix=EDITED < %t.mlir
// RUN: not attn-opt %t.mlir --attn-async-pipeline 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %t.mlir --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=ROWS
// EDITED: attn.epilogue {{.*}} descale(%arg4)
// PIPE: error: attn-tma-ring: the steps' qk_descale and the epilogue's v_descale must be given exactly when the tiles are f8E4M3FN, but the tiles are 'bf16'
// ROWS: error: attn-distribute-rows: FP8 (an f8E4M3FN tile or its descale) has no lowering here
func.func @bf16_with_v_descale(%q: memref<1x2x128x64xbf16>, %k: memref<1x2x128x64xbf16>,
                               %v: memref<1x2x128x64xbf16>, %o: memref<1x2x128x64xbf16>,
                               %vd: f32) {
  attn.attention ins(%q, %k, %v : memref<1x2x128x64xbf16>, memref<1x2x128x64xbf16>, memref<1x2x128x64xbf16>)
                 outs(%o : memref<1x2x128x64xbf16>)
  return
}

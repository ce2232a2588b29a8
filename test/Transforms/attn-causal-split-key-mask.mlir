// RUN: attn-opt %s --split-input-file --attn-tile="block-m=16 block-n=8" --attn-causal-split --cse | FileCheck %s

// attn-causal-split under a key mask with a lower bound (a sliding
// window): the K/V loop becomes a masked stage for the window's left
// edge, a mask-free stage and a masked stage for the diagonal, chained
// through (m, l, acc); only the masked stages keep the key mask.
// CHECK-LABEL: func.func @window
//       CHECK:   scf.forall
//       CHECK:     %[[LEFT:.*]]:3 = scf.for
//       CHECK:       attn.online_attention
//  CHECK-SAME:         key_mask = #attn.key_mask<left = 40, right = 0>
//  CHECK-SAME:         mask = #attn.mask<causal>
//       CHECK:     } {attn.stage = "masked"}
//       CHECK:     %[[FULL:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[LEFT]]#0, %{{.*}} = %[[LEFT]]#1, %{{.*}} = %[[LEFT]]#2)
//   CHECK-NOT:       key_mask
//       CHECK:       mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     %[[DIAG:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
//       CHECK:       key_mask = #attn.key_mask<left = 40, right = 0>
//       CHECK:     } {attn.stage = "masked"}
//       CHECK:     attn.epilogue state(%[[DIAG]]#0, %[[DIAG]]#1, %[[DIAG]]#2
func.func @window(%q: memref<1x2x64x16xf16>, %o: memref<1x2x64x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x2x64x16xf16>, memref<1x2x64x16xf16>,
      memref<1x2x64x16xf16>) outs(%o : memref<1x2x64x16xf16>)
      {causal, key_mask = #attn.key_mask<left = 40>}
  return
}

// -----

// No lower bound (a prefix under causal): the first key of every row is
// key 0, so there is no left-edge stage: full, then masked, as causal.
// CHECK-LABEL: func.func @prefix
//       CHECK:     scf.for
//       CHECK:       mask = #attn.mask<none>
//       CHECK:     } {attn.stage = "full"}
//       CHECK:     scf.for
//       CHECK:       key_mask = #attn.key_mask<right = 0, prefix = 20>
//       CHECK:     } {attn.stage = "masked"}
//   CHECK-NOT:     scf.for
//       CHECK:     attn.epilogue
func.func @prefix(%q: memref<1x2x64x16xf16>, %o: memref<1x2x64x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x2x64x16xf16>, memref<1x2x64x16xf16>,
      memref<1x2x64x16xf16>) outs(%o : memref<1x2x64x16xf16>)
      {causal, key_mask = #attn.key_mask<prefix = 20>}
  return
}

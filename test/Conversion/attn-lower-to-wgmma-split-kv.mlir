// RUN: attn-opt %s --attn-tile="block-m=64 block-n=128" --attn-causal-split --attn-async-pipeline --attn-lower-to-wgmma --canonicalize --cse | FileCheck %s

// The epilogue of split-KV's partial attention: O is the split's fp32
// slice of the workspace, so nothing is narrowed or staged. Each consumer
// thread stores its normalized accumulator pairs (registers 2i, 2i + 1:
// row q_pos + 16 w + g + 8 h, columns 8 (i / 2) + 2 q, + 1) straight from
// the registers as 8-byte vector<2xf32> stores, for rows below Nq; the
// quad leaders store LSE_s. A split without a key (l = 0) stores O_s = 0
// and LSE_s = -inf like any row without a key.
// CHECK-LABEL: func.func @partial
//       CHECK:   } else {
//       CHECK:     nvvm.setmaxregister  increase 240
// 1 / l, 0 where l = 0 (the quad-summed l):
//       CHECK:     %[[NOKEY:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
//       CHECK:     arith.select %[[NOKEY]], %{{.*}}, %{{.*}} : f32
// O = acc / l, a pair per store, rows below Nq = 1. The static Nq goes
// through an opaque copy: folded, it would drop every thread's second row
// (g + 8 >= 1), and ptxas then serializes the wgmmas and spills.
//       CHECK:     %[[NQ:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l" %c1_i64 : (i64) -> i64
//       CHECK:     %[[NQI:.*]] = arith.index_cast %[[NQ]] : i64 to index
//       CHECK:     %[[ROWOK:.*]] = arith.cmpi ult, %{{.*}}, %[[NQI]] : index
//       CHECK:     scf.if %[[ROWOK]] {
//       CHECK:       %[[PAIR:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
//       CHECK:       vector.store %[[PAIR]], %[[OS:.*]][%c0, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x4x1x64xf32, strided<[256, 64, 64, 1], offset: ?>>, vector<2xf32>
// 64 columns over 4 quad lanes: 8 pairs per row half, 16 stores.
//   CHECK-COUNT-15:       vector.store %{{.*}}, %[[OS]]
// No staging and no epilogue barrier.
//   CHECK-NOT:     nvvm.barrier
//       CHECK:     memref.store %{{.*}}, %{{.*}}[%c0, %{{.*}}, %{{.*}}] : memref<1x4x1xf32, strided<[4, 1, 1], offset: ?>>
func.func @partial(%q: memref<1x4x1x64xbf16>, %k: memref<1x2x1000x64xbf16>,
                   %op: memref<3x1x4x1x64xf32>, %lp: memref<3x1x4x1xf32>) {
  attn.partial_attention ins(%q, %k, %k : memref<1x4x1x64xbf16>, memref<1x2x1000x64xbf16>,
                             memref<1x2x1000x64xbf16>)
      outs(%op, %lp : memref<3x1x4x1x64xf32>, memref<3x1x4x1xf32>) {causal}
  return
}

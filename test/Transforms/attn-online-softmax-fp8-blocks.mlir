// RUN: attn-opt %s --attn-tile="block-m=4 block-n=2" --attn-online-softmax --canonicalize | FileCheck %s
// RUN: not attn-opt %s --attn-tile="block-m=4 block-n=2" --attn-distribute-rows 2>&1 | FileCheck %s --check-prefix=DIST
// RUN: not attn-opt %s --attn-tile="block-m=128 block-n=128" --attn-async-pipeline 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %s --attn-to-cubin 2>&1 | FileCheck %s --check-prefix=PIPE

// attn-online-softmax with per-block Q/K descales and per-channel V
// descales. D = 8, BLOCK_M = 4, BLOCK_N = 2; scale blocks of 3 Q rows and
// 3 keys: row i of S is scaled by qd[i] (its block's q descale), key j by
// kd[j], column c of O by vd[c]:
//   Qc  = extf(Q) * (scale * log2(e)) * broadcast_rows(row_descale)
//   S_j = rowsum(Qc * extf(K[j])) * key_descale[j]
//   O   = acc * (1 / l) * broadcast(channel_descale)      rounded to bf16
// CHECK-LABEL: func.func @fp8_blocks
//  CHECK-SAME:   %[[QD:[a-z0-9]+]]: memref<1x1x2xf32>, %[[KD:[a-z0-9]+]]: memref<1x1x2xf32>, %[[VD:[a-z0-9]+]]: memref<1x1x8xf32>
//       CHECK:   scf.forall
//       CHECK:     %[[QT:.*]] = vector.transfer_read {{.*}} : memref<1x1x6x8xf8E4M3FN>, vector<4x8xf8E4M3FN>
// row_descale: row t reads qd[(q_pos + t) / 3] (as zero past the last block)
//       CHECK:     %[[R0:.*]] = arith.divui %{{.*}}, %c3 : index
//       CHECK:     vector.transfer_read %[[QD]][%c0, %c0, %[[R0]]], %{{.*}} : memref<1x1x2xf32>, vector<1xf32>
//       CHECK:     %[[QROWS:.*]] = vector.from_elements %{{.*}} : vector<4xf32>
//       CHECK:     %[[CH:.*]] = vector.transfer_read %[[VD]][%c0, %c0, %c0], %{{.*}} {in_bounds = [true]} : memref<1x1x8xf32>, vector<8xf32>
//       CHECK:     %[[R:.*]]:3 = scf.for
// key_descale: key k_pos + j reads kd[(k_pos + j) / 3]
//       CHECK:       %[[KPOS:.*]] = arith.muli %{{.*}}, %c2 : index
//       CHECK:       %[[E0:.*]] = arith.divui %[[KPOS]], %c3 : index
//       CHECK:       %[[KD0V:.*]] = vector.transfer_read %[[KD]][%c0, %c0, %[[E0]]], %{{.*}} : memref<1x1x2xf32>, vector<1xf32>
//       CHECK:       %[[KD0:.*]] = vector.extract %[[KD0V]][0] : f32 from vector<1xf32>
// Qc = extf(Q) * c * row_descale (broadcast along D)
//       CHECK:       %[[QF:.*]] = arith.extf %[[QT]] : vector<4x8xf8E4M3FN> to vector<4x8xf32>
//       CHECK:       %[[QS:.*]] = arith.mulf %[[QF]], %{{.*}} : vector<4x8xf32>
//       CHECK:       %[[RB:.*]] = vector.broadcast %[[QROWS]] : vector<4xf32> to vector<8x4xf32>
//       CHECK:       %[[RT:.*]] = vector.transpose %[[RB]], [1, 0]
//       CHECK:       %[[QC:.*]] = arith.mulf %[[QS]], %[[RT]] : vector<4x8xf32>
// S_0 = rowsum(Qc * K[0]) * key_descale[0]
//       CHECK:       %[[S0:.*]] = vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<4x8xf32> to vector<4xf32>
//       CHECK:       %[[KD0B:.*]] = vector.broadcast %[[KD0]] : f32 to vector<4xf32>
//       CHECK:       arith.mulf %[[S0]], %[[KD0B]] : vector<4xf32>
//       CHECK:       scf.yield
// O = acc * (1 / l) * channel_descale, to bf16
//       CHECK:     %[[OF:.*]] = arith.mulf %[[R]]#2, %{{.*}} : vector<4x8xf32>
//       CHECK:     %[[CHB:.*]] = vector.broadcast %[[CH]] : vector<8xf32> to vector<4x8xf32>
//       CHECK:     %[[OD:.*]] = arith.mulf %[[OF]], %[[CHB]] : vector<4x8xf32>
//       CHECK:     arith.truncf %[[OD]] : vector<4x8xf32> to vector<4x8xbf16>
// The CUDA-core path refuses them; the tensor-core path takes per-block
// descales only in blocks of its tiles (attn-async-pipeline-fp8-blocks.mlir).
// DIST: error: attn-distribute-rows: per-block Q/K descales and per-channel V descales have no lowering here; the tensor-core path (attn-async-pipeline) takes Q/K descales per head, per tensor or per block of its tiles and V descales per head (attn-quantize-fp8 v-granularity=head); per-channel V descales lower to the host only: --attn-to-cpu
// PIPE: error: attn-tma-ring: per-block FP8 descales on tensor cores need attn-quantize-fp8's block-m equal to the tile's BLOCK_M (one descale per tile), but got block-m=3 and BLOCK_M=128
func.func @fp8_blocks(%q: memref<1x1x6x8xf8E4M3FN>, %k: memref<1x1x4x8xf8E4M3FN>,
                      %v: memref<1x1x4x8xf8E4M3FN>, %o: memref<1x1x6x8xbf16>,
                      %qd: memref<1x1x2xf32>, %kd: memref<1x1x2xf32>, %vd: memref<1x1x8xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x1x6x8xf8E4M3FN>,
                     memref<1x1x4x8xf8E4M3FN>, memref<1x1x4x8xf8E4M3FN>)
                 outs(%o : memref<1x1x6x8xbf16>)
                 descale(%qd, %kd, %vd : memref<1x1x2xf32>, memref<1x1x2xf32>,
                         memref<1x1x8xf32>) {q_descale_block = 3 : i64, k_descale_block = 3 : i64}
  return
}

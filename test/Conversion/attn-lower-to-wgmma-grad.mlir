// RUN: attn-opt %S/../Transforms/attn-grad-async-pipeline.mlir --attn-grad-async-pipeline --attn-lower-to-wgmma | FileCheck %s

// The backward's consumer (attn.grad_dkdv_mma, the dK/dV attn.store_tile)
// on warpgroup MMA: per Q block S^T and dP^T (8 + 8 wgmmas m64n64k16, K-major
// operands), P^T / dS^T in registers, dV += P^T dO and dK += dS^T Q
// (register-A m64n128k16, dO and Q MN-major: transpose flag 1), dS staged
// with stmatrix .trans, the consumers' named barrier, dQ = dS K (8 wgmmas
// m64n64k16 with B MN-major), staged in shared memory and added to dQ_acc's
// tile with one bulk reduction per warpgroup.

// CHECK-LABEL: func.func @grad
// CHECK:         nvvm.setmaxregister decrease 24
// CHECK:         nvvm.setmaxregister increase 240
// CHECK:         scf.for {{.*}} -> (vector<64xf32>, vector<64xf32>) {
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-16:  nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// LSE_log2 and Delta of two query columns per 8-byte load (the buffers hold
// whole Q blocks: no guard), the causal mask in 32 bits against an
// immediate per column.
// CHECK:           vector.load {{.*}} {alignment = 8 : i64} : memref<1x2x256xf32>, vector<2xf32>
// CHECK:           vector.load {{.*}} {alignment = 8 : i64} : memref<1x2x256xf32>, vector<2xf32>
// CHECK:           llvm.intr.fma
// CHECK:           llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK:           arith.cmpi sle, %{{.*}}, %c0_i32 : i32
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-8:   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}} 1, 1, 1, 1;
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// dS staged from one opaque address per step, the four stmatrix 1024 bytes
// apart.
// CHECK:           llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;"
// CHECK-COUNT-4:   nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-8:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// dQ staged from one opaque address per step: a pair's swizzled address is
// that address XOR 32 (i / 4), + 2048 for the second row.
// CHECK:           %[[DQBASE:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;"
// CHECK:           arith.xori %[[DQBASE]], %c0_i64{{.*}} : i64
// CHECK:           llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-COUNT-15:  llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK:           nvvm.fence.proxy
// CHECK:           nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK:           scf.if
// CHECK:             cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK:             cp.async.bulk.commit_group;
// CHECK:             cp.async.bulk.wait_group.read 1;
// CHECK:         cp.async.bulk.wait_group 0;
// CHECK:         vector.store {{.*}} : memref<1x1x300x128xbf16>, vector<2xbf16>
// CHECK:       attn.threads = 384

// RUN: attn-opt %S/../Transforms/attn-grad-async-pipeline.mlir --attn-grad-async-pipeline --attn-lower-to-wgmma | FileCheck %s

// The backward's consumer (attn.grad_dkdv_mma, the dK/dV attn.store_tile)
// on warpgroup MMA: per Q block S^T and dP^T (8 + 8 wgmmas m64n64k16, K-major
// operands), P^T / dS^T in registers, dV += P^T dO and dK += dS^T Q
// (register-A m64n128k16, dO and Q MN-major: transpose flag 1), dS staged
// with stmatrix .trans, the consumers' named barrier, dQ = dS K (8 wgmmas
// m64n64k16 with B MN-major) and fp32 reductions (red.global.add) into
// dQ_acc.

// CHECK-LABEL: func.func @grad
// CHECK:         nvvm.setmaxregister decrease 24
// CHECK:         nvvm.setmaxregister increase 240
// CHECK:         scf.for {{.*}} -> (vector<64xf32>, vector<64xf32>) {
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-16:  nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:           llvm.intr.fma
// CHECK:           llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK:           arith.cmpi sle
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-8:   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}} 1, 1, 1, 1;
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4:   nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-8:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, {{.*}}], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-8:   red.global.add.f32 [g], $1; red.global.add.f32 [g+4], $2;
// CHECK:           scf.if
// CHECK-COUNT-8:   red.global.add.f32 [g], $1; red.global.add.f32 [g+4], $2;
// CHECK:         vector.store {{.*}} : memref<1x1x300x128xbf16>, vector<2xbf16>
// CHECK:       attn.threads = 384

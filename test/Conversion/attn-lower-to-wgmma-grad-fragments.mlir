// RUN: attn-opt %s --attn-lower-to-wgmma | FileCheck %s

// The backward's consumer as attn-grad-async-pipeline leaves it (D = 64):
// dK and dV are !attn.wg_fragment<128x64xf32> from a splat zero, carried by
// the Q-block loop beside an unrelated f32 vector of BLOCK_N = 128 rows.
// Only the fragments become the thread's registers (vector<32xf32>: D / 2
// accumulator registers of its warpgroup's 64 keys); the vector keeps its
// type.

!smem_q = memref<1x64x64xbf16, #gpu.address_space<workgroup>>
!smem_kv = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!smem_ds = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!smem_dq = memref<2x64x32xf32, #gpu.address_space<workgroup>>
!rows = memref<1x2x64xf32>
!dq_acc = memref<1x2x1x2x64x32xf32>
!kv = memref<1x1x128x64xbf16>
!frag = !attn.wg_fragment<128x64xf32>
func.func @grad_fragments(%q: !smem_q, %k: !smem_kv, %ds: !smem_ds,
                          %st: !smem_dq, %lse: !rows, %dqa: !dq_acc,
                          %dk_out: !kv, %dv_out: !kv, %sums: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zeros = arith.constant dense<0.0> : vector<128x64xf32>
  %ones = arith.constant dense<1.0> : vector<128xf32>
  scf.forall (%h, %kb, %b) in (1, 1, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %dk0 = attn.to_wg_fragment %zeros : vector<128x64xf32> to !frag
      %dv0 = attn.to_wg_fragment %zeros : vector<128x64xf32> to !frag
      %r:3 = scf.for %qb = %c0 to %c1 step %c1
          iter_args(%dk = %dk0, %dv = %dv0, %s = %ones) -> (!frag, !frag, vector<128xf32>) {
        %dk1, %dv1 = attn.grad_dkdv_mma q(%q, %q : !smem_q, !smem_q) kv(%k, %k : !smem_kv, !smem_kv)
            rows(%lse, %lse : !rows, !rows) dq(%dqa : !dq_acc) scratch(%ds, %st : !smem_ds, !smem_dq)
            at[%b, %h] (%c0, %c0) state(%dk, %dv : !frag, !frag)
            {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
        %s1 = arith.addf %s, %ones : vector<128xf32>
        scf.yield %dk1, %dv1, %s1 : !frag, !frag, vector<128xf32>
      }
      attn.store_tile %r#0, %dk_out[%b, %h, %c0] : !frag, !kv
      attn.store_tile %r#1, %dv_out[%b, %h, %c0] : !frag, !kv
      vector.store %r#2, %sums[%c0] : memref<128xf32>, vector<128xf32>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// CHECK-LABEL: func.func @grad_fragments
// CHECK-SAME:      %[[SUMS:[^:]*]]: memref<128xf32>
// CHECK:         %[[ONES:.*]] = arith.constant dense<1.000000e+00> : vector<128xf32>
// CHECK:         nvvm.setmaxregister decrease 24
// CHECK:         nvvm.setmaxregister increase 240
// dK, dV = 0: each thread's 32 registers.
// CHECK:         %[[DK0:.*]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK:         %[[DV0:.*]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK:         %[[R:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[DK0]], %{{.*}} = %[[DV0]], %{{.*}} = %[[ONES]]) -> (vector<32xf32>, vector<32xf32>, vector<128xf32>) {
// dV += P^T dO, dK += dS^T Q: register-A wgmmas m64n64k16 on the registers.
// CHECK-COUNT-8:   wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK:           arith.addf %{{.*}}, %[[ONES]] : vector<128xf32>
// CHECK:           scf.yield {{.*}} : vector<32xf32>, vector<32xf32>, vector<128xf32>
// The last bulk reductions of dQ are waited for once, before the first store.
// CHECK:         cp.async.bulk.wait_group 0;
// CHECK-NOT:     cp.async.bulk.wait_group 0;
// CHECK:         vector.extract %[[R]]#0[0] : f32 from vector<32xf32>
// CHECK:         vector.store {{.*}} : memref<1x1x128x64xbf16>, vector<2xbf16>
// CHECK:         vector.extract %[[R]]#1[0] : f32 from vector<32xf32>
// CHECK:         vector.store {{.*}} : memref<1x1x128x64xbf16>, vector<2xbf16>
// CHECK:         vector.store %[[R]]#2, %[[SUMS]][%{{.*}}] : memref<128xf32>, vector<128xf32>
// CHECK-NOT:     attn.
// CHECK:       attn.threads = 384

// RUN: attn-opt %s --verify-each --attn-lower-to-wgmma | FileCheck %s

// A step under a sliding window (#attn.key_mask<left = 40, right = 0>):
// each thread's two rows see keys [p - 40, p + 1) at p = q_pos + row +
// causal_offset, so every score of the thread's accumulator (BLOCK_N / 2 =
// 32 per S) is compared with both ends of its row's interval, relative to
// the thread's first column.
// CHECK-LABEL: func.func @step(
//       CHECK:   nvvm.wgmma.mma_async
// The interval of each of the thread's two rows h: lo = p - 40 and end =
// min(Nk, p + 1), p = q_pos + row_h + causal_offset.
// CHECK-COUNT-2:   %[[P:.*]] = arith.addi %{{.*}}, %arg7 : index
//  CHECK-NEXT:     %[[C40:.*]] = arith.constant 40 : index
//  CHECK-NEXT:     arith.subi %[[P]], %[[C40]] : index
//  CHECK-NEXT:     %[[C1:.*]] = arith.constant 1 : index
//  CHECK-NEXT:     %[[END:.*]] = arith.addi %[[P]], %[[C1]] : index
//  CHECK-NEXT:     arith.minsi %arg5, %[[END]] : index
// Every score: below end and at or past lo.
//  CHECK-COUNT-32: arith.cmpi sge
// Then the softmax on the masked scores.
//       CHECK:   llvm.nvvm.ex2.approx.ftz.f
!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!kv = memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
func.func @step(%qt: !q, %kt: !kv, %vt: !kv, %o: memref<1x4x256x64xbf16>,
                %lse: memref<1x4x256xf32>, %nk: index, %qpos: index,
                %off: index, %nblocks: index, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%qb, %hh, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %mf = attn.to_wg_fragment %m0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %lf = attn.to_wg_fragment %l0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %accf = attn.to_wg_fragment %acc0 : vector<128x64xf32> to !attn.wg_fragment<128x64xf32>
      %r:3 = scf.for %kb = %c0 to %nblocks step %c1
          iter_args(%m = %mf, %l = %lf, %acc = %accf)
          -> (!attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>) {
        %kpos = arith.muli %kb, %c64 : index
        %m1, %l1, %a1 = attn.online_attention_mma q(%qt : !q) kv(%kt, %vt : !kv, !kv)
            keys(%kpos, %nk) rows(%qpos, causal_offset %off)
            state(%m, %l, %acc : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
            {head_dim = 64 : i64, key_mask = #attn.key_mask<left = 40, right = 0>, mask = #attn.mask<causal>, scale = 0.125 : f32}
        scf.yield %m1, %l1, %a1 : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>
      }
      attn.epilogue state(%r#0, %r#1, %r#2 : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
          to %o, lse %lse[%b, %h, %qpos, %c0] staging(%qt : !q)
          : memref<1x4x256x64xbf16>, memref<1x4x256xf32>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}


// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-lower-to-wgmma

// Every error attn-lower-to-wgmma raises: IR that is not the nest
// attn-async-pipeline builds stops with what is wrong, not half lowered.

!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!kv = memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
func.func @step_outside_warp_specialize(%qt: !q, %kt: !kv, %vt: !kv,
    %kpos: index, %nk: index, %qpos: index, %m: vector<128xf32>,
    %l: vector<128xf32>, %acc: vector<128x64xf32>) {
  // expected-error @+1 {{attn-lower-to-wgmma needs the tile steps and epilogues in the consumer region of an attn.warp_specialize (built by attn-async-pipeline)}}
  %m1, %l1, %a1 = attn.online_attention_mma q(%qt : !q) kv(%kt, %vt : !kv, !kv)
      keys(%kpos, %nk) rows(%qpos)
      state(%m, %l, %acc : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
      {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!kv = memref<1x64x64xbf16, strided<[4096, 64, 1], offset: ?>, #gpu.address_space<workgroup>>
func.func @step_in_producer(%qt: !q, %kt: !kv, %vt: !kv, %kpos: index,
    %nk: index, %qpos: index, %o: memref<1x4x256x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      // expected-error @+1 {{attn-lower-to-wgmma needs the tile steps and epilogues in the consumer region}}
      %m1, %l1, %a1 = attn.online_attention_mma q(%qt : !q) kv(%kt, %vt : !kv, !kv)
          keys(%kpos, %nk) rows(%qpos)
          state(%m0, %l0, %acc0 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
          {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
    } consumer {
      attn.epilogue state(%m0, %l0, %acc0 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
          to %o[%b, %h, %qpos, %c0] staging(%qt : !q) : memref<1x4x256x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
func.func @no_cta_loop(%qt: !q, %qpos: index, %o: memref<1x4x256x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  // expected-error @+1 {{attn-lower-to-wgmma needs the warp-specialized CTA inside the CTA loop (scf.forall) that attn-async-pipeline builds}}
  attn.warp_specialize consumers(2) registers(24, 240) producer {
    gpu.barrier
  } consumer {
    attn.epilogue state(%m0, %l0, %acc0 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
        to %o[%c0, %c0, %qpos, %c0] staging(%qt : !q) : memref<1x4x256x64xbf16>
  }
  return
}

// -----

func.func @no_epilogue() {
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    // expected-error @+1 {{attn-lower-to-wgmma: expected one attn.epilogue in the consumer region}}
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      gpu.barrier
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
func.func @rows_per_warpgroup(%qt: !q, %qpos: index, %o: memref<1x4x256x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    // expected-error @+1 {{attn-lower-to-wgmma: BLOCK_M (128) must be 64 rows per consumer warpgroup}}
    attn.warp_specialize consumers(1) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %m = attn.to_wg_fragment %m0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %l = attn.to_wg_fragment %l0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %acc = attn.to_wg_fragment %acc0 : vector<128x64xf32> to !attn.wg_fragment<128x64xf32>
      attn.epilogue state(%m, %l, %acc : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
          to %o[%b, %h, %qpos, %c0] staging(%qt : !q) : memref<1x4x256x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

func.func @no_staging(%qpos: index, %o: memref<1x4x256x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %m = attn.to_wg_fragment %m0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %l = attn.to_wg_fragment %l0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %acc = attn.to_wg_fragment %acc0 : vector<128x64xf32> to !attn.wg_fragment<128x64xf32>
      // expected-error @+1 {{attn-lower-to-wgmma needs the staging tile that attn-async-pipeline attaches}}
      attn.epilogue state(%m, %l, %acc : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
          to %o[%b, %h, %qpos, %c0] : memref<1x4x256x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
func.func @state_from_arguments(%qt: !q, %qpos: index, %o: memref<1x4x256x64xbf16>,
    %m0: vector<128xf32>, %l0: vector<128xf32>, %acc0: vector<128x64xf32>) {
  %c0 = arith.constant 0 : index
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      // expected-error @+1 {{attn-lower-to-wgmma: the online-softmax state must start from splat constants}}
      %m = attn.to_wg_fragment %m0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %l = attn.to_wg_fragment %l0 : vector<128xf32> to !attn.wg_fragment<128xf32>
      %acc = attn.to_wg_fragment %acc0 : vector<128x64xf32> to !attn.wg_fragment<128x64xf32>
      attn.epilogue state(%m, %l, %acc : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
          to %o[%b, %h, %qpos, %c0] staging(%qt : !q) : memref<1x4x256x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// The state of a tensor-core step must be warpgroup fragments, typed by
// attn-tma-ring; CTA-level vectors are not lowered.
!q = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
func.func @vector_state(%qt: !q, %qpos: index, %o: memref<1x4x256x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m0 = arith.constant dense<0xFF800000> : vector<128xf32>
  %l0 = arith.constant dense<0.0> : vector<128xf32>
  %acc0 = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%qb, %h, %b) in (2, 4, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      // expected-error @+1 {{attn-lower-to-wgmma: the online-softmax state must be warpgroup fragments (!attn.wg_fragment, as attn-tma-ring types it), but got 'vector<128xf32>'}}
      attn.epilogue state(%m0, %l0, %acc0 : vector<128xf32>, vector<128xf32>, vector<128x64xf32>)
          to %o[%b, %h, %qpos, %c0] staging(%qt : !q) : memref<1x4x256x64xbf16>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// The backward's step belongs in the consumer region that
// attn-grad-async-pipeline builds.
!smem_q = memref<1x64x64xbf16, #gpu.address_space<workgroup>>
!smem_kv = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!smem_ds = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!smem_dq = memref<2x64x32xf32, #gpu.address_space<workgroup>>
!frag = !attn.wg_fragment<128x64xf32>
func.func @grad_step_outside(%q: !smem_q, %k: !smem_kv, %ds: !smem_ds,
    %st: !smem_dq, %lse: memref<1x2x64xf32>, %dqa: memref<1x2x1x2x64x32xf32>,
    %dk: !frag, %i: index) {
  // expected-error @+1 {{attn-lower-to-wgmma needs attn.grad_dkdv_mma in the consumer region of an attn.warp_specialize (built by attn-grad-async-pipeline)}}
  %dk1, %dv1 = attn.grad_dkdv_mma q(%q, %q : !smem_q, !smem_q) kv(%k, %k : !smem_kv, !smem_kv)
      rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x32xf32>)
      scratch(%ds, %st : !smem_ds, !smem_dq) at[%i, %i] (%i, %i) state(%dk, %dk : !frag, !frag)
      {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
  return
}

// -----

// BLOCK_N = 128 keys are two consumer warpgroups' 64.
!smem_q = memref<1x64x64xbf16, #gpu.address_space<workgroup>>
!smem_kv = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!smem_ds = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!smem_dq = memref<2x64x32xf32, #gpu.address_space<workgroup>>
!frag = !attn.wg_fragment<128x64xf32>
func.func @grad_one_consumer(%q: !smem_q, %k: !smem_kv, %ds: !smem_ds,
    %st: !smem_dq, %lse: memref<1x2x64xf32>, %dqa: memref<1x2x1x2x64x32xf32>,
    %i: index) {
  %zeros = arith.constant dense<0.0> : vector<128x64xf32>
  scf.forall (%h, %kb, %b) in (1, 1, 1) {
    // expected-error @+1 {{attn-lower-to-wgmma: the backward needs 64 keys per consumer warpgroup, but BLOCK_N is 128}}
    attn.warp_specialize consumers(1) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      %dk = attn.to_wg_fragment %zeros : vector<128x64xf32> to !frag
      %dk1, %dv1 = attn.grad_dkdv_mma q(%q, %q : !smem_q, !smem_q) kv(%k, %k : !smem_kv, !smem_kv)
          rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x32xf32>)
          scratch(%ds, %st : !smem_ds, !smem_dq) at[%i, %i] (%i, %i) state(%dk, %dk : !frag, !frag)
          {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// dK and dV start from splat constants, as attn-grad-async-pipeline's zeros.
!smem_q = memref<1x64x64xbf16, #gpu.address_space<workgroup>>
!smem_kv = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
!smem_ds = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!smem_dq = memref<2x64x32xf32, #gpu.address_space<workgroup>>
!frag = !attn.wg_fragment<128x64xf32>
func.func @grad_state_from_argument(%q: !smem_q, %k: !smem_kv, %ds: !smem_ds,
    %st: !smem_dq, %lse: memref<1x2x64xf32>, %dqa: memref<1x2x1x2x64x32xf32>,
    %i: index, %dk0: vector<128x64xf32>) {
  scf.forall (%h, %kb, %b) in (1, 1, 1) {
    attn.warp_specialize consumers(2) registers(24, 240) producer {
      gpu.barrier
    } consumer {
      // expected-error @+1 {{attn-lower-to-wgmma: the dK/dV accumulators must start from splat constants}}
      %dk = attn.to_wg_fragment %dk0 : vector<128x64xf32> to !frag
      %dk1, %dv1 = attn.grad_dkdv_mma q(%q, %q : !smem_q, !smem_q) kv(%k, %k : !smem_kv, !smem_kv)
          rows(%lse, %lse : memref<1x2x64xf32>, memref<1x2x64xf32>) dq(%dqa : memref<1x2x1x2x64x32xf32>)
          scratch(%ds, %st : !smem_ds, !smem_dq) at[%i, %i] (%i, %i) state(%dk, %dk : !frag, !frag)
          {head_dim = 64 : i64, mask = #attn.mask<none>, scale = 0.125 : f32}
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

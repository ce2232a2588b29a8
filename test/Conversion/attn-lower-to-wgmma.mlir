// RUN: attn-opt %s --verify-each --attn-lower-to-wgmma | FileCheck %s
// RUN: not attn-opt %s --attn-lower-to-wgmma=max-mma-n=96 2>&1 | FileCheck %s --check-prefix=BADN
// RUN: sed -e 's/registers(24, 240) producer/registers(24, 240) ping_pong producer/' %s | attn-opt --attn-lower-to-wgmma | FileCheck %s --check-prefix=PP
// RUN: sed -e 's/registers(24, 240) producer/registers(24, 240) overlap producer/' %s | attn-opt --attn-lower-to-wgmma | FileCheck %s --check-prefix=OV
// RUN: sed -e 's/scale = 0.125 : f32}/scale = 0.125 : f32, unfilled_tail}/' %s | attn-opt --attn-lower-to-wgmma | FileCheck %s --check-prefix=TAIL
// RUN: sed -e 's/scale = 0.125 : f32}/scale = 0.125 : f32, unfilled_tail}/' -e 's/registers(24, 240) producer/registers(24, 240) overlap producer/' %s | attn-opt --attn-lower-to-wgmma | FileCheck %s --check-prefix=TAILOV

// One causal step and the epilogue of a CTA after attn-async-pipeline:
// D = 64, BLOCK_M = 128 (two consumer warpgroups), BLOCK_N = 64.
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
            {head_dim = 64 : i64, mask = #attn.mask<causal>, scale = 0.125 : f32}
        scf.yield %m1, %l1, %a1 : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>
      }
      attn.epilogue state(%r#0, %r#1, %r#2 : !attn.wg_fragment<128xf32>, !attn.wg_fragment<128xf32>, !attn.wg_fragment<128x64xf32>)
          to %o, lse %lse[%b, %h, %qpos, %c0] staging(%qt : !q)
          : memref<1x4x256x64xbf16>, memref<1x4x256xf32>
    }
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// Warp specialization: warpgroup 0 produces with 24 registers, the others
// consume with 240.
// CHECK-LABEL: func.func @step(
//       CHECK:   scf.forall
//       CHECK:     %[[TID:.*]] = gpu.thread_id x
//       CHECK:     %[[PRODUCER:.*]] = arith.cmpi ult, %[[TID]], %c128{{[_0-9]*}}
//       CHECK:     scf.if %[[PRODUCER]] {
//  CHECK-NEXT:       nvvm.setmaxregister decrease 24
//  CHECK-NEXT:       gpu.barrier
//  CHECK-NEXT:     } else {
//  CHECK-NEXT:       nvvm.setmaxregister increase 240
// The state becomes the thread's fragment of the accumulator layout: two
// rows of m and l, D / 2 = 32 columns of acc; initial values re-created.
//       CHECK:       %[[M0:.*]] = arith.constant dense<0xFF800000> : vector<2xf32>
//       CHECK:       %[[L0:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
//       CHECK:       %[[A0:.*]] = arith.constant dense<0.000000e+00> : vector<32xf32>
//       CHECK:       scf.for {{.*}} iter_args(%{{.*}} = %[[M0]], %{{.*}} = %[[L0]], %{{.*}} = %[[A0]]) -> (vector<2xf32>, vector<2xf32>, vector<32xf32>)
// S = Q K^T: D / 16 = 4 k-steps, K-major descriptors (stride byte offset
// 1024, 128B swizzle: 4611686293305360384 = 1 << 16 | 64 << 32 | 1 << 62),
// the first step overwrites the accumulator.
//       CHECK:         arith.constant 4611686293305360384 : i64
//       CHECK:         nvvm.wgmma.fence.aligned
//  CHECK-NEXT:         nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//  CHECK-NEXT:         nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
//  CHECK-NEXT:         nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
//  CHECK-NEXT:         nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
//  CHECK-NEXT:         nvvm.wgmma.commit.group.sync.aligned
//  CHECK-NEXT:         nvvm.wgmma.wait.group.sync.aligned 0
// Causal mask on the S registers: key < min(Nk, row + offset + 1).
//       CHECK:         arith.minsi %{{.*}}, %{{.*}} : index
//       CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i32
//       CHECK:         arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// m' = max(m, rowmax(S) c) across the quad, m_safe, alpha = exp2(m - m_safe),
// P = exp2(S c - m_safe) (FMA), l' = alpha l + rowsum(P). At D = 64 the
// thread's row max and sum are chains (trees measured slower here; D = 128
// takes trees: test/Pipelines/attn-to-cubin-wgmma.mlir).
//       CHECK:         %[[MXA:.*]] = llvm.intr.maxnum
//  CHECK-NEXT:         llvm.intr.maxnum(%[[MXA]],
//       CHECK:         gpu.shuffle xor %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
//       CHECK:         gpu.shuffle xor %{{.*}}, %c2_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
//       CHECK:         arith.mulf %{{.*}}, %cst{{.*}} : f32
//       CHECK:         arith.cmpf oeq
//       CHECK:         llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
//       CHECK:         llvm.intr.fma
//       CHECK:         llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// P to bf16 pairs (A registers), O rescaled, O += P V: BLOCK_N / 16 = 4
// register-A wgmmas m64n64k16, V MN-major (leading byte offset 64 x 128 =
// 8192: 4611686293338849280 = 512 << 16 | 64 << 32 | 1 << 62; transpose 1).
//       CHECK:         arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
//       CHECK:         vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
//       CHECK:         arith.constant 4611686293338849280 : i64
//       CHECK:         nvvm.wgmma.fence.aligned
//  CHECK-NEXT:         llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, 1, 1, 1, 1;", "=f,{{(=f,)+}}0,1,{{.*}},31,r,r,r,r,l"
//   CHECK-COUNT-3:     llvm.inline_asm has_side_effects
//       CHECK:         nvvm.wgmma.commit.group.sync.aligned
//  CHECK-NEXT:         nvvm.wgmma.wait.group.sync.aligned 0
//       CHECK:         scf.yield %{{.*}}, %{{.*}}, %{{.*}} : vector<2xf32>, vector<2xf32>, vector<32xf32>
// Epilogue: l summed over the quad, O = acc / l (0 where l == 0), staged as
// bf16 pairs in the Q tile, a named barrier for the warpgroup (id 1 + w),
// 16-byte stores of the rows below Nq, LSE from the quad leaders.
//       CHECK:       gpu.shuffle xor
//       CHECK:       gpu.shuffle xor
//       CHECK:       arith.divf
//       CHECK:       vector.store %{{.*}}, %arg0[{{.*}}] : memref<1x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
//       CHECK:       nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32{{[_0-9]*}}
//       CHECK:       scf.for
//       CHECK:         scf.if
//       CHECK:           vector.load %arg0[{{.*}}] : memref<1x128x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
//       CHECK:           vector.store %{{.*}}, %arg3[{{.*}}] : memref<1x4x256x64xbf16>, vector<8xbf16>
//       CHECK:       llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
//       CHECK:       memref.store %{{.*}}, %arg4[{{.*}}] : memref<1x4x256xf32>
//       CHECK:   } {attn.threads = 384 : i64, mapping
//   CHECK-NOT:   attn.

// BADN: attn-lower-to-wgmma: max-mma-n must be 64, 128, 192 or 256

// Ping-pong: the last warpgroup (1) hands warpgroup 0 the first turn (named
// barrier 4; 1 to 3 are the epilogue's); each S GEMM waits for the
// warpgroup's turn (barrier 4 + w, 256 threads) and hands it to the next
// (barrier 4 + (w + 1) mod 2) once issued, before waiting for it.
//      PP:       nvvm.setmaxregister increase 240
//      PP:       %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %c1{{[_0-9]*}} : index
//      PP:       scf.if %[[LAST]] {
//      PP:         nvvm.barrier.arrive id = %c4_i32 number_of_threads = %c256_i32
//      PP:       scf.for
//      PP:         nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32{{[_0-9]*}}
// PP-NEXT:         nvvm.wgmma.fence.aligned
//      PP:         nvvm.wgmma.commit.group.sync.aligned
//      PP:         nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32{{[_0-9]*}}
// PP-NEXT:         nvvm.wgmma.wait.group.sync.aligned 0

// Intra-warpgroup overlap: under lb < ub, the first block's S and softmax
// are peeled (no P V yet); the loop from lb + 1 carries P (BLOCK_N / 4 = 16
// packed i32) and V's address; an iteration fences once, issues S_j (one
// group) and the pending P V (a second group), waits for S_j only, runs
// the mask and softmax, then waits for P V with O and P_{j-1} pinned after
// the wait, and rescales O. The last block's P V follows the loop.
//      OV:       %[[ANY:.*]] = arith.cmpi slt, %c0{{[_0-9]*}}, %arg8 : index
//      OV:       scf.if %[[ANY]] -> (vector<2xf32>, vector<2xf32>, vector<32xf32>) {
//      OV:         nvvm.wgmma.fence.aligned
// OV-COUNT-4:      nvvm.wgmma.mma_async
//  OV-NEXT:        nvvm.wgmma.commit.group.sync.aligned
//      OV:         nvvm.wgmma.wait.group.sync.aligned 0
//      OV:         llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+}}0,1,
//   OV-NOT:        "wgmma.mma_async.sync
//      OV:         scf.for %{{.*}} = %{{.*}} to %arg8 step %c1{{[_0-9]*}} iter_args({{.*}}) -> (vector<2xf32>, vector<2xf32>, vector<32xf32>, vector<16xi32>, i64) {
//      OV:           nvvm.wgmma.fence.aligned
// OV-COUNT-4:        nvvm.wgmma.mma_async
//  OV-NEXT:          nvvm.wgmma.commit.group.sync.aligned
// OV-COUNT-4:        llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k16
//      OV:           nvvm.wgmma.commit.group.sync.aligned
//  OV-NEXT:          nvvm.wgmma.wait.group.sync.aligned 1
//      OV:           llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+}}0,1,
//      OV:           llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
//      OV:           arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
//      OV:           nvvm.wgmma.wait.group.sync.aligned 0
//  OV-NEXT:          llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+(=r,)+}}0,1,
//      OV:           arith.mulf
//      OV:           scf.yield {{.*}} : vector<2xf32>, vector<2xf32>, vector<32xf32>, vector<16xi32>, i64
//      OV:         nvvm.wgmma.fence.aligned
// OV-COUNT-4:      llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k16
//      OV:         nvvm.wgmma.commit.group.sync.aligned
//  OV-NEXT:        nvvm.wgmma.wait.group.sync.aligned 0
//      OV:         scf.yield %{{.*}}#0, %{{.*}}#1, %{{.*}} : vector<2xf32>, vector<2xf32>, vector<32xf32>
//  OV-NEXT:      } else {
//  OV-NEXT:        scf.yield

// unfilled_tail (varlen and paged K/V: rows past Nk hold other keys or
// garbage): a block that reaches past Nk (Nk - k_pos < BLOCK_N) zeroes V's
// rows from Nk - k_pos on (thread t: the 16 bytes t % 8 of rows t / 8 + 16 i,
// whole 128-byte lines, at V's shared address), fences them for the tensor
// cores and syncs the warpgroup (named barrier 1 + w), before P V reads V.
//  TAIL-LABEL: func.func @step(
//        TAIL:   %[[KPOS:.*]] = arith.muli %{{.*}}, %c64 : index
//        TAIL:   %[[IN:.*]] = arith.subi %arg5, %[[KPOS]] : index
//        TAIL:   %[[PAST:.*]] = arith.cmpi slt, %[[IN]], %c64{{[_0-9]*}} : index
//        TAIL:   scf.if %[[PAST]] {
//        TAIL:     %[[FROM:.*]] = arith.maxsi %[[IN]], %c0{{[_0-9]*}} : index
//        TAIL:     %[[ZERO:.*]] = arith.constant dense<0> : vector<4xi32>
//        TAIL:     %[[UNIT:.*]] = arith.remui %{{.*}}, %c8
//        TAIL:     %[[COL:.*]] = arith.muli %[[UNIT]], %c16
//        TAIL:     %[[FIRST:.*]] = arith.addi %[[FROM]], %{{.*}} : index
//        TAIL:     scf.for %[[ROW:.*]] = %[[FIRST]] to %c64{{[_0-9]*}} step %c16
//        TAIL:       %[[LINE:.*]] = arith.muli %[[ROW]], %c128
//        TAIL:       %[[PTR:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
//        TAIL:       llvm.store %[[ZERO]], %[[PTR]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
//        TAIL:     nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//        TAIL:     nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
//        TAIL:   }
//        TAIL:   nvvm.wgmma.fence.aligned
//   TAIL-NEXT:   nvvm.wgmma.mma_async

// With overlap only a loop's last block can reach past Nk, and its P V is
// the drain's: the blocks carry their Nk - k_pos (one index beside P and
// V's address), and the drain zeroes before its P V; the first and steady
// blocks never branch on it.
// TAILOV-LABEL: func.func @step(
//   TAILOV-NOT:   nvvm.fence.proxy
//       TAILOV:   scf.for {{.*}} iter_args({{.*}}) -> (vector<2xf32>, vector<2xf32>, vector<32xf32>, vector<16xi32>, i64, index)
//   TAILOV-NOT:     nvvm.fence.proxy
//       TAILOV:     scf.yield
//       TAILOV:   %[[PAST:.*]] = arith.cmpi slt, %{{.*}}#5, %c64{{[_0-9]*}} : index
//       TAILOV:   scf.if %[[PAST]] {
//       TAILOV:     llvm.store
//       TAILOV:     nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
//       TAILOV:     nvvm.barrier id
//       TAILOV:   }
//       TAILOV:   nvvm.wgmma.fence.aligned
//  TAILOV-NEXT:   llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16

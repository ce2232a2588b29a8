// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=stages=2 | FileCheck %s --check-prefix=STAGES2
// A request beyond shared memory gets what fits (D = 64: (227 KiB - 16 KiB)
// / 16 KiB = 13 stages), at once even for an absurd request.
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=stages=1000000000000 | FileCheck %s --check-prefix=STAGESMAX
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring | FileCheck %s --check-prefix=BM64
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=ping-pong=true | FileCheck %s --check-prefix=PP
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=64 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=ping-pong=true | FileCheck %s --check-prefix=PP64
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-tma-ring --attn-persistent-ctas=ctas=132 | FileCheck %s --check-prefix=PERS
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=192 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring=ping-pong=true | FileCheck %s --check-prefix=PP192
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring --attn-tma-store | FileCheck %s --check-prefix=TS
// RUN: attn-opt %s --split-input-file --attn-tile="block-m=128 block-n=64" --attn-causal-split --attn-cta-order --attn-tma-ring | FileCheck %s --check-prefix=NOTS

// tma-store: O gets a host descriptor of [1, 1, 64, 64] boxes (one consumer
// warpgroup's rows, one 64-column chunk) and the epilogue stores through it
// from the staging tile (Q's). Without the option the epilogue has none.
// TS-LABEL: func.func @causal
//  TS-SAME:   %{{[a-z0-9]+}}: {{.*}}, %{{[a-z0-9]+}}: {{.*}}, %{{[a-z0-9]+}}: {{.*}}, %[[O:[a-z0-9]+]]: memref<1x4x256x64xbf16>
//       TS:   %[[OU:.*]] = memref.cast %[[O]] : memref<1x4x256x64xbf16> to memref<*xbf16>
//       TS:   %[[TO:.*]] = nvgpu.tma.create.descriptor %[[OU]] box[%c1{{.*}}, %c1{{.*}}, %c64{{.*}}, %c64{{.*}}] {{.*}}tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
//       TS:   } consumer {
//       TS:     attn.epilogue {{.*}} to %[[O]], {{.*}} staging(%{{.*}} : memref<1x128x64xbf16{{.*}}) tma_store(%[[TO]] :
// TS-LABEL: func.func @d128_tail
//       TS:   nvgpu.tma.create.descriptor {{.*}}tensor = memref<1x1x64x64xf16
//       TS:     attn.epilogue {{.*}} staging(%{{.*}} : memref<2x128x64xf16{{.*}}) tma_store(
// NOTS-NOT: tma_store

// persistent-ctas: each region loops over its CTA's rounds of tiles. Round
// r of gridDim.x tiles gives CTA x tile r * gridDim.x + x for even r and
// r * gridDim.x + gridDim.x - 1 - x for odd r (dealt back and forth); a CTA
// takes the last round when its tile there is below the tile count. The
// loop's induction variable is the tile's ordinal (Q barrier phases) and it
// carries the K/V blocks of earlier tiles (ring position); causal tiles are
// numbered Q block slowest and descending (heaviest first), with no
// rebinding of the CTA loop. The producer waits on a Q-empty barrier (256
// consumer arrivals; parity ^ 1 lets the first tile pass) before loading Q;
// bf16 consumers stage O in Q's tile, so they fence their staged O against
// the next TMA write and arrive on it after the epilogue.
// PERS-LABEL: func.func @causal
//       PERS:   %[[QBAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       PERS:   %[[FULL:.*]] = nvgpu.mbarrier.create -> <{{.*}}num_barriers = 4>
//       PERS:   %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <{{.*}}num_barriers = 4>
//       PERS:   %[[QEMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       PERS:   nvgpu.mbarrier.init %[[QEMPTY]][%{{.*}}], %c256
//       PERS:   %[[NT:.*]] = arith.muli %{{.*}}, %c1 : index
//       PERS:   attn.warp_specialize
//       PERS:     %[[BID:.*]] = gpu.block_id x
//       PERS:     %[[GDIM:.*]] = gpu.grid_dim x
//       PERS:     %[[FULLR:.*]] = arith.divui %[[NT]], %[[GDIM]] : index
//  PERS-NEXT:     %[[REST:.*]] = arith.remui %[[NT]], %[[GDIM]] : index
//       PERS:     %[[LODD:.*]] = arith.andi %[[FULLR]], %c1{{[_0-9]*}} : index
//  PERS-NEXT:     %[[LISODD:.*]] = arith.cmpi ne, %[[LODD]], %c0{{[_0-9]*}} : index
//  PERS-NEXT:     %[[LAST:.*]] = arith.subi %[[GDIM]], %c1{{[_0-9]*}} : index
//  PERS-NEXT:     %[[LMIR:.*]] = arith.subi %[[LAST]], %[[BID]] : index
//  PERS-NEXT:     %[[LPOS:.*]] = arith.select %[[LISODD]], %[[LMIR]], %[[BID]] : index
//  PERS-NEXT:     %[[INLAST:.*]] = arith.cmpi ult, %[[LPOS]], %[[REST]] : index
//  PERS-NEXT:     %[[EXTRA:.*]] = arith.select %[[INLAST]], %c1{{[_0-9]*}}, %c0{{[_0-9]*}} : index
//  PERS-NEXT:     %[[ROUNDS:.*]] = arith.addi %[[FULLR]], %[[EXTRA]] : index
//  PERS-NEXT:     scf.for %[[R:.*]] = %c0{{[_0-9]*}} to %[[ROUNDS]] step %c1{{[_0-9]*}} iter_args(%[[BEFORE:.*]] = %c0{{[_0-9]*}}) -> (index) {
//       PERS:       %[[ODD:.*]] = arith.andi %[[R]], %c1{{[_0-9]*}} : index
//  PERS-NEXT:       %[[ISODD:.*]] = arith.cmpi ne, %[[ODD]], %c0{{[_0-9]*}} : index
//  PERS-NEXT:       %[[L2:.*]] = arith.subi %[[GDIM]], %c1{{[_0-9]*}} : index
//  PERS-NEXT:       %[[MIR:.*]] = arith.subi %[[L2]], %[[BID]] : index
//  PERS-NEXT:       %[[POS:.*]] = arith.select %[[ISODD]], %[[MIR]], %[[BID]] : index
//  PERS-NEXT:       %[[BASE:.*]] = arith.muli %[[R]], %[[GDIM]] : index
//  PERS-NEXT:       %[[T:.*]] = arith.addi %[[BASE]], %[[POS]] : index
//       PERS:       arith.divui %[[T]], %{{.*}} : index
//       PERS:       arith.remui %[[R]], %c2
//       PERS:       arith.xori
//       PERS:       nvgpu.mbarrier.try_wait.parity %[[QEMPTY]]
//       PERS:       nvgpu.tma.async.load
//       PERS:       scf.for %[[KB:.*]] = {{.*}} {
//       PERS:         %[[G:.*]] = arith.addi %[[KB]], %[[BEFORE]] : index
//       PERS:         arith.remui %[[G]], %c4
//       PERS:       scf.yield %{{.*}} : index
//       PERS:   } consumer {
//       PERS:     scf.for %[[CR:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CBEFORE:.*]] = %{{.*}}) -> (index) {
//       PERS:       arith.remui %[[CR]], %c2
//       PERS:       nvgpu.mbarrier.try_wait.parity %[[QBAR]]
//       PERS:       scf.for %[[CKB:[a-z0-9_]+]] =
//       PERS:         arith.addi %[[CKB]], %[[CBEFORE]] : index
//       PERS:       attn.epilogue
//  PERS-NEXT:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  PERS-NEXT:       nvgpu.mbarrier.arrive %[[QEMPTY]]
//       PERS:   } {attn.persistent_ctas = 132 : i64, mapping

// ping-pong: the two consumer warpgroups take turns (an attribute that
// attn-lower-to-wgmma turns into named barriers); one warpgroup has nobody
// to take turns with.
// PP-LABEL: func.func @causal
//       PP:   attn.warp_specialize consumers(2) registers(24, 240) ping_pong producer {
// BLOCK_M = 192: three consumer warpgroups take turns; 384 arrivals
// release a slot, and the consumers get 160 registers (24 * 128 + 160 * 384
// <= 65536).
// PP192-LABEL: func.func @causal
//       PP192:   nvgpu.mbarrier.init {{.*}}, %c384{{[_0-9]*}}, predicate
//       PP192:   attn.warp_specialize consumers(3) registers(24, 160) ping_pong producer {
// PP64-LABEL: func.func @causal
//       PP64:   attn.warp_specialize consumers(1) registers(24, 240) producer {

// BLOCK_M = 64: one consumer warpgroup, 128 arrivals release a slot.
// BM64-LABEL: func.func @causal
//       BM64:   nvgpu.mbarrier.init {{.*}}, %c128{{[_0-9]*}}, predicate
//       BM64:   attn.warp_specialize consumers(1) registers(24, 240)

// Causal D = 64 (one 64-column chunk), BLOCK_M = 128, BLOCK_N = 64: Q 16 KiB
// and up to four K/V stages of 8 KiB each.
func.func @causal(%q: memref<1x4x256x64xbf16>, %k: memref<1x2x256x64xbf16>,
                  %v: memref<1x2x256x64xbf16>, %o: memref<1x4x256x64xbf16>,
                  %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x4x256x64xbf16>, memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>)
                 outs(%o : memref<1x4x256x64xbf16>) lse(%lse : memref<1x4x256xf32>) {causal}
  return
}
// CHECK-LABEL: func.func @causal(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: memref<1x4x256x64xbf16>, %[[K:[a-z0-9]+]]: memref<1x2x256x64xbf16>, %[[V:[a-z0-9]+]]: memref<1x2x256x64xbf16>

// Host: TMA descriptors of [1, 1, rows, 64] boxes (outermost first), 128-byte
// swizzle, zero fill out of bounds: Q in BLOCK_M rows, K and V in BLOCK_N.
//       CHECK:   %[[QU:.*]] = memref.cast %[[Q]]
//       CHECK:   %[[TQ:.*]] = nvgpu.tma.create.descriptor %[[QU]] box[%c1{{.*}}, %c1{{.*}}, %c128{{.*}}, %c64{{.*}}] {{.*}}tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b{{.*}}oob = zero
//       CHECK:   %[[TK:.*]] = nvgpu.tma.create.descriptor {{.*}}tensor = memref<1x1x64x64xbf16
//       CHECK:   %[[TV:.*]] = nvgpu.tma.create.descriptor {{.*}}tensor = memref<1x1x64x64xbf16
//       CHECK:   scf.forall (%[[QB:.*]], %[[H:.*]], %[[B:.*]]) in

// Causal, K and V of every head in L2 (2 x 64 KiB): the CTA at launch
// position p = q + nQ (h + H b) (attn-lower-to-nvvm's Q block fastest) takes
// Q block nQ - 1 - p / (H B), head (p mod H B) mod H, batch (p mod H B) / H:
// the last Q block of every (head, batch) pair first.
//       CHECK:     %[[HB:.*]] = arith.muli %c4, %[[B]] : index
//       CHECK:     %[[PAIR:.*]] = arith.addi %[[H]], %[[HB]] : index
//       CHECK:     %[[NP:.*]] = arith.muli %[[NQ:.*]], %[[PAIR]] : index
//       CHECK:     %[[POS:.*]] = arith.addi %[[QB]], %[[NP]] : index
//       CHECK:     %[[PAIRS:.*]] = arith.muli %c4, %c1 : index
//       CHECK:     %[[LAST:.*]] = arith.subi %[[NQ]], %c1{{.*}} : index
//       CHECK:     %[[ROUND:.*]] = arith.divui %[[POS]], %[[PAIRS]] : index
//       CHECK:     %[[QBR:.*]] = arith.subi %[[LAST]], %[[ROUND]] : index
//       CHECK:     %[[REST:.*]] = arith.remui %[[POS]], %[[PAIRS]] : index
//       CHECK:     %[[HR:.*]] = arith.remui %[[REST]], %c4 : index
//       CHECK:     %[[BR:.*]] = arith.divui %[[REST]], %c4 : index
//       CHECK:     arith.muli %[[QBR]], %c128

// Shared memory: Q [1, C, BLOCK_M, 64] at 0, the K ring [stages, C, BLOCK_N,
// 64] after it, the V ring after that (1024-byte multiples).
//       CHECK:     %[[SMEM:.*]] = gpu.dynamic_shared_memory
//       CHECK:     %[[QS:.*]] = memref.view %[[SMEM]][%c0{{.*}}][] {{.*}} to memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[KS:.*]] = memref.view %[[SMEM]][%c16384{{.*}}][] {{.*}} to memref<4x1x64x64xbf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[VS:.*]] = memref.view %[[SMEM]][%c49152{{.*}}][] {{.*}} to memref<4x1x64x64xbf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[QT:.*]] = memref.subview %[[QS]][0, 0, 0, 0] [1, 1, 128, 64]

// One Q barrier, a full and an empty barrier per stage. Thread 0 sets the
// arrival counts: 1 (the producer's expect_tx) for Q and full, 256 (every
// consumer thread) for empty; a fence and a CTA barrier publish them.
//       CHECK:     %[[QBAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
//       CHECK:     %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:     %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
//       CHECK:     %[[TID:.*]] = gpu.thread_id x
//       CHECK:     %[[LEADER:.*]] = arith.cmpi eq, %[[TID]], %c0
//       CHECK:     nvgpu.mbarrier.init %[[QBAR]][%{{.*}}], %[[ONE:.*]], predicate = %[[LEADER]]
//       CHECK:     nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %[[ONE]], predicate = %[[LEADER]]
//       CHECK:     nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %c256{{[_0-9]*}}, predicate = %[[LEADER]]
//   CHECK-COUNT-3:     nvgpu.mbarrier.init %[[FULL]]
//       CHECK:     nvvm.fence.mbarrier.init
//  CHECK-NEXT:     gpu.barrier

// The roles: one producer warpgroup (24 registers), two consumer
// warpgroups of 64 rows (240 registers).
// Nk = 256, static: the steps' key count is a constant.
//       CHECK:     %[[NK:.*]] = arith.constant 256 : index
//       CHECK:     attn.warp_specialize consumers(2) registers(24, 240) producer {
//       CHECK:       scf.if %[[LEADER]] {
// Q once: expect_tx of the whole box (128 x 64 x 2 bytes), then the copy.
//       CHECK:         nvgpu.mbarrier.arrive.expect_tx %[[QBAR]][%{{.*}}], %c16384{{[_0-9]*}}
//       CHECK:         nvgpu.tma.async.load %[[TQ]][%c0{{.*}}, %{{.*}}, %[[HR]], %[[BR]]], %[[QBAR]]
// K/V block kb into slot kb mod 4; wait until the consumers released the
// slot (parity of the round, flipped: a fresh barrier passes), expect the
// bytes of both boxes (2 x 64 x 64 x 2), copy K and V of KV head h / 2.
//       CHECK:         scf.for %[[KB:.*]] = %c0{{.*}} to %[[NBLOCKS:.*]] step
//       CHECK:           %[[SLOT:.*]] = arith.remui %[[KB]], %c4{{[_0-9]*}}
//       CHECK:           %[[ROUND:.*]] = arith.divui %[[KB]], %c4{{[_0-9]*}}
//       CHECK:           %[[R2:.*]] = arith.remui %[[ROUND]], %c2{{[_0-9]*}}
//       CHECK:           %[[PAR:.*]] = arith.index_cast %[[R2]] : index to i1
//       CHECK:           %[[FLIP:.*]] = arith.xori %[[PAR]], %true{{[_0-9]*}}
//       CHECK:           nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[SLOT]]], %[[FLIP]],
//       CHECK:           nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[SLOT]]], %c16384{{[_0-9]*}}
//       CHECK:           %[[ROW:.*]] = arith.muli %[[KB]], %c64{{[_0-9]*}}
//       CHECK:           %[[KDST:.*]] = memref.subview %[[KS]][%[[SLOT]], 0, 0, 0] [1, 1, 64, 64]
//       CHECK:           nvgpu.tma.async.load %[[TK]][%c0{{.*}}, %[[ROW]], %[[KVH:.*]], %[[BR]]], %[[FULL]][%[[SLOT]]] to %[[KDST]]
//       CHECK:           %[[VDST:.*]] = memref.subview %[[VS]][%[[SLOT]], 0, 0, 0] [1, 1, 64, 64]
//       CHECK:           nvgpu.tma.async.load %[[TV]][%c0{{.*}}, %[[ROW]], %[[KVH]], %[[BR]]], %[[FULL]][%[[SLOT]]] to %[[VDST]]
// The consumers: Q landed, then each K/V loop waits for its block's slot,
// steps on tensor cores from shared memory, releases the slot.
//       CHECK:     } consumer {
//       CHECK:       nvgpu.mbarrier.try_wait.parity %[[QBAR]][%{{.*}}], %false
//       CHECK:       scf.for %[[J:.*]] = %{{.*}} to %[[NFULL:.*]] step {{.*}} iter_args
//       CHECK:         %[[CSLOT:.*]] = arith.remui %[[J]], %c4{{[_0-9]*}}
//       CHECK:         nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[CSLOT]]], %{{.*}},
//       CHECK:         %[[VT:.*]] = memref.subview %[[VS]][%[[CSLOT]], 0, 0, 0] [1, 1, 64, 64] {{.*}} to memref<1x64x64xbf16
//       CHECK:         %[[KT:.*]] = memref.subview %[[KS]][%[[CSLOT]], 0, 0, 0] [1, 1, 64, 64] {{.*}} to memref<1x64x64xbf16
//       CHECK:         attn.online_attention_mma q(%[[QT]] : {{.*}}) kv(%[[KT]], %[[VT]] : {{.*}}) keys(%{{.*}}, %[[NK]]) rows(%{{.*}}) state(%{{.*}}) {head_dim = 64 : i64, mask = #attn.mask<none>
//       CHECK:         nvgpu.mbarrier.arrive %[[EMPTY]][%[[CSLOT]]]
//       CHECK:       } {attn.stage = "full"}
//       CHECK:       scf.for %{{.*}} = %[[NFULL]] to %[[NBLOCKS]]
//       CHECK:         attn.online_attention_mma {{.*}} rows({{.*}}, causal_offset {{.*}}) {{.*}}mask = #attn.mask<causal>
//       CHECK:         nvgpu.mbarrier.arrive %[[EMPTY]]
//       CHECK:       } {attn.stage = "masked"}
// O is staged in the Q tile for coalesced stores.
//       CHECK:       attn.epilogue {{.*}} staging(%[[QT]] :
// CTAs are blocks x, y, z (attn-cta-order marked the causal loop).
//       CHECK:   } {attn.heaviest_first, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}

// STAGESMAX-LABEL: func.func @causal
//       STAGESMAX:   memref.view {{.*}} to memref<13x1x64x64xbf16

// STAGES2-LABEL: func.func @causal
//       STAGES2:   memref.view {{.*}} to memref<2x1x64x64xbf16
//       STAGES2:   nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
//       STAGES2:   arith.remui %{{.*}}, %c2{{[_0-9]*}}

// -----

// D = 128 in two chunks; non-causal with a K tail (Nk = 100): a mask-free
// loop and a masked one; no descending order. Q is 2 x 128 x 64 x 2 = 32 KiB,
// a K or V stage 2 x 64 x 64 x 2 = 16 KiB; three stages by default (D > 64).
func.func @d128_tail(%q: memref<2x2x70x128xf16>, %k: memref<2x2x100x128xf16>,
                     %v: memref<2x2x100x128xf16>, %o: memref<2x2x70x128xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x70x128xf16>, memref<2x2x100x128xf16>, memref<2x2x100x128xf16>)
                 outs(%o : memref<2x2x70x128xf16>)
  return
}
// CHECK-LABEL: func.func @d128_tail
//       CHECK:   memref.view {{.*}} to memref<1x2x128x64xf16
//       CHECK:   memref.view {{.*}}[%c32768{{.*}} to memref<3x2x64x64xf16
//       CHECK:   attn.warp_specialize consumers(2)
//       CHECK:     nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c32768
// Both chunks of each box, at columns 0 and 64.
//       CHECK:     nvgpu.tma.async.load {{.*}}[%c0{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
//       CHECK:     nvgpu.tma.async.load {{.*}}[%c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
//       CHECK:       nvgpu.mbarrier.arrive.expect_tx {{.*}}, %c32768
//   CHECK-COUNT-4:   nvgpu.tma.async.load
//       CHECK:   } consumer {
//       CHECK:     attn.online_attention_mma {{.*}} memref<2x64x64xf16
//  CHECK-SAME:       mask = #attn.mask<none>
//       CHECK:     attn.online_attention_mma
//  CHECK-SAME:       mask = #attn.mask<bounds>
//       CHECK:   } {mapping

// -----

// The causal start order follows the bytes of K and V of all (batch, KV
// head) pairs: at most 40 MiB (80% of the H100/H200 L2) starts the last Q
// block of every head first (as @causal above); more, or paged K/V, each
// head's Q blocks from the last, head after head (Q block nQ - 1 - q); a
// dynamic K chooses at run time. K and V here: 2 x 8 x Nk x 128 x 2 bytes =
// 40 MiB at Nk = 10240.
!q = memref<1x32x10240x128xbf16>
!kv40 = memref<1x8x10240x128xbf16>
func.func @causal_kv_40mib(%q: !q, %k: !kv40, %v: !kv40, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv40, !kv40) outs(%o : !q) {causal}
  return
}
// CHECK-LABEL: func.func @causal_kv_40mib
//       CHECK:   scf.forall (%[[Q40:[a-z0-9]+]], %{{.*}}) in (%c80, %c32, %c1) {
//       CHECK:     %[[POS40:.*]] = arith.addi %[[Q40]], %{{.*}} : index
//       CHECK:     arith.divui %[[POS40]], %{{.*}} : index
//   CHECK-NOT:     arith.select
//       CHECK:     attn.warp_specialize

!kv40p = memref<1x8x10256x128xbf16>
func.func @causal_kv_over_40mib(%q: !q, %k: !kv40p, %v: !kv40p, %o: !q) {
  attn.attention ins(%q, %k, %v : !q, !kv40p, !kv40p) outs(%o : !q) {causal}
  return
}
// CHECK-LABEL: func.func @causal_kv_over_40mib
//       CHECK:   scf.forall (%[[QO:[a-z0-9]+]], %{{.*}}) in (%c80, %c32, %c1) {
//       CHECK:     %[[LASTO:.*]] = arith.subi %c80, %c1{{.*}} : index
//  CHECK-NEXT:     %[[QRO:.*]] = arith.subi %[[LASTO]], %[[QO]] : index
//  CHECK-NEXT:     arith.muli %[[QRO]], %c128 : index

!dq = memref<1x4x?x64xbf16>
!dkv = memref<1x2x?x64xbf16>
func.func @causal_dynamic(%q: !dq, %k: !dkv, %v: !dkv, %o: !dq) {
  attn.attention ins(%q, %k, %v : !dq, !dkv, !dkv) outs(%o : !dq) {causal}
  return
}
// CHECK-LABEL: func.func @causal_dynamic
//  CHECK-SAME:     %{{.*}}: memref<1x4x?x64xbf16>, %[[KD:[a-z0-9]+]]: memref<1x2x?x64xbf16>
//       CHECK:   scf.forall (%[[QD:[a-z0-9]+]], %[[HD:[a-z0-9]+]], %[[BD:[a-z0-9]+]]) in (%{{.*}}, %c4, %c1) {
// 2 (K and V) x 2 bytes x 1 x 2 x Nk x 64 against 40 MiB.
//       CHECK:     %[[NKD:.*]] = memref.dim %[[KD]], %c2
//       CHECK:     %[[BN:.*]] = arith.muli %{{.*}}, %[[NKD]] : index
//       CHECK:     %[[BYTES:.*]] = arith.muli %[[BN]], %c64{{.*}} : index
//       CHECK:     %[[FITS:.*]] = arith.cmpi ule, %[[BYTES]], %c41943040 : index
//       CHECK:     %[[POSD:.*]] = arith.addi %[[QD]], %{{.*}} : index
//       CHECK:     %[[ROUNDD:.*]] = arith.divui %[[POSD]], %{{.*}} : index
//       CHECK:     %[[MQ:.*]] = arith.subi %{{.*}}, %[[ROUNDD]] : index
//       CHECK:     %[[REST:.*]] = arith.remui %[[POSD]], %{{.*}} : index
//       CHECK:     %[[MH:.*]] = arith.remui %[[REST]], %c4 : index
//       CHECK:     %[[MB:.*]] = arith.divui %[[REST]], %c4 : index
//       CHECK:     %[[SQ:.*]] = arith.subi %{{.*}}, %[[QD]] : index
//       CHECK:     arith.select %[[FITS]], %[[MQ]], %[[SQ]] : index
//       CHECK:     arith.select %[[FITS]], %[[MH]], %[[HD]] : index
//       CHECK:     arith.select %[[FITS]], %[[MB]], %[[BD]] : index

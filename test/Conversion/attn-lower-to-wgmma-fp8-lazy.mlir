// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma=fp8-poly-exp2=4 | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma="fp8-lazy-headroom=0" | FileCheck %s --check-prefix=HEAD0
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma="fp8-lazy-max=false" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma | FileCheck %s --check-prefix=DYN
// RUN: not attn-opt %s --attn-tile="block-m=0 block-n=0" --attn-causal-split --attn-async-pipeline="overlap=true" --attn-lower-to-wgmma="fp8-lazy-headroom=9" 2>&1 | FileCheck %s --check-prefix=BADHEAD

// FP8's lazy row max (fp8-lazy-max, default on) in every pipelined K/V loop
// without a mask (D = 128, BLOCK_N = 128, 256 keys: the first block, then
// one steady-state block):
//  * the first block's exact softmax sets m 3 (fp8-lazy-headroom) above its
//    row max;
//  * the steady blocks go two per iteration (scf.for to `end` in steps of
//    2), the odd one after the loop (scf.if end < ub): ptxas serializes
//    the wgmmas of a lazy loop of one block per iteration whose trip count
//    is a runtime value (C7513);
//  * after S_j's wait, P = exp2(S c - m + 8) against the running max m
//    with no row max; polynomial exponentials (fp8-poly-exp2=4 here, off
//    by default) are clamped at 2^127 so that P stays non-negative (a
//    too-stale m gives 448, not garbage; MUFU's gives inf, which the
//    satfinite cast makes 448);
//  * the packed e4m3 P is tested for a byte at 0x7E or above: 2 is added
//    to every byte (0x02020202) and the top bits (0x80808080) OR-ed;
//  * a warp votes (any) to redo the block, and after P V's wait an scf.if
//    runs the exact softmax with m set 3 (fp8-lazy-headroom) above the row
//    max and rescales O, or keeps the lazy P, m and l.
// Causal and dynamic-Nk kernels (runtime trip counts) take it in their
// unmasked loop; a masked loop (the causal diagonal, the key-length tail,
// or a dynamic-Nk loop lowered without attn-causal-split) keeps the exact
// softmax.

// CHECK-LABEL: func.func @one_loop
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.intr.maxnum
// CHECK: %[[H0:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[H0]] : f32
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi
// CHECK: %[[STEADY:.*]] = arith.subi %[[BLOCKS]], %{{.*}} : index
// CHECK: %[[PAIRS:.*]] = arith.divsi %[[STEADY]], %[[TWO:.*]] : index
// CHECK: %[[PAIRSTEP:.*]] = arith.muli %[[STEP:.*]], %[[TWO]] : index
// CHECK: %[[END:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[LOOP:.*]]:6 = scf.for %[[J:.*]] = %{{.*}} to %[[END]] step %[[PAIRSTEP]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[TOP:.*]] = arith.constant 1.270000e+02 : f32
// CHECK-NEXT: llvm.intr.minnum(%{{.*}}, %[[TOP]])
// CHECK-COUNT-16: arith.addi %{{.*}}, %c33686018_i32{{(_[0-9]+)?}} : i32
// CHECK: %[[HIGH:.*]] = arith.constant -2139062144 : i32
// CHECK-NEXT: %[[BITS:.*]] = arith.andi %{{.*}}, %[[HIGH]] : i32
// CHECK: arith.cmpi ne, %[[BITS]]
// CHECK: %[[REDO:.*]] = nvvm.vote.sync  any %c-1_i32, %{{.*}} -> i1
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if %[[REDO]] -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32,
// CHECK: llvm.intr.maxnum
// CHECK: %[[H:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[H]] : f32
// CHECK: } else {
// CHECK-NEXT: scf.yield
// The loop's second block, at j + step.
// CHECK: arith.addi %[[J]], %[[STEP]] : index
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.vote.sync  any
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: } else {
// CHECK: scf.yield {{.*}} : vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<16xi32>, i64, index
// The odd block.
// CHECK: %[[ODD:.*]] = arith.cmpi slt, %[[END]], %{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]]:6 = scf.if %[[ODD]] -> (vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<16xi32>, i64, index)
// CHECK: nvvm.vote.sync  any
// CHECK: scf.yield {{.*}} : vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<16xi32>, i64, index
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2, %[[LOOP]]#3, %[[LOOP]]#4, %[[LOOP]]#5 :
// The last block's P V, on the odd block's results.
// CHECK: vector.extract %[[LAST]]#2[0]
// CHECK: vector.extract %[[LAST]]#3[0]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.vote.sync
// CHECK: return

// The causal kernel's unmasked loop takes it (three votes: two blocks per
// iteration and the odd one); its diagonal loop, after it, does not.
// CHECK-LABEL: func.func @causal
// CHECK-COUNT-3: nvvm.vote.sync  any
// CHECK-NOT: nvvm.vote.sync
// CHECK: return

// CHECK-LABEL: func.func @dynamic_keys
// CHECK-COUNT-3: nvvm.vote.sync  any
// CHECK-NOT: nvvm.vote.sync
// CHECK: return

// DYN-LABEL: func.func @dynamic_keys
// DYN: nvvm.wgmma.wait.group.sync.aligned 1
// DYN-NOT: nvvm.vote.sync
// DYN: return

// HEAD0-LABEL: func.func @one_loop
// HEAD0: nvvm.vote.sync  any
// HEAD0-NOT: arith.constant 3.000000e+00 : f32
// HEAD0: } else {

// OFF-LABEL: func.func @one_loop
// OFF-NOT: nvvm.vote.sync
// OFF-NOT: 33686018
// OFF-NOT: arith.constant 3.000000e+00 : f32
// OFF: func.func @causal

// BADHEAD: error: attn-lower-to-wgmma: fp8-lazy-headroom must be in [0, 8] (log2 units, at most P's scale), but got 9

!q = memref<1x4x256x128xf8E4M3FN>
!k = memref<1x2x256x128xf8E4M3FN>
!v = memref<1x2x256x128xf8E4M3FN, strided<[65536, 32768, 1, 256]>>
!o = memref<1x4x256x128xbf16>
!d = memref<1x2xf32>

func.func @one_loop(%q: !q, %k: !k, %v: !v, %o: !o, %qd: !d, %kd: !d,
                    %vd: !d, %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : !q, !k, !v) outs(%o : !o)
                 lse(%lse : memref<1x4x256xf32>)
                 descale(%qd, %kd, %vd : !d, !d, !d)
  return
}

func.func @causal(%q: !q, %k: !k, %v: !v, %o: !o, %qd: !d, %kd: !d,
                  %vd: !d, %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : !q, !k, !v) outs(%o : !o)
                 lse(%lse : memref<1x4x256xf32>)
                 descale(%qd, %kd, %vd : !d, !d, !d) {causal}
  return
}

!kd = memref<1x2x?x128xf8E4M3FN>
!vd = memref<1x2x?x128xf8E4M3FN, strided<[?, ?, 1, ?]>>

func.func @dynamic_keys(%q: !q, %k: !kd, %v: !vd, %o: !o, %qd: !d, %kd: !d,
                        %vd: !d, %lse: memref<1x4x256xf32>) {
  attn.attention ins(%q, %k, %v : !q, !kd, !vd) outs(%o : !o)
                 lse(%lse : memref<1x4x256xf32>)
                 descale(%qd, %kd, %vd : !d, !d, !d)
  return
}

// The tensor-core path end to end (attn-to-cubin on sm_90a): what the host
// launches and what the kernel takes. Dynamic lengths, causal, D = 128.
// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s
// RUN: attn-opt %s --attn-to-cubin="format=isa path=fma" | FileCheck %s --check-prefix=FMA
// RUN: attn-opt %s --attn-to-cubin="format=none persistent-ctas=132" | FileCheck %s --check-prefix=PERS

// A persistent kernel launches its 132 CTAs whatever the shape; each finds
// its tiles from its block index and the grid size.
// PERS: gpu.launch_func @dyn_kernel::@dyn_kernel blocks in (%c132, %c1, %c1) threads in (%c384, %c1, %c1)
// PERS: llvm.func @dyn_kernel(
// PERS:   nvvm.read.ptx.sreg.ctaid.x
// PERS:   nvvm.read.ptx.sreg.nctaid.x

!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @dyn(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !l) {
  attn.attention ins(%q, %k, %v : !t, !t, !t) outs(%o : !t) lse(%lse : !l) {causal}
  return
}

// Host: the descriptors of Q, K, V cross the kernel boundary as pointers;
// the grid is 1-D: ceil(Nq / 128) * Hq * B blocks of 384 threads (producer
// + two consumer warpgroups) with Q and two K/V stages of dynamic shared
// memory (32 + 2 x 2 x 32 KiB).
// CHECK-LABEL: func.func @dyn(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: memref
//       CHECK:   %[[B:.*]] = memref.dim %[[Q]], %c0
//       CHECK:   %[[H:.*]] = memref.dim %[[Q]], %c1
//       CHECK:   %[[NQ:.*]] = memref.dim %[[Q]], %c2
//       CHECK:   %[[QBLOCKS:.*]] = arith.ceildivui %[[NQ]], %c128
//       CHECK:   %[[TQ:.*]] = nvgpu.tma.create.descriptor
//       CHECK:   %[[PQ:.*]] = builtin.unrealized_conversion_cast %[[TQ]] : !nvgpu.tensormap.descriptor<{{.*}}> to !llvm.ptr
//       CHECK:   %[[PK:.*]] = builtin.unrealized_conversion_cast
//       CHECK:   %[[PV:.*]] = builtin.unrealized_conversion_cast
//       CHECK:   %[[X:.*]] = arith.muli %[[QBLOCKS]], %[[H]]
//       CHECK:   %[[GRID:.*]] = arith.muli %[[X]], %[[B]]
//       CHECK:   gpu.launch_func @dyn_kernel::@dyn_kernel blocks in (%[[GRID]], %c1, %c1) threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c229376_i32 args(%[[PV]] : !llvm.ptr, %[[PK]] : !llvm.ptr, %[[PQ]] : !llvm.ptr, %[[Q]] : memref

// Kernel: dynamic shared memory is an extern array aligned to 1024 bytes;
// the maps are 128-byte by-value __grid_constant__ parameters; one CTA per SM.
//       CHECK: gpu.module @dyn_kernel
//       CHECK:   llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
//       CHECK:   llvm.func @dyn_kernel(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64
//  CHECK-SAME:       nvvm.minctasm = 1 : i32
// The block index runs over Q blocks first (q = id mod ceil(Nq / 128)),
// and attn-async-pipeline rebinds the causal tile, heaviest first: where K
// and V of every (batch, KV head) take at most 40 MiB, computed from K's
// sizes at run time, the last Q block of every (head, batch) pair first,
// else each head's Q blocks from the last (ceil(Nq / 128) - 1 - q).
//       CHECK:     %[[MAXB:.*]] = llvm.mlir.constant(41943040 : index) : i64
//       CHECK:     %[[ID:.*]] = nvvm.read.ptx.sreg.ctaid.x
//       CHECK:     %[[FITS:.*]] = llvm.icmp "ule" %{{.*}}, %[[MAXB]] : i64
//       CHECK:     %[[REM:.*]] = llvm.urem %{{.*}}, %[[NB:.*]] : i64
//       CHECK:     %[[MAJOR:.*]] = llvm.sub %[[LAST:.*]], %{{.*}} : i64
//       CHECK:     %[[SERIAL:.*]] = llvm.sub %[[LAST]], %[[REM]] : i64
//       CHECK:     llvm.select %[[FITS]], %[[MAJOR]], %[[SERIAL]] : i1, i64
//   CHECK-NOT:   attn.
//   CHECK-NOT:   nvgpu.

// path=fma keeps the CUDA-core kernel: no tensor-core instruction.
//   FMA-NOT: wgmma
//   FMA-NOT: cp.async.bulk
//       FMA: .entry dyn_kernel

// D = 128 with two consumer warpgroups: a thread's row max is a tree
// (pairs of S registers first, then pairs of pairs), not a chain.
// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s --check-prefix=TREE
// TREE:      %[[MXA:.*]] = llvm.intr.maxnum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// TREE-NEXT: %[[MXB:.*]] = llvm.intr.maxnum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// TREE:      llvm.intr.maxnum(%[[MXA]], %[[MXB]])

// The default example (Llama-3-8B prefill, D=128, bf16, causal) compiled to a
// bundle takes the tensor-core path on sm_90a: its PTX has the pieces of the
// pipeline, ptxas assembles it and nothing spills; so does a D = 64 kernel.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %examples/llama3-8b-prefill.mlir -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/llama3_8b_prefill_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/llama3_8b_prefill_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attn-compile %examples/llama3-8b-prefill.mlir --max-mma-n=64 -o %t/n64 > /dev/null
// RUN: FileCheck %s --check-prefix=N64 < %t/n64/llama3_8b_prefill_kernel.ptx
// RUN: attn-compile --batch=8 --heads-q=12 --seqlen-q=1024 --head-dim=64 --dtype=f16 --causal --name=d64 -o %t/d64 > /dev/null
// RUN: %ptxas -arch=sm_90a -v %t/d64/d64_kernel.ptx -o %t/d64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// D = 64 with a run-time Nq takes three consumer warpgroups (BLOCK_M 192,
// 160 registers each): no spills either, causal or not.
// RUN: attn-compile --batch=dynamic --heads-q=dynamic --heads-kv=dynamic --seqlen-q=dynamic --seqlen-k=dynamic --head-dim=64 --name=d64dyn -o %t/d64dyn | FileCheck %s --check-prefix=BM192
// RUN: %ptxas -arch=sm_90a -v %t/d64dyn/d64dyn_kernel.ptx -o %t/d64dyn.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attn-compile --batch=dynamic --heads-q=dynamic --heads-kv=dynamic --seqlen-q=dynamic --seqlen-k=dynamic --head-dim=64 --causal --name=d64c -o %t/d64c | FileCheck %s --check-prefix=BM192
// RUN: %ptxas -arch=sm_90a -v %t/d64c/d64c_kernel.ptx -o %t/d64c.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// BM192: wgmma BLOCK_M=192 BLOCK_N=128 | 512 threads, {{.*}} 0/0 B spilled
// The TMA-store epilogue (--tma-store): O is a fifth tensor map (64-row
// boxes) and no memref of O reaches the kernel; each warpgroup's thread 0
// stores both chunks from shared memory after the async-proxy fence.
// RUN: attn-compile %examples/llama3-8b-prefill.mlir --tma-store -o %t/ts | FileCheck %s
// RUN: FileCheck %s --check-prefix=TS < %t/ts/llama3_8b_prefill_kernel.ptx
// RUN: %ptxas -arch=sm_90a -v %t/ts/llama3_8b_prefill_kernel.ptx -o %t/ts.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=TSMAP < %t/ts/manifest.json
// TS: fence.proxy.async.shared::cta;
// TS: bar.sync
// TS: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}];
// TS: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// TS-NEXT: cp.async.bulk.commit_group;
// TS-NEXT: cp.async.bulk.wait_group.read 0;
// TS-NOT: st.global.v4
// TSMAP: "box": [
// TSMAP-NEXT: 64,
// TSMAP-NEXT: 64,
// TSMAP-NEXT: 1,
// TSMAP-NEXT: 1
// TSMAP-NEXT: ],
// TSMAP-NEXT: "field": "tensor_map",
// TSMAP-NEXT: "operand": "o"

// CHECK: llama3_8b_prefill_kernel: fwd bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=8192 Nk=8192 scale=0.0883883{{[0-9]*}} contiguous wgmma BLOCK_M=128 BLOCK_N=128 | 384 threads, {{[1-9][0-9]*}} registers, 230400 B smem, 0 B stack, 0/0 B spilled
// CHECK: wrote {{.*}}manifest.json (1 kernels)

// Tensor maps by value (__grid_constant__), dynamic shared memory 1024-byte
// aligned for 128B-swizzled tiles, one CTA per SM of 384 threads.
// PTX: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// PTX: .entry llama3_8b_prefill_kernel(
// PTX: .param .align 64 .b8 llama3_8b_prefill_kernel_param_0[128]
// PTX: .maxntid 384, 1, 1
// PTX: .minnctapersm 1
// mbarriers initialized by one thread, then fenced and published.
// PTX: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: bar.sync 0;
// The producer warpgroup gives registers up and issues TMA copies that
// complete on an mbarrier; consumers take registers.
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// S = Q K^T with both operands in shared memory (two descriptors, K-major),
// O += P V with P in four registers and V transposed (last immediate 1).
// PTX-DAG: {{wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 \{.*\}, %rd[0-9]+, %rd[0-9]+, p, 1, +1, 0, +0;}}
// PTX-DAG: {{wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 \{.*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, 1, 1, 1, 1;}}
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// Overlap (the default): S_j is waited for while P_{j-1} V_{j-1} runs.
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// Ping-pong (the default): turns on named barriers of 256 threads.
// PTX-DAG: bar.arrive {{%r[0-9]+}}, 256;
// PTX-DAG: cvt.rn.bf16x2.f32
// PTX-DAG: ex2.approx.ftz.f32
// The epilogue syncs its warpgroup on a named barrier, stores 16 bytes.
// PTX-DAG: bar.sync {{%r[0-9]+}}, 128;
// PTX-DAG: st.global.v4.b32
// PTX-DAG: mbarrier.arrive.shared.b64

// No wgmma is serialized: no register written inside a wgmma group
// (C7519), no input register redefined while its group runs (C7513).
// PTXAS-NOT: C75{{19|13}}
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// With --max-mma-n=64, each O += P V k-step of D = 128 is two 64-column
// instructions, one per chunk of V: 2 x 8 k-steps where a P V is issued:
// the overlapped loop of mask-free blocks and the P V after it, and after
// the diagonal block (one block when BLOCK_M = BLOCK_N: no loop is left).
// N64-COUNT-48: {{wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 .*, 1, 1, 1, 1;}}
//     N64-NOT: {{wgmma.mma_async.sync.aligned.m64n[0-9]+k16.f32.bf16.bf16 .*, 1, 1, 1, 1;}}

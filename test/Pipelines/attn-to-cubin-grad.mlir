// REQUIRES: ptxas
// RUN: rm -rf %t && attn-opt %s --attn-to-cubin | %python %S/Inputs/gpu-binary-ptx.py %t | FileCheck %s --check-prefix=NAMES
// RUN: FileCheck %s --check-prefix=MAIN < %t/grad_kernel_1.ptx
// RUN: FileCheck %s --check-prefix=DRAIN < %t/grad_kernel_1.ptx
// RUN: for k in %t/*.ptx; do %ptxas -arch=sm_90a -v $k -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS || exit 1; done
// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s --check-prefix=HOST

// The tensor-core backward through attn-to-cubin, Llama-like
// causal, N 1024, D 128 (H 8): four kernels launched in order, the
// dK/dV one with 384 threads, 224 KiB of dynamic shared memory, TMA
// descriptors of Q, dO, K, V; each kernel assembles with ptxas. (The
// dK/dV kernel's consumers are at their 240 registers: a few bytes of
// spills here, ~140 B with GQA 4:1; docs/passes.md.)

!q = memref<1x8x1024x128xbf16>
!kv = memref<1x8x1024x128xbf16>
!l = memref<1x8x1024xf32>
func.func @grad(%q: !q, %k: !kv, %v: !kv, %o: !q, %do: !q, %lse: !l,
                %dq: !q, %dk: !kv, %dv: !kv) {
  attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : !q, !kv, !kv, !q, !q, !l)
      outs(%dq, %dk, %dv : !q, !kv, !kv) {causal}
  return
}

// NAMES: grad_kernel
// NAMES: grad_kernel_0
// NAMES: grad_kernel_1
// NAMES: grad_kernel_2

// HOST: gpu.launch_func @grad_kernel::@grad_kernel blocks in (%{{.*}}) threads in (%c128
// HOST: gpu.launch_func @grad_kernel_0::@grad_kernel
// HOST: gpu.launch_func @grad_kernel_1::@grad_kernel blocks in (%c64, %c1, %c1) threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c229376_i32 args({{.*}} : !llvm.ptr, {{.*}} : !llvm.ptr, {{.*}} : !llvm.ptr, {{.*}} : !llvm.ptr,
// HOST: gpu.launch_func @grad_kernel_2::@grad_kernel

// MAIN: setmaxnreg.inc.sync.aligned.u32 240
// MAIN: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// MAIN: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// MAIN: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MAIN: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// MAIN: cp.async.bulk.wait_group.read 1;
// The last bulk reductions are waited for before the dK/dV stores (the
// block may sit anywhere in the PTX).
// DRAIN: cp.async.bulk.wait_group 0;

// PTXAS: ptxas info    : Used {{[0-9]+}} registers

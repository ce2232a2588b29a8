// The default example (Llama-3-8B prefill, D=128, bf16, causal) compiled to a
// bundle: ptxas assembles it for sm_90a and nothing spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %examples/llama3-8b-prefill.mlir -o %t | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t/llama3_8b_prefill_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// CHECK: llama3_8b_prefill_kernel: fwd bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=8192 Nk=8192 scale=0.0883883{{[0-9]*}} contiguous BLOCK_M=64 BLOCK_N=16 | 256 threads, {{[1-9][0-9]*}} registers, 0 B smem, 0 B stack, 0/0 B spilled
// CHECK: wrote {{.*}}manifest.json (1 kernels)
// PTXAS: Compiling entry function 'llama3_8b_prefill_kernel' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{[0-9]+}} registers

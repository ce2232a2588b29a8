// The default example (Llama-3-8B prefill, D=128, bf16, causal) through
// attn-to-cubin, assembled by ptxas for sm_90a: the kernel is there and
// nothing spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %examples/llama3-8b-prefill.mlir -o %t | FileCheck %s --check-prefix=FILES
// RUN: %ptxas -arch=sm_90a -v %t/llama3_8b_prefill_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s
// FILES: wrote {{.*}}llama3_8b_prefill_kernel.ptx (#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">)
// CHECK: Compiling entry function 'llama3_8b_prefill_kernel' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers

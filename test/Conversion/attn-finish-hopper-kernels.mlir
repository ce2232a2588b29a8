// RUN: attn-opt %s --attn-finish-hopper-kernels | FileCheck %s

// The kernel's launch passes a memref<4xf32> (5 LLVM arguments: 3 + 2 * 1)
// and a tensor map: LLVM argument 5 becomes a 128-byte grid constant
// passed by value, the kernel gets one CTA per SM, dynamic shared memory
// an external 1024-byte aligned array. A kernel without tensor maps keeps
// its ABI.
// CHECK-LABEL: gpu.module @tma
//       CHECK:   llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
//       CHECK:   llvm.func @k({{.*}}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}) attributes {{{.*}}nvvm.minctasm = 1 : i32
// CHECK-LABEL: gpu.module @plain
//   CHECK-NOT:   byval
//   CHECK-NOT:   minctasm
module attributes {gpu.container_module} {
  gpu.module @tma {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32} : !llvm.array<0 x i8>
    llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %c: i64, %d: i64, %e: i64, %m: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  gpu.module @plain {
    llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %c: i64, %d: i64, %e: i64) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  func.func @host(%x: memref<4xf32>, %m: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @tma::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %m : !llvm.ptr)
    gpu.launch_func @plain::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}

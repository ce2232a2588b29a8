// RUN: attn-opt %s --pass-pipeline="builtin.module(gpu.module(attn-number-shared-memory))" | FileCheck %s

// Workgroup memory becomes address space 3 in every type; the dynamic
// shared memory op keeps its attribute space behind a cast.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @smem
  //  CHECK-SAME:   workgroup(%[[W:.*]] : memref<64xf32, 3>)
  gpu.func @smem(%i: index) workgroup(%w : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    // CHECK: %[[D:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    // CHECK: %[[S:.*]] = memref.memory_space_cast %[[D]] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xi8, 3>
    // CHECK: memref.view %[[S]][%{{.*}}][] : memref<?xi8, 3> to memref<64xf32, 3>
    %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %d[%i][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %x = memref.load %v[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    // CHECK: memref.store %{{.*}}, %[[W]][%{{.*}}] : memref<64xf32, 3>
    memref.store %x, %w[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

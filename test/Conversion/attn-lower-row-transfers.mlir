// RUN: attn-opt %s --attn-lower-row-transfers | FileCheck %s

// 1-D transfers become vector loads and stores; in kernels, a multiple of
// 16 bytes is marked 16-byte aligned (8 bf16 yes, 4 bf16 no).
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @rows
  gpu.func @rows(%m: memref<8x64xbf16>, %i: index) kernel {
    %pad = arith.constant 0.0 : bf16
    // CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8x64xbf16>, vector<8xbf16>
    %r = vector.transfer_read %m[%i, %i], %pad {in_bounds = [true]} : memref<8x64xbf16>, vector<8xbf16>
    // CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8x64xbf16>, vector<8xbf16>
    vector.transfer_write %r, %m[%i, %i] {in_bounds = [true]} : vector<8xbf16>, memref<8x64xbf16>
    // CHECK: vector.load %{{.*}} : memref<8x64xbf16>, vector<4xbf16>
    // CHECK-NOT: alignment
    %h = vector.transfer_read %m[%i, %i], %pad {in_bounds = [true]} : memref<8x64xbf16>, vector<4xbf16>
    vector.transfer_write %h, %m[%i, %i] {in_bounds = [true]} : vector<4xbf16>, memref<8x64xbf16>
    gpu.return
  }
}

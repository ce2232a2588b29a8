// RUN: attn-opt %s --allow-unregistered-dialect --attn-sink-into-launch | FileCheck %s

// The launch uses a size computed on the host (dim * 2 + 1): the whole
// chain is cloned into the body, down to the function's memref, so the
// kernel takes the memref only. The descriptor cast stays outside.
// CHECK-LABEL: func.func @sink
//       CHECK:   gpu.launch
//  CHECK-NEXT:     %[[C0:.*]] = arith.constant 0 : index
//  CHECK-NEXT:     %[[N:.*]] = memref.dim %[[X:.*]], %[[C0]]
//  CHECK-NEXT:     %[[C2:.*]] = arith.constant 2 : index
//  CHECK-NEXT:     %[[N2:.*]] = arith.muli %[[N]], %[[C2]]
//       CHECK:     memref.store %{{.*}}, %[[X]][%[[N2]]]
//       CHECK:     "use"(%[[P:.*]]) : (!llvm.ptr) -> ()
func.func @sink(%x: memref<?xf32>, %d: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %c2 = arith.constant 2 : index
  %n2 = arith.muli %n, %c2 : index
  %p = builtin.unrealized_conversion_cast %d : !llvm.ptr to !llvm.ptr
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %x[%n2] : memref<?xf32>
    "use"(%p) : (!llvm.ptr) -> ()
    gpu.terminator
  }
  return
}

// RUN: attn-opt %s --allow-unregistered-dialect --attn-pass-descriptors-as-pointers | FileCheck %s

!desc = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>

// A TMA descriptor crosses into the launch as !llvm.ptr and is cast back
// inside; host uses keep the descriptor.
// CHECK-LABEL: func.func @descriptor
//  CHECK-SAME:   (%[[D:[a-z0-9]+]]: !nvgpu.tensormap.descriptor
//       CHECK:   %[[P:.*]] = builtin.unrealized_conversion_cast %[[D]] : !nvgpu.tensormap.descriptor<{{.*}}> to !llvm.ptr
//       CHECK:   gpu.launch
//  CHECK-NEXT:     %[[BACK:.*]] = builtin.unrealized_conversion_cast %[[P]] : !llvm.ptr to !nvgpu.tensormap.descriptor
//  CHECK-NEXT:     "use"(%[[BACK]])
//       CHECK:   "host"(%[[D]])
func.func @descriptor(%d: !desc) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    "use"(%d) : (!desc) -> ()
    gpu.terminator
  }
  "host"(%d) : (!desc) -> ()
  return
}

// RUN: attn-opt %s --attn-launch-phased-ctas | FileCheck %s

// A CTA of two thread loops (64 and 32 wide) and a workgroup buffer: one
// gpu.launch over the 4 blocks with 64 threads; the narrower loop runs on
// threads below 32; a barrier between the loops; the buffer becomes a
// workgroup attribution.
// CHECK-LABEL: func.func @phased
//   CHECK-NOT:   scf.forall
//       CHECK:   gpu.launch blocks({{.*}}) in ({{.*}}) threads(%[[T:[a-z0-9]+]], {{.*}}) in (%{{.*}} = %c64, {{.*}}) workgroup(%[[PART:[a-z0-9]+]] : memref<64xf32, #gpu.address_space<workgroup>>)
// part[t] = x[i, t]
//       CHECK:     memref.store %{{.*}}, %[[PART]][%{{.*}}] : memref<64xf32, #gpu.address_space<workgroup>>
//       CHECK:     gpu.barrier
// out[i] = max(part[t], part[t + 32]) for t < 32
//       CHECK:     arith.cmpi ult, %[[T]], %c32
//       CHECK:     scf.if
//       CHECK:       arith.maximumf
//       CHECK:     gpu.terminator
func.func @phased(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %part = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      %v = memref.load %x[%i, %t] : memref<4x64xf32>
      memref.store %v, %part[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (32) {
      %c32 = arith.constant 32 : index
      %u = arith.addi %t, %c32 : index
      %a = memref.load %part[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      %b = memref.load %part[%u] : memref<64xf32, #gpu.address_space<workgroup>>
      %s = arith.maximumf %a, %b : f32
      memref.store %s, %out[%i] : memref<4xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

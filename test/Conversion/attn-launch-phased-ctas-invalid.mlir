// RUN: attn-opt %s --split-input-file --attn-launch-phased-ctas -verify-diagnostics -o /dev/null

// A CTA of several thread loops runs everything outside them on every
// thread: side effects there are refused.
func.func @side_effect(%out: memref<4x64xf32>) {
  scf.forall (%i) in (4) {
    %part = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    %c0 = arith.constant 0 : index
    %z = arith.constant 0.0 : f32
    // expected-error @+1 {{attn-lower-to-nvvm: a CTA of several thread loops may have side effects only inside them (every thread would run it)}}
    memref.store %z, %part[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      %v = memref.load %part[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%i, %t] : memref<4x64xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// The CTA's thread count is that of its widest thread loop: static bounds.
func.func @dynamic_threads(%out: memref<4x?xf32>, %n: index) {
  scf.forall (%i) in (4) {
    %part = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{attn-lower-to-nvvm: a thread loop of a CTA with several must be 1-D, from 0 by 1 to a static bound}}
    scf.forall (%t) in (%n) {
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%i, %t] : memref<4x?xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

func.func @offset_blocks(%out: memref<4x64xf32>) {
  // expected-error @+1 {{attn-lower-to-nvvm: expected a CTA loop from 0 by 1}}
  scf.forall (%i) = (1) to (4) step (1) {
    %part = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    scf.forall (%t) in (64) {
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%i, %t] : memref<4x64xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

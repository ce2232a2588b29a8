// Every error attn-tma-store can raise.
// RUN: attn-opt %s --split-input-file --attn-tma-store -verify-diagnostics -o /dev/null

// An epilogue without a staging tile (attn-tile's, before attn-tma-ring).
func.func @no_staging(%o: memref<1x1x64x64xbf16>) {
  %m = arith.constant dense<0xFF800000> : vector<64xf32>
  %l = arith.constant dense<0.0> : vector<64xf32>
  %acc = arith.constant dense<0.0> : vector<64x64xf32>
  %c0 = arith.constant 0 : index
  scf.forall (%qb, %h, %b) in (1, 1, 1) {
    // expected-error @+1 {{attn-tma-store: the epilogue has no staging tile in shared memory to store O from; run attn-tma-ring first}}
    attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %o[%b, %h, %c0, %c0] : memref<1x1x64x64xbf16>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

// A varlen CTA's O (its sequence's rows of the packed output) is defined
// inside the CTA loop: no host-side descriptor.
func.func @varlen(%o: memref<1x1x256x64xbf16>, %staging: memref<1x64x64xbf16, #gpu.address_space<workgroup>>,
                  %offsets: memref<2xindex>) {
  %m = arith.constant dense<0xFF800000> : vector<64xf32>
  %l = arith.constant dense<0.0> : vector<64xf32>
  %acc = arith.constant dense<0.0> : vector<64x64xf32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{attn-tma-store: needs O defined outside the CTA loop (its descriptor is built on the host), but a varlen CTA stores into its sequence's rows of O; leave tma-store off}}
  scf.forall (%qb, %h, %b) in (1, 1, 2) {
    %start = memref.load %offsets[%b] : memref<2xindex>
    %rows = memref.subview %o[0, 0, %start, 0] [1, 1, 128, 64] [1, 1, 1, 1] : memref<1x1x256x64xbf16> to memref<1x1x128x64xbf16, strided<[16384, 16384, 64, 1], offset: ?>>
    attn.epilogue state(%m, %l, %acc : vector<64xf32>, vector<64xf32>, vector<64x64xf32>) to %rows[%c0, %h, %c0, %c0] staging(%staging : memref<1x64x64xbf16, #gpu.address_space<workgroup>>) : memref<1x1x128x64xbf16, strided<[16384, 16384, 64, 1], offset: ?>>
  } {mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

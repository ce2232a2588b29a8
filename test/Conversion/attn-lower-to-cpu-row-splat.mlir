// RUN: attn-opt %s --attn-lower-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu | grep -c 'llvm\.[a-z]*element ' | FileCheck %s --check-prefix=MOVES

// The online softmax scales accumulator rows by a per-row factor as
// transpose(broadcast(v)). Row i is a splat of v[i]: 4 extracts and 4 splats,
// not the 32 + 32 element moves of the element-wise transpose lowering.
// CHECK-LABEL: llvm.func @row_splat(
// CHECK-COUNT-4:   llvm.shufflevector {{.*}} [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>
// CHECK-NOT:       llvm.shufflevector
// CHECK:           llvm.return
// MOVES: {{^}}8{{$}}
func.func @row_splat(%v: vector<4xf32>, %m: memref<4x8xf32>) {
  %b = vector.broadcast %v : vector<4xf32> to vector<8x4xf32>
  %t = vector.transpose %b, [1, 0] : vector<8x4xf32> to vector<4x8xf32>
  %c0 = arith.constant 0 : index
  vector.transfer_write %t, %m[%c0, %c0] {in_bounds = [true, true]}
      : vector<4x8xf32>, memref<4x8xf32>
  return
}

// The tensor-core default tile per D (attn-to-cubin on sm_90a): D <= 64
// takes BLOCK_M = 192, three consumer warpgroups of 64 rows (512 threads)
// with 160 registers each, taking turns in a ring of named barriers
// (ping-pong over three), unless a static Nq would pad 192-row blocks by 5%
// more rows than 128-row ones; larger D keeps BLOCK_M = 128 (384 threads).
// RUN: attn-opt %s --attn-to-cubin="format=none" | FileCheck %s
// RUN: attn-opt %s --attn-to-cubin="format=none block-m=128" | FileCheck %s --check-prefix=BM128

// Nq = 1920 = 10 * 192 = 15 * 128: 10 Q blocks x 4 heads x 2 batches.
// CHECK-LABEL: func.func @d64
//       CHECK:   gpu.launch_func @d64_kernel::@d64_kernel blocks in (%c80, %c1, %c1) threads in (%c512, %c1, %c1)
// The D = 64 kernel: the last consumer warpgroup (2) hands the first turn to
// warpgroup 0 (barrier 4); a turn is handed to warpgroup (w + 1) mod 3.
// CHECK-LABEL: llvm.func @d64_kernel
//   CHECK-DAG:   %[[TWO:[0-9]+]] = llvm.mlir.constant(2 : index) : i64
//   CHECK-DAG:   %[[THREE:[0-9]+]] = llvm.mlir.constant(3 : index) : i64
//   CHECK-DAG:   %[[FOUR:[0-9]+]] = llvm.mlir.constant(4 : i32) : i32
//   CHECK-DAG:   %[[N256:[0-9]+]] = llvm.mlir.constant(256 : i32) : i32
//       CHECK:   nvvm.setmaxregister increase 160
//       CHECK:   %[[LAST:[0-9]+]] = llvm.icmp "eq" %{{[0-9]+}}, %[[TWO]] : i64
//  CHECK-NEXT:   llvm.cond_br %[[LAST]]
//       CHECK:   "bar.arrive $0, $1;", "n,n" %[[FOUR]], %[[N256]]
//       CHECK:   nvvm.barrier id = %{{[0-9]+}} number_of_threads = %[[N256]]
//       CHECK:   llvm.urem %{{[0-9]+}}, %[[THREE]] : i64
//       CHECK:   "bar.arrive $0, $1;", "r,n" %{{[0-9]+}}, %[[N256]]
// A dynamic Nq takes 192 rows too: ceil(Nq / 192) blocks per head and batch.
// CHECK-LABEL: func.func @d64_dynamic
//       CHECK:   arith.ceildivui %{{.*}}, %c192
//       CHECK:   gpu.launch_func {{.*}} threads in (%c512, %c1, %c1)
// Nq = 1024 (GPT-2): 6 blocks of 192 rows would compute 1152 rows, 8 of 128
// compute 1024, so 128 rows.
// CHECK-LABEL: func.func @d64_n1024
//       CHECK:   gpu.launch_func {{.*}} blocks in (%c64, %c1, %c1) threads in (%c384, %c1, %c1)
// CHECK-LABEL: func.func @d128
//       CHECK:   gpu.launch_func @d128_kernel::@d128_kernel blocks in (%c120, %c1, %c1) threads in (%c384, %c1, %c1)
// CHECK-LABEL: llvm.func @d128_kernel
//       CHECK:   nvvm.setmaxregister increase 240

// BM128-LABEL: func.func @d64
//       BM128:   gpu.launch_func @d64_kernel::@d64_kernel blocks in (%c120, %c1, %c1) threads in (%c384, %c1, %c1)

!t64 = memref<2x4x1920x64xbf16>
func.func @d64(%q: !t64, %k: !t64, %v: !t64, %o: !t64) {
  attn.attention ins(%q, %k, %v : !t64, !t64, !t64) outs(%o : !t64)
  return
}

!d64 = memref<2x4x?x64xbf16>
func.func @d64_dynamic(%q: !d64, %k: !d64, %v: !d64, %o: !d64) {
  attn.attention ins(%q, %k, %v : !d64, !d64, !d64) outs(%o : !d64)
  return
}

!g = memref<2x4x1024x64xf16>
func.func @d64_n1024(%q: !g, %k: !g, %v: !g, %o: !g) {
  attn.attention ins(%q, %k, %v : !g, !g, !g) outs(%o : !g) {causal}
  return
}

!t128 = memref<2x4x1920x128xbf16>
func.func @d128(%q: !t128, %k: !t128, %v: !t128, %o: !t128) {
  attn.attention ins(%q, %k, %v : !t128, !t128, !t128) outs(%o : !t128)
  return
}

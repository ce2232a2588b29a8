// Regression: the GPU lowering dropped the unit row dimension of the O
// store before lowering its row bound, so threads of a tail Q block (rows
// at or past Nq) wrote into the next head's rows. Every global store of the
// kernel must sit behind a compare against Nq: for Nq = 113, BLOCK_M = 64.
// RUN: attn-opt %s --attn-to-cubin="format=none path=fma block-m=64 block-n=16" | FileCheck %s

func.func @tail(%q: memref<1x2x113x64xbf16>, %k: memref<1x2x113x64xbf16>,
                %v: memref<1x2x113x64xbf16>, %o: memref<1x2x113x64xbf16>,
                %lse: memref<1x2x113xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x113x64xbf16>,
                     memref<1x2x113x64xbf16>, memref<1x2x113x64xbf16>)
                 outs(%o : memref<1x2x113x64xbf16>)
                 lse(%lse : memref<1x2x113xf32>)
  return
}
// CHECK-LABEL: llvm.func @tail_kernel
// CHECK-DAG:   %[[NQ:.*]] = llvm.mlir.constant(113 : index) : i64
// The Q row load is guarded by row < Nq:
// CHECK:       %[[INQ:.*]] = llvm.icmp "slt" %{{.*}}, %[[NQ]] : i64
// CHECK:       llvm.cond_br %[[INQ]]
// The O row store is guarded by the same compare:
// CHECK:       llvm.cond_br %[[INQ]], ^[[STORE:.*]], ^
// CHECK:       ^[[STORE]]:
// CHECK:       llvm.store %{{.*}} {alignment = 16 : i64} : vector<32xbf16>, !llvm.ptr

// attn-compile on an .mlir input: one kernel per function, the key read off
// the attn.attention types, the launch shape and the parameter list off the
// lowered gpu.launch_func, resources from ptxas -v.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file=%t/manifest.json
// RUN: ls %t | FileCheck %s --check-prefix=FILES

// LOG: static_f16_kernel: fwd f16 D=64 B=2 Hq=4 Hkv=2 Nq=100 Nk=130 scale=0.125 contiguous fma BLOCK_M=64 BLOCK_N=16 | 128 threads, {{[1-9][0-9]*}} registers
// LOG: dynamic_bf16_kernel: fwd bf16 D=128 causal +lse B=? Hq=? Hkv=? Nq=? Nk=? scale=0.125 strided wgmma BLOCK_M=64 BLOCK_N=64 | 256 threads, {{[1-9][0-9]*}} registers, 115712 B smem
// LOG: wrote {{.*}}manifest.json (2 kernels)

// FILES: dynamic_bf16_kernel.cubin
// FILES: dynamic_bf16_kernel.ptx
// FILES: manifest.json
// FILES: static_f16_kernel.cubin
// FILES: static_f16_kernel.ptx

// The FMA kernel (attn.path = "fma"): a 1-D grid, ceil(100 / 64) * 4 * 2.
// CHECK:       "chip": "sm_90a",
// CHECK:       "generator": "attn-compile",
// CHECK:       "kernels": [
// CHECK:           "cubin": "static_f16_kernel.cubin",
// CHECK:           "key": {
// CHECK-NEXT:        "batch": 2,
// CHECK-NEXT:        "block_m": 64,
// CHECK-NEXT:        "block_n": 16,
// CHECK-NEXT:        "causal": false,
// CHECK-NEXT:        "dtype": "f16",
// CHECK-NEXT:        "head_dim": 64,
// CHECK-NEXT:        "layout": "contiguous",
// CHECK-NEXT:        "lse": false,
// CHECK-NEXT:        "num_heads_kv": 2,
// CHECK-NEXT:        "num_heads_q": 4,
// CHECK-NEXT:        "path": "fma",
// CHECK-NEXT:        "scale": 0.125,
// CHECK-NEXT:        "seqlen_k": 130,
// CHECK-NEXT:        "seqlen_q": 100
// CHECK:           "kind": "fwd",
// CHECK:           "grid": [
// CHECK-NEXT:        {
// CHECK-NEXT:          "constant": 16,
// CHECK-NEXT:          "terms": []
// CHECK-NEXT:        },
// CHECK-NEXT:        {
// CHECK-NEXT:          "constant": 1,
// CHECK-NEXT:          "terms": []
// CHECK-NEXT:        },
// CHECK-NEXT:        {
// CHECK-NEXT:          "constant": 1,
// CHECK-NEXT:          "terms": []
// CHECK:           "threads": [
// CHECK-NEXT:        128,
// CHECK:           "name": "static_f16_kernel",
// CHECK:           "params": [
// CHECK-NOT:       "operand": "lse"
// CHECK:           "resources": {
// CHECK-NEXT:        "registers": {{[1-9][0-9]*}},

// The wgmma kernel (the default on sm_90a): one consumer warpgroup
// (BLOCK_M = 64) + the producer, a 1-D grid ceil(Nq / 64) * Hq * B, Q, K
// and V as tensor maps ([64, BLOCK_N or BLOCK_M, 1, 1] boxes, innermost
// first), then the memrefs the kernel reads sizes from or writes: q and k
// (11 fields each), o (11), lse (9).
// CHECK:           "cubin": "dynamic_bf16_kernel.cubin",
// CHECK:             "batch": null,
// CHECK:             "block_m": 64,
// CHECK:             "layout": "strided",
// CHECK:             "lse": true,
// CHECK:             "path": "wgmma",
// CHECK:             "seqlen_q": null
// CHECK:           "dynamic_shared_bytes": 114688,
// CHECK:           "grid": [
// CHECK-NEXT:        {
// CHECK-NEXT:          "constant": 1,
// CHECK-NEXT:          "terms": [
// CHECK-NEXT:            {
// CHECK-NEXT:              "dim": 2,
// CHECK-NEXT:              "divisor": 64,
// CHECK-NEXT:              "operand": "q"
// CHECK-NEXT:            },
// CHECK-NEXT:            {
// CHECK-NEXT:              "dim": 1,
// CHECK-NEXT:              "divisor": 1,
// CHECK-NEXT:              "operand": "q"
// CHECK-NEXT:            },
// CHECK-NEXT:            {
// CHECK-NEXT:              "dim": 0,
// CHECK-NEXT:              "divisor": 1,
// CHECK-NEXT:              "operand": "q"
// CHECK:           "threads": [
// CHECK-NEXT:        256,
// CHECK:           "params": [
// CHECK-NEXT:        {
// CHECK-NEXT:          "box": [
// CHECK-NEXT:            64,
// CHECK-NEXT:            64,
// CHECK-NEXT:            1,
// CHECK-NEXT:            1
// CHECK-NEXT:          ],
// CHECK-NEXT:          "field": "tensor_map",
// CHECK-NEXT:          "operand": "v"
// CHECK-COUNT-44:    "field":
// CHECK-NOT:         "field":
// CHECK:           "resources": {

func.func @static_f16(%q: memref<2x4x100x64xf16>, %k: memref<2x2x130x64xf16>,
                      %v: memref<2x2x130x64xf16>, %o: memref<2x4x100x64xf16>)
    attributes {attn.path = "fma"} {
  attn.attention ins(%q, %k, %v : memref<2x4x100x64xf16>,
                     memref<2x2x130x64xf16>, memref<2x2x130x64xf16>)
                 outs(%o : memref<2x4x100x64xf16>)
  return
}

!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @dynamic_bf16(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !l)
    attributes {attn.block_m = 64 : i64, attn.block_n = 64 : i64} {
  attn.attention ins(%q, %k, %v : !t, !t, !t) outs(%o : !t)
                 lse(%lse : !l) {causal, scale = 0.125 : f32}
  return
}

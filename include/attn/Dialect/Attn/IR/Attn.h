//===- Attn.h - attn dialect ------------------------------------*- C++ -*-===//
//
// The attn dialect: attention as one op (attn.attention) and the
// FlashAttention tile ops that attn-tile produces. See docs/ir.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTN_H
#define ATTN_DIALECT_ATTN_IR_ATTN_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <optional>

#include "attn/Dialect/Attn/IR/AttnOpsDialect.h.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir::attn {
/// Tile sizes every stage accepts (docs/passes.md, "Tile-size limits").
/// BLOCK_M: a GPU CTA runs BLOCK_M * lanes-per-row <= 1024 threads.
constexpr int64_t kMaxBlockM = 1024;
/// BLOCK_N: attn-online-softmax unrolls the keys of a block; ptxas takes
/// about 15 s (D = 128) to 50 s (D = 256) on a BLOCK_N = 256 kernel.
constexpr int64_t kMaxBlockN = 256;
/// attn-online-softmax unrolls BLOCK_N keys over a tile of `rows` rows (the
/// CTA's BLOCK_M on the host, 1 per GPU thread): BLOCK_N * rows is bounded
/// so that the host lowering stays within seconds (64 x 64 at D = 128: 2.4
/// s; 128 x 128: 22 s and 3 GB).
constexpr int64_t kMaxUnrolledRows = 4096;

inline bool isValidBlockM(int64_t m) { return m >= 1 && m <= kMaxBlockM; }
inline bool isValidBlockN(int64_t n) { return n >= 1 && n <= kMaxBlockN; }

/// Rows of a consumer warpgroup's wgmma tile (m64): the unit of BLOCK_M on
/// the tensor cores, of O's TMA-store box, and of what GQA packing's group
/// size must divide.
constexpr int64_t kWarpgroupRows = 64;

/// attn.warp_specialize: at most three consumer warpgroups of 64 rows
/// (BLOCK_M 192) besides the producer, 512 threads.
constexpr int64_t kMaxConsumerWarpgroups = 3;

/// setmaxnreg budgets per thread when none are given: the producer keeps
/// 24; the consumers share the rest of the 64K register file (240 for one
/// or two consumer warpgroups, 160 for three). ptxas still compiles the
/// kernel for 65536 / threads registers (168 at 384 threads, 128 at 512),
/// so with three consumer warpgroups a thread's S and O accumulators,
/// BLOCK_N / 2 + D / 2 fp32 registers, must stay within
/// kMaxThreeWarpgroupAccumulators (BLOCK_N 128 at D 64) or ptxas spills or
/// fails.
constexpr int64_t kProducerRegisters = 24;
inline int64_t defaultConsumerRegisters(int64_t consumerWarpgroups) {
  return consumerWarpgroups <= 2 ? 240 : 160;
}
constexpr int64_t kMaxThreeWarpgroupAccumulators = 96;
inline int64_t accumulatorsPerThread(int64_t blockN, int64_t headDim) {
  return blockN / 2 + (headDim + 7) / 8 * 8 / 2;
}

/// The tensor-core path's tile when none is given. BLOCK_N: keys such that
/// a consumer thread's S and O accumulators fit its registers. BLOCK_M: two
/// consumer warpgroups of 64 rows, or three at D <= 64 (with BLOCK_N <=
/// 128, which fits their registers), where the softmax's exp2 throughput,
/// not the GEMMs, bounds a warpgroup (on an H200, D64 N8192 ran 441 -> 520
/// TFLOP/s non-causal and 408 -> 489 causal). A static Nq keeps 128 rows
/// when 192-row blocks would compute 5% more padded rows (GPT-2's Nq =
/// 1024: 1152 rows against 1024, 177 against 194 TFLOP/s).
inline int64_t tensorCoreBlockM(int64_t headDim, int64_t blockN,
                                std::optional<int64_t> seqLenQ) {
  if (headDim > 64 || accumulatorsPerThread(blockN, headDim) >
                          kMaxThreeWarpgroupAccumulators)
    return 128;
  if (!seqLenQ)
    return 192;
  auto padded = [&](int64_t bm) { return (*seqLenQ + bm - 1) / bm * bm; };
  return padded(192) * 20 <= padded(128) * 21 ? 192 : 128;
}
/// The default BLOCK_N on the tensor cores: 128 for D <= 128 and for FP8
/// (any multiple of 32 runs; 192, FlashAttention-3's FP8 tile, measured no
/// faster at D = 128: docs/perf-notes.md), else 64.
inline int64_t tensorCoreBlockN(int64_t headDim, bool fp8 = false) {
  return headDim <= 128 || fp8 ? 128 : 64;
}
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTN_H

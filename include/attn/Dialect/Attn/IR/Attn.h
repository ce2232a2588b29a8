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
#include <algorithm>
#include <optional>
#include <utility>

#include "attn/Dialect/Attn/IR/AttnOpsDialect.h.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnOpsTypes.h.inc"

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
/// 24 (32 in FP8 kernels with three consumer warpgroups, below); the
/// consumers share the rest of the 64K register file (240 for one
/// or two consumer warpgroups, 160 for three). ptxas still compiles the
/// kernel for 65536 / threads registers (168 at 384 threads, 128 at 512),
/// so with three consumer warpgroups a thread's S and O accumulators,
/// BLOCK_N / 2 + D / 2 fp32 registers, must leave room for P and the row
/// statistics: at most maxThreeWarpgroupAccumulators(fp8), or ptxas spills
/// or fails.
constexpr int64_t kProducerRegisters = 24;
/// The register file of an SM (sm_90): the budgets of a CTA's warpgroups,
/// 128 threads each, add up to at most this.
constexpr int64_t kRegistersPerSM = 65536;
inline int64_t defaultConsumerRegisters(int64_t consumerWarpgroups) {
  return consumerWarpgroups <= 2 ? 240 : 160;
}
/// Producers with per-block work beyond their TMA copies (FP8: warps 1-3
/// permute V^T's keys; paged K/V: the block table's entries) keep what the
/// consumers leave of the launch's registers, up to 40: 32 beside three
/// consumer warpgroups at 160 (32 x 128 + 160 x 384 is the whole file,
/// 128 per thread of 512), 40 beside one (the launch has 240 per thread of
/// 256), 24 beside two at 240 (the launch's 168 per thread of 384 leave no
/// more). At 24, ptxas 13.0 spilled 4 B in every FP8 kernel with three
/// consumer warpgroups and 68-72 B in paged split-KV decode kernels.
constexpr int64_t kBusyProducerRegisters = 40;
inline int64_t defaultProducerRegisters(int64_t consumerWarpgroups,
                                        int64_t consumerRegisters, bool busy) {
  if (!busy)
    return kProducerRegisters;
  int64_t launch = consumerWarpgroups == 1   ? consumerRegisters
                   : consumerWarpgroups == 2 ? 168
                                             : 128;
  int64_t left = (launch * (consumerWarpgroups + 1) -
                  consumerRegisters * consumerWarpgroups) /
                 8 * 8;
  return std::clamp(left, kProducerRegisters, kBusyProducerRegisters);
}
inline int64_t accumulatorsPerThread(int64_t blockN, int64_t headDim) {
  return blockN / 2 + (headDim + 7) / 8 * 8 / 2;
}
/// 96 with 16-bit P (two per register: BLOCK_N 128 at D 64); 112 with e4m3
/// P (four per register: BLOCK_N 96 at D 128 spills 4 B, BLOCK_N 128 at
/// D 128 spills 600 B).
inline int64_t maxThreeWarpgroupAccumulators(bool fp8) {
  return fp8 ? 112 : 96;
}

/// FP8's three-warpgroup BLOCK_N at 64 < D <= 128: 48 S accumulators beside
/// D / 2 of O (the widest multiple of 32 that fits at D 128).
constexpr int64_t kFP8ThreeWarpgroupBlockN = 96;
inline bool isFP8ThreeWarpgroupHeadDim(int64_t headDim) {
  return headDim > 64 && headDim <= 128;
}

/// The tensor-core BLOCK_M when none is given, for `blockN` keys: three
/// consumer warpgroups of 64 rows (192) where the softmax, not the GEMMs,
/// bounds a warpgroup and the measured tiles fit: D <= 64 with BLOCK_N / 2
/// + D / 2 <= 96, and FP8 at 64 < D <= 128 with BLOCK_N 96 (e4m3 GEMMs run
/// at twice the bf16 rate, and MUFU's exp2 rate equals their time at
/// D 128); else two (128). On an H200, D64 bf16 N8192 ran 441 -> 520
/// TFLOP/s non-causal and 408 -> 489 causal; FP8 D128 Llama-3-8B prefill
/// 961 -> 1011. A static Nq keeps 128 rows when 192-row blocks would compute
/// 5% more padded rows (GPT-2's Nq = 1024: 1152 rows against 1024, 177
/// against 194 TFLOP/s).
inline int64_t tensorCoreBlockM(int64_t headDim, int64_t blockN,
                                std::optional<int64_t> seqLenQ,
                                bool fp8 = false) {
  bool small = headDim <= 64 && accumulatorsPerThread(blockN, headDim) <=
                                    maxThreeWarpgroupAccumulators(false);
  bool fp8Tile = fp8 && isFP8ThreeWarpgroupHeadDim(headDim) &&
                 blockN == kFP8ThreeWarpgroupBlockN;
  if (!small && !fp8Tile)
    return 128;
  if (!seqLenQ)
    return 192;
  auto padded = [&](int64_t bm) { return (*seqLenQ + bm - 1) / bm * bm; };
  return padded(192) * 20 <= padded(128) * 21 ? 192 : 128;
}

/// The tensor-core BLOCK_N when none is given, for `blockM` rows:
/// kFP8ThreeWarpgroupBlockN for FP8 at 64 < D <= 128 with three consumer
/// warpgroups, else 128 for D <= 128 and for FP8 (any multiple of 32 runs;
/// FlashAttention-3's 192 measured no faster with two warpgroups at
/// D = 128: docs/perf-notes.md), else 64.
inline int64_t tensorCoreBlockN(int64_t headDim, bool fp8, int64_t blockM) {
  if (fp8 && isFP8ThreeWarpgroupHeadDim(headDim) && blockM == 192)
    return kFP8ThreeWarpgroupBlockN;
  return headDim <= 128 || fp8 ? 128 : 64;
}

/// The tensor-core tile (BLOCK_M, BLOCK_N): `blockM` and `blockN` where
/// given (non-zero), the rest chosen as above. With neither given, the
/// three-warpgroup tile where a static Nq pads well, else the two's.
inline std::pair<int64_t, int64_t>
tensorCoreTile(int64_t headDim, bool fp8, std::optional<int64_t> seqLenQ,
               int64_t blockM = 0, int64_t blockN = 0) {
  if (!blockN) {
    int64_t bm = blockM ? blockM
                        : tensorCoreBlockM(headDim,
                                           tensorCoreBlockN(headDim, fp8, 192),
                                           seqLenQ, fp8);
    return {bm, tensorCoreBlockN(headDim, fp8, bm)};
  }
  return {blockM ? blockM : tensorCoreBlockM(headDim, blockN, seqLenQ, fp8),
          blockN};
}
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTN_H

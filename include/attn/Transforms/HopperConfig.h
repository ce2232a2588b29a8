//===- HopperConfig.h - Hopper's tile and schedule heuristics ---*- C++ -*-===//
//
// What attn-select-config chooses for a forward attention kernel on sm_90a
// (and the budgets attn-tma-ring gives its warpgroups), with the
// measurements behind each choice: the tensor-core tile (BLOCK_M, BLOCK_N),
// the K/V ring's stages in shared memory, and the register budgets. The
// CUDA-core path's tile is here too. Every pass and the bundle writer take
// these from #attn.config or from here, never from a copy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_HOPPERCONFIG_H
#define ATTN_TRANSFORMS_HOPPERCONFIG_H

#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace mlir::attn {

/// The CUDA-core (fma) path's tile when none is given: 64 rows, one per
/// thread, and 16 keys per block.
constexpr int64_t kFmaBlockM = 64;
constexpr int64_t kFmaBlockN = 16;

//===----------------------------------------------------------------------===//
// Shared memory of the K/V ring (attn-tma-ring's layout)
//===----------------------------------------------------------------------===//

/// Bytes of shared memory a kernel may use on sm_90 (227 KiB).
constexpr int64_t kMaxSharedBytes = 227 * 1024;
/// Bytes of one row of a 128-byte swizzled chunk.
constexpr int64_t kChunkBytes = 128;
/// Keys per row chunk of an FP8 V^T tile.
constexpr int64_t kFP8KeyChunk = 128;

/// Columns of an element of `bits` bits in one 128-byte chunk row (64
/// f16/bf16, 128 e4m3).
inline int64_t chunkColsOfBits(int64_t bits) { return kChunkBytes * 8 / bits; }

/// Sizes of the pipeline of one CTA. Q and K are [C, rows, chunkCols]
/// tiles; V is too, except for FP8: V^T, [ceil(BLOCK_N / 128), D, 128],
/// since the FP8 MMA reads B K-major only; a BLOCK_N that is not a multiple
/// of 128 leaves the last 128-key row partly unused. FP8 stages O (bf16)
/// in a buffer of its own; f16/bf16 stage it in Q's tile.
struct PipelineShape {
  int64_t blockM, blockN, headDim, chunks, stages;
  Type elt;
  bool fp8() const { return isa<Float8E4M3FNType>(elt); }
  int64_t qBytes() const { return chunks * blockM * kChunkBytes; }
  int64_t kBytes() const { return chunks * blockN * kChunkBytes; }
  /// FP8: 128-key rows of V^T per stage (the last one padded).
  int64_t keyChunks() const { return llvm::divideCeil(blockN, kFP8KeyChunk); }
  int64_t vBytes() const {
    return fp8() ? keyChunks() * headDim * kChunkBytes : kBytes();
  }
  int64_t ringBytes() const { return stages * (kBytes() + vBytes()); }
  int64_t stagingBytes() const {
    return fp8() ? llvm::divideCeil(headDim, 64) * blockM * kChunkBytes : 0;
  }
  int64_t sharedBytes() const {
    return qBytes() + stagingBytes() + ringBytes();
  }
};

/// The ring of a BLOCK_M x BLOCK_N tile of `elt` at head dim `headDim`,
/// with `stages` stages.
inline PipelineShape pipelineShape(int64_t blockM, int64_t blockN,
                                   int64_t headDim, Type elt,
                                   int64_t stages = 0) {
  return {blockM,
          blockN,
          headDim,
          llvm::divideCeilSigned(headDim,
                                 chunkColsOfBits(elt.getIntOrFloatBitWidth())),
          stages,
          elt};
}

/// The stages of a ring of shape `s` when none are asked for: 4 for one
/// 128-byte chunk per row (D <= 64 at 16 bits), else 3.
inline int64_t defaultStages(const PipelineShape &s) {
  return s.chunks == 1 ? 4 : 3;
}

/// The stages that fit shared memory beside Q (and FP8's O staging): at
/// most `requested` (0: defaultStages); 0 when not even two fit.
inline int64_t fittingStages(const PipelineShape &s, int64_t requested) {
  int64_t want = requested > 0 ? requested : defaultStages(s);
  int64_t fit = (kMaxSharedBytes - s.qBytes() - s.stagingBytes()) /
                (s.kBytes() + s.vBytes());
  return fit >= 2 ? std::min(want, fit) : 0;
}

//===----------------------------------------------------------------------===//
// Register budgets (setmaxnreg) and the tensor-core tile
//===----------------------------------------------------------------------===//

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

#endif // ATTN_TRANSFORMS_HOPPERCONFIG_H

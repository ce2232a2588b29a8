//===- Attn.h - attn dialect ------------------------------------*- C++ -*-===//
//
// The attn dialect: attention as one op (attn.attention) and the
// FlashAttention tile ops that attn-tile produces, and #attn.config, the
// tile and schedule attn-select-config chooses. See docs/ir.md. The
// target's heuristics live in attn/Transforms/HopperConfig.h.
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

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnOpsTypes.h.inc"

namespace mlir::attn {
/// Refuses a discardable attribute that is no dialect's (a misspelt
/// `casual`) or that spells one of the op's own as `attn.<name>`.
LogicalResult verifyOwnAttributes(Operation *op);

/// The trait every attn op carries: verifyOwnAttributes.
template <typename ConcreteType>
class OwnAttributes : public OpTrait::TraitBase<ConcreteType, OwnAttributes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyOwnAttributes(op);
  }
};
} // namespace mlir::attn

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

/// The register file of an SM (sm_90): the budgets of a CTA's warpgroups,
/// 128 threads each, add up to at most this.
constexpr int64_t kRegistersPerSM = 65536;

/// K/V splits (attn-split-kv, a bundle's splits): FlashAttention-2 uses at
/// most 128; 256 leaves room to test more splits than K/V blocks.
constexpr int64_t kMaxSplits = 256;

/// The largest grid x of a CUDA launch (y and z: 65535).
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTN_H

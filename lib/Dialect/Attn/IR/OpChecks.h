//===- OpChecks.h - checks the attn verifiers share -------------*- C++ -*-===//
//
// Each check names the offending operand and states what was expected; none
// asserts on user input. The contract is docs/ir.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_OPCHECKS_H
#define ATTN_DIALECT_ATTN_IR_OPCHECKS_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace mlir::attn::checks {

/// The largest static length (B, H or N) of an operand: the kernels put one
/// CTA per BLOCK_M query rows on CUDA's grid (at most 2^31 - 1 in x) and keep
/// lengths in 32-bit registers where they can.
constexpr int64_t kMaxLength = INT32_MAX;

/// An operand and the name the user knows it by; null when an optional one
/// is absent.
using NamedValue = std::pair<StringRef, Value>;

/// "[1, 8, ?, 128]".
std::string shapeStr(ArrayRef<int64_t> shape);
/// "?" or the number.
std::string dimStr(int64_t d);
/// Both static and different.
bool dimsDiffer(int64_t a, int64_t b);
/// A tile of `tile` columns does not fit a static dimension of `dim`.
bool tileExceeds(int64_t tile, int64_t dim);
bool isFP8(Type t);
/// f16, bf16 or f8E4M3FN.
bool isSupportedInput(Type t);

/// Dimension `idx` of operand `name` equals `expected`, taken from `refName`.
LogicalResult checkDim(Operation *op, MemRefType type, StringRef name,
                       unsigned idx, StringRef what, int64_t expected,
                       StringRef refName);
/// A strided global-memory view, unit stride along D (or along D or Nk for
/// an FP8 V stored V^T, `vt`).
LogicalResult checkMemRef(Operation *op, MemRefType type, StringRef name,
                          bool vt = false);
/// Static lengths at most kMaxLength and an element count that fits int64.
LogicalResult checkExtent(Operation *op, MemRefType type, StringRef name);
/// A memref of `rank` (`layout` names its dimensions) passing checkMemRef.
FailureOr<MemRefType> checkRank(Operation *op, Value v, StringRef name,
                                int64_t rank, StringRef layout,
                                bool vt = false);
/// No output is an input or an earlier output.
LogicalResult checkNoAliasing(Operation *op, ArrayRef<NamedValue> inputs,
                              ArrayRef<NamedValue> outputs);
/// The op is not inside an LLVM function (a lowering ran too early).
LogicalResult checkNotLowered(Operation *op);

/// Q, K and V of a forward op: ranks, element types (FP8 only where
/// `allowFP8`), batch, D, V = K's shape, GQA head counts and D's range.
/// `paged`: K and V are caches [num_pages, page_size, Hkv, D]. Returns the
/// types of Q and K.
FailureOr<std::pair<MemRefType, MemRefType>>
checkQKV(Operation *op, Value qv, Value kv, Value vv, bool allowFP8,
         bool paged = false);
/// An i32 memref of `rank` whose first dimension is the batch.
LogicalResult checkBatchI32(Operation *op, Value v, StringRef name,
                            int64_t rank, StringRef layout, int64_t batch);
/// block_table [B, max_pages] and cache_seqlens [B] of a paged op.
LogicalResult checkPaged(Operation *op, Value blockTable, Value cacheSeqlens,
                         MemRefType q);
/// `scale` is a positive normal f32 (what the kernels compute with).
LogicalResult checkScale(Operation *op, double scale);
/// checkScale where `scale` is present.
LogicalResult checkScaleAttr(Operation *op, FloatAttr scale);
/// Operand `name` (sinks, alibi_slopes), if given: f32 [Hq], one value
/// per query head.
LogicalResult checkPerQueryHead(Operation *op, Value v, StringRef name,
                                int64_t hq);
/// A key mask's prefix bounds nothing without the causal mask or a right
/// window side (prefix-LM: bidirectional prefix, causal after).
LogicalResult checkKeyMask(Operation *op, KeyMaskAttr mask, bool causal);
/// `softcap`, if present, is a positive normal f32 (or, with `allowOff`, 0).
LogicalResult checkSoftcapAttr(Operation *op, FloatAttr softcap, bool allowOff);
/// An fp32 split-KV buffer [S, rows...]; returns S.
FailureOr<int64_t> checkSplitBuffer(Operation *op, Value v, StringRef name,
                                    int64_t rank, StringRef layout,
                                    ArrayRef<int64_t> rows);
/// o_partial [S, B, Hq, Nq, D] and lse_partial [S, B, Hq, Nq], one S.
LogicalResult checkWorkspace(Operation *op, Value oPartial, Value lsePartial,
                             ArrayRef<int64_t> rows);

/// The rank-3 form of a descale operand: [B, heads, n] with n = ceil(len /
/// block) (per-block Q or K, `blockAttr` the attribute that gives the
/// block) or n = len (per-channel V, no attribute).
struct FineDescale {
  StringRef blockAttr, layout;
  int64_t heads, len;
  std::optional<int64_t> block;
};
/// An FP8 descale: fp32 [B, Hkv] (`perHead`), or the rank-3 form `fine`.
LogicalResult checkDescale(Operation *op, Value v, StringRef name,
                           ArrayRef<int64_t> perHead, const FineDescale &fine);

/// `t` is vector<shape x f32>.
LogicalResult checkF32Vector(Operation *op, Type t, StringRef name,
                             ArrayRef<int64_t> shape);
/// `t` is !attn.wg_fragment<shape x f32>.
LogicalResult checkWgFragment(Operation *op, Type t, StringRef name,
                              ArrayRef<int64_t> shape);
/// `v` is a workgroup-memory tile [C, rows, 128 bytes] of `elt`: `cols` (D,
/// or the keys of V^T) in C chunks of 128-byte rows, the layout TMA writes
/// and the tensor cores read.
LogicalResult checkSharedTile(Operation *op, Value v, StringRef name,
                              int64_t rows, int64_t cols, Type elt);
/// GQA packing: G >= 1 query heads per packed row group.
LogicalResult checkGqaPack(Operation *op, int64_t pack);
/// Every dimension of operand `name` equals `expected` (the shape of operand
/// `refName`) where both are static.
LogicalResult checkSameShape(Operation *op, MemRefType type, StringRef name,
                             ArrayRef<int64_t> expected, StringRef refName);
/// f16, bf16 or f32: the element types of the backward's operands.
bool isGradElement(Type t);
/// Hq a positive multiple of Hkv (GQA/MQA), D a multiple of 8 in [8, 256],
/// where static.
LogicalResult checkHeadsAndDim(Operation *op, int64_t hq, int64_t hkv,
                               int64_t d);

} // namespace mlir::attn::checks

#endif // ATTN_DIALECT_ATTN_IR_OPCHECKS_H

//===- QuantizeBuilders.h - FP8 scale groups and CTA helpers ----*- C++ -*-===//
//
// What attn-quantize-fp8's quantize step is built from. Each scale group
// (per tensor, per (batch, KV head), per block of rows of one head, or per
// column of D of one KV head) is a box of the source: amax over the box,
// descale = amax / 448, x_fp8 = satfinite(x / descale). With `hadamard`,
// Q and K rows are first rotated along D by (1/sqrt(D)) H S: H the
// Sylvester-Hadamard matrix (H_ij = (-1)^popcount(i & j)), S a fixed
// random diagonal of signs; (Q R)(K R)^T = Q K^T since R R^T = I. The
// rest are the pieces of its CTAs: grids and thread loops, workgroup
// buffers, chunked loops, the max tree and x / descale by a shared
// divisor.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_QUANTIZEBUILDERS_H
#define ATTN_LIB_TRANSFORMS_QUANTIZEBUILDERS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <functional>
#include <optional>
#include <utility>

namespace mlir::attn::quantize {

/// Threads of a quantize CTA, and the bf16 elements a thread
/// loads at once (16 bytes; D is a multiple of 8, the op verifier's rule).
constexpr int64_t kBlockThreads = 256;
constexpr int64_t kChunk = 8;
/// Chunks (or items) a thread takes straight-line in a whole block.
constexpr int64_t kMaxUnrolledChunks = 16;

/// One quantized operand: its FP8 copy and its descales.
struct Quantized {
  Value fp8, descale;
  Value storage; // the buffer under fp8 (fp8 itself or what it views)
};

/// An index constant.
Value index(ImplicitLocOpBuilder &b, int64_t v);

/// An f32 constant.
Value f32(ImplicitLocOpBuilder &b, double v);

/// Builds element (b, h, n, j) of the rotated (or plain) row, in f32.
class RowValue {
public:
  RowValue(Value src, int64_t d, bool rotate)
      : src(src), d(d), rotate(rotate) {}

  int64_t rowLength() const { return d; }

  Value build(ImplicitLocOpBuilder &b, ValueRange bhn, Value j) const;

  /// Elements (b, h, n, j .. j + w - 1) in f32: one w-wide vector load
  /// when the row is not rotated (unit stride on D).
  SmallVector<Value> buildChunk(ImplicitLocOpBuilder &b, ValueRange bhn,
                                Value j, int64_t w) const;

  /// buildChunk in two steps, so that a thread's loads can be emitted
  /// before any use: loadChunk gives the loaded vector (unrotated) or the
  /// f32 elements (rotated), extendChunk the f32 elements of that.
  SmallVector<Value> loadChunk(ImplicitLocOpBuilder &b, ValueRange bhn,
                               Value j, int64_t w) const;
  SmallVector<Value> extendChunk(ImplicitLocOpBuilder &b,
                                 ValueRange loaded) const;

  /// Whether s_i = -1: bit i % 64 of the i / 64-th 64-bit word of the
  /// signs (integer constants and selects: no vector constant indexed at
  /// run time, which a GPU thread would keep in local memory). `i` is i32.
  Value negativeSign(ImplicitLocOpBuilder &b, Value i) const;

  Value source() const { return src; }

private:
  /// x ^= x >> s for s = .., 2, 1 over the log2(D) low bits of x: bit 0
  /// becomes their parity (math.ctpop has no NVVM lowering in the GPU
  /// pipeline; shifts and xors lower everywhere).
  Value foldBits(ImplicitLocOpBuilder &b, Value x) const;

  Value src;
  int64_t d;
  bool rotate;
};

/// The box [lo, hi) of a [B, H, N, D] source that one scale covers.
struct Box {
  SmallVector<Value> lo, hi;
};

/// How an operand is cut into scale groups: the shape of the group grid,
/// the box of the source each group covers (at most `elements` elements),
/// the shape of the descale operand with the group of each of its entries,
/// and the descale entry of each source element (b, h, n, j).
struct Groups {
  SmallVector<int64_t> shape;
  /// Rows of a group that is one block of rows of one head (0: other
  /// groups), which one CTA quantizes alone.
  int64_t blockRows = 0;
  int64_t elements;
  std::function<Box(ImplicitLocOpBuilder &, ValueRange)> box;
  SmallVector<int64_t> descaleShape;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)> group;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)> entry;
  /// Whether a group's box spans whole rows (all of D), so one descale
  /// serves every column (not so per channel).
  bool wholeRows = true;
};

/// Everything: one scale, repeated into the [B, H / group] operand.
Groups perTensor(ArrayRef<int64_t> s, int64_t group);

/// [B, H / group]: the `group` heads that share a KV head, all rows.
Groups perHead(ArrayRef<int64_t> s, int64_t group);

/// [B, H, ceil(N / block)]: `block` rows of one head (the last block is
/// cut at N).
Groups perBlock(ArrayRef<int64_t> s, int64_t block);

/// [B, H, D]: one column of D of one head, all rows.
Groups perChannel(ArrayRef<int64_t> s);

/// An scf.forall over `blocks` mapped to GPU blocks (x, y, z, or linear
/// ids past three dimensions), as attn-tile's CTA loops; `body` fills it
/// given the block indices.
void buildCtaGrid(ImplicitLocOpBuilder &b, ArrayRef<int64_t> blocks,
                  function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body);

/// An scf.forall over `threads` mapped to GPU threads x at `b`; `body`
/// fills it given the thread index. In a CTA several of them run one
/// after another (the GPU lowering puts a barrier between them).
void buildThreadLoop(ImplicitLocOpBuilder &b, int64_t threads,
                     function_ref<void(ImplicitLocOpBuilder &, Value)> body);

/// A workgroup buffer of `n` f32 (shared memory on the GPU).
Value workgroupBuffer(ImplicitLocOpBuilder &b, int64_t n);

/// Indices of `linear` in `shape`, the first dimension fastest.
SmallVector<Value> delinearize(ImplicitLocOpBuilder &b, Value linear,
                               ArrayRef<int64_t> shape);

/// (b, h, n, j) of element `e` of `box` (row-major over its extents).
SmallVector<Value> boxElement(ImplicitLocOpBuilder &b, const Box &box,
                              Value e);

/// descale = amax / 448 (1 for an all-zero group).
Value descaleOf(ImplicitLocOpBuilder &b, Value amax);

/// Rows [n0, n1) of scale block `blk`: n0 = blk * block, n1 = min(n0 +
/// block, n).
std::pair<Value, Value> blockRows(ImplicitLocOpBuilder &b, Value blk,
                                  int64_t block, int64_t n);

/// Whether index `v` is 0.
Value isZero(ImplicitLocOpBuilder &b, Value v);

/// Stores `value` to `memref`[`at`] where `cond` holds: the one thread (or
/// CTA) of several that writes a shared result.
void storeIf(ImplicitLocOpBuilder &b, Value cond, Value value, Value memref,
             ValueRange at);

/// The descale of `group` from its `ctas` CTAs' maxima in `partials`
/// ([groups.shape..., ctas]).
Value descaleOfGroup(ImplicitLocOpBuilder &b, Value partials,
                     ValueRange group, int64_t ctas);

/// x / d, correctly rounded, for a divisor d shared by many x, at a
/// multiply and two fmas per x instead of a division: with r = RN(1 / d)
/// computed once, q = RN(x r) lies within an ulp of x / d, the residual
/// x - d q is exact as an fma, and RN(q + (x - d q) r) is the correctly
/// rounded x / d (Markstein's theorem; Muller et al., Handbook of
/// Floating-Point Arithmetic, 2nd ed., section 4.7). It needs d and r
/// normal, a quotient that does not underflow and a residual that does
/// not either, which holds for |x| >= 2^-100. withSharedDivisor takes
/// d >= 2^-88, so a smaller x gives |x / d| < 2^-12 and an underflowing
/// quotient is below 2^-126: both round to e4m3's zero of x's sign either
/// way (the quantize step's quotients are at most 448). Zeros keep their
/// sign.
struct SharedDivisor {
  Value negD, r; // null: plain division by d
  Value d;

  /// x / d (a division where r is null).
  Value divide(ImplicitLocOpBuilder &b, Value x) const;
};

/// Builds `body` twice under a branch on d (uniform across the threads
/// that share it): with SharedDivisor's division where d lies in
/// [2^-88, 2^126] (so r = 1 / d is normal too), with plain division
/// otherwise (a descale below 2^-88, inf or NaN: amax below 2^-79, or
/// not finite).
void withSharedDivisor(
    ImplicitLocOpBuilder &b, Value d,
    function_ref<void(ImplicitLocOpBuilder &, const SharedDivisor &)> body);

/// What a chunk loop loads at (row, j), and what it does with it (the
/// loaded values, then the loop's state; returns the next state).
using ChunkLoad =
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value, Value)>;
using ChunkBody = function_ref<SmallVector<Value>(
    ImplicitLocOpBuilder &, Value, Value, ValueRange, ValueRange)>;

/// Calls `body(row, j, load(row, j), state)` for chunks t, t +
/// kBlockThreads, .. of the `w`-wide column chunks of rows [n0, n1)
/// (row-major: consecutive threads take consecutive chunks of a row). With
/// `wholeRows` (R), a block of exactly R rows whose R * cols chunks give
/// every thread the same number, at most kMaxUnrolledChunks, takes them
/// straight-line with every load before the first body, so that the
/// thread's loads are in flight together (a body's global stores would
/// keep later loads from passing them); other blocks (the tail) take a
/// loop up to n1.
void forEachChunk(ImplicitLocOpBuilder &b, Value t, Value n0, Value n1,
                  int64_t cols, int64_t w, ValueRange iterArgs, ChunkLoad load,
                  ChunkBody body, SmallVector<Value> *results = nullptr,
                  std::optional<int64_t> wholeRows = std::nullopt);

/// part[0] = max of part[0 .. kBlockThreads): part[16 t] = max of
/// part[16 t .. 16 t + 15] for t < 16, then part[0] = max of part[16 i],
/// i < 16 (two barriers on the GPU instead of log2(kBlockThreads)).
void buildMaxTree(ImplicitLocOpBuilder &b, Value part);

/// Calls `body(c)` for c = t, t + kBlockThreads, .. below `total`: thread
/// t's share of its CTA's `total` work items.
void forEachItem(ImplicitLocOpBuilder &b, Value t, int64_t total,
                 function_ref<void(ImplicitLocOpBuilder &, Value)> body);

} // namespace mlir::attn::quantize

#endif // ATTN_LIB_TRANSFORMS_QUANTIZEBUILDERS_H

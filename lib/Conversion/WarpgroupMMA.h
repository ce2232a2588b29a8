//===- WarpgroupMMA.h - Hopper warpgroup-MMA building blocks ----*- C++ -*-===//
//
// What a tensor-core lowering on sm_90a is built from, independent of
// attention: the thread geometry of a warpgroup's m64nNk16 f32 accumulator,
// shared-memory matrix descriptors of 128B-swizzled tiles, the register-A
// wgmma (inline PTX: MLIR 22 has no op for it), and small scalar helpers.
//
// Register layout of an m64nNk16 f32 accumulator (PTX ISA, wgmma register fragments; verified on an
// H200): thread t of a warpgroup, w = t / 32, g = (t % 32) / 4, q = t % 4,
// holds in register i the element at row 16 w + g + 8 ((i >> 1) & 1) and
// column 8 (i / 4) + 2 q + (i & 1). So each thread holds two rows ("halves")
// and the four threads of a quad share them. The bf16/f16 A operand of the
// next wgmma has the same pattern.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_WARPGROUPMMA_H
#define ATTN_LIB_CONVERSION_WARPGROUPMMA_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/HopperConfig.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::attn::wgmma {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value cIndex(ImplicitLocOpBuilder &b, int64_t v);
Value cI32(ImplicitLocOpBuilder &b, int64_t v);
Value cI64(ImplicitLocOpBuilder &b, int64_t v);
Value cF32(ImplicitLocOpBuilder &b, double v);

/// `x` (i64 or index) copied by an empty volatile asm: a value the
/// optimizer can neither fold nor hoist, nor anything computed from it.
Value opaque(ImplicitLocOpBuilder &b, Value x);

/// ex2.approx.ftz.f32 / lg2.approx.ftz.f32, as in FlashAttention. (Max and
/// FMA are emitted as LLVM intrinsics too: the arith/math forms would lower
/// to libdevice calls on the GPU path.)
Value exp2(ImplicitLocOpBuilder &b, Value x);
Value log2(ImplicitLocOpBuilder &b, Value x);

/// Combines `x` across the four threads of a quad (they share a row).
template <typename CombineOp>
Value quadReduce(ImplicitLocOpBuilder &b, Value x) {
  for (int64_t offset : {1, 2}) {
    auto shfl = gpu::ShuffleOp::create(b, x, offset, /*width=*/32,
                                       gpu::ShuffleMode::XOR);
    x = CombineOp::create(b, x, shfl.getShuffleResult());
  }
  return x;
}

/// Combines `values` pairwise (a tree of depth log2 n, not a chain of n:
/// the reductions of a row then have independent operations in flight).
template <typename CombineOp>
Value treeReduce(ImplicitLocOpBuilder &b, SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(CombineOp::create(b, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// vector<N x f32> <-> N scalars.
SmallVector<Value> unpack(ImplicitLocOpBuilder &b, Value vec);
Value pack(ImplicitLocOpBuilder &b, ArrayRef<Value> elts);

/// !llvm.struct of `regs` f32: a wgmma accumulator; and its scalars.
LLVM::LLVMStructType accStruct(MLIRContext *ctx, int64_t regs);
SmallVector<Value> unpackStruct(ImplicitLocOpBuilder &b, Value s, int64_t regs);

//===----------------------------------------------------------------------===//
// Thread geometry
//===----------------------------------------------------------------------===//

/// Where a consumer thread sits (thread 128 on: warpgroup 0 produces): its
/// warpgroup, and the CTA-tile rows and column offset of its accumulator
/// registers.
struct ThreadLayout {
  Value warpgroup;  // consumer warpgroup (index)
  Value thread;     // thread within the warpgroup, 0..127 (index)
  Value row[2];     // CTA-tile row of halves 0 and 1 (index)
  Value g;          // (t % 32) / 4 (index)
  Value twoQ;       // 2 (t % 4) (index)
  Value quadLeader; // t % 4 == 0 (i1)
};

ThreadLayout threadLayout(ImplicitLocOpBuilder &b);

/// Half (0: row g, 1: row g + 8) and column offset (beyond 2q) of
/// accumulator register i.
inline int64_t halfOf(int64_t i) { return (i >> 1) & 1; }
inline int64_t colOf(int64_t i) { return 8 * (i / 4) + (i & 1); }

//===----------------------------------------------------------------------===//
// Shared-memory operands and the register-A wgmma
//===----------------------------------------------------------------------===//

/// Zeroes rows [`from`, `rows`) of each of `chunks` chunks of `rows` rows
/// of 128 bytes at shared-memory byte address `addr` (a 128B-swizzled tile:
/// a row is one 128-byte line whatever the swizzle, so whole rows need no
/// swizzle arithmetic), with the 128 threads of warpgroup `tl`, and fences
/// the writes for the async proxy (the tensor cores). The caller syncs the
/// warpgroup.
void zeroRowsFrom(ImplicitLocOpBuilder &b, Value addr, int64_t chunks,
                  int64_t rows, Value from, const ThreadLayout &tl);

/// Byte address of the first element of `tile`: in the shared window for
/// workgroup memory, the generic address for global memory.
Value sharedAddress(ImplicitLocOpBuilder &b, Value tile);

/// wgmma shared-memory descriptor of the 128B-swizzled tile at byte address
/// `addr` + `offset`: start address >> 4 in bits 0-13, leading byte offset
/// >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle mode 1 (128B)
/// in 62-63.
Value descriptor(ImplicitLocOpBuilder &b, Value addr, int64_t offset,
                 int64_t leadingBytes, int64_t strideBytes);

NVVM::WGMMATypes wgmmaType(Type elt);

/// K of one wgmma: 16 for f16/bf16, 32 for e4m3 (32 bytes of a row).
int64_t wgmmaK(Type elt);

/// One register-A wgmma, m64nNk16 (f16/bf16: B MN-major, transposed) or
/// m64nNk32 (e4m3: B K-major): acc (N / 2 f32) += A (4 x b32) * B, B from
/// the descriptor.
SmallVector<Value> wgmmaRegisterA(ImplicitLocOpBuilder &b, ArrayRef<Value> acc,
                                  ArrayRef<Value> a, Value descB, int64_t n,
                                  Type elt);

/// One wgmma m64nNkK per k-step (K = wgmmaK(elt)) with A and B from shared
/// memory, A K-major, B K-major or (`transposeB`, f16/bf16 only) MN-major;
/// the first k-step overwrites `acc` (an accumulator struct). Returns the
/// struct, valid after the group's wait.
Value issueShared(ImplicitLocOpBuilder &b, Value acc, ArrayRef<Value> descA,
                  ArrayRef<Value> descB, int64_t n, Type elt,
                  bool transposeB = false);

/// Accumulator registers packed pairwise into 16-bit `elt` (f16/bf16)
/// pairs: the A operand of a register-A wgmma over the accumulator's
/// columns (k-step kk in registers 4 kk .. 4 kk + 3), no data movement.
SmallVector<Value> packPairs(ImplicitLocOpBuilder &b, ArrayRef<Value> x,
                             Type elt);

/// An empty volatile asm that takes and returns `regs` (f32 or i32). After
/// a wgmma.wait_group it keeps the group's operands alive until the wait
/// (no other value is given their registers while the group reads them)
/// and its results from being read before it.
SmallVector<Value> pinAfterWait(ImplicitLocOpBuilder &b, ArrayRef<Value> regs);

//===----------------------------------------------------------------------===//
// State fragments and warp specialization
//===----------------------------------------------------------------------===//

/// Width of a wgmma accumulator for head dim D (wgmma takes any N that is a
/// multiple of 8).
inline int64_t paddedN(int64_t d) { return llvm::alignTo(d, 8); }

/// A consumer thread's registers of a warpgroup fragment: two rows of
/// !attn.wg_fragment<BLOCK_M x f32> (vector<2xf32>), and paddedN(D) / 2
/// accumulator registers of !attn.wg_fragment<BLOCK_M x D x f32> (the
/// forward's acc; the backward's dK and dV, whose rows are keys).
VectorType threadFragmentType(WgFragmentType t);

/// `converter` maps !attn.wg_fragment to threadFragmentType and leaves
/// every other type as it is.
void addFragmentConversion(TypeConverter &converter);

/// attn.warp_specialize -> if (warpgroup 0) { setmaxnreg.dec; producer }
/// else { setmaxnreg.inc; `consumerPrologue`; consumer }; the CTA loop is
/// marked attn.threads.
void lowerWarpSpecialize(
    RewriterBase &rewriter, WarpSpecializeOp ws,
    function_ref<void(ImplicitLocOpBuilder &)> consumerPrologue = {});

/// A builder at `op` that reports what it creates to `rewriter` (for the
/// conversion patterns).
inline ImplicitLocOpBuilder builderAt(ConversionPatternRewriter &rewriter,
                                      Operation *op) {
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  b.setInsertionPoint(op);
  return b;
}

} // namespace mlir::attn::wgmma

#endif // ATTN_LIB_CONVERSION_WARPGROUPMMA_H

//===- AttnToCPU.cpp - decomposed loop nest -> LLVM dialect (host) --------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "VectorLowering.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Threading.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-lower-to-cpu"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOCPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds integer and f32 arithmetic of the shape of a (vector or scalar)
/// f16 <-> f32 conversion.
struct ShapedBuilder : ImplicitLocOpBuilder {
  Type shape;
  ShapedBuilder(Operation *op, PatternRewriter &rewriter, Type shape)
      : ImplicitLocOpBuilder(op->getLoc(), rewriter), shape(shape) {}

  Type like(Type element) const {
    if (auto shaped = dyn_cast<ShapedType>(shape))
      return shaped.clone(element);
    return element;
  }
  Value i32(uint32_t bits) {
    return createScalarOrSplatConstant(*this, getLoc(), like(getI32Type()),
                                       APInt(32, bits));
  }
  Value f32(float value) {
    return createScalarOrSplatConstant(*this, getLoc(), like(getF32Type()),
                                       APFloat(value));
  }
  Value bitcast(Type element, Value v) {
    return arith::BitcastOp::create(*this, like(element), v);
  }
  Value cmp(arith::CmpIPredicate pred, Value a, Value b) {
    return arith::CmpIOp::create(*this, pred, a, b);
  }
  Value select(Value cond, Value a, Value b) {
    return arith::SelectOp::create(*this, cond, a, b);
  }
  Value bitAnd(Value a, uint32_t mask) {
    return arith::AndIOp::create(*this, a, i32(mask));
  }
  Value add(Value a, uint32_t b) {
    return arith::AddIOp::create(*this, a, i32(b));
  }
  Value shl(Value a, uint32_t n) {
    return arith::ShLIOp::create(*this, a, i32(n));
  }
  Value shr(Value a, uint32_t n) {
    return arith::ShRUIOp::create(*this, a, i32(n));
  }
};

/// f16 -> f32, exact: rebias the exponent of normal numbers, keep the top
/// exponent (Inf, NaN), and scale subnormals by an exact f32 subtraction.
/// x86-64 without F16C would otherwise call libgcc's __extendhfsf2.
struct ExpandF16ExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isF16() ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f16 -> f32");
    ShapedBuilder b(op, rewriter, op.getType());
    Value h = arith::ExtUIOp::create(b, b.like(b.getI32Type()),
                                     b.bitcast(b.getI16Type(), op.getIn()));
    Value sign = b.shl(b.bitAnd(h, 0x8000), 16);
    Value bits = b.shl(b.bitAnd(h, 0x7fff), 13); // exponent, mantissa
    Value exponent = b.bitAnd(bits, 0x0f800000);
    Value normal = b.add(bits, (127 - 15) << 23);
    Value infNan = b.add(bits, (255 - 31) << 23);
    // 2^-14 * (1 + m / 2^10) - 2^-14 = m * 2^-24, the subnormal's value.
    Value subnormal = b.bitcast(
        b.getI32Type(),
        arith::SubFOp::create(
            b, b.bitcast(b.getF32Type(), b.add(bits, (127 - 14) << 23)),
            b.f32(0x1p-14f)));
    Value magnitude = b.select(
        b.cmp(arith::CmpIPredicate::eq, exponent, b.i32(0x0f800000)), infNan,
        b.select(b.cmp(arith::CmpIPredicate::eq, exponent, b.i32(0)), subnormal,
                 normal));
    rewriter.replaceOp(op, b.bitcast(b.getF32Type(),
                                     arith::OrIOp::create(b, magnitude, sign)));
    return success();
  }
};

/// f32 -> f16, round to nearest even (F. Giesen's float_to_half_fast3_rtne):
/// overflow gives Inf, NaN a quiet NaN; subnormal results are rounded by an
/// f32 addition that aligns their 10 bits at the bottom of the mantissa.
/// x86-64 without F16C would otherwise call libgcc's __truncsfhf2.
struct ExpandF16TruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isF32() ||
        !getElementTypeOrSelf(op.getType()).isF16())
      return rewriter.notifyMatchFailure(op, "not f32 -> f16");
    if (op.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not the default rounding");
    ShapedBuilder b(op, rewriter, op.getType());
    Value f = b.bitcast(b.getI32Type(), op.getIn());
    Value sign = b.shr(b.bitAnd(f, 0x80000000), 16);
    Value abs = b.bitAnd(f, 0x7fffffff);
    Value infNan =
        b.select(b.cmp(arith::CmpIPredicate::ugt, abs, b.i32(0x7f800000)),
                 b.i32(0x7e00), b.i32(0x7c00));
    // |x| < 2^-14: |x| + 0.5 rounds |x| to a multiple of 2^-24.
    Value half = b.i32(126 << 23);
    Value subnormal = arith::SubIOp::create(
        b,
        b.bitcast(b.getI32Type(),
                  arith::AddFOp::create(b, b.bitcast(b.getF32Type(), abs),
                                        b.bitcast(b.getF32Type(), half))),
        half);
    // Rebias the exponent by (15 - 127) << 23 (0xC8000000 mod 2^32) and round
    // the 13 dropped bits to nearest even; a carry may reach Inf.
    Value odd = b.bitAnd(b.shr(abs, 13), 1);
    Value normal = b.shr(
        arith::AddIOp::create(b, b.add(abs, 0xC8000000u + 0xfff), odd), 13);
    Value magnitude = b.select(
        b.cmp(arith::CmpIPredicate::uge, abs, b.i32((127 + 16) << 23)), infNan,
        b.select(b.cmp(arith::CmpIPredicate::ult, abs, b.i32(113 << 23)),
                 subnormal, normal));
    Value bits = arith::TruncIOp::create(
        b, b.like(b.getI16Type()), arith::OrIOp::create(b, magnitude, sign));
    rewriter.replaceOp(op, b.bitcast(b.getF16Type(), bits));
    return success();
  }
};

bool isE4M3(Value v) {
  return isa<Float8E4M3FNType>(getElementTypeOrSelf(v));
}

/// f8E4M3FN -> f32, exact. E4M3FN has bias 7, no infinity and one NaN
/// pattern per sign (S.1111.111). Normal numbers rebias the exponent;
/// subnormals (m * 2^-9) are 2^-6 * (1 + m / 8) - 2^-6, an exact f32
/// subtraction; NaN becomes the f32 quiet NaN.
struct ExpandE4M3ExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isE4M3(op.getIn()) || !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f8E4M3FN -> f32");
    ShapedBuilder b(op, rewriter, op.getType());
    Value h = arith::ExtUIOp::create(b, b.like(b.getI32Type()),
                                     b.bitcast(b.getI8Type(), op.getIn()));
    Value sign = b.shl(b.bitAnd(h, 0x80), 24);
    Value magnitudeBits = b.bitAnd(h, 0x7f);
    Value bits = b.shl(magnitudeBits, 20); // exponent, mantissa
    Value normal = b.add(bits, (127 - 7) << 23);
    Value subnormal = b.bitcast(
        b.getI32Type(),
        arith::SubFOp::create(
            b, b.bitcast(b.getF32Type(), b.add(bits, (127 - 6) << 23)),
            b.f32(0x1p-6f)));
    Value magnitude = b.select(
        b.cmp(arith::CmpIPredicate::eq, magnitudeBits, b.i32(0x7f)),
        b.i32(0x7fc00000),
        b.select(b.cmp(arith::CmpIPredicate::eq, b.bitAnd(h, 0x78), b.i32(0)),
                 subnormal, normal));
    rewriter.replaceOp(op, b.bitcast(b.getF32Type(),
                                     arith::OrIOp::create(b, magnitude, sign)));
    return success();
  }
};

/// f32 -> f8E4M3FN, round to nearest even with satfinite saturation: NaN
/// stays NaN, and every other value beyond the largest finite one (448,
/// Inf included) becomes +-448, as PTX cvt.rn.satfinite.e4m3x2.f32 does
/// (E4M3FN has no infinity; its only non-finite pattern is NaN). Subnormal
/// results are rounded by an f32 addition of 2^14, whose ulp is 2^-9.
struct ExpandE4M3TruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isF32() || !isE4M3(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not f32 -> f8E4M3FN");
    if (op.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not the default rounding");
    ShapedBuilder b(op, rewriter, op.getType());
    Value f = b.bitcast(b.getI32Type(), op.getIn());
    Value sign = b.shr(b.bitAnd(f, 0x80000000), 24);
    Value abs = b.bitAnd(f, 0x7fffffff);
    Value special =
        b.select(b.cmp(arith::CmpIPredicate::ugt, abs, b.i32(0x7f800000)),
                 b.i32(0x7f), b.i32(0x7e));
    Value big = b.i32(141 << 23); // 2^14
    Value subnormal = arith::SubIOp::create(
        b,
        b.bitcast(b.getI32Type(),
                  arith::AddFOp::create(b, b.bitcast(b.getF32Type(), abs),
                                        b.bitcast(b.getF32Type(), big))),
        big);
    // Rebias by (7 - 127) << 23 (0xC4000000 mod 2^32) and round the 20
    // dropped bits to nearest even.
    Value odd = b.bitAnd(b.shr(abs, 20), 1);
    Value normal = b.shr(
        arith::AddIOp::create(b, b.add(abs, 0xC4000000u + 0x7ffff), odd), 20);
    Value magnitude = b.select(
        b.cmp(arith::CmpIPredicate::uge, abs, b.i32(0x43e00000)), // 448
        special,
        b.select(b.cmp(arith::CmpIPredicate::ult, abs, b.i32(121 << 23)),
                 subnormal, normal)); // 2^-6, the smallest normal
    Value bits = arith::TruncIOp::create(
        b, b.like(b.getI8Type()), arith::OrIOp::create(b, magnitude, sign));
    rewriter.replaceOp(op, b.bitcast(getElementTypeOrSelf(op.getType()), bits));
    return success();
  }
};

/// transpose(broadcast(v : vector<M>) : vector<NxM>) = broadcast(v as
/// vector<Mx1>) : vector<MxN>: row i is a splat of v[i]. The online softmax
/// scales the accumulator rows this way; the element-wise transpose lowering
/// would move all N * M elements one by one (3/4 of the unrolled IR).
struct TransposeOfBroadcastToStretch : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getVector().getDefiningOp<vector::BroadcastOp>();
    auto source = broadcast ? dyn_cast<VectorType>(broadcast.getSourceType())
                            : VectorType();
    if (!source || source.getRank() != 1 || source.isScalable() ||
        op.getResultVectorType().getRank() != 2 ||
        op.getPermutation() != ArrayRef<int64_t>{1, 0})
      return rewriter.notifyMatchFailure(op, "not a 2-D transpose of a row "
                                             "broadcast");
    Value column = vector::ShapeCastOp::create(
        rewriter, op.getLoc(),
        VectorType::get({source.getDimSize(0), 1}, source.getElementType()),
        broadcast.getSource());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(
        op, op.getResultVectorType(), column);
    return success();
  }
};

/// Arithmetic on floats narrower than f32 (conversions, or f32 emulation
/// through them) that LLVM lowers with a CPU feature or a library call.
bool needsHalfSupport(Operation *op) {
  bool arithmetic =
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      isa<vector::ReductionOp, vector::MultiDimReductionOp,
          vector::ContractionOp, vector::FMAOp, vector::OuterProductOp,
          vector::ScanOp>(op);
  if (!arithmetic ||
      isa<arith::ConstantOp, arith::BitcastOp, arith::SelectOp>(op))
    return false;
  auto narrow = [](Value v) {
    auto type = dyn_cast<FloatType>(getElementTypeOrSelf(v));
    return type && type.getWidth() < 32;
  };
  return llvm::any_of(op->getOperands(), narrow) ||
         llvm::any_of(op->getResults(), narrow);
}

/// Moves f16 and bf16 data as i16, and f8E4M3FN data as i8, in the LLVM
/// dialect: x86-64 code generation without AVX-512 BF16 widens even a bf16
/// phi, select or masked load to f32 and narrows it back through
/// __truncsfbf2, and LLVM has no FP8 type. Arithmetic on them was expanded
/// before, so only bit-preserving loads, stores and moves remain; the
/// verifier rejects anything else. (Kernels take memrefs: their C interface
/// does not change.)
LogicalResult moveNarrowFloatsAsIntegers(ModuleOp module) {
  auto asInteger = [](Type t) -> std::optional<Type> {
    auto f = dyn_cast<FloatType>(t);
    if (!f || (f.getWidth() != 16 && f.getWidth() != 8))
      return std::nullopt;
    return IntegerType::get(t.getContext(), f.getWidth());
  };
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](FloatType t) { return asInteger(t); });
  replacer.addReplacement([&](FloatAttr a) -> std::optional<Attribute> {
    std::optional<Type> i = asInteger(a.getType());
    if (!i)
      return std::nullopt;
    return IntegerAttr::get(*i, a.getValue().bitcastToAPInt());
  });
  replacer.addReplacement(
      [&](DenseFPElementsAttr a) -> std::optional<Attribute> {
        std::optional<Type> i = asInteger(a.getElementType());
        if (!i)
          return std::nullopt;
        return a.bitcast(*i);
      });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  module.walk([](LLVM::BitcastOp cast) {
    if (cast.getArg().getType() == cast.getType()) {
      cast.replaceAllUsesWith(cast.getArg());
      cast.erase();
    }
  });
  return verify(module);
}

/// A CTA's workgroup buffers (memref.alloca in #gpu.address_space<workgroup>
/// in a grid's body, attn-quantize-fp8's per-block kernel): CTAs run one
/// after another on the host, so one plain stack buffer per function
/// serves them all, allocated once instead of per loop iteration.
void hoistWorkgroupBuffers(ModuleOp module) {
  module.walk([](memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    if (!isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()) ||
        !alloca.getOperands().empty())
      return;
    auto fn = alloca->getParentOfType<func::FuncOp>();
    if (!fn)
      return;
    alloca->moveBefore(&fn.getBody().front().front());
    alloca.getResult().setType(
        MemRefType::get(type.getShape(), type.getElementType(),
                        type.getLayout()));
  });
}

/// Per function, before the tile vectors are lowered: the CTA-level loop
/// nest runs sequentially.
void addSequentialLoops(OpPassManager &fn) {
  fn.addPass(createForallToForLoopPass());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}

/// Per function, after: vector transfers, loops, index and math arithmetic
/// to the LLVM dialect. Affine and scf go first, while the IR is smaller
/// than after the vector-to-LLVM unrolling.
void addFunctionToLLVM(OpPassManager &fn) {
  fn.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  fn.addPass(createLowerAffinePass());
  fn.addPass(createSCFToControlFlowPass());
  fn.addPass(createConvertVectorToLLVMPass());
  fn.addPass(createConvertMathToLLVMPass());
  fn.addPass(memref::createExpandStridedMetadataPass());
  // The offsets of subviews at a dynamic position (a split of the split-KV
  // workspace) come out of the expansion as affine.apply.
  fn.addPass(createLowerAffinePass());
}

/// Rewrites the tile vector ops and the half-precision conversions of `fn`
/// and checks that no other half-precision arithmetic is left.
LogicalResult
lowerTileVectorsAndHalves(func::FuncOp fn,
                          const FrozenRewritePatternSet &patterns) {
  if (failed(applyPatternsGreedily(fn, patterns)))
    return fn.emitError("tile vector lowering did not converge");
  WalkResult left = fn.walk([](Operation *op) {
    if (!needsHalfSupport(op))
      return WalkResult::advance();
    emitError(op->getLoc())
        << "attn-lower-to-cpu: " << op->getName()
        << " on a type narrower than f32 has no self-contained host lowering "
           "(it would need a CPU feature or a runtime-library call)";
    return WalkResult::interrupt();
  });
  return failure(left.wasInterrupted());
}

/// The pipelines and patterns are built once per pass instance; function
/// pipelines run on several functions in parallel.
struct AttnLowerToCPUPass
    : StrictOptions<attn::impl::AttnLowerToCPUBase<AttnLowerToCPUPass>> {
  using StrictOptions::StrictOptions;
  void getDependentDialects(DialectRegistry &registry) const override {
    AttnLowerToCPUBase::getDependentDialects(registry);
    OpPassManager before(ModuleOp::getOperationName()),
        after(ModuleOp::getOperationName());
    buildPipelines(before, after);
    before.getDependentDialects(registry);
    after.getDependentDialects(registry);
  }

  LogicalResult initialize(MLIRContext *context) override {
    buildPipelines(sequentialLoops, toLLVM);
    RewritePatternSet set(context);
    populateTileVectorLoweringPatterns(set);
    // Half-precision conversions become integer arithmetic, so the code
    // needs no CPU feature and no library symbol (__truncsfbf2 is missing
    // from Debian 12's libgcc).
    arith::populateExpandBFloat16Patterns(set);
    // Softcapping's tanh as arithmetic: no libm symbol needed.
    populatePolynomialApproximateTanhPattern(set);
    set.add<ExpandF16ExtF, ExpandF16TruncF, ExpandE4M3ExtF, ExpandE4M3TruncF>(
        context);
    set.add<TransposeOfBroadcastToStretch>(context, /*benefit=*/2);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    hoistWorkgroupBuffers(module);
    if (failed(checkHostCode(module)))
      return signalPassFailure();
    // Every public function gets a C entry point for the ExecutionEngine.
    SmallVector<func::FuncOp> fns;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      fns.push_back(fn);
      LLVM_DEBUG(llvm::dbgs() << "lower @" << fn.getName()
                              << (fn.isPublic() ? " (C entry point)" : "")
                              << "\n");
      if (fn.isPublic())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
    }
    auto lowerVectors = [&](func::FuncOp fn) {
      return lowerTileVectorsAndHalves(fn, patterns);
    };
    if (failed(runPipeline(sequentialLoops, module)) ||
        failed(failableParallelForEach(&getContext(), fns, lowerVectors)) ||
        failed(runPipeline(toLLVM, module)) || failed(moveNarrowFloatsAsIntegers(module)) ||
        failed(checkFullyLowered(module)))
      return signalPassFailure();
  }

  /// The tensor-core path (attn-async-pipeline, attn-lower-to-wgmma) is
  /// sm_90a code: warpgroups, shared memory, TMA and mbarriers have no host
  /// form, so it stops before the lowering fails on them half-way.
  static LogicalResult checkHostCode(ModuleOp module) {
    WalkResult res = module.walk<WalkOrder::PreOrder>([](Operation *op) {
      bool tensorCore =
          isa<WarpSpecializeOp, OnlineAttentionMmaOp>(op) ||
          isa<nvgpu::NVGPUDialect, NVVM::NVVMDialect, gpu::GPUDialect>(
              op->getDialect()) ||
          llvm::any_of(op->getOperandTypes(), [](Type t) {
            auto memref = dyn_cast<MemRefType>(t);
            return memref && isa_and_nonnull<gpu::AddressSpaceAttr>(
                                 memref.getMemorySpace());
          });
      if (!tensorCore)
        return WalkResult::advance();
      return WalkResult(
          emitError(op->getLoc())
          << "attn-lower-to-cpu: " << op->getName()
          << " is GPU code: attn-lower-to-cpu takes the nest of attn-tile, "
             "attn-causal-split and attn-online-softmax, not the sm_90a "
             "tensor-core path (attn-async-pipeline, attn-lower-to-wgmma) nor "
             "attn-distribute-rows; lower it with attn-lower-to-nvvm");
    });
    return failure(res.wasInterrupted());
  }

  /// The host code must be LLVM dialect only: an op of another dialect left
  /// behind (a gpu.shuffle from the GPU-only attn-distribute-rows, say)
  /// would fail far later, in translation or in the JIT.
  static LogicalResult checkFullyLowered(ModuleOp module) {
    WalkResult res = module.walk([](Operation *op) {
      if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      return WalkResult(
          emitError(op->getLoc())
          << "attn-lower-to-cpu: " << op->getName()
          << " is left, with no lowering to the LLVM dialect; the host "
             "lowering takes the nest of attn-tile, attn-causal-split and "
             "attn-online-softmax on memrefs");
    });
    return failure(res.wasInterrupted());
  }

private:
  static void buildPipelines(OpPassManager &before, OpPassManager &after) {
    addSequentialLoops(before.nest<func::FuncOp>());
    addFunctionToLLVM(after.nest<func::FuncOp>());
    after.addPass(createConvertToLLVMPass());
    after.addPass(createReconcileUnrealizedCastsPass());
  }

  OpPassManager sequentialLoops{ModuleOp::getOperationName()};
  OpPassManager toLLVM{ModuleOp::getOperationName()};
  FrozenRewritePatternSet patterns;
};

} // namespace

//===- AttnToNVVM.cpp - distributed loop nest -> NVVM kernel --------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/StrictOptions.h"

#include "PhasedCta.h"
#include "VectorLowering.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <numeric>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// f32 `math.exp2` / `math.log2` -> the PTX approximations the FlashAttention
/// kernels use (ex2.approx.ftz.f32, lg2.approx.ftz.f32). Vectors are unrolled.
template <typename MathOp> struct ApproxToNVVM : OpRewritePattern<MathOp> {
  ApproxToNVVM(MLIRContext *ctx, StringRef intrinsic)
      : OpRewritePattern<MathOp>(ctx), intrinsic(intrinsic) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    if (type.isF32()) {
      rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
          op, type, rewriter.getStringAttr(intrinsic), op.getOperand());
      return success();
    }
    auto vt = dyn_cast<VectorType>(type);
    if (!vt || vt.getRank() != 1 || !vt.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "expected f32 or vector<N x f32>");
    SmallVector<Value> elts;
    for (int64_t i = 0, e = vt.getNumElements(); i < e; ++i) {
      Value x = vector::ExtractOp::create(rewriter, loc, op.getOperand(), i);
      elts.push_back(MathOp::create(rewriter, loc, x));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elts);
    return success();
  }

  std::string intrinsic;
};

/// Scalar f32 -> f8E4M3FN `arith.truncf` (attn-quantize-fp8's quantize
/// kernel) -> cvt.rn.satfinite.e4m3x2.f32 with the value in the low byte:
/// the rounding and saturation the host lowering reproduces.
struct TruncFToE4M3 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<Float8E4M3FNType>(op.getType()) || !op.getIn().getType().isF32())
      return rewriter.notifyMatchFailure(op, "expected f32 -> f8E4M3FN");
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0));
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        rewriter, loc, rewriter.getI16Type(), zero, op.getIn(),
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, op.getType());
    Value byte =
        arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(), pair);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

/// Marks whole-row-slice vector loads/stores as 16-byte aligned. The
/// runtime contract (docs/ir.md) makes every row of Q/K/V/O start on a
/// 16-byte boundary (aligned base, strides that are multiples of 8
/// elements), and thread slices are multiples of 16 bytes wide.
void alignRowAccesses(gpu::GPUModuleOp kernels) {
  auto align = [](Operation *op, VectorType vt) {
    unsigned bits = vt.getElementTypeBitWidth() * vt.getNumElements();
    if (vt.getRank() == 1 && bits % 128 == 0)
      op->setAttr("alignment",
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64), 16));
  };
  kernels.walk([&](Operation *op) {
    if (auto load = dyn_cast<vector::LoadOp>(op))
      align(op, load.getVectorType());
    else if (auto store = dyn_cast<vector::StoreOp>(op))
      align(op, store.getVectorType());
  });
}

//===----------------------------------------------------------------------===//
// Hopper CTAs (attn-async-pipeline + attn-lower-to-wgmma)
//===----------------------------------------------------------------------===//

/// Bytes of dynamic shared memory that the views `region` uses reach
/// (views may have been hoisted out of it).
int64_t dynamicSharedBytes(Region &region) {
  int64_t bytes = 0;
  auto count = [&](memref::ViewOp view) {
    if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
      return;
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    MemRefType type = view.getType();
    if (shift && type.hasStaticShape())
      bytes = std::max(bytes, *shift + type.getNumElements() *
                                           type.getElementTypeBitWidth() / 8);
  };
  region.walk(count);
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  for (Value v : above)
    if (auto view = v.getDefiningOp<memref::ViewOp>())
      count(view);
  return bytes;
}

/// A CTA loop marked `attn.threads` (one Hopper CTA per (Q block, head,
/// batch)) becomes a gpu.launch over a 1-D grid of ceil(Nq / BLOCK_M) * Hq *
/// B blocks (grid x reaches 2^31 - 1 where y and z stop at 65535), the Q
/// block fastest, so that CTAs sharing K/V run together (attn-async-pipeline
/// rebinds a causal loop's tiles to start the heaviest first).
LogicalResult launchHopperCta(scf::ForallOp cta) {
  auto threads = cta->getAttrOfType<IntegerAttr>("attn.threads");
  if (cta.getRank() != 3 || !cta.isNormalized())
    return emitError(cta.getLoc(),
                     "attn-lower-to-nvvm: expected the 3-D CTA loop "
                     "(Q block, head, batch) of attn-tile");
  OpBuilder b(cta);
  Location loc = cta.getLoc();
  SmallVector<Value> ub =
      getValueOrCreateConstantIndexOp(b, loc, cta.getMixedUpperBound());
  Value grid = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ub[0], ub[1]), ub[2]);
  // Persistent CTAs find their tiles themselves (attn-async-pipeline).
  auto persistent = cta->getAttrOfType<IntegerAttr>("attn.persistent_ctas");
  if (persistent)
    grid = arith::ConstantIndexOp::create(b, loc, persistent.getInt());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value block = arith::ConstantIndexOp::create(b, loc, threads.getInt());
  Value smem = arith::ConstantIntOp::create(
      b, loc, dynamicSharedBytes(cta.getRegion()), 32);
  auto launch =
      gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one, smem);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value id = launch.getBlockIds().x;
  Value rest = arith::DivUIOp::create(b, loc, id, ub[0]);
  IRMapping map;
  map.map(cta.getInductionVars(),
          ValueRange{arith::RemUIOp::create(b, loc, id, ub[0]),
                     arith::RemUIOp::create(b, loc, rest, ub[1]),
                     arith::DivUIOp::create(b, loc, rest, ub[1])});
  // (Persistent: nothing live reads them; the tile loops decode their own.)
  for (Operation &op : cta.getBody()->without_terminator())
    b.clone(op, map);
  gpu::TerminatorOp::create(b, loc);
  cta.erase();
  return success();
}

/// Kernels cannot take an !nvgpu.tensormap.descriptor argument (its gpu.func
/// fails to legalize): pass descriptors as !llvm.ptr, cast back inside.
void passDescriptorsAsPointers(gpu::LaunchOp launch) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(launch.getBody(), above);
  Type ptr = LLVM::LLVMPointerType::get(launch.getContext());
  for (Value desc : above) {
    if (!isa<nvgpu::TensorMapDescriptorType>(desc.getType()))
      continue;
    OpBuilder host(launch);
    host.setInsertionPointAfterValue(desc);
    Value p = UnrealizedConversionCastOp::create(host, desc.getLoc(), ptr, desc)
                  .getResult(0);
    OpBuilder inner = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value back = UnrealizedConversionCastOp::create(inner, desc.getLoc(),
                                                    desc.getType(), p)
                     .getResult(0);
    replaceAllUsesInRegionWith(desc, back, launch.getBody());
  }
}

/// "module::kernel": kernels of one function (split-KV's partial attention
/// and combine) share a name in different gpu.modules.
std::string kernelKey(Operation *fn, StringRef name) {
  auto kernels = fn->getParentOfType<gpu::GPUModuleOp>();
  return ((kernels ? kernels.getName() : StringRef()) + "::" + name).str();
}

/// Per kernel: the LLVM argument positions of its tensor maps (!llvm.ptr
/// arguments of the gpu.func, after memrefs expand to 3 + 2 * rank values).
llvm::StringMap<SmallVector<unsigned>> tensorMapArguments(ModuleOp module) {
  llvm::StringMap<SmallVector<unsigned>> result;
  module.walk([&](gpu::GPUFuncOp fn) {
    unsigned pos = 0;
    for (Type t : fn.getArgumentTypes()) {
      if (isa<LLVM::LLVMPointerType>(t))
        result[kernelKey(fn, fn.getName())].push_back(pos);
      auto mem = dyn_cast<MemRefType>(t);
      pos += mem ? 3 + 2 * mem.getRank() : 1;
    }
  });
  return result;
}

/// After convert-gpu-to-nvvm: tensor maps are passed by value
/// (.param .align 64 .b8 [128], __grid_constant__), the kernel runs
/// `threads` threads with one CTA per SM, and dynamic shared memory is
/// 1024-byte aligned as 128B-swizzled TMA/wgmma tiles require.
void finishHopperKernels(ModuleOp module,
                         const llvm::StringMap<SmallVector<unsigned>> &maps) {
  MLIRContext *ctx = module.getContext();
  auto map = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 64), 16);
  module.walk([&](LLVM::LLVMFuncOp fn) {
    auto it = maps.find(kernelKey(fn, fn.getName()));
    if (it == maps.end())
      return;
    for (unsigned i : it->second) {
      fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(map));
      fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 64), 64));
      fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    UnitAttr::get(ctx));
    }
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                IntegerAttr::get(IntegerType::get(ctx, 32), 1));
  });
  module.walk([&](LLVM::GlobalOp global) {
    // An internal zero-size global prints as a static .shared variable;
    // dynamic shared memory is an .extern array.
    if (global.getAddrSpace() == 3 &&
        global.getSymName().starts_with("__dynamic_shmem")) {
      global.setAlignment(1024);
      global.setLinkage(LLVM::Linkage::External);
    }
  });
}

/// The FMA path's CTA loops (Q block, head, batch), now scf.parallel, become
/// one dimension: blocks x then run up to 2^31 - 1, where y and z stop at
/// 65535 (B or Hq beyond that would not launch).
void foldCtaGrids(ModuleOp module) {
  SmallVector<scf::ParallelOp> ctas;
  module.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>() && loop.getNumLoops() > 1)
      ctas.push_back(loop);
  });
  IRRewriter rewriter(module.getContext());
  for (scf::ParallelOp loop : ctas) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0);
    rewriter.setInsertionPoint(loop);
    collapseParallelLoops(rewriter, loop, {all});
  }
}

/// `#gpu.address_space<workgroup>` -> address space 3 in every type and
/// attribute of the kernels: convert-vector-to-llvm and convert-nvgpu-to-nvvm
/// have no mapping of their own for the GPU memory-space attributes.
void numberSharedMemorySpace(gpu::GPUModuleOp kernels) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [](gpu::AddressSpaceAttr space) -> std::optional<Attribute> {
        if (space.getValue() != gpu::AddressSpace::Workgroup)
          return std::nullopt;
        return IntegerAttr::get(
            IntegerType::get(space.getContext(), 64),
            static_cast<int64_t>(NVVM::NVVMMemorySpace::Shared));
      });
  // gpu.dynamic_shared_memory must stay in the attribute space: cast it.
  kernels.walk([](gpu::DynamicSharedMemoryOp smem) {
    OpBuilder b(smem->getContext());
    b.setInsertionPointAfter(smem);
    MemRefType type = smem.getType();
    MemRefType shared = MemRefType::Builder(type).setMemorySpace(
        b.getI64IntegerAttr(int64_t(NVVM::NVVMMemorySpace::Shared)));
    auto cast = memref::MemorySpaceCastOp::create(b, smem.getLoc(), shared,
                                                  smem.getResult());
    smem.getResult().replaceAllUsesExcept(cast, cast);
  });
  kernels.walk([&](Operation *op) {
    if (!isa<gpu::DynamicSharedMemoryOp>(op))
      replacer.replaceElementsIn(op, /*replaceAttrs=*/true,
                                 /*replaceLocs=*/false, /*replaceTypes=*/true);
  });
}

/// Moves every pure computation a gpu.launch uses from above into its body,
/// so that outlined kernels take only the memref operands of attn.attention
/// (sizes come from their descriptors) and the TMA descriptors. The
/// bundle's parameter list and the runtime's launch code depend on that: no
/// host-computed scalar crosses the kernel boundary. Unlike upstream's
/// sinkOperationsIntoLaunchOp, a chain is sunk down to the function's
/// arguments even when the body uses none of them directly (a Hopper kernel
/// reads Q only through its TMA descriptor but its sizes through memref.dim).
void sinkIntoLaunch(gpu::LaunchOp launch) {
  // Descriptor pointers stay arguments (passDescriptorsAsPointers).
  auto isSinkable = [](Operation *op) {
    return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
           op->getNumResults() == 1 && !isa<UnrealizedConversionCastOp>(op);
  };
  Region &body = launch.getBody();
  SetVector<Value> above;
  getUsedValuesDefinedAbove(body, above);
  OpBuilder b = OpBuilder::atBlockBegin(&body.front());
  IRMapping map;
  std::function<Value(Value)> sink = [&](Value v) -> Value {
    if (Value done = map.lookupOrNull(v))
      return done;
    Operation *def = v.getDefiningOp();
    if (!def || !isSinkable(def))
      return v; // a kernel argument
    for (Value operand : def->getOperands())
      sink(operand);
    return b.clone(*def, map)->getResult(0);
  };
  for (Value v : above)
    if (Value inside = sink(v); inside != v)
      replaceAllUsesInRegionWith(v, inside, body);
}

/// The SMs attn can target, with the oldest PTX ISA (x 10) that LLVM's
/// NVPTX back end emits for each; kernels need PTX 8.0 at least. Others
/// would make LLVM abort in instruction selection or ptxas refuse the
/// target (sm_101 is unknown to ptxas 13).
constexpr std::pair<StringLiteral, unsigned> kChips[] = {
    {"sm_80", 80},  {"sm_86", 80},  {"sm_87", 80},  {"sm_89", 80},
    {"sm_90", 80},  {"sm_90a", 80}, {"sm_100", 86}, {"sm_100a", 86},
    {"sm_103", 88}, {"sm_110", 90}, {"sm_120", 87}, {"sm_120a", 87},
    {"sm_121", 88}};

/// The features LLVM's NVPTX back end knows ("ptx80", "sm_90a", ...), read
/// once per process from its subtarget table. An unknown one (+ptx99) is
/// only warned about and dropped by the back end, which then emits its
/// oldest PTX ISA.
const llvm::StringSet<> &knownNVPTXFeatures() {
  static const llvm::StringSet<> known = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    llvm::StringSet<> features;
    std::string error;
    llvm::Triple triple("nvptx64-nvidia-cuda");
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target ? target->createMCSubtargetInfo(triple, "sm_90", "") : nullptr);
    if (sti)
      for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
        features.insert(kv.Key);
    return features;
  }();
  return known;
}

/// PTX features for `chip`: `features` if given (features the back end
/// knows, with a +ptxNN that reaches the chip's minimum), else
/// "+ptx<minimum>".
FailureOr<std::string> resolveTarget(ModuleOp module, StringRef chip,
                                     StringRef features) {
  const auto *it = llvm::find_if(
      kChips, [&](const auto &entry) { return entry.first == chip; });
  if (it == std::end(kChips)) {
    std::string known;
    for (const auto &[name, ptx] : kChips)
      known += (known.empty() ? "" : ", ") + name.str();
    return emitError(UnknownLoc::get(module.getContext()),
                     "attn-lower-to-nvvm: chip '")
           << chip << "' is not supported; supported chips: " << known;
  }
  if (features.empty())
    return ("+ptx" + Twine(it->second)).str();
  unsigned ptx = 0;
  StringRef rest = features;
  size_t at = rest.find("+ptx");
  if (at == StringRef::npos ||
      rest.drop_front(at + 4).take_while(llvm::isDigit).getAsInteger(10, ptx))
    return emitError(UnknownLoc::get(module.getContext()),
                     "attn-lower-to-nvvm: features '")
           << features << "' name no PTX ISA version (+ptxNN)";
  const llvm::StringSet<> &known = knownNVPTXFeatures();
  SmallVector<StringRef> list;
  features.split(list, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef feature : list) {
    StringRef name = feature.trim().drop_while([](char c) {
      return c == '+' || c == '-';
    });
    if (!known.contains(name))
      return emitError(UnknownLoc::get(module.getContext()),
                       "attn-lower-to-nvvm: feature '")
             << feature.trim()
             << "' is unknown to LLVM's NVPTX back end, which would drop "
                "it silently";
  }
  if (ptx < it->second)
    return emitError(UnknownLoc::get(module.getContext()),
                     "attn-lower-to-nvvm: chip ")
           << chip << " needs PTX ISA " << it->second / 10 << "."
           << it->second % 10 << " or newer (features=+ptx" << it->second
           << "), but features are '" << features << "'";
  return features.str();
}

/// The input this pass lowers: every attn op decomposed by
/// attn-online-softmax or attn-lower-to-wgmma, every CTA loop mapped to
/// threads by attn-distribute-rows or carrying attn-lower-to-wgmma's
/// thread count. Anything else would leave attn ops behind or build
/// a one-thread kernel, so it stops with what to run first.
LogicalResult checkNVVMPreconditions(ModuleOp module) {
  auto isThreadLoop = [](scf::ForallOp forall) {
    std::optional<ArrayAttr> mapping = forall.getMapping();
    return mapping && llvm::any_of(*mapping, [](Attribute a) {
             return isa<gpu::GPUThreadMappingAttr>(a);
           });
  };
  WalkResult res = module.walk([&](Operation *op) {
    if (isa<AttentionGradOp>(op))
      return WalkResult(op->emitOpError(
          "attn-lower-to-nvvm needs it lowered: run attn-grad-async-pipeline "
          "and attn-lower-to-wgmma first (or --attn-to-cubin, path=wgmma)"));
    if (isa<AttentionOp, PartialAttentionOp, DecodeCombineOp,
            VarlenAttentionOp>(op))
      return WalkResult(op->emitOpError(
          "attn-lower-to-nvvm needs it tiled and decomposed: run attn-tile, "
          "attn-causal-split, then attn-async-pipeline and "
          "attn-lower-to-wgmma, or attn-distribute-rows and "
          "attn-online-softmax first (or --attn-to-cubin)"));
    if (auto ws = op->getParentOfType<WarpSpecializeOp>())
      op = ws;
    if (isa<WarpSpecializeOp, OnlineAttentionMmaOp>(op))
      return WalkResult(emitError(
          op->getLoc(),
          "attn-lower-to-nvvm needs the tensor-core pipeline lowered: run "
          "attn-lower-to-wgmma first"));
    if (isa<AttnDialect>(op->getDialect()))
      return WalkResult(emitError(
          op->getLoc(), "attn-lower-to-nvvm needs the tile ops decomposed: run "
                        "attn-online-softmax (or attn-lower-to-wgmma) first"));
    auto forall = dyn_cast<scf::ForallOp>(op);
    // Tensor-core CTAs (attn-lower-to-wgmma) carry their thread count.
    if (!forall || isThreadLoop(forall) || forall->hasAttr("attn.threads") ||
        forall.getBody()
            ->walk([&](scf::ForallOp inner) {
              return isThreadLoop(inner) ? WalkResult::interrupt()
                                         : WalkResult::advance();
            })
            .wasInterrupted())
      return WalkResult::advance();
    return WalkResult(emitError(
        forall.getLoc(),
        "attn-lower-to-nvvm needs the CTA loop mapped to threads: run "
        "attn-distribute-rows before attn-online-softmax (or "
        "attn-async-pipeline and attn-lower-to-wgmma)"));
  });
  return failure(res.wasInterrupted());
}

struct AttnLowerToNVVMPass
    : StrictOptions<attn::impl::AttnLowerToNVVMBase<AttnLowerToNVVMPass>> {
  using StrictOptions::StrictOptions;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNVVMPreconditions(module)))
      return signalPassFailure();
    FailureOr<std::string> ptxFeatures = resolveTarget(module, chip, features);
    if (failed(ptxFeatures))
      return signalPassFailure();
    auto run = [&](OpPassManager &pm, Operation *op) {
      return runPipeline(pm, op);
    };
    // Hopper CTAs get their launch built here; the rest take the FMA
    // path's mapping below.
    SmallVector<scf::ForallOp> hopper;
    module.walk([&](scf::ForallOp forall) {
      if (forall->hasAttr("attn.threads"))
        hopper.push_back(forall);
    });
    for (scf::ForallOp cta : hopper) {
      if (chip != "sm_90a") {
        emitError(cta.getLoc(),
                  "attn-lower-to-nvvm: the tensor-core kernel "
                  "(warpgroup MMA, setmaxnreg) needs chip sm_90a, not ")
            << chip << "; use path=fma for other chips";
        return signalPassFailure();
      }
      if (failed(launchHopperCta(cta)))
        return signalPassFailure();
    }
    // CTAs of several thread loops (the per-block FP8 quantize kernel).
    SmallVector<scf::ForallOp> phased;
    module.walk([&](scf::ForallOp forall) {
      if (isPhasedCta(forall))
        phased.push_back(forall);
    });
    for (scf::ForallOp cta : phased)
      if (failed(launchPhasedCta(cta)))
        return signalPassFailure();
    // attn-distribute-rows maps (Q block, head, batch) to blocks x, y, z and
    // rows to threads x: exactly the order gpu-map-parallel-loops assigns
    // greedily, which is the form convert-parallel-loops-to-gpu consumes.
    module.walk([](scf::ForallOp forall) { forall.setMappingAttr(nullptr); });
    if (failed(runTextualPipeline(module, "scf-forall-to-parallel", run)))
      return signalPassFailure();
    foldCtaGrids(module);
    if (failed(runTextualPipeline(
            module,
            "func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
            "canonicalize,cse",
            run)))
      return signalPassFailure();
    module.walk([](gpu::LaunchOp l) { sinkIntoLaunch(l); });
    module.walk([](gpu::LaunchOp l) { passDescriptorsAsPointers(l); });
    if (failed(runTextualPipeline(module, "gpu-kernel-outlining", run)))
      return signalPassFailure();

    // Inside kernels: one row per thread, so drop the unit row dimension,
    // lower the remaining vector ops and the exp2/log2 approximations.
    // First unroll transfers into 1-D ones guarded by their row bound
    // (rows past Nq must be neither read nor written); only then drop the
    // unit row dimension, which would otherwise lose that bound.
    if (failed(runTextualPipeline(
            module, "gpu.module(convert-vector-to-scf{full-unroll=true})",
            run)))
      return signalPassFailure();
    WalkResult res = module.walk([&](gpu::GPUModuleOp kernels) {
      RewritePatternSet rowPatterns(&getContext());
      vector::populateCastAwayVectorLeadingOneDimPatterns(rowPatterns);
      if (failed(applyPatternsGreedily(kernels, std::move(rowPatterns))))
        return WalkResult::interrupt();
      RewritePatternSet patterns(&getContext());
      patterns.add<ApproxToNVVM<math::Exp2Op>>(&getContext(),
                                               "llvm.nvvm.ex2.approx.ftz.f");
      patterns.add<ApproxToNVVM<math::Log2Op>>(&getContext(),
                                               "llvm.nvvm.lg2.approx.ftz.f");
      patterns.add<TruncFToE4M3>(&getContext());
      if (failed(lowerTileVectors(kernels, std::move(patterns))))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (res.wasInterrupted())
      return signalPassFailure();

    // Row transfers -> plain (guarded) vector loads and stores, 16 bytes
    // aligned where the access is a multiple of 16 bytes.
    if (failed(runTextualPipeline(
            module, "gpu.module(convert-vector-to-scf{full-unroll=true})",
            run)))
      return signalPassFailure();
    RewritePatternSet transfers(&getContext());
    vector::populateVectorTransferLoweringPatterns(transfers,
                                                   /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(module, std::move(transfers))))
      return signalPassFailure();
    module.walk([](gpu::GPUModuleOp kernels) { alignRowAccesses(kernels); });

    llvm::StringMap<SmallVector<unsigned>> maps = tensorMapArguments(module);
    module.walk(
        [](gpu::GPUModuleOp kernels) { numberSharedMemorySpace(kernels); });
    std::string target = "nvvm-attach-target{chip=" + chip +
                         " features=" + *ptxFeatures + " O=3},";
    if (failed(runTextualPipeline(
            module,
            target + "gpu.module(convert-nvgpu-to-nvvm,"
                     "expand-strided-metadata,lower-affine,"
                     "convert-vector-to-llvm,convert-scf-to-cf,"
                     "canonicalize,"
                     "convert-gpu-to-nvvm{index-bitwidth=64},"
                     "convert-nvvm-to-llvm,"
                     "reconcile-unrealized-casts,canonicalize,cse)",
            run)))
      return signalPassFailure();
    finishHopperKernels(module, maps);
  }
};

} // namespace

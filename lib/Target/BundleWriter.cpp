//===- BundleWriter.cpp - attn.attention functions -> kernel bundle -------===//
//
// Per function: record which argument is Q, K, V, O, LSE and the
// specialization key, run attn-to-cubin (format=isa) on a module holding only
// that function, then read the launch shape and parameter order off the
// gpu.launch_func the pipeline left in the host function. Kernel arguments
// are always attn.attention's memrefs (attn-lower-to-nvvm sinks every scalar
// into the kernel), passed in MLIR's expanded memref-descriptor ABI.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"
#include "attn/Transforms/StrictOptions.h"

#include "QuantizeFP8.h"
#include "SpillAdvice.h"
#include "StagingDir.h"

#include "Manifest.h"

#include "llvm/ADT/MapVector.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
namespace bundle = ::attn::bundle;
using bundle::Operand;

namespace {

/// Most K/V splits (attn-split-kv's bound).
constexpr int64_t kMaxSplits = 256;

/// The workspace buffers of a lowered function (memref.allocs: split-KV's,
/// the backward's, a quantized kernel's), by value, in order.
using WorkspaceMap = llvm::MapVector<Value, bundle::Workspace>;

/// What the writer knows about a kernel before lowering.
struct KernelSource {
  func::FuncOp func;
  DenseMap<unsigned, Operand> roles; // function argument -> operand
  bundle::FwdKey key;
  // Block sizes asked for (attribute or option; 0: the default), which a
  // variant starts from: its defaults follow its own path and BLOCK_N.
  int64_t requestedBlockM = 0, requestedBlockN = 0;
  bool packGqa = false; // GQA packing (attribute or option)
  bool backward = false; // attn.attention_grad: kind "bwd"
  int64_t askedSplits = 1; // key.splits before fitSplits
};

/// The split count compiled for `splits` asked: at most the K/V blocks of
/// a static seqlen_k. More would be splits without keys, which
/// FlashAttention-2 runs (to no effect, for CTAs and workspace); here the
/// count is cut and the listing says so. An empty O (a static batch, Hq or
/// seqlen_q of 0) is not split (attn-split-kv leaves it alone).
int64_t fitSplits(int64_t splits, const bundle::FwdKey &key,
                  int64_t blockN) {
  if (key.batch == 0 || key.numHeadsQ == 0 || key.seqLenQ == 0)
    return std::min<int64_t>(splits, 1);
  if (splits <= 1 || !key.seqLenK || blockN <= 0)
    return splits;
  return std::clamp<int64_t>(llvm::divideCeil(*key.seqLenK, blockN), 1,
                             splits);
}

/// The dimension with unit stride of a q, k, v or o operand (or a
/// backward's do, dq, dk, dv) of `rank`: D,
/// the last (3 of [B, H, N, D] and of a paged cache, 2 of a varlen
/// kernel's packed [total, H, D]), except Nk (2) for the V of an FP8 kernel
/// (V^T storage: the FP8 wgmma reads V K-major); -1 (none) for the other
/// operands.
int64_t unitDim(Operand role, bool fp8, int64_t rank) {
  if (role != Operand::Q && role != Operand::K && role != Operand::V &&
      role != Operand::O && !bundle::isGradOperand(role))
    return -1;
  return fp8 && role == Operand::V ? 2 : rank - 1;
}

/// True for memref<...> with fully dynamic offset and strides, except a unit
/// stride on `unit` (-1: none).
bool hasDynamicStrides(MemRefType type, int64_t unit) {
  auto layout = dyn_cast<StridedLayoutAttr>(type.getLayout());
  if (!layout || !ShapedType::isDynamic(layout.getOffset()))
    return false;
  ArrayRef<int64_t> strides = layout.getStrides();
  for (auto [i, s] : llvm::enumerate(strides)) {
    bool isUnit = static_cast<int64_t>(i) == unit;
    if (isUnit ? s != 1 : !ShapedType::isDynamic(s))
      return false;
  }
  return true;
}

/// The layout form a bundle kernel takes `rank`-dimensional operands in,
/// with unit stride on `unit` (-1: none).
std::string stridedForm(int64_t rank, int64_t unit) {
  std::string out = "strided<[";
  for (int64_t i = 0; i < rank; ++i)
    out += std::string(i ? ", " : "") + (i == unit ? "1" : "?");
  return out + "], offset: ?>";
}

/// Decides the layout key: all operands identity (contiguous) or all with
/// dynamic strides; q's layout sets the expectation for the others. FP8
/// kernels are strided only (their V is V^T storage). Scalars (a varlen
/// kernel's max_seqlen_q/k) have no layout.
FailureOr<bool> layoutKey(Operation *op, bool fp8,
                          ArrayRef<std::pair<Value, Operand>> operands) {
  auto form = [&](Value v, Operand role) -> std::optional<bool> {
    auto type = cast<MemRefType>(v.getType());
    if (hasDynamicStrides(type, unitDim(role, fp8, type.getRank())))
      return true;
    if (type.getLayout().isIdentity() && !fp8)
      return false;
    return std::nullopt;
  };
  std::optional<bool> strided = form(operands.front().first, Operand::Q);
  for (auto [value, role] : operands) {
    if (bundle::isScalarOperand(role))
      continue;
    std::optional<bool> f = form(value, role);
    if (f && f == strided)
      continue;
    int64_t rank = cast<MemRefType>(value.getType()).getRank();
    std::string expected = stridedForm(rank, unitDim(role, fp8, rank));
    InFlightDiagnostic diag = op->emitOpError("operand '")
                              << bundle::operandName(role) << "' has type "
                              << value.getType() << ", but ";
    if (fp8)
      return diag << "an FP8 bundle kernel takes every operand with dynamic "
                     "offset and strides (here "
                  << expected << "; no contiguous layout)";
    if (!strided)
      return diag << "a bundle kernel needs every operand either with the "
                     "identity layout (contiguous) or with dynamic offset and "
                     "strides ("
                  << expected << ")";
    if (*strided)
      return diag << "q is strided, so every operand needs dynamic offset "
                     "and strides ("
                  << expected << ")";
    return diag << "q is contiguous, so every operand needs the identity "
                   "layout";
  }
  return *strided;
}

std::optional<int64_t> staticDim(Value v, unsigned i) {
  int64_t d = cast<MemRefType>(v.getType()).getDimSize(i);
  return ShapedType::isDynamic(d) ? std::nullopt : std::optional<int64_t>(d);
}

constexpr llvm::StringLiteral kKernelAttrs[] = {
    "attn.block_m", "attn.block_n",  "attn.path",
    "attn.splits",  "attn.pack_gqa", "attn.quantize_fp8"};

/// The FP8 tensor-core attention runs the kernel: e4m3 operands, or bf16
/// ones quantized by attn-quantize-fp8 first.
bool isFp8Attention(const bundle::FwdKey &key) {
  return key.dtype == "e4m3" || key.quantizeFp8.has_value();
}

/// True for the ops a bundle kernel function is made of.
bool isKernelRoot(Operation *op) {
  return isa<AttentionOp, VarlenAttentionOp, AttentionGradOp>(op);
}

/// The function must be `attn.attention` (or `attn.varlen_attention`, or
/// `attn.attention_grad`) + `return` (anything else would be lost: a bundle
/// holds only the kernel) with an identifier for a name.
FailureOr<Operation *> kernelOp(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isKernelRoot(op))
      ops.push_back(op);
  });
  if (ops.size() != 1)
    return func.emitError("a bundle kernel function holds exactly one "
                          "attn.attention, attn.varlen_attention or "
                          "attn.attention_grad, found ")
           << ops.size();
  if (!isKernelName(func.getSymName()))
    return func.emitError("kernel function name '")
           << func.getSymName() << "' must be [A-Za-z_][A-Za-z0-9_]*";
  for (Operation &op : func.getBody().front())
    if (!isKernelRoot(&op) && !isa<func::ReturnOp>(op))
      return op.emitOpError("is not allowed in a bundle kernel function: "
                            "it holds only attn.attention (or "
                            "attn.varlen_attention, or attn.attention_grad) "
                            "and return");
  // A misspelt attribute ("attn.blockm") must not silently give defaults.
  for (NamedAttribute attr : func->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("attn.") &&
        !llvm::is_contained(kKernelAttrs, attr.getName().strref()))
      return func.emitError("unknown attribute '")
             << attr.getName().strref()
             << "'; a bundle kernel function takes attn.block_m, "
                "attn.block_n, attn.path, attn.splits, attn.pack_gqa and "
                "attn.quantize_fp8";
  return ops.front();
}

/// The block size attribute `name` of `func` (an integer in [1, max]), or
/// `dflt` when it is absent.
FailureOr<int64_t> blockSize(func::FuncOp func, StringRef name, int64_t dflt,
                             int64_t max) {
  Attribute attr = func->getAttr(name);
  if (!attr)
    return dflt;
  auto value = dyn_cast<IntegerAttr>(attr);
  if (!value || value.getType().isInteger(1) || value.getInt() < 1 ||
      value.getInt() > max)
    return func.emitError("attribute '")
           << name << "' must be an integer in [1, " << max << "], but got "
           << attr;
  return value.getInt();
}

LogicalResult assignRoles(Operation *op,
                          ArrayRef<std::pair<Value, Operand>> operands,
                          KernelSource &src);
FailureOr<KernelSource> inspectVarlen(func::FuncOp func, VarlenAttentionOp op,
                                      const BundleOptions &opts);
FailureOr<KernelSource> inspectGrad(func::FuncOp func, AttentionGradOp op,
                                    const BundleOptions &opts);
LogicalResult finishInspect(func::FuncOp func, const BundleOptions &opts,
                            bool fp8, bool paged, KernelSource &src);
LogicalResult quantizeKey(func::FuncOp func, AttentionOp op,
                          bundle::FwdKey &key);
void nameQuantizeBuffer(memref::AllocOp alloc, size_t index,
                        bundle::Workspace &buffer);
FailureOr<bundle::Param> workspaceMapParam(nvgpu::TmaCreateDescriptorOp desc,
                                           Value view, int64_t buffer,
                                           gpu::LaunchFuncOp launch);

/// "f16" or "bf16" for the element type of `q`, "" for others.
std::string halfDtypeOf(Value q) {
  Type elt = cast<MemRefType>(q.getType()).getElementType();
  return elt.isF16() ? "f16" : elt.isBF16() ? "bf16" : "";
}

/// The key of a varlen kernel (attn.varlen_attention): packed q, o
/// [total_q, Hq, D], k, v [total_k, Hkv, D] (paged: caches [num_pages,
/// page_size, Hkv, D] with a static page size), lse [Hq, total_q]; B and
/// the lengths come from cu_seqlens_q/k on the device, so batch, seqlen_q
/// and seqlen_k are null and every total (num_pages, max_pages) and B + 1
/// must be dynamic.
LogicalResult varlenKey(VarlenAttentionOp op, bool strided,
                        bundle::FwdKey &key) {
  key.dtype = halfDtypeOf(op.getQ());
  if (key.dtype.empty())
    return op.emitOpError("a varlen bundle kernel takes f16 or bf16 "
                          "operands");
  key.headDim = op.getHeadDim();
  key.causal = op.getCausal();
  key.hasLse = static_cast<bool>(op.getLse());
  key.scale = op.getScaleOrDefault();
  key.numHeadsQ = staticDim(op.getQ(), 1);
  key.numHeadsKV = staticDim(op.getK(), 1);
  key.strided = strided;
  key.varlen = true;
  // The workspace is the runtime's (allocated per call from the manifest's
  // extents); a function that passes its own has no launch form.
  if (op.getOPartial())
    return op.emitOpError("a varlen bundle kernel takes no workspace(...) "
                          "operands: the runtime allocates the split-KV "
                          "workspace (give --splits, a spec's \"splits\" "
                          "or the function's attn.splits attribute)");
  if (Value table = op.getBlockTable()) {
    key.numHeadsKV = staticDim(op.getK(), 2);
    std::optional<int64_t> pageSize = staticDim(op.getK(), 1);
    if (!pageSize)
      return op.emitOpError("a paged bundle kernel needs a static page_size "
                            "(dimension 1 of 'k' and 'v')");
    key.pageSize = *pageSize;
    if (staticDim(table, 0) || staticDim(table, 1))
      return op.emitOpError("a varlen paged bundle kernel takes a dynamic "
                            "block_table [B, max_pages]: the runtime "
                            "matches calls on neither");
  }
  if (staticDim(op.getQ(), 0) || staticDim(op.getK(), 0) ||
      staticDim(op.getCuSeqlensQ(), 0) || staticDim(op.getCuSeqlensK(), 0))
    return op.emitOpError("a varlen bundle kernel takes dynamic total_q "
                          "(dimension 0 of 'q' and 'o'), total_k or "
                          "num_pages (dimension 0 of 'k' and 'v') and B + 1 "
                          "(dimension 0 of 'cu_seqlens_q' and "
                          "'cu_seqlens_k'): the runtime matches calls on "
                          "none of them");
  if (!strided)
    return op.emitOpError("a varlen bundle kernel takes the strided layout "
                          "(every operand with dynamic offset and strides; "
                          "q, k, v, o: strided<[?, ?, 1], offset: ?>)");
  return success();
}

/// Keys that match the same calls (the runtime then treats their kernels
/// as variants): equal but for the schedule (tiles, path, splits) and the
/// quantize options.
bool sameCalls(const bundle::FwdKey &a, const bundle::FwdKey &b) {
  auto calls = [](const bundle::FwdKey &k) {
    return std::tie(k.dtype, k.headDim, k.causal, k.hasLse, k.scale, k.batch,
                    k.numHeadsQ, k.numHeadsKV, k.seqLenQ, k.seqLenK,
                    k.strided, k.pageSize, k.varlen);
  };
  return calls(a) == calls(b) && a.quantizeFp8.has_value() ==
                                     b.quantizeFp8.has_value();
}

/// Variants differ only in schedule (runtime.h): two quantized kernels
/// that take the same calls must quantize alike, or the runtime (or its
/// tuner, by speed) would pick a quantization recipe.
LogicalResult checkQuantizeRecipes(ModuleOp module,
                                   ArrayRef<KernelSource> kernels) {
  for (size_t i = 0; i < kernels.size(); ++i)
    for (size_t j = i + 1; j < kernels.size(); ++j) {
      const bundle::FwdKey &a = kernels[i].key, &b = kernels[j].key;
      if (!a.quantizeFp8 || !sameCalls(a, b))
        continue;
      std::string ra = quantizeRecipe(*a.quantizeFp8),
                  rb = quantizeRecipe(*b.quantizeFp8);
      if (ra != rb)
        return func::FuncOp(kernels[j].func).emitError("kernels ")
               << func::FuncOp(kernels[i].func).getSymName() << " and "
               << func::FuncOp(kernels[j].func).getSymName()
               << " take the same calls but quantize differently (\"" << ra
               << "\" and \"" << rb
               << "\"): the runtime would pick one as a variant of the "
                  "other's schedule; give them different shapes, or one "
                  "set of quantize options";
    }
  return success();
}

/// An FP8 kernel from an .mlir file takes the runtime's descales: f32 [B,
/// Hkv], one per (batch, KV head). Per-block or per-channel descales exist
/// only inside an attn-compile --quantize-fp8 kernel, whose workspaces the
/// manifest describes; the runtime has no call form for them.
LogicalResult checkPerHeadDescales(AttentionOp op) {
  if (op.getQDescaleBlock() || op.getKDescaleBlock())
    return op.emitOpError(
        "an FP8 bundle kernel takes per-head descales [B, Hkv], not "
        "per-block ones (q_descale_block, k_descale_block): those come only "
        "from attn-compile --quantize-fp8 on a bf16 kernel");
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"q_descale", op.getQDescale()},
        {"k_descale", op.getKDescale()},
        {"v_descale", op.getVDescale()}})
    if (cast<MemRefType>(value.getType()).getRank() != 2)
      return op.emitOpError()
             << "operand '" << name << "' has type " << value.getType()
             << ", but an FP8 bundle kernel takes per-head descales [B, Hkv] "
                "(rank 2)";
  return success();
}

FailureOr<KernelSource> inspect(func::FuncOp func, const BundleOptions &opts) {
  FailureOr<Operation *> maybeOp = kernelOp(func);
  if (failed(maybeOp))
    return failure();
  auto varlenOp = dyn_cast<VarlenAttentionOp>(*maybeOp);
  if (varlenOp)
    return inspectVarlen(func, varlenOp, opts);
  if (auto gradOp = dyn_cast<AttentionGradOp>(*maybeOp))
    return inspectGrad(func, gradOp, opts);
  AttentionOp op = cast<AttentionOp>(*maybeOp);
  KernelSource src;
  src.func = func;
  SmallVector<std::pair<Value, Operand>> operands = {{op.getQ(), Operand::Q},
                                                     {op.getK(), Operand::K},
                                                     {op.getV(), Operand::V},
                                                     {op.getO(), Operand::O}};
  if (op.getLse())
    operands.push_back({op.getLse(), Operand::LSE});
  if (op.isFP8()) // the verifier made sure all three are there
    operands.append({{op.getQDescale(), Operand::QDescale},
                     {op.getKDescale(), Operand::KDescale},
                     {op.getVDescale(), Operand::VDescale}});
  if (op.isPaged())
    operands.append({{op.getBlockTable(), Operand::BlockTable},
                     {op.getCacheSeqlens(), Operand::CacheSeqlens}});
  if (failed(assignRoles(op, operands, src)))
    return failure();
  FailureOr<bool> strided = layoutKey(op, op.isFP8(), operands);
  if (failed(strided) || (op.isFP8() && failed(checkPerHeadDescales(op))))
    return failure();

  bundle::FwdKey &key = src.key;
  key.dtype = halfDtypeOf(op.getQ());
  if (key.dtype.empty() && op.isFP8())
    key.dtype = "e4m3";
  if (key.dtype.empty())
    return op.emitOpError("bundle kernels take f16, bf16 or f8E4M3FN "
                          "operands");
  key.headDim = op.getHeadDim();
  key.causal = op.getCausal();
  key.hasLse = static_cast<bool>(op.getLse());
  key.scale = op.getScaleOrDefault();
  key.batch = staticDim(op.getQ(), 0);
  key.numHeadsQ = staticDim(op.getQ(), 1);
  key.seqLenQ = staticDim(op.getQ(), 2);
  key.numHeadsKV = staticDim(op.getK(), 1);
  key.seqLenK = staticDim(op.getK(), 2);
  key.strided = *strided;
  if (op.isPaged()) {
    // Caches [num_pages, page_size, Hkv, D]; each sequence's Nk is a value.
    key.numHeadsKV = staticDim(op.getK(), 2);
    key.seqLenK = std::nullopt;
    std::optional<int64_t> pageSize = staticDim(op.getK(), 1);
    if (!pageSize)
      return op.emitOpError("a paged bundle kernel needs a static page_size "
                            "(dimension 1 of 'k' and 'v')");
    key.pageSize = *pageSize;
    // The key has no max_pages or num_pages: a kernel must take any.
    if (staticDim(op.getBlockTable(), 1) || staticDim(op.getK(), 0))
      return op.emitOpError("a paged bundle kernel takes dynamic max_pages "
                            "(dimension 1 of 'block_table') and num_pages "
                            "(dimension 0 of 'k' and 'v'): the runtime "
                            "matches calls on neither");
    if (!key.strided)
      return op.emitOpError("a paged bundle kernel takes the strided layout "
                            "(every operand with dynamic offset and "
                            "strides)");
  }
  if (failed(quantizeKey(func, op, key)) ||
      failed(finishInspect(func, opts, op.isFP8(), op.isPaged(), src)))
    return failure();
  return src;
}

/// A function with attn.quantize_fp8 (the attn-quantize-fp8 options, a
/// string): a bf16 attn.attention of static shape on contiguous K/V, the
/// options recorded in the key (normalized by compileKernel).
LogicalResult quantizeKey(func::FuncOp func, AttentionOp op,
                          bundle::FwdKey &key) {
  Attribute attr = func->getAttr("attn.quantize_fp8");
  if (!attr)
    return success();
  auto options = dyn_cast<StringAttr>(attr);
  if (!options)
    return func.emitError("attribute 'attn.quantize_fp8' must be a string "
                          "of attn-quantize-fp8 options (\"\" for its "
                          "defaults), but got ")
           << attr;
  if (key.dtype != "bf16")
    return op.emitOpError("a quantized (attn.quantize_fp8) bundle kernel "
                          "takes bf16 q, k, v (attn-quantize-fp8 has no f16 "
                          "or FP8 input), but q is ")
           << key.dtype;
  if (op.isPaged())
    return op.emitOpError("a quantized (attn.quantize_fp8) bundle kernel "
                          "takes contiguous K/V, not paged caches");
  if (key.numStaticLengths() != 5)
    return op.emitOpError("a quantized (attn.quantize_fp8) bundle kernel "
                          "needs static B, Hq, Hkv, Nq and Nk "
                          "(attn-quantize-fp8 takes static shapes)");
  key.quantizeFp8 = options.getValue().str();
  return success();
}

/// Each operand is a distinct function argument (recorded in `src.roles`),
/// and no memref operand has a static length 0.
LogicalResult assignRoles(Operation *op,
                          ArrayRef<std::pair<Value, Operand>> operands,
                          KernelSource &src) {
  for (auto [value, role] : operands) {
    // kernelOp() left no op that could define it: it is an argument.
    auto arg = cast<BlockArgument>(value);
    auto [it, inserted] = src.roles.try_emplace(arg.getArgNumber(), role);
    if (!inserted)
      return op->emitOpError("operands '")
             << bundle::operandName(it->second) << "' and '"
             << bundle::operandName(role)
             << "' are the same argument; a bundle kernel takes a distinct "
                "buffer per operand";
    auto type = dyn_cast<MemRefType>(value.getType());
    for (int64_t d : type ? type.getShape() : ArrayRef<int64_t>())
      if (d == 0)
        return op->emitOpError("operand '")
               << bundle::operandName(role)
               << "' has a static length 0; make it dynamic to accept empty "
                  "calls";
  }
  return success();
}

FailureOr<KernelSource> inspectVarlen(func::FuncOp func, VarlenAttentionOp op,
                                      const BundleOptions &opts) {
  KernelSource src;
  src.func = func;
  SmallVector<std::pair<Value, Operand>> operands = {
      {op.getQ(), Operand::Q},
      {op.getK(), Operand::K},
      {op.getV(), Operand::V},
      {op.getO(), Operand::O}};
  if (op.getLse())
    operands.push_back({op.getLse(), Operand::LSE});
  operands.append({{op.getCuSeqlensQ(), Operand::CuSeqlensQ},
                   {op.getCuSeqlensK(), Operand::CuSeqlensK},
                   {op.getMaxSeqlenQ(), Operand::MaxSeqlenQ},
                   {op.getMaxSeqlenK(), Operand::MaxSeqlenK}});
  bool paged = bool(op.getBlockTable());
  if (paged)
    operands.push_back({op.getBlockTable(), Operand::BlockTable});
  if (func->hasAttr("attn.quantize_fp8"))
    return func.emitError("attribute 'attn.quantize_fp8' takes a batched "
                          "attn.attention; varlen kernels have no quantized "
                          "form");
  if (failed(assignRoles(op, operands, src)))
    return failure();
  FailureOr<bool> strided = layoutKey(op, /*fp8=*/false, operands);
  if (failed(strided) || failed(varlenKey(op, *strided, src.key)) ||
      failed(finishInspect(func, opts, /*fp8=*/false, paged, src)))
    return failure();
  return src;
}

/// The key of a backward kernel (attn.attention_grad on the tensor cores,
/// attn-grad-async-pipeline): f16 or bf16, D 64 or 128, static shapes, the
/// wgmma path. Its block sizes are the pass's, read off the tensor maps
/// after lowering (bwdBlockSizes); the forward's block, split and packing
/// attributes do not apply.
LogicalResult gradKey(func::FuncOp func, AttentionGradOp op, bool strided,
                      const BundleOptions &opts, bundle::FwdKey &key) {
  key.dtype = halfDtypeOf(op.getQ());
  if (key.dtype.empty())
    return op.emitOpError("a backward bundle kernel takes f16 or bf16 "
                          "operands");
  key.headDim = op.getHeadDim();
  if (key.headDim != 64 && key.headDim != 128)
    return op.emitOpError("a backward bundle kernel needs D = 64 or 128 "
                          "(the tensor-core backward keeps dK and dV in "
                          "registers), but D is ")
           << (ShapedType::isDynamic(key.headDim)
                   ? std::string("dynamic")
                   : std::to_string(key.headDim));
  key.causal = op.getCausal();
  key.hasLse = true; // an input of the backward
  key.scale = op.getScaleOrDefault();
  key.batch = staticDim(op.getQ(), 0);
  key.numHeadsQ = staticDim(op.getQ(), 1);
  key.seqLenQ = staticDim(op.getQ(), 2);
  key.numHeadsKV = staticDim(op.getK(), 1);
  key.seqLenK = staticDim(op.getK(), 2);
  key.strided = strided;
  if (key.numStaticLengths() != 5)
    return op.emitOpError("a backward bundle kernel needs static shapes "
                          "(B, Hq, Hkv, Nq and Nk): attn-grad-async-pipeline "
                          "has no dynamic lengths yet");
  for (NamedAttribute attr : func->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("attn.") &&
        attr.getName() != "attn.path")
      return func.emitError("attribute '")
             << attr.getName().strref()
             << "' does not apply to a backward kernel (its block sizes are "
                "attn-grad-async-pipeline's)";
  KernelPath path = resolvePath(opts.path, opts.chip);
  if (Attribute attr = func->getAttr("attn.path")) {
    auto name = dyn_cast<StringAttr>(attr);
    path = name && name.getValue() == "wgmma" ? KernelPath::wgmma
                                              : KernelPath::fma;
  }
  if (path != KernelPath::wgmma)
    return func.emitError("backward kernels (attn.attention_grad) take the "
                          "wgmma path (Hopper tensor cores, TMA); the fma "
                          "path has no GPU backward");
  key.path = "wgmma";
  return success();
}

FailureOr<KernelSource> inspectGrad(func::FuncOp func, AttentionGradOp op,
                                    const BundleOptions &opts) {
  KernelSource src;
  src.func = func;
  src.backward = true;
  SmallVector<std::pair<Value, Operand>> operands = {
      {op.getQ(), Operand::Q},   {op.getK(), Operand::K},
      {op.getV(), Operand::V},   {op.getO(), Operand::O},
      {op.getDO(), Operand::DO}, {op.getLse(), Operand::LSE},
      {op.getDQ(), Operand::DQ}, {op.getDK(), Operand::DK},
      {op.getDV(), Operand::DV}};
  if (failed(assignRoles(op, operands, src)))
    return failure();
  FailureOr<bool> strided = layoutKey(op, /*fp8=*/false, operands);
  if (failed(strided) || failed(gradKey(func, op, *strided, opts, src.key)))
    return failure();
  return src;
}

/// What every kernel kind shares: path, block sizes, splits and GQA packing
/// from the function's attributes and the options.
LogicalResult finishInspect(func::FuncOp func, const BundleOptions &opts,
                            bool fp8, bool paged, KernelSource &src) {
  bundle::FwdKey &key = src.key;
  KernelPath path = resolvePath(opts.path, opts.chip);
  if (auto attr = func->getAttrOfType<StringAttr>("attn.path")) {
    if (attr.getValue() != "wgmma" && attr.getValue() != "fma")
      return func.emitError("attribute 'attn.path' must be \"wgmma\" or "
                            "\"fma\", but got \"")
             << attr.getValue() << "\"";
    path = attr.getValue() == "wgmma" ? KernelPath::wgmma : KernelPath::fma;
  } else if (func->hasAttr("attn.path")) {
    return func.emitError("attribute 'attn.path' must be a string, but got ")
           << func->getAttr("attn.path");
  }
  key.path = path == KernelPath::wgmma ? "wgmma" : "fma";
  if (key.varlen && path != KernelPath::wgmma)
    return func.emitError("varlen kernels (attn.varlen_attention) take the "
                          "wgmma path (Hopper tensor cores, TMA); the fma "
                          "path has no varlen lowering");
  if (fp8 && path != KernelPath::wgmma)
    return func.emitError("FP8 (e4m3) kernels take the wgmma path (Hopper "
                          "tensor cores); the fma path has no FP8 lowering");
  if (key.quantizeFp8 && path != KernelPath::wgmma)
    return func.emitError("quantized (attn.quantize_fp8) kernels take the "
                          "wgmma path (Hopper FP8 tensor cores); the fma "
                          "path has no FP8 lowering");
  if (paged && path != KernelPath::wgmma)
    return func.emitError("paged K/V kernels take the wgmma path (Hopper "
                          "tensor cores, TMA); the fma path has no paged "
                          "lowering");
  FailureOr<int64_t> blockM =
      blockSize(func, "attn.block_m", opts.blockM, kMaxBlockM);
  FailureOr<int64_t> blockN =
      blockSize(func, "attn.block_n", opts.blockN, kMaxBlockN);
  if (failed(blockM) || failed(blockN))
    return failure();
  FailureOr<int64_t> splits =
      blockSize(func, "attn.splits", opts.splits, kMaxSplits);
  if (failed(splits))
    return failure();
  key.splits = *splits;
  if (key.splits > 1 && isFp8Attention(key))
    return func.emitError(key.quantizeFp8
                              ? "quantized (attn.quantize_fp8) kernels "
                                "have no split-KV: splits must be 1, but got "
                              : "FP8 (e4m3) kernels have no split-KV yet: "
                                "splits must be 1, but got ")
           << key.splits;
  src.packGqa = opts.packGqa;
  if (Attribute attr = func->getAttr("attn.pack_gqa")) {
    auto flag = dyn_cast<BoolAttr>(attr);
    if (!flag)
      return func.emitError("attribute 'attn.pack_gqa' must be a bool, but "
                            "got ")
             << attr;
    src.packGqa = flag.getValue();
  }
  if (src.packGqa && key.quantizeFp8)
    return func.emitError("quantized (attn.quantize_fp8) kernels have no "
                          "GQA packing (attn.pack_gqa, a spec's pack_gqa or "
                          "--pack-gqa)");
  if (src.packGqa && (!key.numHeadsQ || !key.numHeadsKV))
    return func.emitError("GQA packing (attn.pack_gqa, a spec's pack_gqa or "
                          "--pack-gqa) needs static num_heads_q and "
                          "num_heads_kv");
  src.requestedBlockM = *blockM;
  src.requestedBlockN = *blockN;
  auto tile = [&] {
    return defaultBlockSizes(path, key.headDim, key.seqLenQ,
                             requestedBlockM(*blockM, key.splits, path),
                             *blockN, isFp8Attention(key));
  };
  src.askedSplits = key.splits;
  key.splits = fitSplits(key.splits, key, tile().second);
  std::tie(key.blockM, key.blockN) = tile();
  return success();
}

/// Adds to `dim` the factors of grid extent `v`: constants, and
/// ceil(size(operand, dim) / divisor) terms, multiplied together.
LogicalResult addGridFactors(Value v, const KernelSource &src,
                             gpu::LaunchFuncOp launch, bundle::GridDim &dim) {
  if (std::optional<int64_t> c = getConstantIntValue(v)) {
    dim.constant *= *c;
    return success();
  }
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return success(succeeded(addGridFactors(mul.getLhs(), src, launch, dim)) &&
                   succeeded(addGridFactors(mul.getRhs(), src, launch, dim)));
  bundle::GridTerm term;
  if (auto div = v.getDefiningOp<arith::CeilDivUIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(div.getRhs());
    if (!c)
      return emitError(
          launch.getLoc(),
          "the lowered kernel's launch: grid divisor is not a constant");
    term.divisor = *c;
    v = div.getLhs();
  }
  // A scalar operand (a varlen kernel's max_seqlen_q): its value.
  if (auto scalar = dyn_cast<BlockArgument>(v);
      scalar && src.roles.count(scalar.getArgNumber()) &&
      bundle::isScalarOperand(src.roles.lookup(scalar.getArgNumber()))) {
    term.operand = src.roles.lookup(scalar.getArgNumber());
    dim.terms.push_back(term);
    return success();
  }
  // size - 1 (a varlen kernel's B = dim(cu_seqlens_q, 0) - 1).
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(sub.getRhs());
    if (c != 1)
      return emitError(launch.getLoc(), "the lowered kernel's launch: grid "
                                        "size subtracts something other than "
                                        "1 from an operand size");
    term.offset = -1;
    v = sub.getLhs();
  }
  auto size = v.getDefiningOp<memref::DimOp>();
  auto arg = size ? dyn_cast<BlockArgument>(size.getSource()) : nullptr;
  std::optional<int64_t> index = size ? size.getConstantIndex() : std::nullopt;
  if (!arg || !index || !src.roles.count(arg.getArgNumber()))
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: grid size is not a product of constants, "
        "ceil(operand size / constant) and (varlen) "
        "ceil(max_seqlen_q / constant) and operand "
        "size - 1");
  term.operand = src.roles.lookup(arg.getArgNumber());
  term.dim = *index;
  dim.terms.push_back(term);
  return success();
}

FailureOr<bundle::GridDim> gridDim(Value v, const KernelSource &src,
                                   gpu::LaunchFuncOp launch) {
  bundle::GridDim dim;
  if (failed(addGridFactors(v, src, launch, dim)))
    return failure();
  return dim;
}

/// True for memref.transpose of a rank-4 operand with permutation `perm`.
bool isTranspose(memref::TransposeOp transpose, ArrayRef<unsigned> perm) {
  AffineMap map = transpose.getPermutation();
  return map == AffineMap::getPermutationMap(perm, map.getContext());
}

/// The operand a tensor-map kernel argument describes, and its box
/// (innermost first): the argument is
/// unrealized_conversion_cast(nvgpu.tma.create.descriptor(cast(operand))),
/// or the same of memref.transpose(operand): (d0, d1, d3, d2) for an FP8
/// V^T operand, recorded as a transposed map (dims N, D, H, B innermost
/// first), or (d0, d2, d1, d3) for a GQA-packed Q or O, or a paged K/V
/// cache [num_pages, page_size, Hkv, D], recorded as a heads_inner map
/// (dims D, H, N, B of [B, H, N, D]; a cache's D, page_size, Hkv, pages).
FailureOr<bundle::Param> tensorMapParam(Value arg, const KernelSource &src,
                                        const WorkspaceMap &workspace,
                                        gpu::LaunchFuncOp launch) {
  auto cast = arg.getDefiningOp<UnrealizedConversionCastOp>();
  auto desc =
      cast ? cast.getInputs()[0].getDefiningOp<nvgpu::TmaCreateDescriptorOp>()
           : nullptr;
  auto ranked =
      desc ? desc.getTensor().getDefiningOp<memref::CastOp>() : nullptr;
  Value source = ranked ? ranked.getSource() : Value();
  // A quantized kernel's e4m3 copy: the view is stated in the manifest.
  if (auto buffer =
          source ? workspace.find(viewedBuffer(source)) : workspace.end();
      buffer != workspace.end())
    return workspaceMapParam(desc, source, buffer - workspace.begin(), launch);
  auto transpose =
      source ? source.getDefiningOp<memref::TransposeOp>() : nullptr;
  if (transpose)
    source = transpose.getIn();
  // Varlen: the packed [total, H, D] operand expanded to [1, total, H, D]
  // (attn-tile), viewed as [1, H, total, D] by a (d0, d2, d1, d3)
  // transpose, or left heads-inner (GQA packing of Q).
  auto expand =
      source ? source.getDefiningOp<memref::ExpandShapeOp>() : nullptr;
  if (expand)
    source = expand.getSrc();
  auto operand = dyn_cast_or_null<BlockArgument>(source);
  if (!operand || !src.roles.count(operand.getArgNumber()))
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: kernel argument is neither an operand of "
        "attn.attention nor its TMA descriptor");
  bundle::Param param;
  param.operand = src.roles.lookup(operand.getArgNumber());
  param.field = bundle::Param::Field::TensorMap;
  StringRef name = bundle::operandName(param.operand);
  if (expand) {
    if (!src.key.varlen || expand.getSrcType().getRank() != 3 ||
        expand.getResultType().getShape()[0] != 1 ||
        (transpose && !isTranspose(transpose, {0, 2, 1, 3})))
      return emitError(
                 launch.getLoc(),
                 "the lowered kernel's launch: the TMA descriptor of operand '")
             << name
             << "' is built from a memref.expand_shape; only a "
                "varlen kernel's [total, H, D] operands expanded to "
                "[1, total, H, D] (then transposed to [1, H, total, "
                "D], or not: GQA packing) have a manifest form";
    param.packed = true;
    param.headsInner = !transpose;
    if (param.headsInner && param.operand != Operand::Q &&
        param.operand != Operand::O)
      return emitError(
                 launch.getLoc(),
                 "the lowered kernel's launch: the TMA descriptor of operand '")
             << name
             << "' is built from a heads-inner view; only q and o "
                "(GQA packing) may be";
    ArrayRef<int64_t> box =
        desc.getTensorMap().getType().getTensor().getShape();
    if (box.size() != 4)
      return emitError(launch.getLoc(),
                       "the lowered kernel's launch: TMA boxes are rank 4");
    std::copy(box.rbegin(), box.rend(), param.box.begin());
    return param;
  }
  bool pagedKV = src.key.pageSize > 0 &&
                 (param.operand == Operand::K || param.operand == Operand::V);
  if (src.key.varlen && !pagedKV)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' in a varlen kernel is not built from the packed "
              "operand's [1, H, total, D] view";
  param.transposed = transpose && isTranspose(transpose, {0, 1, 3, 2});
  param.headsInner = transpose && isTranspose(transpose, {0, 2, 1, 3});
  if (transpose && !param.transposed && !param.headsInner)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name << "' is built from memref.transpose "
           << AffineMapAttr::get(transpose.getPermutation())
           << "; only (d0, d1, d3, d2) (V^T storage) and (d0, d2, d1, d3) "
              "(GQA packing) have a manifest form";
  if (param.transposed && param.operand != Operand::V)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' is built from a transposed view; only v (V^T "
              "storage) may be";
  if (param.headsInner && param.operand != Operand::Q &&
      param.operand != Operand::O && !pagedKV)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' is built from a heads-inner view; only q and o (GQA "
              "packing) and paged k and v may be";
  ArrayRef<int64_t> box = desc.getTensorMap().getType().getTensor().getShape();
  if (box.size() != 4)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: TMA boxes are rank 4 [B, H, N, D]");
  std::copy(box.rbegin(), box.rend(), param.box.begin());
  return param;
}

constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

/// The manifest dtype of a workspace of element type `t` in a kernel of
/// `key` ("" when it cannot be one): f32; in a quantized kernel also i32
/// and e4m3.
StringRef workspaceDtype(Type t, const bundle::FwdKey &key) {
  if (t.isF32())
    return "f32";
  if (!key.quantizeFp8)
    return "";
  return t.isInteger(32) ? "i32" : isa<Float8E4M3FNType>(t) ? "e4m3" : "";
}

/// Each memref.alloc of `func`: contiguous f32 (quantized kernels: also i32
/// and e4m3), its extents constants or functions of the operands' sizes.
/// memref.dealloc is the runtime's (each buffer lives for one call).
FailureOr<WorkspaceMap> readWorkspace(func::FuncOp func,
                                      const KernelSource &src,
                                      gpu::LaunchFuncOp launch) {
  WorkspaceMap buffers;
  WalkResult res = func.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    StringRef dtype = workspaceDtype(type.getElementType(), src.key);
    if (dtype.empty() || !type.getLayout().isIdentity())
      return WalkResult(emitError(
          alloc.getLoc(), src.key.quantizeFp8
                              ? "a quantized kernel's workspace must be "
                                "contiguous f32, i32 or f8E4M3FN"
                              : "a kernel workspace must be contiguous f32"));
    bundle::Workspace buffer;
    buffer.dtype = dtype.str();
    // Split-KV's two buffers; the backward's by position (scratch<i>); a
    // quantized kernel's as quantizeFunction tagged them.
    buffer.name = src.backward
                      ? "scratch" + std::to_string(buffers.size())
                      : buffers.empty() ? "o_partial" : "lse_partial";
    if (src.key.quantizeFp8)
      nameQuantizeBuffer(alloc, buffers.size(), buffer);
    unsigned next = 0;
    for (int64_t d : type.getShape()) {
      FailureOr<bundle::GridDim> extent =
          ShapedType::isDynamic(d)
              ? gridDim(alloc.getDynamicSizes()[next++], src, launch)
              : FailureOr<bundle::GridDim>(bundle::GridDim{d, {}});
      if (failed(extent))
        return WalkResult::interrupt();
      buffer.shape.push_back(*extent);
    }
    buffers.insert({alloc.getResult(), buffer});
    return WalkResult::advance();
  });
  if (res.wasInterrupted())
    return failure();
  return buffers;
}

/// The tensor map of a quantized kernel's e4m3 copy (`buffer` of
/// `workspace`) through `desc`: the view's static sizes and strides
/// (innermost first; the innermost stride 1, offset 0) as TMA dims and
/// strides, the descriptor's box and swizzle. Its out-of-bounds fill must
/// be zero and it must not interleave: what the runtime encodes.
FailureOr<bundle::Param> workspaceMapParam(nvgpu::TmaCreateDescriptorOp desc,
                                           Value view, int64_t buffer,
                                           gpu::LaunchFuncOp launch) {
  auto type = cast<MemRefType>(view.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  nvgpu::TensorMapDescriptorType map = desc.getTensorMap().getType();
  ArrayRef<int64_t> box = map.getTensor().getShape();
  if (type.getRank() != 4 || box.size() != 4 || !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || offset != 0 ||
      strides[3] != 1 || llvm::any_of(strides, ShapedType::isDynamic))
    return emitError(launch.getLoc(),
                     "the lowered kernel's launch: the TMA descriptor of a "
                     "workspace buffer "
                     "needs a rank-4 view of static sizes and "
                     "strides, offset 0 and unit innermost stride, "
                     "but got ")
           << type;
  if (map.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO ||
      map.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: the TMA descriptor of a workspace buffer "
        "must fill out-of-bounds elements with zero "
        "and not interleave (what the runtime "
        "encodes)");
  bundle::Param param;
  param.field = bundle::Param::Field::TensorMap;
  param.workspace = buffer;
  for (int i = 0; i < 4; ++i) {
    param.dims[i] = type.getDimSize(3 - i);
    param.box[i] = box[3 - i];
  }
  for (int i = 0; i < 3; ++i)
    param.strides[i] = strides[2 - i];
  switch (map.getSwizzle()) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
    param.swizzle = 0;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
    param.swizzle = 32;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
    param.swizzle = 64;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
    param.swizzle = 128;
    break;
  }
  return param;
}

/// Fills launch shape and parameters of `entry` from the launch_func.
LogicalResult readLaunch(gpu::LaunchFuncOp launch, const KernelSource &src,
                         const WorkspaceMap &workspace,
                         bundle::KernelLaunch &entry) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value gridValues[] = {grid.x, grid.y, grid.z};
  Value blockValues[] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i) {
    FailureOr<bundle::GridDim> dim = gridDim(gridValues[i], src, launch);
    std::optional<int64_t> threads = getConstantIntValue(blockValues[i]);
    if (failed(dim) || !threads)
      return emitError(launch.getLoc(), "the lowered kernel's launch: needs a "
                                        "static CTA size and a grid that is "
                                        "a function of the operand sizes");
    // CUDA caps grid x at 2^31-1 and y, z at 65535; with size terms the
    // grid is 0 or at least its constant factor.
    int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (dim->constant > limit)
      return emitError(launch.getLoc(), "the lowered kernel's launch: grid ")
             << "xyz"[i] << " is at least " << dim->constant
             << " CTAs, over CUDA's limit of " << limit
             << "; the shapes are too large for one launch";
    entry.grid[i] = *dim;
    entry.threads[i] = *threads;
  }
  if (Value smem = launch.getDynamicSharedMemorySize()) {
    std::optional<int64_t> bytes = getConstantIntValue(smem);
    if (!bytes)
      return emitError(launch.getLoc(), "the lowered kernel's launch: dynamic "
                                        "shared memory must be a constant");
    entry.dynamicSharedBytes = *bytes;
  }
  if (launch.hasClusterSize())
    return emitError(launch.getLoc(),
                     "the lowered kernel's launch: thread-block clusters are "
                     "not supported yet");

  using Field = bundle::Param::Field;
  for (Value arg : launch.getKernelOperands()) {
    if (isa<LLVM::LLVMPointerType>(arg.getType())) {
      FailureOr<bundle::Param> map =
          tensorMapParam(arg, src, workspace, launch);
      if (failed(map))
        return failure();
      entry.params.push_back(*map);
      continue;
    }
    auto blockArg = dyn_cast<BlockArgument>(arg);
    auto buffer = workspace.find(arg);
    if (buffer == workspace.end() &&
        (!blockArg || !src.roles.count(blockArg.getArgNumber())))
      return emitError(
          launch.getLoc(),
          "the lowered kernel's launch: kernel argument is not an operand of "
          "attn.attention or a workspace buffer");
    Operand role = buffer == workspace.end()
                       ? src.roles.lookup(blockArg.getArgNumber())
                       : Operand::Q;
    // A scalar operand (max_seqlen_q): one 64-bit value.
    if (buffer == workspace.end() && bundle::isScalarOperand(role)) {
      entry.params.push_back({role, Field::Value, 0});
      continue;
    }
    int64_t rank = buffer == workspace.end()
                       ? bundle::operandRank(role, src.key)
                       : int64_t(buffer->second.shape.size());
    size_t first = entry.params.size();
    entry.params.push_back({role, Field::AllocatedPtr, 0});
    entry.params.push_back({role, Field::AlignedPtr, 0});
    entry.params.push_back({role, Field::Offset, 0});
    for (int64_t i = 0; i < rank; ++i)
      entry.params.push_back({role, Field::Size, i});
    for (int64_t i = 0; i < rank; ++i)
      entry.params.push_back({role, Field::Stride, i});
    if (buffer != workspace.end())
      for (size_t i = first; i < entry.params.size(); ++i)
        entry.params[i].workspace = buffer - workspace.begin();
  }
  return success();
}

LogicalResult writeFile(Location loc, StringRef path, StringRef contents) {
  std::string err;
  {
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &err);
    if (!out)
      return emitError(loc) << err;
    out->os() << contents;
    out->keep();
  }
  // After ToolOutputFile, which unregisters the path once kept.
  stageFile(path);
  return success();
}

/// The first integer captured by `pattern` in `text`, or 0.
int64_t scan(StringRef text, StringRef pattern, unsigned group = 1) {
  SmallVector<StringRef> matches;
  int64_t value = 0;
  if (llvm::Regex(pattern).match(text, &matches))
    matches[group].getAsInteger(10, value);
  return value;
}

/// Assembles `ptxPath` into `cubinPath` with `ptxas -v` and records the
/// resource usage it reports.
LogicalResult assemble(Location loc, StringRef ptxas, StringRef chip,
                       StringRef ptxPath, StringRef cubinPath,
                       bundle::Resources &res) {
  SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("attn-ptxas", "log", logPath))
    return emitError(loc, "cannot create a temporary file");
  llvm::FileRemover remover(logPath);
  llvm::sys::RemoveFileOnSignal(logPath);
  llvm::scope_exit unregister(
      [&] { llvm::sys::DontRemoveFileOnSignal(logPath); });
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", "-o", cubinPath, ptxPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string err;
  stageFile(cubinPath);
  int rc = runStagingChild(ptxas, args, redirects, &err);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  StringRef text = log ? (*log)->getBuffer() : StringRef();
  if (rc != 0)
    return emitError(loc) << "ptxas (" << ptxas << ") failed on " << ptxPath
                          << " with exit status " << rc
                          << (err.empty() ? "" : ": ") << err << "\n"
                          << text;
  // ptxas -v always reports the registers; a tool that exits 0 without a
  // cubin or a report (--ptxas=/bin/true) is not ptxas.
  if (!llvm::Regex("Used [0-9]+ registers").match(text))
    return emitError(loc) << "ptxas (" << ptxas << ") exited 0 but reported "
                          << "no resource usage for " << ptxPath
                          << " (is it ptxas? it runs as: ptxas -arch=" << chip
                          << " -v -o <cubin> <ptx>)";
  res.registers = scan(text, "Used ([0-9]+) registers");
  res.sharedBytes = scan(text, "([0-9]+) bytes smem");
  res.stackBytes = scan(text, "([0-9]+) bytes stack frame");
  res.spillStoreBytes = scan(text, "([0-9]+) bytes spill stores");
  res.spillLoadBytes = scan(text, "([0-9]+) bytes spill loads");
  // Such as C7513: the wgmmas serialized, each waited for before the next.
  SmallVector<StringRef> loss;
  if (llvm::Regex("\\((C[0-9]+)\\) Potential Performance Loss: ([^\n]*)")
          .match(text, &loss))
    emitWarning(loc) << "ptxas on " << ptxPath << ": " << loss[2] << " ("
                     << loss[1] << "): expect it to be slow";
  return success();
}

FailureOr<std::string> findPtxas(const BundleOptions &opts, Location loc) {
  if (!opts.ptxas.empty())
    return opts.ptxas;
  if (auto path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  if (auto path =
          llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *path;
  return emitError(loc, "ptxas not found in PATH or /usr/local/cuda/bin; "
                        "pass --ptxas=<path>");
}

/// The SHA-256 of the cubin ptxas wrote, once it is a non-empty ELF file.
FailureOr<std::string> hashCubin(Location loc, StringRef cubinPath) {
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!cubin)
    return emitError(loc) << "ptxas wrote no cubin " << cubinPath << ": "
                          << cubin.getError().message();
  StringRef bytes = (*cubin)->getBuffer();
  if (bytes.size() < 64 || !bytes.starts_with("\x7f"
                                              "ELF"))
    return emitError(loc) << "ptxas wrote " << cubinPath
                          << ", which is not an ELF cubin";
  return ::attn::bundle::sha256Hex(bytes);
}

/// Lowers one kernel function and writes its PTX and cubin.
/// The pipeline options of `src` (block sizes and path of its key, the
/// rest from `opts`), or for a variant: the block sizes `src` asked for
/// (not its defaults), then `variant` (pipeline option text) over them,
/// block sizes still unset taking the defaults of the variant's path and
/// BLOCK_N; the key takes the variant's block sizes and path.
LogicalResult pipelineOptions(KernelSource &src, const BundleOptions &opts,
                              StringRef variant,
                              CubinPipelineOptions &pipeline) {
  pipeline.blockM = src.key.blockM;
  pipeline.blockN = src.key.blockN;
  pipeline.path = src.key.path == "wgmma" ? KernelPath::wgmma : KernelPath::fma;
  pipeline.maxMmaN = opts.maxMmaN;
  pipeline.fp8PScaleLog2 = opts.fp8PScaleLog2;
  pipeline.fp8PolyExp2 = opts.fp8PolyExp2;
  pipeline.fp8LazyMax = opts.fp8LazyMax;
  pipeline.fp8LazyHeadroom = opts.fp8LazyHeadroom;
  pipeline.pingPong = opts.pingPong;
  pipeline.overlap = opts.overlap;
  pipeline.stages = opts.stages;
  pipeline.persistentCtas = opts.persistentCtas;
  pipeline.tmaStore = opts.tmaStore;
  pipeline.splits = src.key.splits;
  pipeline.packGqa = src.packGqa;
  pipeline.chip = opts.chip;
  pipeline.features = opts.features;
  if (variant.empty())
    return success();
  pipeline.blockM = src.requestedBlockM;
  pipeline.blockN = src.requestedBlockN;
  std::string error;
  llvm::raw_string_ostream os(error);
  auto parse = [&](llvm::raw_ostream &errors) {
    return pipeline.parseFromString(variant, errors);
  };
  if (failed(parseOptionsStrictly(variant, parse, os)) ||
      pipeline.chip != opts.chip || pipeline.features != opts.features)
    return src.func.emitError("variant \"")
           << variant << "\": "
           << (error.empty() ? "chip and features are the bundle's"
                             : StringRef(error).trim());
  KernelPath path = resolvePath(pipeline.path, pipeline.chip);
  if (!(pipeline.blockM == 0 || isValidBlockM(pipeline.blockM)) ||
      !(pipeline.blockN == 0 || isValidBlockN(pipeline.blockN)))
    return src.func.emitError("variant \"")
           << variant << "\": block-m must be in [1, " << kMaxBlockM
           << "] and block-n in [1, " << kMaxBlockN << "]";
  if (pipeline.splits < 1 || pipeline.splits > kMaxSplits)
    return src.func.emitError("variant \"")
           << variant << "\": splits must be in [1, " << kMaxSplits
           << "] in a bundle (a fixed count)";
  if (pipeline.splits > 1 && isFp8Attention(src.key))
    return src.func.emitError("variant \"")
           << variant << "\": "
           << (src.key.quantizeFp8 ? "quantized (quantize_fp8) kernels have "
                                     "no split-KV"
                                   : "FP8 (e4m3) kernels have no split-KV "
                                     "yet");
  src.key.path = path == KernelPath::wgmma ? "wgmma" : "fma";
  auto tile = [&] {
    return defaultBlockSizes(
        path, src.key.headDim, src.key.seqLenQ,
        requestedBlockM(pipeline.blockM, src.key.splits, path), pipeline.blockN,
        isFp8Attention(src.key));
  };
  src.key.splits = src.askedSplits = pipeline.splits;
  src.key.splits = pipeline.splits =
      fitSplits(pipeline.splits, src.key, tile().second);
  std::tie(src.key.blockM, src.key.blockN) = tile();
  pipeline.blockM = src.key.blockM;
  pipeline.blockN = src.key.blockN;
  return success();
}

/// Writes the PTX of `launch`'s kernel module, assembles it into a cubin and
/// records both, the kernel's name, its hash and its resources in `entry`.
LogicalResult emitLaunch(ModuleOp module, gpu::LaunchFuncOp launch,
                         const BundleOptions &opts, StringRef ptxas,
                         bundle::KernelLaunch &entry) {
  entry.name = launch.getKernelName().str();
  StringRef moduleName = launch.getKernelModuleName().getValue();
  auto binary = module.lookupSymbol<gpu::BinaryOp>(moduleName);
  if (!binary || binary.getObjects().size() != 1)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: expected one PTX object for the kernel");
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  entry.ptx = (moduleName + ".ptx").str();
  entry.cubin = (moduleName + ".cubin").str();
  SmallString<128> ptxPath(opts.outputDir), cubinPath(opts.outputDir);
  llvm::sys::path::append(ptxPath, entry.ptx);
  llvm::sys::path::append(cubinPath, entry.cubin);
  if (failed(writeFile(launch.getLoc(), ptxPath, object.getObject().getValue())))
    return failure();
  if (failed(assemble(launch.getLoc(), ptxas, opts.chip, ptxPath, cubinPath,
                      entry.resources)))
    return failure();
  FailureOr<std::string> hash = hashCubin(launch.getLoc(), cubinPath);
  if (failed(hash))
    return failure();
  entry.cubinSha256 = *hash;
  return success();
}


/// A backward kernel's BLOCK_M and BLOCK_N: the rows of its q and k tensor
/// maps (attn-grad-async-pipeline's tiles).
LogicalResult bwdBlockSizes(func::FuncOp func, bundle::KernelEntry &entry) {
  for (size_t i = 0; i < entry.numLaunches(); ++i)
    for (const bundle::Param &p : entry.launch(i).params) {
      if (p.field != bundle::Param::Field::TensorMap)
        continue;
      if (p.operand == Operand::Q)
        entry.key.blockM = p.box[1];
      if (p.operand == Operand::K)
        entry.key.blockN = p.box[1];
    }
  if (entry.key.blockM == 0 || entry.key.blockN == 0)
    return func.emitError("the lowered backward reads q or k through no "
                          "tensor map");
  return success();
}

/// The name (and e4m3 copy role) of workspace buffer `index` of a quantized
/// kernel: its attn.workspace tag, else scratch<index> (amax).
void nameQuantizeBuffer(memref::AllocOp alloc, size_t index,
                        bundle::Workspace &buffer) {
  buffer.name = "scratch" + std::to_string(index);
  auto tag = alloc->getAttrOfType<StringAttr>(kWorkspaceTag);
  if (!tag)
    return;
  buffer.name = tag.getValue().str();
  if (buffer.dtype == "e4m3")
    buffer.copyOf = quantizedCopyOf(tag.getValue());
}

/// The manifest name of an operand's element type ("" for none it has).
StringRef operandDtype(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  return isa<Float8E4M3FNType>(t) ? "e4m3" : "";
}

/// Each tensor operand's element type and static sizes, off the kernel
/// function's argument types: what the runtime's reader holds the key to.
std::vector<bundle::OperandType> operandTypes(const KernelSource &src) {
  std::vector<bundle::OperandType> types;
  func::FuncOp func = src.func;
  for (auto [arg, role] : src.roles) {
    auto type = dyn_cast<MemRefType>(func.getArgument(arg).getType());
    if (!type) // a scalar (max_seqlen_q/k)
      continue;
    bundle::OperandType t;
    t.operand = role;
    t.dtype = operandDtype(type.getElementType()).str();
    for (int64_t d : type.getShape())
      t.shape.push_back(ShapedType::isDynamic(d) ? std::nullopt
                                                 : std::optional<int64_t>(d));
    types.push_back(std::move(t));
  }
  llvm::sort(types,
             [](const bundle::OperandType &a, const bundle::OperandType &b) {
               return a.operand < b.operand;
             });
  return types;
}

/// Compiles `src` (as kernel `name` when given) with the variant's options;
/// `askedSplits` gets the split count asked for (the key's may be less).
FailureOr<bundle::KernelEntry>
compileKernel(KernelSource src, const BundleOptions &opts, StringRef ptxas,
              int64_t &askedSplits, StringRef variant = "",
              StringRef name = "") {
  MLIRContext *ctx = src.func.getContext();
  CubinPipelineOptions pipeline;
  if (failed(pipelineOptions(src, opts, variant, pipeline)))
    return failure();
  askedSplits = src.askedSplits;
  OwningOpRef<ModuleOp> module = ModuleOp::create(src.func.getLoc());
  auto func = cast<func::FuncOp>(src.func->clone());
  if (!name.empty())
    func.setSymName(name);
  module->push_back(func);
  if (src.key.quantizeFp8 && failed(quantizeFunction(*module, func, src.key)))
    return failure();
  PassManager pm(ctx);
  pipeline.format = CubinPipelineOptions::Format::isa;
  buildCubinPipeline(pm, pipeline);
  if (failed(pm.run(*module))) {
    // The pass's error names the function; say which variant it was.
    if (!variant.empty())
      src.func.emitError("variant \"")
          << variant << "\" (kernel " << name
          << ") does not compile: the error above";
    return failure();
  }

  SmallVector<gpu::LaunchFuncOp> launches;
  func.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
  // Split-KV: the partial attention, then the combine. Backward:
  // preprocess, dQ_acc = 0, dK/dV, dQ. Quantized: the quantize kernels,
  // then the attention (at least two).
  bool backward = src.backward;
  size_t expected = backward ? 4 : src.key.splits > 1 ? 2 : 1;
  if (src.key.quantizeFp8 ? launches.size() < 2 : launches.size() != expected)
    return func.emitError("expected ")
           << (src.key.quantizeFp8 ? "at least 2" : std::to_string(expected))
           << " kernel launch(es) after lowering, got " << launches.size();
  bundle::KernelEntry entry;
  entry.kind = backward ? "bwd" : "fwd";
  entry.key = src.key;
  entry.operands = operandTypes(src);
  entry.variant = variant.str();
  if (src.key.path == "wgmma" && !backward) // the backward's grids are fixed
    entry.persistentCtas = pipeline.persistentCtas;
  FailureOr<WorkspaceMap> workspace = readWorkspace(func, src, launches[0]);
  if (failed(workspace))
    return failure();
  for (auto &[value, buffer] : *workspace)
    entry.workspace.push_back(buffer);
  entry.then.resize(launches.size() - 1);
  for (size_t i = 0; i < launches.size(); ++i) {
    bundle::KernelLaunch &l =
        i == 0 ? static_cast<bundle::KernelLaunch &>(entry) : entry.then[i - 1];
    if (failed(readLaunch(launches[i], src, *workspace, l)) ||
        failed(emitLaunch(*module, launches[i], opts, ptxas, l)))
      return failure();
  }
  if (backward && failed(bwdBlockSizes(func, entry)))
    return failure();
  return entry;
}
} // namespace

LogicalResult mlir::attn::writeBundle(ModuleOp module,
                                      const BundleOptions &opts,
                                      llvm::raw_ostream &log) {
  MLIRContext *ctx = module.getContext();
  // Any error reported, even by a step that then succeeded (upstream
  // serialization), means no bundle.
  size_t errors = 0;
  ScopedDiagnosticHandler countErrors(ctx, [&](Diagnostic &diag) {
    errors += diag.getSeverity() == DiagnosticSeverity::Error;
    return failure(); // printed by the handlers registered before
  });
  std::vector<KernelSource> sources;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool hasAttention = false;
    func.walk([&](Operation *op) { hasAttention |= isKernelRoot(op); });
    if (!hasAttention)
      continue;
    FailureOr<KernelSource> src = inspect(func, opts);
    if (failed(src))
      return failure();
    sources.push_back(*src);
  }
  if (sources.empty()) {
    // The module's location is the input file's line 0: name the file.
    InFlightDiagnostic diag = emitError(UnknownLoc::get(ctx));
    if (auto file = module.getLoc()->findInstanceOf<FileLineColLoc>())
      diag << file.getFilename().getValue() << ": ";
    return diag << "no function holds an attn.attention, "
                   "attn.varlen_attention or attn.attention_grad op";
  }
  if (failed(checkQuantizeRecipes(module, sources)))
    return failure();
  CubinPipelineOptions pipeline;
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(checkCubinPipelineOptions(pipeline, os)))
    return emitError(UnknownLoc::get(ctx)) << error;
  FailureOr<std::string> ptxas = findPtxas(opts, UnknownLoc::get(ctx));
  if (failed(ptxas))
    return failure();
  StagingDir staging;
  if (failed(staging.create(ctx, opts.outputDir)))
    return failure();
  BundleOptions staged = opts;
  staged.outputDir = staging.get().str();

  bundle::Manifest manifest;
  manifest.generator = "attn-compile";
  manifest.chip = opts.chip;
  for (KernelSource &src : sources) {
    // Variants are the forward's schedule options: a backward is compiled
    // once.
    size_t variants = src.backward ? 0 : opts.variants.size();
    for (size_t v = 0; v <= variants; ++v) {
      std::string name =
          v ? llvm::formatv("{0}_v{1}", src.func.getSymName(), v).str() : "";
      int64_t askedSplits;
      FailureOr<bundle::KernelEntry> entry =
          compileKernel(src, staged, *ptxas, askedSplits,
                        v ? StringRef(opts.variants[v - 1]) : "", name);
      if (failed(entry))
        return failure();
      log << "  " << bundle::describe(*entry) << "\n";
      if (askedSplits > entry->key.splits)
        log << llvm::formatv("  note: {0}: {1} splits asked, but seqlen_k {2} "
                             "has {3} K/V block{5} of {4}: compiled with {3} "
                             "(a split without keys would do nothing)\n",
                             entry->name, askedSplits, *entry->key.seqLenK,
                             entry->key.splits, entry->key.blockN,
                             entry->key.splits == 1 ? "" : "s");
      warnSpills(log, *entry);
      manifest.kernels.push_back(std::move(*entry));
    }
  }
  manifest.version = bundle::requiredVersion(manifest);
  llvm::StringSet<> names;
  for (const bundle::KernelEntry &entry : manifest.kernels)
    if (!names.insert(entry.name).second)
      return emitError(UnknownLoc::get(ctx), "two kernels are named ")
             << entry.name << " (a function named like another's variant?)";
  SmallString<128> path(staging.get());
  llvm::sys::path::append(path, "manifest.json");
  std::string text =
      llvm::formatv("{0:2}\n", llvm::json::Value(bundle::toJSON(manifest)));
  // The runtime's own checks, so that a bundle it would refuse is never
  // written (a writer bug, not a user error).
  if (llvm::Expected<bundle::Manifest> parsed = bundle::parseManifest(text);
      !parsed)
    return emitError(UnknownLoc::get(ctx),
                     "internal error: the manifest fails the runtime's "
                     "checks: ")
           << llvm::toString(parsed.takeError());
  if (errors || failed(writeFile(UnknownLoc::get(ctx), path, text)) ||
      failed(staging.commit(ctx)))
    return failure();
  path = opts.outputDir;
  llvm::sys::path::append(path, "manifest.json");
  log << "wrote " << path << " (" << manifest.kernels.size() << " kernels)\n";
  return success();
}

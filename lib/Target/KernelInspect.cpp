//===- KernelInspect.cpp - a function -> key and operand roles ------------===//
//
// What the writer reads off an attn.attention (varlen, grad) function
// before lowering: which argument is Q, K, V, O, LSE, ..., the
// specialization key (dtype, D, lengths, layout, tile, splits, paged,
// varlen, quantized) and the options a variant compiles with.
//
//===----------------------------------------------------------------------===//

#include "KernelSource.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"

#include "QuantizeFP8.h"

#include "attn/Transforms/CtaAttributes.h"
#include "attn/Transforms/SelectConfig.h"
#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::writer {

/// The split count compiled for `splits` asked: at most the K/V blocks of
/// a static seqlen_k. More would be splits without keys, which
/// FlashAttention-2 runs (to no effect, for CTAs and workspace); here the
/// count is cut and the listing says so. An empty O (a static batch, Hq or
/// seqlen_q of 0) is not split (attn-split-kv leaves it alone).
int64_t fitSplits(int64_t splits, const bundle::FwdKey &key, int64_t blockN) {
  if (key.batch == 0 || key.numHeadsQ == 0 || key.seqLenQ == 0)
    return std::min<int64_t>(splits, 1);
  if (splits <= 1 || !key.seqLenK || blockN <= 0)
    return splits;
  return std::clamp<int64_t>(llvm::divideCeil(*key.seqLenK, blockN), 1,
                             splits);
}

FailureOr<std::pair<int64_t, int64_t>>
selectTile(const KernelSource &src, KernelPath path, int64_t blockM,
           int64_t blockN, int64_t splits) {
  ConfigRequest request;
  request.fma = path == KernelPath::fma;
  request.blockM = requestedBlockM(blockM, splits, path);
  request.blockN = blockN;
  if (src.key.quantizeFp8)
    request.computeType = Float8E4M3FNType::get(src.root->getContext());
  FailureOr<ConfigAttr> config = selectConfig(src.root, request);
  if (failed(config))
    return failure();
  return std::pair(config->getBlockM(), config->getBlockN());
}

FailureOr<int64_t> fitSplitsToTile(KernelSource &src, KernelPath path,
                                   int64_t blockM, int64_t blockN) {
  bundle::FwdKey &key = src.key;
  auto tile = selectTile(src, path, blockM, blockN, key.splits);
  if (failed(tile))
    return failure();
  int64_t splits = fitSplits(key.splits, key, tile->second);
  if (splits != key.splits &&
      failed(tile = selectTile(src, path, blockM, blockN, splits)))
    return failure();
  std::tie(key.blockM, key.blockN) = *tile;
  return splits;
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
    kSpecBlockMAttr, kSpecBlockNAttr,  kSpecPathAttr,
    kSpecSplitsAttr,  kSpecPackGqaAttr, kSpecQuantizeFp8Attr};

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
  // Attention variants lower to the host only so far; the manifest key
  // records none of them.
  Operation *root = ops.front();
  auto attention = dyn_cast<AttentionOp>(root);
  auto varlen = dyn_cast<VarlenAttentionOp>(root);
  auto softcap = root->getAttrOfType<FloatAttr>("softcap");
  std::pair<StringRef, bool> variants[] = {
      {"key_mask", root->hasAttr("key_mask")},
      {"softcap", softcap && softcap.getValueAsDouble() != 0}, // 0 is off
      {"sinks",
       (attention && attention.getSinks()) || (varlen && varlen.getSinks())},
      {"alibi", (attention && attention.getAlibiSlopes()) ||
                    (varlen && varlen.getAlibiSlopes())}};
  for (auto [variant, present] : variants)
    if (present)
      return root->emitOpError("bundle kernels take no '")
             << variant
             << "' yet: the manifest records no attention variant (they "
                "lower with attn-opt: --attn-to-cpu, key masks also "
                "--attn-to-cubin)";
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
             << "'; a bundle kernel function takes " << kSpecBlockMAttr
             << ", " << kSpecBlockNAttr << ", " << kSpecPathAttr << ", "
             << kSpecSplitsAttr << ", " << kSpecPackGqaAttr << " and "
             << kSpecQuantizeFp8Attr;
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
                    k.numHeadsQ, k.numHeadsKV, k.seqLenQ, k.seqLenK, k.strided,
                    k.pageSize, k.varlen);
  };
  return calls(a) == calls(b) &&
         a.quantizeFp8.has_value() == b.quantizeFp8.has_value();
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
  src.root = op;
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
  Attribute attr = func->getAttr(kSpecQuantizeFp8Attr);
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
  src.root = op;
  SmallVector<std::pair<Value, Operand>> operands = {{op.getQ(), Operand::Q},
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
  if (func->hasAttr(kSpecQuantizeFp8Attr))
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
        attr.getName() != kSpecPathAttr)
      return func.emitError("attribute '")
             << attr.getName().strref()
             << "' does not apply to a backward kernel (its block sizes are "
                "attn-grad-async-pipeline's)";
  KernelPath path = resolvePath(opts.path, opts.chip);
  if (Attribute attr = func->getAttr(kSpecPathAttr)) {
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
  src.root = op;
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
  if (auto attr = func->getAttrOfType<StringAttr>(kSpecPathAttr)) {
    if (attr.getValue() != "wgmma" && attr.getValue() != "fma")
      return func.emitError("attribute 'attn.path' must be \"wgmma\" or "
                            "\"fma\", but got \"")
             << attr.getValue() << "\"";
    path = attr.getValue() == "wgmma" ? KernelPath::wgmma : KernelPath::fma;
  } else if (func->hasAttr(kSpecPathAttr)) {
    return func.emitError("attribute 'attn.path' must be a string, but got ")
           << func->getAttr(kSpecPathAttr);
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
      blockSize(func, kSpecBlockMAttr, opts.blockM, kMaxBlockM);
  FailureOr<int64_t> blockN =
      blockSize(func, kSpecBlockNAttr, opts.blockN, kMaxBlockN);
  if (failed(blockM) || failed(blockN))
    return failure();
  FailureOr<int64_t> splits =
      blockSize(func, kSpecSplitsAttr, opts.splits, kMaxSplits);
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
  if (Attribute attr = func->getAttr(kSpecPackGqaAttr)) {
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
  src.askedSplits = key.splits;
  FailureOr<int64_t> fitted = fitSplitsToTile(src, path, *blockM, *blockN);
  if (failed(fitted))
    return failure();
  key.splits = *fitted;
  return success();
}

} // namespace mlir::attn::writer

//===- KernelSpec.cpp - kernel specs -> attn.attention functions ----------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Target/Bundle.h"

#include "attn/Transforms/CtaAttributes.h"
#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
namespace json = llvm::json;

static std::string lengthName(const std::optional<int64_t> &len) {
  return len ? std::to_string(*len) : std::string("dyn");
}

std::string KernelSpec::defaultName() const {
  std::string name = llvm::formatv("{0}_{1}_d{2}", backward ? "bwd" : "fwd",
                                   dtype, headDim)
                         .str();
  if (causal)
    name += "_causal";
  if (!lse && !backward)
    name += "_nolse";
  if (!strided)
    name += "_contig";
  name += llvm::formatv("_b{0}_hq{1}_hkv{2}_nq{3}_nk{4}", lengthName(batch),
                        lengthName(numHeadsQ), lengthName(numHeadsKV),
                        lengthName(seqLenQ), lengthName(seqLenK))
              .str();
  if (scale != 0) // the f32 bits: distinct scales give distinct names
    name += llvm::formatv("_s{0:x-}", llvm::bit_cast<uint32_t>(
                                          static_cast<float>(scale)))
                .str();
  if (splits > 1)
    name += llvm::formatv("_split{0}", splits).str();
  // Packing needs a group: Hq / Hkv > 1 (static; the writer refuses
  // dynamic head counts).
  if (packGqa && numHeadsQ && numHeadsKV && *numHeadsQ != *numHeadsKV)
    name += "_gqapack";
  if (pageSize > 0)
    name += llvm::formatv("_page{0}", pageSize).str();
  if (varlen)
    name += "_varlen";
  if (quantizeFp8) // the options are not in the name: one per bundle
    name += "_fp8q";
  return name;
}

/// Lengths are required keys whose value may be null (dynamic).
static bool mapLength(const json::Object &obj, llvm::StringRef key,
                      std::optional<int64_t> &out, json::Path path) {
  const json::Value *value = obj.get(key);
  if (!value) {
    path.field(key).report("missing (an integer, or null for dynamic)");
    return false;
  }
  return fromJSON(*value, out, path.field(key));
}

static constexpr llvm::StringLiteral kSpecKeys[] = {
    "name",        "batch",    "num_heads_q", "num_heads_kv", "seqlen_q",
    "seqlen_k",    "head_dim", "dtype",       "causal",       "lse",
    "scale",       "layout",   "block_m",     "block_n",      "path",
    "splits",      "pack_gqa", "page_size",   "varlen",       "backward",
    "quantize_fp8"};

/// "quantize_fp8": true (the pass's defaults), false (not quantized) or a
/// string of attn-quantize-fp8 options.
static bool mapQuantize(const json::Object &obj, KernelSpec &spec,
                        json::Path path) {
  const json::Value *value = obj.get("quantize_fp8");
  if (!value)
    return true;
  if (std::optional<bool> flag = value->getAsBoolean()) {
    spec.quantizeFp8 = *flag ? std::optional<std::string>("") : std::nullopt;
    return true;
  }
  if (std::optional<llvm::StringRef> text = value->getAsString()) {
    // As for every key: no value stands for the default (true does).
    if (text->trim().empty()) {
      path.field("quantize_fp8")
          .report("must not be empty (true: attn-quantize-fp8's defaults)");
      return false;
    }
    spec.quantizeFp8 = text->str();
    return true;
  }
  path.field("quantize_fp8")
      .report("expected true, false or a string of "
              "attn-quantize-fp8 options");
  return false;
}

bool mlir::attn::fromJSON(const json::Value &value, KernelSpec &spec,
                          json::Path path) {
  json::ObjectMapper o(value, path);
  if (!o)
    return false;
  // A misspelt key ("casual") must not silently give another kernel.
  for (const auto &[key, unused] : *value.getAsObject())
    if (!llvm::is_contained(kSpecKeys, key.str())) {
      path.field(key).report("unknown key");
      return false;
    }
  std::optional<std::string> layout, name;
  std::optional<int64_t> blockM, blockN;
  if (!o.map("head_dim", spec.headDim) || !o.map("dtype", spec.dtype) ||
      !o.mapOptional("name", name) || !o.mapOptional("causal", spec.causal) ||
      !o.mapOptional("lse", spec.lse) || !o.mapOptional("scale", spec.scale) ||
      !o.mapOptional("layout", layout) || !o.mapOptional("block_m", blockM) ||
      !o.mapOptional("block_n", blockN) || !o.mapOptional("path", spec.path) ||
      !o.mapOptional("splits", spec.splits) ||
      !o.mapOptional("pack_gqa", spec.packGqa) ||
      !o.mapOptional("page_size", spec.pageSize) ||
      !o.mapOptional("varlen", spec.varlen) ||
      !o.mapOptional("backward", spec.backward) ||
      !mapQuantize(*value.getAsObject(), spec, path))
    return false;
  if (value.getAsObject()->get("page_size") && spec.pageSize < 1) {
    path.field("page_size").report("must be at least 1 (leave it out for "
                                   "contiguous K/V)");
    return false;
  }
  if (spec.splits < 1 || spec.splits > 256) {
    path.field("splits").report("must be in [1, 256] (1: unsplit)");
    return false;
  }
  if (value.getAsObject()->get("path") && spec.path != "wgmma" && spec.path != "fma") {
    path.field("path").report("expected \"wgmma\" or \"fma\"");
    return false;
  }
  if (layout && *layout != "strided" && *layout != "contiguous") {
    path.field("layout").report("expected \"strided\" or \"contiguous\"");
    return false;
  }
  // Given keys mean what they say: no value stands for "the default".
  static_assert(kMaxBlockM == 1024 && kMaxBlockN == 256,
                "update the messages below");
  if (name && name->empty()) {
    path.field("name").report("must not be empty (leave the key out for the "
                              "default name)");
    return false;
  }
  if (blockM && !isValidBlockM(*blockM)) {
    path.field("block_m").report("must be in [1, 1024]");
    return false;
  }
  if (blockN && !isValidBlockN(*blockN)) {
    path.field("block_n").report("must be in [1, 256]");
    return false;
  }
  spec.name = name.value_or("");
  spec.blockM = blockM.value_or(0);
  spec.blockN = blockN.value_or(0);
  spec.strided = !layout || *layout == "strided";
  const json::Object &obj = *value.getAsObject();
  // Varlen: B and every sequence's lengths are read from cu_seqlens_q/k.
  if (spec.varlen) {
    for (llvm::StringRef key : {"batch", "seqlen_q", "seqlen_k"}) {
      const json::Value *len = obj.get(key);
      if (len && len->kind() != json::Value::Null) {
        path.field(key).report("must be null or left out with varlen (B and "
                               "the lengths are read from cu_seqlens_q/k)");
        return false;
      }
    }
    spec.batch = spec.seqLenQ = spec.seqLenK = std::nullopt;
    return mapLength(obj, "num_heads_q", spec.numHeadsQ, path) &&
           mapLength(obj, "num_heads_kv", spec.numHeadsKV, path);
  }
  if (!mapLength(obj, "batch", spec.batch, path) ||
      !mapLength(obj, "num_heads_q", spec.numHeadsQ, path) ||
      !mapLength(obj, "num_heads_kv", spec.numHeadsKV, path) ||
      !mapLength(obj, "seqlen_q", spec.seqLenQ, path))
    return false;
  // Paged K/V: each sequence's Nk is read from cache_seqlens.
  if (spec.pageSize > 0) {
    const json::Value *nk = obj.get("seqlen_k");
    if (nk && nk->kind() != json::Value::Null) {
      path.field("seqlen_k").report("must be null or left out with page_size "
                                    "(each sequence's length is read from "
                                    "cache_seqlens)");
      return false;
    }
    spec.seqLenK = std::nullopt;
    return true;
  }
  return mapLength(obj, "seqlen_k", spec.seqLenK, path);
}

llvm::Expected<std::vector<KernelSpec>>
mlir::attn::parseKernelSpecs(llvm::StringRef text) {
  llvm::Expected<json::Value> value = ::attn::bundle::parseJSON(text);
  if (!value)
    return value.takeError();
  std::vector<KernelSpec> specs;
  json::Path::Root root("specs");
  if (!fromJSON(*value, specs, root))
    return root.getError();
  if (specs.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the spec array is empty: no kernel to "
                                   "compile");
  return specs;
}

/// memref<d0 x ... x elt> with either the identity layout or fully dynamic
/// strides and offset, except a unit stride on dimension `unitDim` when the
/// rank is above it (D = 3 of a rank-4 operand; Nk = 2 for an FP8 V, stored
/// V^T; D = 2 of a varlen [total, H, D] operand; -1: none).
static MemRefType memrefType(ArrayRef<std::optional<int64_t>> dims,
                             Type element, bool strided, int unitDim = 3) {
  SmallVector<int64_t> shape;
  for (const auto &d : dims)
    shape.push_back(d ? *d : ShapedType::kDynamic);
  if (!strided)
    return MemRefType::get(shape, element);
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  if (unitDim >= 0 && unitDim < static_cast<int>(shape.size()))
    strides[unitDim] = 1;
  auto layout = StridedLayoutAttr::get(element.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, element, layout);
}

bool mlir::attn::isKernelName(StringRef name) {
  return !name.empty() && (llvm::isAlpha(name[0]) || name[0] == '_') &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string KernelSpec::keyName(StringRef key) const {
  if (!fromFlags)
    return key.str();
  if (key == "num_heads_q")
    return "--heads-q";
  if (key == "num_heads_kv")
    return "--heads-kv";
  std::string flag = "--" + key.str();
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

/// `keys` as the user wrote them, "a, b and c".
static std::string keyList(const KernelSpec &spec, ArrayRef<StringRef> keys) {
  std::string list;
  for (auto [i, key] : llvm::enumerate(keys))
    list += (i == 0                 ? ""
             : i + 1 == keys.size() ? " and "
                                    : ", ") +
            spec.keyName(key);
  return list;
}

/// The lengths of a spec by key, in order.
static SmallVector<std::pair<StringRef, std::optional<int64_t>>>
lengths(const KernelSpec &spec) {
  return {{"batch", spec.batch},
          {"num_heads_q", spec.numHeadsQ},
          {"num_heads_kv", spec.numHeadsKV},
          {"seqlen_q", spec.seqLenQ},
          {"seqlen_k", spec.seqLenK}};
}

/// A backward spec: what attn-grad-async-pipeline lowers (static shapes,
/// f16 or bf16, D 64 or 128), none of the forward's variations, and LSE
/// (its input) not turned off.
static LogicalResult verifyBackwardSpec(const KernelSpec &spec, Location loc) {
  auto k = [&](StringRef key) { return spec.keyName(key); };
  if (spec.dtype == "e4m3")
    return emitError(loc) << k("backward") << " takes " << k("dtype")
                          << " f16 or bf16 (there is no FP8 backward)";
  if (spec.headDim != 64 && spec.headDim != 128)
    return emitError(loc) << k("backward") << " takes " << k("head_dim")
                          << " 64 or 128, got " << spec.headDim;
  for (const auto &[key, len] : lengths(spec))
    if (!len)
      return emitError(loc) << k("backward") << " needs static lengths, but "
                            << k(key) << " is dynamic";
  if (!spec.lse)
    return emitError(loc) << k("backward")
                          << " reads the forward's LSE: " << k("lse")
                          << " cannot be false";
  if (spec.splits > 1 || spec.packGqa || spec.pageSize > 0 || spec.varlen ||
      spec.blockM || spec.blockN)
    return emitError(loc) << k("backward") << " takes none of "
                          << keyList(spec, {"splits", "pack_gqa", "page_size",
                                            "varlen", "block_m", "block_n"})
                          << " (its tiles are attn-grad-async-pipeline's)";
  return success();
}

/// A quantized spec: a batched bf16 forward of static shape on contiguous
/// K/V, not split or GQA-packed, the wgmma path, options attn-quantize-fp8
/// parses.
static LogicalResult verifyQuantizeSpec(const KernelSpec &spec, Location loc) {
  auto k = [&](StringRef key) { return spec.keyName(key); };
  if (spec.dtype != "bf16")
    return emitError(loc) << k("quantize_fp8") << " takes " << k("dtype")
                          << " bf16 (attn-quantize-fp8 has no f16 or e4m3 "
                             "input), got '"
                          << spec.dtype << "'";
  if (spec.backward || spec.varlen || spec.pageSize > 0 || spec.splits > 1 ||
      spec.packGqa)
    return emitError(loc) << k("quantize_fp8") << " takes none of "
                          << keyList(spec, {"backward", "varlen", "page_size",
                                            "splits", "pack_gqa"});
  for (const auto &[key, len] : lengths(spec))
    if (!len)
      return emitError(loc) << k("quantize_fp8")
                            << " needs static lengths (attn-quantize-fp8 "
                               "takes static shapes), but "
                            << k(key) << " is dynamic";
  if (spec.path == "fma")
    return emitError(loc) << k("quantize_fp8")
                          << " takes the wgmma path (FP8 tensor cores)";
  PassManager pm(loc.getContext());
  std::string error;
  llvm::raw_string_ostream errors(error);
  if (failed(addQuantizeFP8Pass(pm, *spec.quantizeFp8, 0, 0, nullptr, errors)))
    return emitError(loc) << (spec.fromFlags ? "--quantize-fp8="
                                             : "quantize_fp8 ")
                          << "\"" << *spec.quantizeFp8
                          << "\": " << llvm::StringRef(error).trim();
  return success();
}

/// `x` as %g prints it: as the user most likely wrote it (1e-50, 0.125).
static std::string shortest(double x) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", x);
  return text;
}

/// The spec's scale is the kernel's f32: one that rounds to 0 (which
/// stands for the default) or to infinity is not the scale asked for.
static LogicalResult verifyScale(const KernelSpec &spec, Location loc) {
  std::string given =
      (spec.fromFlags ? "--scale=" : "scale ") + shortest(spec.scale);
  if (!std::isfinite(spec.scale) || spec.scale < 0)
    return emitError(loc) << given
                          << ": the scale must be finite and >= 0 (0, the "
                             "default: 1/sqrt(D))";
  float f = static_cast<float>(spec.scale);
  if (spec.scale != 0 &&
      !(f >= std::numeric_limits<float>::min() && std::isfinite(f)))
    return emitError(loc) << given << " is outside the normal range of f32 ["
                          << shortest(std::numeric_limits<float>::min()) << ", "
                          << shortest(std::numeric_limits<float>::max())
                          << "] (the kernel's scale is an f32; 0, the "
                             "default, means 1/sqrt(D))";
  return success();
}

/// What the op verifier cannot see: lengths, scale and block sizes.
static LogicalResult verifySpec(const KernelSpec &spec, Location loc) {
  auto k = [&](StringRef key) { return spec.keyName(key); };
  if (!spec.name.empty() && !isKernelName(spec.name))
    return emitError(loc) << k("name") << " '" << spec.name
                          << "' must be an identifier ([A-Za-z_][A-Za-z0-9_]*)";
  if (spec.dtype != "f16" && spec.dtype != "bf16" && spec.dtype != "e4m3")
    return emitError(loc) << k("dtype") << " must be f16, bf16 or e4m3, got '"
                          << spec.dtype << "'";
  if (spec.dtype == "e4m3" && !spec.strided)
    return emitError(loc) << k("dtype") << " e4m3 takes only " << k("layout")
                          << " strided (V is read as V^T storage, unit "
                             "stride along Nk); leave out "
                          << k("layout") << " or set it to strided";
  if (spec.dtype == "e4m3" &&
      (spec.headDim < 16 || spec.headDim > 256 || spec.headDim % 16 != 0))
    return emitError(loc) << k("head_dim")
                          << " must be a multiple of 16 in [16, 256] for "
                             "e4m3, got "
                          << spec.headDim;
  for (const auto &[key, len] : lengths(spec)) {
    if (len && *len <= 0)
      return emitError(loc) << k(key) << " must be > 0, got " << *len
                            << " (make it dynamic to accept empty calls)";
    if (len && *len > std::numeric_limits<int32_t>::max())
      return emitError(loc) << k(key) << " must be at most 2^31 - 1, got "
                            << *len << " (make it dynamic or split the call)";
  }
  // The op verifier's checks, in the spec's terms.
  if (spec.numHeadsQ && spec.numHeadsKV && *spec.numHeadsQ % *spec.numHeadsKV)
    return emitError(loc) << k("num_heads_q") << " (" << *spec.numHeadsQ
                          << ") must be a multiple of " << k("num_heads_kv")
                          << " (" << *spec.numHeadsKV
                          << "): GQA/MQA query heads share KV heads evenly";
  if (spec.headDim < 8 || spec.headDim > 256 || spec.headDim % 8 != 0)
    return emitError(loc) << k("head_dim")
                          << " must be a multiple of 8 in [8, 256], got "
                          << spec.headDim;
  if (spec.pageSize < 0 || spec.pageSize > ::attn::bundle::kMaxPageSize)
    return emitError(loc) << k("page_size") << " must be in [1, "
                          << ::attn::bundle::kMaxPageSize
                          << "] (0: contiguous K/V), got " << spec.pageSize;
  if (spec.pageSize > 0 && (spec.dtype == "e4m3" || !spec.strided))
    return emitError(loc) << k("page_size") << " (paged K/V) takes "
                          << k("dtype") << " f16 or bf16 and " << k("layout")
                          << " strided";
  if (spec.varlen && (spec.dtype == "e4m3" || !spec.strided))
    return emitError(loc) << k("varlen") << " takes " << k("dtype")
                          << " f16 or bf16 and " << k("layout") << " strided";
  if (spec.varlen && (spec.batch || spec.seqLenQ || spec.seqLenK))
    return emitError(loc) << k("varlen") << " needs dynamic "
                          << keyList(spec, {"batch", "seqlen_q", "seqlen_k"})
                          << " (read from cu_seqlens_q/k)";
  if (failed(verifyScale(spec, loc)))
    return failure();
  if (spec.backward && failed(verifyBackwardSpec(spec, loc)))
    return failure();
  if (spec.quantizeFp8 && failed(verifyQuantizeSpec(spec, loc)))
    return failure();
  if ((spec.blockM && !isValidBlockM(spec.blockM)) ||
      (spec.blockN && !isValidBlockN(spec.blockN)))
    return emitError(loc) << k("block_m") << " must be in [1, " << kMaxBlockM
                          << "] and " << k("block_n") << " in [1, "
                          << kMaxBlockN << "]";
  return success();
}

/// Appends to `module` the kernel function `name` taking `args`, with the
/// spec's attn.* attributes, and leaves `builder` at its entry block.
static func::FuncOp createKernelFunc(ModuleOp module, Location loc,
                                     StringRef name, TypeRange args,
                                     const KernelSpec &spec,
                                     OpBuilder &builder) {
  builder.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(builder, loc, name, builder.getFunctionType(args, {}));
  if (spec.blockM > 0)
    func->setAttr(kSpecBlockMAttr, builder.getI64IntegerAttr(spec.blockM));
  if (spec.blockN > 0)
    func->setAttr(kSpecBlockNAttr, builder.getI64IntegerAttr(spec.blockN));
  if (!spec.path.empty())
    func->setAttr(kSpecPathAttr, builder.getStringAttr(spec.path));
  if (spec.splits > 1)
    func->setAttr(kSpecSplitsAttr, builder.getI64IntegerAttr(spec.splits));
  if (spec.packGqa)
    func->setAttr(kSpecPackGqaAttr, builder.getBoolAttr(true));
  if (spec.quantizeFp8)
    func->setAttr(kSpecQuantizeFp8Attr,
                  builder.getStringAttr(*spec.quantizeFp8));
  builder.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

/// The spec's softmax scale (null: 1/sqrt(D)).
static FloatAttr scaleAttr(const KernelSpec &spec, Builder &builder) {
  return spec.scale != 0 ? builder.getF32FloatAttr(spec.scale) : FloatAttr();
}

/// func(%q: [total_q, Hq, D], %k, %v: [total_k, Hkv, D], %cu_q, %cu_k:
/// [B + 1] i32, %max_q, %max_k: index, %o: [total_q, Hq, D][, %lse: [Hq,
/// total_q] f32]) holding one attn.varlen_attention, strided layouts.
static LogicalResult buildVarlenFunction(ModuleOp module,
                                         const KernelSpec &spec,
                                         StringRef name, Location loc) {
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  Type elt = spec.dtype == "f16" ? Type(b.getF16Type()) : b.getBF16Type();
  std::optional<int64_t> d = spec.headDim;
  Type q = memrefType({std::nullopt, spec.numHeadsQ, d}, elt, true, 2);
  // Paged K/V: caches [num_pages, page_size, Hkv, D].
  bool paged = spec.pageSize > 0;
  Type kv = paged ? memrefType({std::nullopt, spec.pageSize, spec.numHeadsKV,
                                d},
                               elt, true)
                  : memrefType({std::nullopt, spec.numHeadsKV, d}, elt, true,
                               2);
  Type cu = memrefType({std::nullopt}, b.getI32Type(), true, -1);
  SmallVector<Type> args = {q, kv, kv, cu, cu, b.getIndexType(),
                            b.getIndexType(), q};
  if (spec.lse)
    args.push_back(
        memrefType({spec.numHeadsQ, std::nullopt}, b.getF32Type(), true, -1));
  // Paged: block_table [B, max_pages] i32, last.
  if (paged)
    args.push_back(
        memrefType({std::nullopt, std::nullopt}, b.getI32Type(), true, -1));
  OpBuilder builder(module.getContext());
  func::FuncOp func = createKernelFunc(module, loc, name, args, spec, builder);
  ValueRange a = func.getArguments();
  FloatAttr scale = scaleAttr(spec, builder);
  auto op = VarlenAttentionOp::create(
      builder, loc, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
      paged ? a.back() : Value(), a[7], spec.lse ? a[8] : Value(),
      /*o_partial=*/Value(), /*lse_partial=*/Value(), /*sinks=*/Value(),
      /*alibi_slopes=*/Value(), scale, spec.causal,
      /*key_mask=*/nullptr, /*softcap=*/nullptr);
  func::ReturnOp::create(builder, loc);
  return verify(op);
}

/// func(%q, %k, %v, %o, %dout, %lse, %dq, %dk, %dv) holding one
/// attn.attention_grad: q, o, dout, dq [B, Hq, Nq, D], k, v, dk, dv [B,
/// Hkv, Nk, D], lse [B, Hq, Nq] f32, in the spec's layout.
static LogicalResult buildGradFunction(ModuleOp module, const KernelSpec &spec,
                                       StringRef name, Location loc) {
  Builder b(module.getContext());
  Type elt = spec.dtype == "f16" ? Type(b.getF16Type()) : b.getBF16Type();
  std::optional<int64_t> d = spec.headDim;
  Type q = memrefType({spec.batch, spec.numHeadsQ, spec.seqLenQ, d}, elt,
                      spec.strided);
  Type kv = memrefType({spec.batch, spec.numHeadsKV, spec.seqLenK, d}, elt,
                       spec.strided);
  Type lse = memrefType({spec.batch, spec.numHeadsQ, spec.seqLenQ},
                        b.getF32Type(), spec.strided);
  SmallVector<Type> args = {q, kv, kv, q, q, lse, q, kv, kv};
  OpBuilder builder(module.getContext());
  func::FuncOp func = createKernelFunc(module, loc, name, args, spec, builder);
  ValueRange a = func.getArguments();
  auto op = AttentionGradOp::create(builder, loc, a[0], a[1], a[2], a[3], a[4],
                                    a[5], a[6], a[7], a[8],
                                    scaleAttr(spec, builder), spec.causal);
  func::ReturnOp::create(builder, loc);
  return verify(op);
}

LogicalResult mlir::attn::buildKernelFunction(ModuleOp module,
                                              const KernelSpec &spec) {
  MLIRContext *ctx = module.getContext();
  std::string name = spec.name.empty() ? spec.defaultName() : spec.name;
  // Errors about the spec, and later about its kernel, name where it came
  // from (a spec file's entry; the flags: the tool).
  Location loc =
      spec.origin.empty()
          ? Location(UnknownLoc::get(ctx))
          : Location(NameLoc::get(StringAttr::get(ctx, spec.origin)));
  if (failed(verifySpec(spec, loc)))
    return failure();
  if (module.lookupSymbol(name))
    return emitError(loc) << "two kernels are named '" << name << "'";
  if (spec.varlen)
    return buildVarlenFunction(module, spec, name, loc);
  if (spec.backward)
    return buildGradFunction(module, spec, name, loc);
  Builder b(ctx);
  bool fp8 = spec.dtype == "e4m3";
  Type elt = spec.dtype == "f16" ? Type(b.getF16Type())
             : fp8              ? Type(b.getType<Float8E4M3FNType>())
                                : b.getBF16Type();
  std::optional<int64_t> d = spec.headDim;
  SmallVector<std::optional<int64_t>> qShape = {spec.batch, spec.numHeadsQ,
                                                spec.seqLenQ, d};
  SmallVector<std::optional<int64_t>> kvShape = {spec.batch, spec.numHeadsKV,
                                                 spec.seqLenK, d};
  // Paged K/V: caches [num_pages, page_size, Hkv, D].
  bool paged = spec.pageSize > 0;
  if (paged)
    kvShape = {std::nullopt, spec.pageSize, spec.numHeadsKV, d};
  Type q = memrefType(qShape, elt, spec.strided);
  Type k = memrefType(kvShape, elt, spec.strided);
  // FP8: V^T storage (the FP8 wgmma reads V K-major) and a bf16 O.
  Type v = memrefType(kvShape, elt, spec.strided, fp8 ? 2 : 3);
  Type o = memrefType(qShape, fp8 ? b.getBF16Type() : elt, spec.strided);
  SmallVector<Type> args = {q, k, v, o};
  if (spec.lse)
    args.push_back(memrefType({spec.batch, spec.numHeadsQ, spec.seqLenQ},
                              b.getF32Type(), spec.strided));
  // FP8: q_descale, k_descale, v_descale [B, Hkv], after every other operand.
  if (fp8)
    args.append(3, memrefType({spec.batch, spec.numHeadsKV}, b.getF32Type(),
                              spec.strided));
  // Paged: block_table [B, max_pages] and cache_seqlens [B], i32, last.
  if (paged)
    args.append({memrefType({spec.batch, std::nullopt}, b.getI32Type(),
                            spec.strided),
                 memrefType({spec.batch}, b.getI32Type(), spec.strided)});

  OpBuilder builder(module.getContext());
  func::FuncOp func = createKernelFunc(module, loc, name, args, spec, builder);
  ValueRange a = func.getArguments();
  FloatAttr scale = scaleAttr(spec, builder);
  Value descales[3] = {};
  if (fp8)
    for (int i = 0; i < 3; ++i)
      descales[i] = a[a.size() - 3 + i];
  Value blockTable = paged ? a[a.size() - 2] : Value();
  Value cacheSeqlens = paged ? a[a.size() - 1] : Value();
  auto op = AttentionOp::create(
      builder, loc, a[0], a[1], a[2], a[3], spec.lse ? a[4] : Value(),
      descales[0], descales[1], descales[2], blockTable, cacheSeqlens,
      /*sinks=*/Value(), /*alibi_slopes=*/Value(), scale, spec.causal,
      /*key_mask=*/nullptr,
      /*q_descale_block=*/nullptr,
      /*k_descale_block=*/nullptr,
      /*softcap=*/nullptr);
  func::ReturnOp::create(builder, loc);
  return verify(op);
}

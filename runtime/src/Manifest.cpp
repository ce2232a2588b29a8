//===- Manifest.cpp - manifest.json encoding and checks ------------------===//

#include "Manifest.h"
#include "ManifestChecks.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"

#include <cmath>

using namespace attn::bundle;
namespace json = llvm::json;
using llvm::StringRef;

namespace attn::bundle {

StringRef operandName(Operand operand) {
  switch (operand) {
  case Operand::Q:
    return "q";
  case Operand::K:
    return "k";
  case Operand::V:
    return "v";
  case Operand::O:
    return "o";
  case Operand::LSE:
    return "lse";
  case Operand::QDescale:
    return "q_descale";
  case Operand::KDescale:
    return "k_descale";
  case Operand::VDescale:
    return "v_descale";
  case Operand::BlockTable:
    return "block_table";
  case Operand::CacheSeqlens:
    return "cache_seqlens";
  case Operand::CuSeqlensQ:
    return "cu_seqlens_q";
  case Operand::CuSeqlensK:
    return "cu_seqlens_k";
  case Operand::MaxSeqlenQ:
    return "max_seqlen_q";
  case Operand::MaxSeqlenK:
    return "max_seqlen_k";
  case Operand::DO:
    return "dout";
  case Operand::DQ:
    return "dq";
  case Operand::DK:
    return "dk";
  case Operand::DV:
    return "dv";
  }
  return "?";
}

std::optional<Operand> parseOperand(StringRef name) {
  return llvm::StringSwitch<std::optional<Operand>>(name)
      .Case("q", Operand::Q)
      .Case("k", Operand::K)
      .Case("v", Operand::V)
      .Case("o", Operand::O)
      .Case("lse", Operand::LSE)
      .Case("q_descale", Operand::QDescale)
      .Case("k_descale", Operand::KDescale)
      .Case("v_descale", Operand::VDescale)
      .Case("block_table", Operand::BlockTable)
      .Case("cache_seqlens", Operand::CacheSeqlens)
      .Case("cu_seqlens_q", Operand::CuSeqlensQ)
      .Case("cu_seqlens_k", Operand::CuSeqlensK)
      .Case("max_seqlen_q", Operand::MaxSeqlenQ)
      .Case("max_seqlen_k", Operand::MaxSeqlenK)
      .Case("dout", Operand::DO)
      .Case("dq", Operand::DQ)
      .Case("dk", Operand::DK)
      .Case("dv", Operand::DV)
      .Default(std::nullopt);
}

bool isDescale(Operand operand) {
  return operand == Operand::QDescale || operand == Operand::KDescale ||
         operand == Operand::VDescale;
}

bool isPagedOperand(Operand operand) {
  return operand == Operand::BlockTable || operand == Operand::CacheSeqlens;
}

bool isVarlenOperand(Operand operand) {
  return operand == Operand::CuSeqlensQ || operand == Operand::CuSeqlensK ||
         isScalarOperand(operand);
}

bool isScalarOperand(Operand operand) {
  return operand == Operand::MaxSeqlenQ || operand == Operand::MaxSeqlenK;
}

bool isGradOperand(Operand operand) {
  return operand == Operand::DO || operand == Operand::DQ ||
         operand == Operand::DK || operand == Operand::DV;
}

int64_t operandRank(Operand operand, bool varlen, bool paged) {
  switch (operand) {
  case Operand::K:
  case Operand::V:
    return varlen && !paged ? 3 : 4;
  case Operand::LSE:
    return varlen ? 2 : 3;
  case Operand::BlockTable:
    return 2;
  case Operand::CacheSeqlens:
  case Operand::CuSeqlensQ:
  case Operand::CuSeqlensK:
    return 1;
  case Operand::MaxSeqlenQ:
  case Operand::MaxSeqlenK:
    return 0;
  default:
    return isDescale(operand) ? 2 : varlen ? 3 : 4;
  }
}

StringRef fieldName(Param::Field field) {
  switch (field) {
  case Param::Field::AllocatedPtr:
    return "allocated_ptr";
  case Param::Field::AlignedPtr:
    return "aligned_ptr";
  case Param::Field::Offset:
    return "offset";
  case Param::Field::Size:
    return "size";
  case Param::Field::Stride:
    return "stride";
  case Param::Field::TensorMap:
    return "tensor_map";
  case Param::Field::Value:
    return "value";
  }
  return "?";
}

int64_t workspaceElementBytes(StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases({"f32", "i32"}, 4)
      .Case("e4m3", 1)
      .Default(0);
}

int64_t operandRank(Operand operand, const FwdKey &key) {
  return operandRank(operand, key.varlen, key.pageSize > 0);
}

int FwdKey::numStaticLengths() const {
  int n = 0;
  for (const auto &len : {batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK})
    n += len.has_value();
  return n;
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

static json::Value length(const std::optional<int64_t> &len) {
  return len ? json::Value(*len) : json::Value(nullptr);
}

static json::Value toJSON(const FwdKey &key) {
  return json::Object{{"dtype", key.dtype},
                      {"head_dim", key.headDim},
                      {"causal", key.causal},
                      {"lse", key.hasLse},
                      {"scale", key.scale},
                      {"batch", length(key.batch)},
                      {"num_heads_q", length(key.numHeadsQ)},
                      {"num_heads_kv", length(key.numHeadsKV)},
                      {"seqlen_q", length(key.seqLenQ)},
                      {"seqlen_k", length(key.seqLenK)},
                      {"layout", key.strided ? "strided" : "contiguous"},
                      {"block_m", key.blockM},
                      {"block_n", key.blockN},
                      {"path", key.path}};
}

static json::Value keyJSON(const FwdKey &key) {
  json::Value out = toJSON(key);
  if (key.splits != 1)
    (*out.getAsObject())["splits"] = key.splits;
  if (key.pageSize != 0)
    (*out.getAsObject())["page_size"] = key.pageSize;
  if (key.varlen)
    (*out.getAsObject())["varlen"] = true;
  if (key.quantizeFp8)
    (*out.getAsObject())["quantize_fp8"] = *key.quantizeFp8;
  return out;
}

static json::Value toJSON(const GridDim &dim) {
  json::Array terms;
  for (const GridTerm &t : dim.terms) {
    json::Object term{{"operand", operandName(t.operand)},
                      {"divisor", t.divisor}};
    if (!isScalarOperand(t.operand)) // a scalar has no dimension
      term["dim"] = t.dim;
    if (t.offset != 0)
      term["offset"] = t.offset;
    terms.push_back(std::move(term));
  }
  return json::Object{{"constant", dim.constant}, {"terms", std::move(terms)}};
}

static json::Value toJSON(const Param &param) {
  json::Object obj{{"field", fieldName(param.field)}};
  if (param.workspace >= 0)
    obj["workspace"] = param.workspace;
  else
    obj["operand"] = operandName(param.operand);
  if (param.field == Param::Field::Size || param.field == Param::Field::Stride)
    obj["index"] = param.index;
  if (param.field == Param::Field::TensorMap)
    obj["box"] = json::Array(param.box);
  if (param.field == Param::Field::TensorMap && param.workspace >= 0) {
    obj["dims"] = json::Array(param.dims);
    obj["strides"] = json::Array(param.strides);
    obj["swizzle"] = param.swizzle;
  }
  if (param.transposed)
    obj["transposed"] = true;
  if (param.headsInner)
    obj["heads_inner"] = true;
  if (param.packed)
    obj["packed"] = true;
  return obj;
}

/// The fields of one launch (a kernel entry's own, or one of `then`).
static json::Object toJSON(const KernelLaunch &kernel) {
  json::Array grid, params;
  for (const GridDim &dim : kernel.grid)
    grid.push_back(toJSON(dim));
  for (const Param &param : kernel.params)
    params.push_back(toJSON(param));
  const Resources &r = kernel.resources;
  return json::Object{
      {"name", kernel.name},
      {"cubin", kernel.cubin},
      {"cubin_sha256", kernel.cubinSha256},
      {"ptx", kernel.ptx},
      {"launch",
       json::Object{{"grid", std::move(grid)},
                    {"threads", json::Array(kernel.threads)},
                    {"dynamic_shared_bytes", kernel.dynamicSharedBytes},
                    {"cluster", json::Array(kernel.cluster)}}},
      {"params", std::move(params)},
      {"resources", json::Object{{"registers", r.registers},
                                 {"shared_bytes", r.sharedBytes},
                                 {"stack_bytes", r.stackBytes},
                                 {"spill_store_bytes", r.spillStoreBytes},
                                 {"spill_load_bytes", r.spillLoadBytes}}}};
}

static json::Value toJSON(const Workspace &buffer) {
  json::Array shape;
  for (const GridDim &dim : buffer.shape)
    shape.push_back(toJSON(dim));
  json::Object out{{"name", buffer.name}, {"shape", std::move(shape)}};
  if (buffer.dtype != "f32")
    out["dtype"] = buffer.dtype;
  if (buffer.copyOf)
    out["copy_of"] = operandName(*buffer.copyOf);
  return out;
}

static json::Value toJSON(const KernelEntry &kernel) {
  json::Object out = toJSON(static_cast<const KernelLaunch &>(kernel));
  out["kind"] = kernel.kind;
  out["key"] = keyJSON(kernel.key);
  if (!kernel.variant.empty())
    out["variant"] = kernel.variant;
  if (kernel.persistentCtas > 0)
    out["persistent_ctas"] = kernel.persistentCtas;
  if (!kernel.then.empty()) {
    json::Array then;
    for (const KernelLaunch &launch : kernel.then)
      then.push_back(toJSON(launch));
    out["then"] = std::move(then);
  }
  if (!kernel.workspace.empty()) {
    json::Array buffers;
    for (const Workspace &buffer : kernel.workspace)
      buffers.push_back(toJSON(buffer));
    out["workspace"] = std::move(buffers);
  }
  if (!kernel.operands.empty())
    out["operands"] = operandsToJSON(kernel.operands);
  return out;
}

/// Whether `kernel` uses what version 4 added.
static bool needsVersion4(const KernelEntry &kernel) {
  if (kernel.isQuantized())
    return true;
  for (const Workspace &buffer : kernel.workspace)
    if (buffer.dtype != "f32" || buffer.copyOf)
      return true;
  for (size_t i = 0; i < kernel.numLaunches(); ++i)
    for (const Param &p : kernel.launch(i).params)
      if (p.workspace >= 0 && p.field == Param::Field::TensorMap)
        return true;
  return false;
}

int64_t requiredVersion(const Manifest &manifest) {
  for (const KernelEntry &kernel : manifest.kernels)
    if (needsVersion4(kernel))
      return 4;
  for (const KernelEntry &kernel : manifest.kernels)
    if (!kernel.then.empty() || !kernel.workspace.empty() ||
        kernel.key.splits != 1)
      return 3;
  return 2;
}

json::Value toJSON(const Manifest &manifest) {
  json::Array kernels;
  for (const KernelEntry &kernel : manifest.kernels)
    kernels.push_back(toJSON(kernel));
  return json::Object{{"version", manifest.version},
                      {"generator", manifest.generator},
                      {"chip", manifest.chip},
                      {"kernels", std::move(kernels)}};
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

/// A length is required but may be null (dynamic).
static bool mapLength(const json::Value &value, StringRef prop,
                      std::optional<int64_t> &out, json::Path path) {
  const json::Object *obj = value.getAsObject();
  const json::Value *len = obj ? obj->get(prop) : nullptr;
  if (!len) {
    path.field(prop).report("missing value (an integer, or null for dynamic)");
    return false;
  }
  return fromJSON(*len, out, path.field(prop));
}

static bool fromJSON(const json::Value &value, Operand &out, json::Path path) {
  std::string name;
  if (!fromJSON(value, name, path))
    return false;
  if (auto op = parseOperand(name)) {
    out = *op;
    return true;
  }
  path.report("expected one of q, k, v, o, lse, q_descale, k_descale, "
              "v_descale, block_table, cache_seqlens, cu_seqlens_q, "
              "cu_seqlens_k, max_seqlen_q, max_seqlen_k, dout, dq, dk, dv");
  return false;
}

static bool fromJSON(const json::Value &value, FwdKey &key, json::Path path) {
  json::ObjectMapper o(value, path);
  std::string layout;
  std::optional<int64_t> pageSize;
  if (!o || !o.map("dtype", key.dtype) || !o.map("head_dim", key.headDim) ||
      !o.map("causal", key.causal) || !o.map("lse", key.hasLse) ||
      !o.map("scale", key.scale) || !o.map("layout", layout) ||
      !o.map("block_m", key.blockM) || !o.map("block_n", key.blockN) ||
      !o.map("path", key.path) || !o.mapOptional("splits", key.splits) ||
      !o.mapOptional("page_size", pageSize) ||
      !o.mapOptional("varlen", key.varlen) ||
      !o.mapOptional("quantize_fp8", key.quantizeFp8))
    return false;
  // Absent is contiguous K/V; 0 written would read as that too.
  if (pageSize && *pageSize == 0) {
    path.field("page_size")
        .report("must be in [1, 1048576]: a kernel on "
                "contiguous K/V has no page_size");
    return false;
  }
  key.pageSize = pageSize.value_or(0);
  if (key.path != "fma" && key.path != "wgmma") {
    path.field("path").report("expected \"fma\" or \"wgmma\"");
    return false;
  }
  if (layout != "strided" && layout != "contiguous") {
    path.field("layout").report("expected \"strided\" or \"contiguous\"");
    return false;
  }
  key.strided = layout == "strided";
  return mapLength(value, "batch", key.batch, path) &&
         mapLength(value, "num_heads_q", key.numHeadsQ, path) &&
         mapLength(value, "num_heads_kv", key.numHeadsKV, path) &&
         mapLength(value, "seqlen_q", key.seqLenQ, path) &&
         mapLength(value, "seqlen_k", key.seqLenK, path);
}

static bool fromJSON(const json::Value &value, GridTerm &term,
                     json::Path path) {
  json::ObjectMapper o(value, path);
  term.dim = term.offset = 0;
  if (!o || !o.map("operand", term.operand) ||
      !o.map("divisor", term.divisor) || !o.mapOptional("offset", term.offset))
    return false;
  // A scalar (max_seqlen_q) has no dimension; every other operand names one.
  if (isScalarOperand(term.operand)) {
    if (value.getAsObject()->get("dim")) {
      path.field("dim").report("a scalar operand has no dimension");
      return false;
    }
    return true;
  }
  return o.map("dim", term.dim);
}

/// Only the two keys (checkKnownKeys): a stray "operand" (the version-1
/// form) would leave which extent the writer meant unknown.
static bool fromJSON(const json::Value &value, GridDim &dim, json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("constant", dim.constant) && o.map("terms", dim.terms);
}

/// dims (4), strides (3) and swizzle of a workspace buffer's tensor map.
static bool mapWorkspaceView(json::ObjectMapper &o, const json::Value &value,
                             Param &param, json::Path path) {
  std::vector<int64_t> dims, strides;
  if (!o.map("dims", dims) || !o.map("strides", strides) ||
      !o.map("swizzle", param.swizzle))
    return false;
  if (dims.size() != 4 || strides.size() != 3) {
    path.field("dims").report("a workspace tensor map has 4 dims and 3 "
                              "strides (innermost first)");
    return false;
  }
  std::copy(dims.begin(), dims.end(), param.dims.begin());
  std::copy(strides.begin(), strides.end(), param.strides.begin());
  return true;
}

static bool fromJSON(const json::Value &value, Param &param, json::Path path) {
  json::ObjectMapper o(value, path);
  std::string field;
  param.workspace = -1;
  bool inWorkspace = o && value.getAsObject()->get("workspace");
  if (inWorkspace && value.getAsObject()->get("operand")) {
    path.field("workspace").report("a parameter names an operand or a "
                                   "workspace buffer, not both");
    return false;
  }
  if (!o ||
      !(inWorkspace ? o.map("workspace", param.workspace)
                    : o.map("operand", param.operand)) ||
      !o.map("field", field))
    return false;
  auto parsed = llvm::StringSwitch<std::optional<Param::Field>>(field)
                    .Case("allocated_ptr", Param::Field::AllocatedPtr)
                    .Case("aligned_ptr", Param::Field::AlignedPtr)
                    .Case("offset", Param::Field::Offset)
                    .Case("size", Param::Field::Size)
                    .Case("stride", Param::Field::Stride)
                    .Case("tensor_map", Param::Field::TensorMap)
                    .Case("value", Param::Field::Value)
                    .Default(std::nullopt);
  if (!parsed) {
    path.field("field").report("expected allocated_ptr, aligned_ptr, offset, "
                               "size, stride, tensor_map or value");
    return false;
  }
  param.field = *parsed;
  param.index = 0;
  param.transposed = param.headsInner = param.packed = false;
  param.dims = {0, 0, 0, 0};
  param.strides = {0, 0, 0};
  param.swizzle = 128;
  // A workspace's tensor map states its view; an operand's follows from the
  // call's tensor.
  bool workspaceMap = inWorkspace && *parsed == Param::Field::TensorMap;
  for (StringRef key : {"dims", "strides", "swizzle"})
    if (!workspaceMap && value.getAsObject()->get(key)) {
      path.field(key).report("only a workspace buffer's tensor_map states "
                             "its view (dims, strides, swizzle)");
      return false;
    }
  // json::Path::report takes a literal: one message per key.
  bool indexed =
      *parsed == Param::Field::Size || *parsed == Param::Field::Stride;
  if (!indexed && value.getAsObject()->get("index")) {
    path.field("index").report("only a size or stride parameter has an index");
    return false;
  }
  if (*parsed != Param::Field::TensorMap) {
    if (value.getAsObject()->get("box")) {
      path.field("box").report("only a tensor_map has a box");
      return false;
    }
    if (value.getAsObject()->get("transposed")) {
      path.field("transposed").report("only a tensor_map may be transposed");
      return false;
    }
    if (value.getAsObject()->get("heads_inner")) {
      path.field("heads_inner").report("only a tensor_map may be heads_inner");
      return false;
    }
    if (value.getAsObject()->get("packed")) {
      path.field("packed").report("only a tensor_map may be packed");
      return false;
    }
  }
  if (*parsed == Param::Field::TensorMap) {
    std::vector<int64_t> box;
    if (!o.map("box", box) || !o.mapOptional("transposed", param.transposed) ||
        !o.mapOptional("heads_inner", param.headsInner) ||
        !o.mapOptional("packed", param.packed))
      return false;
    if (box.size() != 4) {
      path.field("box").report(param.transposed
                                   ? "expected 4 extents (N, D, H, B)"
                               : param.headsInner
                                   ? "expected 4 extents (D, H, N, B)"
                                   : "expected 4 extents (D, N, H, B)");
      return false;
    }
    std::copy(box.begin(), box.end(), param.box.begin());
    return !workspaceMap || mapWorkspaceView(o, value, param, path);
  }
  return !indexed || o.map("index", param.index);
}

static bool fromJSON(const json::Value &value, Resources &r, json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("registers", r.registers) &&
         o.map("shared_bytes", r.sharedBytes) &&
         o.map("stack_bytes", r.stackBytes) &&
         o.map("spill_store_bytes", r.spillStoreBytes) &&
         o.map("spill_load_bytes", r.spillLoadBytes);
}

static bool fromJSON(const json::Value &value, KernelLaunch &kernel,
                     json::Path path) {
  json::ObjectMapper o(value, path);
  if (!o || !o.map("name", kernel.name) || !o.map("cubin", kernel.cubin) ||
      !o.map("cubin_sha256", kernel.cubinSha256) || !o.map("ptx", kernel.ptx) ||
      !o.map("params", kernel.params) || !o.map("resources", kernel.resources))
    return false;
  const json::Value *launch = value.getAsObject()->get("launch");
  if (!launch) {
    path.field("launch").report("missing value");
    return false;
  }
  json::Path launchPath = path.field("launch");
  json::ObjectMapper l(*launch, launchPath);
  std::vector<GridDim> grid;
  std::vector<int64_t> threads, cluster;
  if (!l || !l.map("grid", grid) || !l.map("threads", threads) ||
      !l.map("dynamic_shared_bytes", kernel.dynamicSharedBytes) ||
      !l.map("cluster", cluster))
    return false;
  if (grid.size() != 3 || threads.size() != 3 || cluster.size() != 3) {
    launchPath.report("grid, threads and cluster must have 3 entries each");
    return false;
  }
  std::copy(grid.begin(), grid.end(), kernel.grid.begin());
  std::copy(threads.begin(), threads.end(), kernel.threads.begin());
  std::copy(cluster.begin(), cluster.end(), kernel.cluster.begin());
  return true;
}

static bool fromJSON(const json::Value &value, Workspace &buffer,
                     json::Path path) {
  json::ObjectMapper o(value, path);
  buffer.dtype = "f32";
  return o && o.map("name", buffer.name) && o.map("shape", buffer.shape) &&
         o.mapOptional("dtype", buffer.dtype) &&
         o.mapOptional("copy_of", buffer.copyOf);
}

static bool fromJSON(const json::Value &value, KernelEntry &kernel,
                     json::Path path) {
  json::ObjectMapper o(value, path);
  if (!fromJSON(value, static_cast<KernelLaunch &>(kernel), path) ||
      !o.map("kind", kernel.kind) || !o.map("key", kernel.key) ||
      !o.mapOptional("variant", kernel.variant) ||
      !o.mapOptional("persistent_ctas", kernel.persistentCtas) ||
      !o.mapOptional("then", kernel.then) ||
      !o.mapOptional("workspace", kernel.workspace))
    return false;
  const json::Value *operands = value.getAsObject()->get("operands");
  return !operands ||
         operandsFromJSON(*operands, kernel.operands, path.field("operands"));
}

bool fromJSON(const json::Value &value, Manifest &manifest, json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("version", manifest.version) &&
         o.map("generator", manifest.generator) &&
         o.map("chip", manifest.chip) && o.map("kernels", manifest.kernels);
}

//===----------------------------------------------------------------------===//
// Invariants
//===----------------------------------------------------------------------===//

llvm::Error corrupt(const llvm::Twine &where, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 where + ": " + what);
}

/// Paged K/V (page_size > 0): the wgmma path, not e4m3, a page of 1 to
/// 2^20 tokens, and a dynamic seqlen_k (each sequence's length is read from
/// cache_seqlens).
static llvm::Error checkPagedKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.pageSize == 0)
    return llvm::Error::success();
  if (key.pageSize < 0 || key.pageSize > kMaxPageSize)
    return corrupt(at + ".key.page_size",
                   llvm::formatv("must be in [1, {0}] (absent for "
                                 "contiguous K/V), got {1}",
                                 kMaxPageSize, key.pageSize));
  if (key.path != "wgmma")
    return corrupt(at + ".key.path",
                   "paged K/V (page_size) kernels are \"wgmma\" kernels");
  if (key.dtype == "e4m3")
    return corrupt(at + ".key.dtype",
                   "paged K/V (page_size) kernels are not e4m3");
  if (key.seqLenK)
    return corrupt(at + ".key.seqlen_k",
                   "must be null in a paged K/V (page_size) kernel: each "
                   "sequence's length comes from cache_seqlens (varlen: "
                   "cu_seqlens_k)");
  return llvm::Error::success();
}

/// Varlen (attn.varlen_attention): the wgmma path, f16 or bf16, strided,
/// and null batch, seqlen_q and seqlen_k (B and the lengths come from
/// cu_seqlens on the device). It may read paged K/V caches (page_size:
/// checkPagedKey) and be split (splits: checkLaunches).
static llvm::Error checkVarlenKey(const FwdKey &key, const llvm::Twine &at) {
  if (!key.varlen)
    return llvm::Error::success();
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "varlen kernels are \"wgmma\" kernels");
  if (key.dtype == "e4m3")
    return corrupt(at + ".key.dtype", "varlen kernels are not e4m3");
  if (!key.strided)
    return corrupt(at + ".key.layout", "varlen kernels are \"strided\"");
  if (key.batch || key.seqLenQ || key.seqLenK)
    return corrupt(at + ".key",
                   "batch, seqlen_q and seqlen_k must be null in a varlen "
                   "kernel: they come from cu_seqlens_q/k");
  return llvm::Error::success();
}

/// A quantized kernel (quantize_fp8): bf16 operands, the wgmma path, every
/// length static (attn-quantize-fp8 needs static shapes), neither paged,
/// varlen nor split.
static llvm::Error checkQuantizeKey(const FwdKey &key, const llvm::Twine &at) {
  if (!key.quantizeFp8)
    return llvm::Error::success();
  if (key.dtype != "bf16")
    return corrupt(at + ".key.dtype", "quantized (quantize_fp8) kernels take "
                                      "\"bf16\" operands");
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "quantized (quantize_fp8) kernels are "
                                     "\"wgmma\" kernels");
  if (key.numStaticLengths() != 5)
    return corrupt(at + ".key", "quantized (quantize_fp8) kernels have static "
                                "batch, num_heads_q, num_heads_kv, seqlen_q "
                                "and seqlen_k");
  if (key.pageSize != 0 || key.varlen || key.splits != 1)
    return corrupt(at + ".key", "quantized (quantize_fp8) kernels have no "
                                "page_size, varlen or splits");
  return checkQuantizeOptions(*key.quantizeFp8, at + ".key.quantize_fp8");
}

static llvm::Error checkKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.dtype != "f16" && key.dtype != "bf16" && key.dtype != "e4m3")
    return corrupt(at + ".key.dtype", "expected \"f16\", \"bf16\" or "
                                      "\"e4m3\", got \"" +
                                          key.dtype + "\"");
  bool fp8 = key.dtype == "e4m3";
  if (fp8 && (key.headDim < 16 || key.headDim > 256 || key.headDim % 16 != 0))
    return corrupt(at + ".key.head_dim",
                   "must be a multiple of 16 in [16, 256] for e4m3");
  if (key.headDim <= 0 || key.headDim > 256 || key.headDim % 8 != 0)
    return corrupt(at + ".key.head_dim", "must be a multiple of 8 in [8, 256]");
  if (fp8 && !key.strided)
    return corrupt(at + ".key.layout",
                   "e4m3 kernels are \"strided\" (V is stored as V^T)");
  if (fp8 && key.path != "wgmma")
    return corrupt(at + ".key.path", "e4m3 kernels are \"wgmma\" kernels");
  if (key.blockM <= 0 || key.blockN <= 0)
    return corrupt(at + ".key", "block_m and block_n must be > 0");
  if (!std::isfinite(key.scale) || key.scale <= 0)
    return corrupt(at + ".key.scale", "must be finite and > 0");
  // attn-compile refuses static lengths of 0 (they are dynamic instead).
  for (const auto &len :
       {key.batch, key.numHeadsQ, key.numHeadsKV, key.seqLenQ, key.seqLenK})
    if (len && *len < 1)
      return corrupt(at + ".key", "static lengths must be >= 1 (or null)");
  if (key.numHeadsQ && key.numHeadsKV &&
      (*key.numHeadsKV == 0 || *key.numHeadsQ % *key.numHeadsKV != 0))
    return corrupt(at + ".key", "num_heads_q must be a multiple of "
                                "num_heads_kv");
  if (llvm::Error err = checkPagedKey(key, at))
    return err;
  if (llvm::Error err = checkQuantizeKey(key, at))
    return err;
  return checkVarlenKey(key, at);
}

/// Why a kernel of `key` has no operand `op` ("in a kernel without LSE"),
/// or nothing when it has it: lse with LSE, the descales in e4m3 kernels,
/// the block table in paged kernels, cache_seqlens in paged kernels that
/// are not varlen (a varlen paged kernel counts each sequence's keys from
/// cu_seqlens_k), cu_seqlens and max_seqlen in varlen kernels, do, dq, dk
/// and dv exactly in backward kernels.
std::optional<std::string> whyAbsent(const KernelEntry &kernel, Operand op) {
  const FwdKey &key = kernel.key;
  if (isGradOperand(op) && !kernel.isBackward())
    return "in a kernel that is not backward (bwd)";
  if (op == Operand::LSE && !key.hasLse)
    return "in a kernel without LSE";
  if (isDescale(op) && key.dtype != "e4m3")
    return "in a kernel that is not e4m3";
  if (isPagedOperand(op) && key.pageSize == 0)
    return "in a kernel without page_size (paged K/V)";
  if (op == Operand::CacheSeqlens && key.varlen)
    return "in a varlen paged kernel (sequence b has cu_seqlens_k[b + 1] - "
           "cu_seqlens_k[b] keys)";
  if (isVarlenOperand(op) && !key.varlen)
    return "in a kernel that is not varlen";
  return std::nullopt;
}

/// A grid or workspace term: an operand the kernel has (whyAbsent), a
/// dimension of its rank (none for a scalar), divisor >= 1, offset 0 or -1
/// (-1 only in a varlen kernel, on cu_seqlens: B = dim - 1).
static llvm::Error checkGridTerm(const KernelEntry &kernel, const GridTerm &t,
                                 const llvm::Twine &at) {
  const FwdKey &key = kernel.key;
  if (auto why = whyAbsent(kernel, t.operand))
    return corrupt(at, "refers to " + operandName(t.operand) + " " + *why);
  int64_t rank = operandRank(t.operand, key);
  if (t.divisor < 1 || t.dim < 0 || (rank > 0 && t.dim >= rank))
    return corrupt(at, "needs 0 <= dim < rank(operand) and divisor >= 1");
  if (t.offset != 0 && (t.offset != -1 || !key.varlen))
    return corrupt(at, "offset must be 0, or -1 in a varlen kernel (B = "
                       "size(cu_seqlens_q, 0) - 1)");
  return llvm::Error::success();
}

static llvm::Error checkLaunch(const KernelEntry &kernel,
                               const llvm::Twine &at) {
  for (size_t i = 0; i < kernel.grid.size(); ++i) {
    const GridDim &dim = kernel.grid[i];
    if (dim.constant < 1 || dim.constant > INT32_MAX)
      return corrupt(at + ".launch.grid", "constants must be in [1, 2^31)");
    if (i > 0 && dim.constant > 65535)
      return corrupt(at + ".launch.grid", "grid y and z constants must be "
                                          "at most 65535");
    if (dim.terms.size() > 4)
      return corrupt(at + ".launch.grid", "at most 4 terms per dimension");
    for (const GridTerm &t : dim.terms) {
      if (llvm::Error err = checkGridTerm(kernel, t, at + ".launch.grid"))
        return err;
    }
  }
  // Bounds per entry first, so that the products cannot overflow.
  int64_t threads = 1, cluster = 1;
  for (int64_t t : kernel.threads) {
    if (t < 1 || t > 1024)
      return corrupt(at + ".launch.threads", "entries must be in [1, 1024]");
    threads *= t;
  }
  if (threads > 1024)
    return corrupt(at + ".launch.threads", "more than 1024 threads per CTA");
  for (int64_t c : kernel.cluster) {
    if (c < 1 || c > 16)
      return corrupt(at + ".launch.cluster", "entries must be in [1, 16]");
    cluster *= c;
  }
  if (cluster > 16)
    return corrupt(at + ".launch.cluster", "more than 16 CTAs per cluster");
  if (kernel.dynamicSharedBytes < 0 ||
      kernel.dynamicSharedBytes > kMaxDynamicSharedBytes)
    return corrupt(
        at + ".launch.dynamic_shared_bytes",
        llvm::formatv("must be in [0, {0}]", kMaxDynamicSharedBytes));
  return llvm::Error::success();
}

static llvm::Error checkResources(const Resources &r, const llvm::Twine &at) {
  if (r.registers < 0 || r.registers > 255 || r.sharedBytes < 0 ||
      r.stackBytes < 0 || r.spillStoreBytes < 0 || r.spillLoadBytes < 0)
    return corrupt(at + ".resources", "registers must be in [0, 255] and "
                                      "byte counts >= 0");
  return llvm::Error::success();
}

/// Rows of one page a paged kernel's K/V box holds: min(page_size,
/// block_n).
static int64_t pagedBoxRows(const FwdKey &key) {
  return std::min(key.pageSize, key.blockN);
}

/// The K or V map of a paged kernel (never e4m3): heads_inner, viewing the
/// [num_pages, page_size, Hkv, D] cache as (D, page_size, Hkv, num_pages)
/// innermost first, in boxes of min(page_size, block_n) rows of one page of
/// one KV head.
static llvm::Error checkPagedMap(const KernelEntry &kernel, const Param &p,
                                 const llvm::Twine &at) {
  StringRef name = operandName(p.operand);
  if (!p.headsInner)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " in a paged K/V kernel must be heads_inner (the "
                       "[num_pages, page_size, Hkv, D] cache as (D, "
                       "page_size, Hkv, num_pages))");
  int64_t rows = pagedBoxRows(kernel.key);
  if (p.box != std::array<int64_t, 4>{64, rows, 1, 1})
    return corrupt(at + ".params",
                   llvm::formatv("the tensor map box of {0} in a paged K/V "
                                 "kernel must be [64, min(page_size, block_n) "
                                 "= {1}, 1, 1], got [{2}, {3}, {4}, {5}]",
                                 name, rows, p.box[0], p.box[1], p.box[2],
                                 p.box[3]));
  return llvm::Error::success();
}

/// A backward kernel (attn.attention_grad lowered by
/// attn-grad-async-pipeline): f16 or bf16, D 64 or 128, every length
/// static, LSE (an input), the wgmma path, contiguous K/V, not varlen, not
/// split.
static llvm::Error checkBwdKey(const FwdKey &key, const llvm::Twine &at) {
  if (key.dtype != "f16" && key.dtype != "bf16")
    return corrupt(at + ".key.dtype", "backward kernels are f16 or bf16");
  if (key.headDim != 64 && key.headDim != 128)
    return corrupt(at + ".key.head_dim", "backward kernels have D 64 or 128");
  if (key.numStaticLengths() != 5)
    return corrupt(at + ".key", "backward kernels have static batch, "
                                "num_heads_q, num_heads_kv, seqlen_q and "
                                "seqlen_k");
  if (!key.hasLse)
    return corrupt(at + ".key.lse", "must be true in a backward kernel (LSE "
                                    "is its input)");
  if (key.path != "wgmma")
    return corrupt(at + ".key.path", "backward kernels are \"wgmma\" "
                                     "kernels");
  if (key.splits != 1 || key.pageSize != 0 || key.varlen)
    return corrupt(at + ".key", "backward kernels have no splits, page_size "
                                "or varlen");
  return llvm::Error::success();
}

/// A tensor map of a backward kernel: q or dout (dO) in boxes [64, block_m, 1, 1],
/// k or v in boxes [64, block_n, 1, 1] (one 128-byte swizzle span of D by
/// the tile's rows), plain (D, N, H, B) views.
static llvm::Error checkBwdTensorMap(const KernelEntry &kernel, const Param &p,
                                     const llvm::Twine &at) {
  bool qdo = p.operand == Operand::Q || p.operand == Operand::DO;
  bool kv = p.operand == Operand::K || p.operand == Operand::V;
  if (!qdo && !kv)
    return corrupt(at + ".params", "tensor maps of a backward kernel are for "
                                   "q, k, v and dout");
  if (p.transposed || p.headsInner || p.packed)
    return corrupt(at + ".params", "tensor maps of a backward kernel are "
                                   "plain (D, N, H, B) views");
  int64_t rows = qdo ? kernel.key.blockM : kernel.key.blockN;
  if (p.box != std::array<int64_t, 4>{64, rows, 1, 1})
    return corrupt(at + ".params",
                   llvm::formatv("the tensor map box of {0} in a backward "
                                 "kernel must be [64, {1}, 1, 1] ({2}), got "
                                 "[{3}, {4}, {5}, {6}]",
                                 operandName(p.operand), rows,
                                 qdo ? "block_m" : "block_n", p.box[0],
                                 p.box[1], p.box[2], p.box[3]));
  return llvm::Error::success();
}

/// A tensor map of a wgmma kernel: q, k, v or o; a box of one 128-byte
/// swizzle span innermost (64 f16/bf16 or 128 e4m3 elements), at most 256
/// rows, 1 head, 1 batch; transposed exactly for the V of an e4m3 kernel
/// (V^T storage: the span runs along Nk); heads_inner only for q and o (GQA
/// packing: G >= 2 heads of rows / G queries, at most 256 rows), and for k
/// and v exactly in a paged kernel (checkPagedMap).
static llvm::Error checkTensorMap(const KernelEntry &kernel, const Param &p,
                                  const llvm::Twine &at) {
  if (kernel.isBackward())
    return checkBwdTensorMap(kernel, p, at);
  if (kernel.key.path != "wgmma" ||
      !(p.operand == Operand::Q || p.operand == Operand::K ||
        p.operand == Operand::V || p.operand == Operand::O))
    return corrupt(at + ".params", "tensor maps are for q, k, v and o "
                                   "of wgmma kernels");
  bool fp8 = kernel.key.dtype == "e4m3";
  StringRef name = operandName(p.operand);
  bool kv = p.operand == Operand::K || p.operand == Operand::V;
  // A varlen paged kernel reads K and V from the caches like any paged one.
  bool pagedKV = kernel.key.pageSize > 0 && kv;
  if (p.packed != (kernel.key.varlen && !pagedKV))
    return corrupt(at + ".params",
                   p.packed && pagedKV
                       ? "the tensor map of " + name +
                             " in a paged K/V kernel reads the [num_pages, "
                             "page_size, Hkv, D] cache: heads_inner, not "
                             "packed (varlen or not)"
                   : kernel.key.varlen
                       ? "the tensor map of " + name +
                             " in a varlen kernel must be packed (the "
                             "[total, H, D] operand as (D, total, H, 1))"
                       : "the tensor map of " + name +
                             " is packed, but only varlen kernels take "
                             "packed [total, H, D] operands");
  if (p.transposed && p.operand != Operand::V)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " is transposed; only v's may be (e4m3 V^T storage)");
  if (p.operand == Operand::V && p.transposed != fp8)
    return corrupt(at + ".params",
                   fp8 ? "the tensor map of v in an e4m3 kernel must be "
                         "transposed (V^T storage, unit stride along Nk)"
                       : "the tensor map of v is transposed, but only e4m3 "
                         "kernels take V^T storage");
  if (pagedKV)
    return checkPagedMap(kernel, p, at);
  if (p.headsInner && p.operand != Operand::Q && p.operand != Operand::O)
    return corrupt(at + ".params",
                   "the tensor map of " + name +
                       " has heads_inner; only q's and o's may (GQA "
                       "packing), and k's and v's in a paged K/V kernel");
  // O is bf16 in an e4m3 kernel.
  int64_t elementBytes = fp8 && p.operand != Operand::O ? 1 : 2;
  int64_t span = 128 / elementBytes;
  if (p.headsInner) {
    if (p.box[0] != span || p.box[1] < 2 || p.box[2] < 1 ||
        p.box[1] * p.box[2] > 256 || p.box[3] != 1)
      return corrupt(at + ".params",
                     llvm::formatv("a heads_inner tensor map box must be "
                                   "[{0}, G >= 2, rows / G, 1] with at most "
                                   "256 rows for {1}, got [{2}, {3}, {4}, {5}]",
                                   span, name, p.box[0], p.box[1], p.box[2],
                                   p.box[3]));
    return llvm::Error::success();
  }
  if (p.box[0] != span || p.box[1] < 1 || p.box[1] > 256 || p.box[2] != 1 ||
      p.box[3] != 1)
    return corrupt(at + ".params",
                   llvm::formatv("tensor map box must be [{0}, 1..256, 1, 1] "
                                 "for {1} ({0} elements: one 128-byte swizzle "
                                 "span{2}), got [{3}, {4}, {5}, {6}]",
                                 span, name,
                                 p.transposed ? " of Nk" : "", p.box[0],
                                 p.box[1], p.box[2], p.box[3]));
  return llvm::Error::success();
}

/// Bit of a memref-descriptor field: pointers, offset, sizes, strides.
static int64_t descriptorBit(const Param &p, int64_t rank) {
  using Field = Param::Field;
  return p.field == Field::AllocatedPtr ? 0
         : p.field == Field::AlignedPtr ? 1
         : p.field == Field::Offset     ? 2
         : p.field == Field::Size       ? 3 + p.index
                                        : 3 + rank + p.index;
}

/// The operand parameters of one launch: operands the kernel has, tensor
/// maps with the boxes the kernels use, whole memref descriptors. Marks
/// in `hasPointer` the operands that reach the launch.
static llvm::Error checkLaunchParams(const KernelEntry &kernel,
                                     const KernelLaunch &launch,
                                     const llvm::Twine &at,
                                     std::array<bool, kNumOperands> &hasPointer) {
  using Field = Param::Field;
  // Per operand: which descriptor fields appear (3 + 2 * rank bits).
  std::array<llvm::SmallBitVector, kNumOperands> seen;
  for (const Param &p : launch.params) {
    if (p.workspace >= 0)
      continue;
    if (auto why = whyAbsent(kernel, p.operand))
      return corrupt(at + ".params",
                     (p.operand == Operand::LSE ? "an " : "a ") +
                         operandName(p.operand) + " parameter " + *why);
    size_t op = static_cast<size_t>(p.operand);
    // A scalar is one value parameter; only scalars are.
    if (isScalarOperand(p.operand) != (p.field == Field::Value))
      return corrupt(at + ".params",
                     isScalarOperand(p.operand)
                         ? operandName(p.operand) +
                               " is a scalar: its one parameter is a value"
                         : "a value parameter of " + operandName(p.operand) +
                               ", which is not a scalar (max_seqlen_q/k)");
    if (p.field == Field::Value) {
      hasPointer[op] = true;
      continue;
    }
    int64_t rank = operandRank(p.operand, kernel.key);
    if (p.index < 0 || p.index >= rank)
      return corrupt(at + ".params", "index out of the operand's rank");
    if (p.field == Field::TensorMap) {
      if (llvm::Error err = checkTensorMap(kernel, p, at))
        return err;
      hasPointer[op] = true;
      continue;
    }
    seen[op].resize(3 + 2 * rank);
    seen[op].set(descriptorBit(p, rank));
    hasPointer[op] |= p.field == Field::AlignedPtr;
  }
  for (size_t op = 0; op < seen.size(); ++op)
    if (!seen[op].empty() && !seen[op].all())
      return corrupt(at + ".params",
                     llvm::formatv("operand {0}'s memref descriptor is "
                                   "incomplete: it needs allocated_ptr, "
                                   "aligned_ptr, offset and every size and "
                                   "stride",
                                   operandName(static_cast<Operand>(op))));
  return llvm::Error::success();
}

/// The elements of a workspace buffer with static extents (0: dynamic or
/// over 2^62).
static int64_t staticElements(const Workspace &buffer) {
  int64_t n = 1;
  for (const GridDim &dim : buffer.shape)
    if (!dim.terms.empty() || __builtin_mul_overflow(n, dim.constant, &n) ||
        n > (int64_t(1) << 62))
      return 0;
  return n;
}

/// A tensor map over a workspace buffer (a quantized kernel's e4m3 copy):
/// swizzle 0, 32, 64 or 128 bytes; a box of 1 to 256 per dimension whose
/// inner extent is a multiple of 16 bytes within the swizzle span; dims in
/// [1, 2^32], strides multiples of 16 bytes below 2^40; and the view inside
/// the buffer: sum((dims[i] - 1) * stride[i]) < its elements.
static llvm::Error checkWorkspaceMap(const Workspace &buffer, const Param &p,
                                     const llvm::Twine &at) {
  if (!buffer.copyOf)
    return corrupt(at, "tensor maps of workspace buffers are of the e4m3 "
                       "copies (copy_of) of a quantized kernel");
  int64_t elt = workspaceElementBytes(buffer.dtype);
  bool swizzleOk =
      p.swizzle == 0 || p.swizzle == 32 || p.swizzle == 64 || p.swizzle == 128;
  if (!swizzleOk ||
      llvm::any_of(p.box, [](int64_t b) { return b < 1 || b > 256; }) ||
      (p.box[0] * elt) % 16 != 0 ||
      (p.swizzle > 0 && p.box[0] * elt > p.swizzle))
    return corrupt(at, "a workspace tensor map needs swizzle 0, 32, 64 or "
                       "128 and box entries in [1, 256], the innermost a "
                       "multiple of 16 bytes within the swizzle span");
  int64_t last = 0; // offset of the view's last element
  for (int i = 0; i < 4; ++i) {
    int64_t stride = i == 0 ? 1 : p.strides[i - 1];
    if (p.dims[i] < 1 || p.dims[i] > (int64_t(1) << 32) || stride < 1 ||
        (i > 0 && ((stride * elt) % 16 != 0 || stride >= (int64_t(1) << 40))))
      return corrupt(at, "a workspace tensor map needs dims in [1, 2^32] and "
                         "strides that are multiples of 16 bytes below 2^40");
    int64_t span;
    if (__builtin_mul_overflow(p.dims[i] - 1, stride, &span) ||
        __builtin_add_overflow(last, span, &last))
      return corrupt(at, "a workspace tensor map's view overflows 64 bits");
  }
  int64_t elements = staticElements(buffer);
  if (elements == 0 || last >= elements)
    return corrupt(at, llvm::formatv("the tensor map view of workspace {0} "
                                     "reaches element {1}, past its {2} "
                                     "(static) elements",
                                     buffer.name, last, elements));
  return llvm::Error::success();
}

/// Parameters of one launch (`launch` of `kernel`) that describe workspace
/// buffers: an existing buffer, whole memref descriptors, tensor maps only
/// of a quantized kernel's e4m3 copies (checkWorkspaceMap).
static llvm::Error checkWorkspaceParams(const KernelEntry &kernel,
                                        const KernelLaunch &launch,
                                        const llvm::Twine &at) {
  std::vector<llvm::SmallBitVector> seen(kernel.workspace.size());
  for (const Param &p : launch.params) {
    if (p.workspace < 0)
      continue;
    if (p.workspace >= int64_t(kernel.workspace.size()))
      return corrupt(at + ".params", "names a workspace buffer the kernel "
                                     "does not have");
    const Workspace &buffer = kernel.workspace[p.workspace];
    if (p.field == Param::Field::TensorMap) {
      if (llvm::Error err = checkWorkspaceMap(buffer, p, at + ".params"))
        return err;
      continue;
    }
    int64_t rank = buffer.shape.size();
    if (p.field == Param::Field::Value || p.index < 0 || p.index >= rank)
      return corrupt(at + ".params", "a workspace buffer is passed as a "
                                     "memref descriptor of its rank");
    seen[p.workspace].resize(3 + 2 * rank);
    seen[p.workspace].set(descriptorBit(p, rank));
  }
  for (const llvm::SmallBitVector &bits : seen)
    if (!bits.empty() && !bits.all())
      return corrupt(at + ".params", "a workspace buffer's memref descriptor "
                                     "is incomplete");
  return llvm::Error::success();
}

/// Every parameter names an operand the kernel has; a tensor map has a box
/// the kernels use; an operand passed as a memref descriptor passes all of
/// it (pointers, offset, every size and stride); q, k, v, o (and lse, and
/// for e4m3 the three descales) reach one of its launches;
/// workspace buffers are passed whole.
static llvm::Error checkParams(const KernelEntry &kernel,
                               const llvm::Twine &at) {
  bool fp8 = kernel.key.dtype == "e4m3";
  std::array<bool, kNumOperands> hasPointer = {};
  for (size_t i = 0; i < kernel.numLaunches(); ++i) {
    std::string where =
        i == 0 ? at.str() : (at + ".then[" + llvm::Twine(i - 1) + "]").str();
    if (llvm::Error err = checkLaunchParams(kernel, kernel.launch(i), where,
                                            hasPointer))
      return err;
    if (llvm::Error err =
            checkWorkspaceParams(kernel, kernel.launch(i), where))
      return err;
  }
  // Every operand the kernel computes with must reach one of its launches.
  for (Operand op : {Operand::Q, Operand::K, Operand::V, Operand::O})
    if (!hasPointer[static_cast<size_t>(op)])
      return corrupt(at + ".params", "no aligned_ptr or tensor_map of "
                                     "operand " +
                                         operandName(op));
  if (kernel.key.hasLse && !hasPointer[static_cast<size_t>(Operand::LSE)])
    return corrupt(at + ".params", "no aligned_ptr of operand lse");
  if (kernel.isBackward())
    for (Operand op : {Operand::DO, Operand::DQ, Operand::DK, Operand::DV})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params", "no aligned_ptr or tensor_map of "
                                       "operand " +
                                           operandName(op) +
                                           " in a backward kernel");
  if (fp8)
    for (Operand op :
         {Operand::QDescale, Operand::KDescale, Operand::VDescale})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params", "no aligned_ptr of operand " +
                                           operandName(op) +
                                           " in an e4m3 kernel");
  if (kernel.key.pageSize > 0)
    for (Operand op : {Operand::BlockTable, Operand::CacheSeqlens})
      if (!whyAbsent(kernel, op) && !hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params",
                       "no memref descriptor of operand " + operandName(op) +
                           " in a paged K/V (page_size) kernel");
  if (kernel.key.varlen)
    for (Operand op : {Operand::CuSeqlensQ, Operand::CuSeqlensK})
      if (!hasPointer[static_cast<size_t>(op)])
        return corrupt(at + ".params",
                       "no memref descriptor of operand " + operandName(op) +
                           " in a varlen kernel");
  return llvm::Error::success();
}
/// Rows of O one consumer warpgroup writes with a TMA store.
constexpr int64_t kWarpgroupRows = 64;

/// What attn-lower-to-wgmma kernels are: one producer and one to three
/// consumer warpgroups of 64 rows each (BLOCK_M / 64), a dynamic
/// shared-memory ring, and exactly one tensor map each for q (box rows
/// BLOCK_M), k and v (box rows BLOCK_N; paged: min(page_size, BLOCK_N)),
/// and at most one for o (box rows 64, the TMA-store epilogue).
static llvm::Error checkWgmma(const KernelEntry &kernel,
                              const llvm::Twine &at) {
  const std::array<int64_t, 3> &t = kernel.threads;
  int64_t blockM = kernel.key.blockM;
  bool validM = blockM == 64 || blockM == 128 || blockM == 192;
  if (!validM || t[0] != 128 + 2 * blockM || t[1] != 1 || t[2] != 1)
    return corrupt(at + ".launch.threads",
                   "a wgmma kernel runs [128 * (1 + block_m / 64), 1, 1] "
                   "threads (a producer and 1 to 3 consumer warpgroups of 64 "
                   "rows), not [" +
                       llvm::Twine(t[0]) + ", " + llvm::Twine(t[1]) + ", " +
                       llvm::Twine(t[2]) + "] with block_m " +
                       llvm::Twine(blockM));
  if (kernel.dynamicSharedBytes <= 0)
    return corrupt(at + ".launch.dynamic_shared_bytes",
                   "a wgmma kernel keeps its tiles in dynamic shared memory "
                   "(must be > 0)");
  std::array<int, 4> maps = {};
  // GQA packing views Q and O alike: their maps are heads_inner together.
  std::optional<bool> packed;
  for (const Param &p : kernel.params) {
    if (p.field != Param::Field::TensorMap)
      continue;
    ++maps[static_cast<size_t>(p.operand)];
    if (p.operand == Operand::Q || p.operand == Operand::O) {
      if (packed && *packed != p.headsInner)
        return corrupt(at + ".params",
                       "the tensor maps of q and o must both be heads_inner "
                       "(GQA packing) or neither");
      packed = p.headsInner;
    }
    // Paged K/V boxes: checkPagedMap checked them.
    if (kernel.key.pageSize > 0 &&
        (p.operand == Operand::K || p.operand == Operand::V))
      continue;
    // V^T boxes: 128 keys of all D rows (checkTensorMap checked the keys).
    if (p.transposed) {
      if (p.box[1] != kernel.key.headDim)
        return corrupt(at + ".params",
                       llvm::formatv("the transposed tensor map of v must "
                                     "have head_dim = {0} rows, not {1}",
                                     kernel.key.headDim, p.box[1]));
      continue;
    }
    int64_t rows = p.operand == Operand::Q   ? kernel.key.blockM
                   : p.operand == Operand::O ? kWarpgroupRows
                                             : kernel.key.blockN;
    StringRef what = p.operand == Operand::Q   ? "block_m"
                     : p.operand == Operand::O ? "one warpgroup's rows"
                                               : "block_n";
    if (p.headsInner) {
      const FwdKey &key = kernel.key;
      if (!key.numHeadsQ || !key.numHeadsKV ||
          p.box[1] * *key.numHeadsKV != *key.numHeadsQ)
        return corrupt(at + ".params",
                       llvm::formatv("the heads_inner tensor map of {0} packs "
                                     "{1} heads; GQA packing needs static "
                                     "num_heads_q = {1} * num_heads_kv",
                                     operandName(p.operand), p.box[1]));
    }
    int64_t boxRows = p.headsInner ? p.box[1] * p.box[2] : p.box[1];
    if (boxRows != rows)
      return corrupt(at + ".params",
                     llvm::formatv("the tensor map of {0} must have {1} rows "
                                   "({2}), not {3}",
                                   operandName(p.operand), rows, what,
                                   boxRows));
  }
  if (maps[0] != 1 || maps[1] != 1 || maps[2] != 1 || maps[3] > 1)
    return corrupt(at + ".params", "a wgmma kernel takes exactly one tensor "
                                   "map each of q, k and v, and at most one "
                                   "of o");
  return llvm::Error::success();
}

/// Extents of a static workspace buffer (checked static before).
static std::vector<int64_t> staticShape(const Workspace &buffer) {
  std::vector<int64_t> shape;
  for (const GridDim &dim : buffer.shape)
    shape.push_back(dim.constant);
  return shape;
}

/// "[a, b, ..]".
static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" + llvm::join(llvm::map_range(shape, [](int64_t n) {
                            return std::to_string(n);
                          }),
                          ", ") +
         "]";
}

/// A tensor map of a quantized kernel's e4m3 copy views all of it in the
/// layout the attention reads: dims [D, N, H, B] of Q or K, [Nk, D, Hkv, B]
/// of V^T (its padding past Nk unread), strides of the copy's row-major
/// extents.
static llvm::Error checkCopyView(const KernelEntry &kernel, const Param &p,
                                 const llvm::Twine &at) {
  const Workspace &copy = kernel.workspace[p.workspace];
  std::vector<int64_t> s = staticShape(copy);
  int64_t inner = *copy.copyOf == Operand::V ? *kernel.key.seqLenK : s[3];
  std::array<int64_t, 4> dims = {inner, s[2], s[1], s[0]};
  std::array<int64_t, 3> strides = {s[3], s[2] * s[3], s[1] * s[2] * s[3]};
  if (p.dims != dims || p.strides != strides)
    return corrupt(at, llvm::formatv(
                           "the tensor map of the e4m3 copy of {0} views it "
                           "whole: dims {1}, strides {2}",
                           operandName(*copy.copyOf), shapeString(dims),
                           shapeString(strides)));
  return llvm::Error::success();
}

/// The last launch of a quantized kernel, the FP8 attention: a wgmma
/// kernel's threads and shared memory (checkWgmma) reading q, k and v
/// through exactly one tensor map each of their e4m3 copies: boxes of 128
/// bytes innermost by block_m rows (q), block_n rows (k), head_dim rows (v,
/// stored V^T); an operand map only for o (the TMA-store epilogue).
static llvm::Error checkQuantizedAttention(const KernelEntry &kernel,
                                           const llvm::Twine &at) {
  size_t last = kernel.numLaunches() - 1;
  std::string where = (at + ".then[" + llvm::Twine(last - 1) + "]").str();
  KernelEntry view = kernel; // the key with the attention's shape
  static_cast<KernelLaunch &>(view) = kernel.launch(last);
  const FwdKey &key = kernel.key;
  int64_t blockM = key.blockM;
  const std::array<int64_t, 3> &t = view.threads;
  if (!(blockM == 64 || blockM == 128 || blockM == 192) ||
      t != std::array<int64_t, 3>{128 + 2 * blockM, 1, 1} ||
      view.dynamicSharedBytes <= 0)
    return corrupt(where + ".launch",
                   "the attention of a quantized kernel runs [128 * (1 + "
                   "block_m / 64), 1, 1] threads (block_m 64, 128 or 192) "
                   "with dynamic shared memory");
  std::array<int, 3> maps = {};
  for (const Param &p : view.params) {
    if (p.field != Param::Field::TensorMap)
      continue;
    if (p.workspace < 0) {
      if (p.operand != Operand::O)
        return corrupt(where + ".params",
                       "the attention of a quantized kernel reads q, k and "
                       "v through their e4m3 copies (workspace maps)");
      continue;
    }
    Operand op = *kernel.workspace[p.workspace].copyOf;
    int64_t rows = op == Operand::Q   ? key.blockM
                   : op == Operand::K ? key.blockN
                                      : key.headDim;
    ++maps[static_cast<size_t>(op)];
    if (llvm::Error err = checkCopyView(kernel, p, where + ".params"))
      return err;
    if (p.box != std::array<int64_t, 4>{128, rows, 1, 1})
      return corrupt(where + ".params",
                     llvm::formatv("the tensor map of the e4m3 copy of {0} "
                                   "must have box [128, {1}, 1, 1], got [{2}, "
                                   "{3}, {4}, {5}]",
                                   operandName(op), rows, p.box[0], p.box[1],
                                   p.box[2], p.box[3]));
  }
  if (maps != std::array<int, 3>{1, 1, 1})
    return corrupt(where + ".params",
                   "the attention of a quantized kernel takes exactly one "
                   "tensor map each of the e4m3 copies of q, k and v");
  return llvm::Error::success();
}

/// Symbol and cubin of a launch.
static llvm::Error checkFiles(const KernelLaunch &kernel, const std::string &at) {
  if (kernel.name.empty())
    return corrupt(at + ".name", "must not be empty");
  StringRef cubin = kernel.cubin;
  if (cubin.empty() || cubin.contains('/') || cubin.starts_with("."))
    return corrupt(at + ".cubin", "must be a file name inside the bundle");
  if (kernel.cubinSha256.size() != 64 ||
      !llvm::all_of(kernel.cubinSha256, [](char c) {
        return llvm::isDigit(c) || (c >= 'a' && c <= 'f');
      }))
    return corrupt(at + ".cubin_sha256", "must be 64 lowercase hex digits");
  return llvm::Error::success();
}

/// A workspace buffer's dtype, and copy_of (q, k or v, e4m3) only in a
/// quantized kernel.
static llvm::Error checkWorkspaceKind(const KernelEntry &kernel,
                                      const Workspace &buffer,
                                      const std::string &at) {
  if (workspaceElementBytes(buffer.dtype) == 0)
    return corrupt(at + ".dtype", "expected \"f32\", \"i32\" or \"e4m3\", "
                                  "got \"" +
                                      buffer.dtype + "\"");
  if (!buffer.copyOf)
    return llvm::Error::success();
  Operand op = *buffer.copyOf;
  if (!kernel.isQuantized() ||
      !(op == Operand::Q || op == Operand::K || op == Operand::V) ||
      buffer.dtype != "e4m3")
    return corrupt(at + ".copy_of", "only a quantized (quantize_fp8) kernel "
                                    "keeps copies, e4m3 ones of q, k or v");
  return llvm::Error::success();
}

/// What the key gives a quantized kernel's e4m3 copy of `op`: Q [B, Hq, Nq,
/// D], K [B, Hkv, Nk, D], V stored V^T [B, Hkv, D, Nk padded to 16 bytes].
static std::vector<int64_t> copyShape(const FwdKey &key, Operand op) {
  int64_t b = *key.batch, d = key.headDim;
  if (op == Operand::Q)
    return {b, *key.numHeadsQ, *key.seqLenQ, d};
  if (op == Operand::K)
    return {b, *key.numHeadsKV, *key.seqLenK, d};
  return {b, *key.numHeadsKV, d,
          static_cast<int64_t>(llvm::alignTo(*key.seqLenK, 16))};
}

static int64_t ceilDiv(int64_t n, int64_t d) { return (n + d - 1) / d; }

/// The descale shapes a quantized kernel may have, per granularity: [B,
/// Hkv] (per tensor or head) or per block of the tile (q: [B, Hq,
/// ceil(Nq / block_m)], k: [B, Hkv, ceil(Nk / block_n)]); v: [B, Hkv], or
/// [B, Hkv, D] per channel. Empty for other buffers.
static std::vector<std::vector<int64_t>> descaleShapes(const FwdKey &key,
                                                       StringRef name) {
  int64_t b = *key.batch, hq = *key.numHeadsQ, hkv = *key.numHeadsKV;
  std::vector<int64_t> perHead = {b, hkv};
  if (name == "q_descale")
    return {perHead, {b, hq, ceilDiv(*key.seqLenQ, key.blockM)}};
  if (name == "k_descale")
    return {perHead, {b, hkv, ceilDiv(*key.seqLenK, key.blockN)}};
  if (name == "v_descale")
    return {perHead, {b, hkv, key.headDim}};
  return {};
}

/// One buffer of a quantized kernel (static extents): an e4m3 copy of the
/// key's shape (copyShape), a descale of a shape its granularity gives
/// (descaleShapes), or f32 scratch (the quantize step's partial maxima,
/// whose extents are the compiler's choice).
static llvm::Error checkQuantizedBuffer(const FwdKey &key,
                                        const Workspace &buffer,
                                        const std::string &at) {
  std::vector<int64_t> shape = staticShape(buffer);
  if (buffer.copyOf) {
    std::vector<int64_t> want = copyShape(key, *buffer.copyOf);
    if (shape != want)
      return corrupt(at + ".shape",
                     llvm::formatv("the e4m3 copy of {0} has the key's shape "
                                   "{1}, got {2}",
                                   operandName(*buffer.copyOf),
                                   shapeString(want), shapeString(shape)));
    return llvm::Error::success();
  }
  if (buffer.dtype != "f32")
    return corrupt(at + ".dtype", "a quantized (quantize_fp8) kernel's "
                                  "descales and scratch are \"f32\"");
  std::vector<std::vector<int64_t>> legal = descaleShapes(key, buffer.name);
  if (!legal.empty() && !llvm::is_contained(legal, shape))
    return corrupt(at + ".shape",
                   llvm::formatv("{0} of this key is {1} or {2}, got {3}",
                                 buffer.name, shapeString(legal[0]),
                                 shapeString(legal[1]), shapeString(shape)));
  return llvm::Error::success();
}

/// A quantized kernel: quantize launches then the attention (at least two),
/// exactly one e4m3 copy each of q, k and v and one each of q_descale,
/// k_descale and v_descale, every buffer static (checkQuantizedBuffer).
static llvm::Error checkQuantizedWorkspace(const KernelEntry &kernel,
                                           const std::string &at) {
  if (!kernel.isQuantized())
    return llvm::Error::success();
  if (kernel.then.empty())
    return corrupt(at + ".then", "a quantized (quantize_fp8) kernel has "
                                 "quantize launches, then the attention");
  std::array<int, 3> copies = {};
  llvm::StringMap<int> descales;
  for (const auto &[i, buffer] : llvm::enumerate(kernel.workspace)) {
    for (const GridDim &dim : buffer.shape)
      if (!dim.terms.empty())
        return corrupt(at + ".workspace", "the buffers of a quantized "
                                          "(quantize_fp8) kernel have static "
                                          "extents");
    if (llvm::Error err = checkQuantizedBuffer(
            kernel.key, buffer,
            llvm::formatv("{0}.workspace[{1}]", at, i).str()))
      return err;
    if (buffer.copyOf)
      ++copies[static_cast<size_t>(*buffer.copyOf)];
    else
      ++descales[buffer.name];
  }
  if (copies != std::array<int, 3>{1, 1, 1})
    return corrupt(at + ".workspace", "a quantized (quantize_fp8) kernel "
                                      "keeps exactly one e4m3 copy each of "
                                      "q, k and v (copy_of)");
  for (StringRef name : {"q_descale", "k_descale", "v_descale"})
    if (descales.lookup(name) != 1)
      return corrupt(at + ".workspace",
                     "a quantized (quantize_fp8) kernel keeps exactly one "
                     "buffer each named q_descale, k_descale and v_descale");
  return llvm::Error::success();
}

/// A persistent kernel's attention grid is its CTA count (nothing scales
/// with the call); its other launches, if any, are a quantized kernel's
/// quantize launches (split-KV's combine reads what every tile wrote).
static llvm::Error checkPersistent(const KernelEntry &kernel,
                                   const std::string &at) {
  if (kernel.persistentCtas == 0)
    return llvm::Error::success();
  const GridDim &x = kernel.launch(kernel.persistentLaunch()).grid[0];
  if (kernel.persistentCtas < 0 || x.constant != kernel.persistentCtas ||
      !x.terms.empty() || kernel.key.path != "wgmma")
    return corrupt(at + ".persistent_ctas",
                   "must be absent, or the constant grid x of a wgmma "
                   "kernel's attention launch (a quantized kernel's last)");
  if (!kernel.then.empty() && !kernel.isQuantized())
    return corrupt(at + ".persistent_ctas",
                   "a kernel of several launches is not persistent, unless "
                   "they are a quantized kernel's quantize launches");
  return llvm::Error::success();
}

/// Split-KV's shape: `splits` > 1 exactly when the kernel has later
/// launches and a workspace; each buffer a shape of 1 to 8 extents that are
/// functions of the operands' sizes; each later launch a valid launch.
static llvm::Error checkLaunches(const KernelEntry &kernel,
                                 const std::string &at) {
  const FwdKey &key = kernel.key;
  // A backward kernel has several launches and a workspace but no splits
  // (checkBwdKey).
  bool split = !kernel.isBackward() && !kernel.isQuantized() &&
               !kernel.then.empty() && !kernel.workspace.empty();
  if (key.splits < 1 || key.splits > 256 || (key.splits > 1) != split)
    return corrupt(at + ".key.splits",
                   "must be in [1, 256], and above 1 exactly when the kernel "
                   "has later launches (then) and a workspace");
  if (llvm::Error err = checkPersistent(kernel, at))
    return err;
  for (const auto &[i, buffer] : llvm::enumerate(kernel.workspace)) {
    std::string where = llvm::formatv("{0}.workspace[{1}]", at, i).str();
    if (buffer.name.empty() || buffer.shape.empty() || buffer.shape.size() > 8)
      return corrupt(where, "needs a name and 1 to 8 extents");
    if (llvm::Error err = checkWorkspaceKind(kernel, buffer, where))
      return err;
    for (const GridDim &dim : buffer.shape) {
      if (dim.constant < 1 || dim.terms.size() > 4)
        return corrupt(where + ".shape", "constants must be >= 1, with at "
                                         "most 4 terms per extent");
      for (const GridTerm &t : dim.terms)
        if (llvm::Error err = checkGridTerm(kernel, t, where + ".shape"))
          return err;
    }
  }
  if (llvm::Error err = checkQuantizedWorkspace(kernel, at))
    return err;
  for (const auto &[i, launch] : llvm::enumerate(kernel.then)) {
    std::string where = llvm::formatv("{0}.then[{1}]", at, i).str();
    KernelEntry view = kernel; // the key with this launch's shape
    static_cast<KernelLaunch &>(view) = launch;
    if (llvm::Error err = checkFiles(launch, where))
      return err;
    if (llvm::Error err = checkLaunch(view, where))
      return err;
    if (llvm::Error err = checkResources(launch.resources, where))
      return err;
  }
  return llvm::Error::success();
}

static llvm::Error checkKernel(const KernelEntry &kernel, size_t index) {
  std::string at = llvm::formatv("kernels[{0}]", index).str();
  if (kernel.kind != "fwd" && kernel.kind != "bwd")
    return corrupt(at + ".kind", "unknown kernel kind \"" + kernel.kind +
                                     "\" (expected \"fwd\" or \"bwd\")");
  if (llvm::Error err = checkFiles(kernel, at))
    return err;
  if (llvm::Error err = checkKey(kernel.key, at))
    return err;
  if (kernel.isBackward())
    if (llvm::Error err = checkBwdKey(kernel.key, at))
      return err;
  if (llvm::Error err = checkLaunches(kernel, at))
    return err;
  if (llvm::Error err = checkLaunch(kernel, at))
    return err;
  if (llvm::Error err = checkResources(kernel.resources, at))
    return err;
  if (llvm::Error err = checkParams(kernel, at))
    return err;
  if (llvm::Error err = checkOperandTypes(kernel, at))
    return err;
  if (kernel.isQuantized())
    return checkQuantizedAttention(kernel, at);
  if (kernel.key.path == "wgmma" && !kernel.isBackward())
    return checkWgmma(kernel, at);
  return llvm::Error::success();
}

std::string sha256Hex(StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                     /*LowerCase=*/true);
}

/// The first key that appears twice in one object of `text` (valid JSON),
/// with its offset. llvm::json::parse keeps only the last of them.
static std::optional<std::pair<std::string, size_t>>
findDuplicateKey(StringRef text) {
  struct Frame {
    bool isObject, expectKey;
    llvm::StringSet<> keys;
  };
  llvm::SmallVector<Frame, 8> frames;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' || c == '[')
      frames.push_back({c == '{', c == '{', {}});
    else if ((c == '}' || c == ']') && !frames.empty())
      frames.pop_back();
    else if (c == ',' && !frames.empty())
      frames.back().expectKey = frames.back().isObject;
    if (c != '"')
      continue;
    size_t end = i + 1;
    while (end < text.size() && text[end] != '"')
      end += text[end] == '\\' ? 2 : 1;
    if (!frames.empty() && frames.back().expectKey) {
      // Decode escapes by parsing the key as a JSON string.
      llvm::Expected<json::Value> key = json::parse(text.slice(i, end + 1));
      std::string name =
          key && key->getAsString() ? key->getAsString()->str() : std::string();
      if (!key)
        llvm::consumeError(key.takeError());
      if (!frames.back().keys.insert(name).second)
        return std::make_pair(name, i);
      frames.back().expectKey = false;
    }
    i = end;
  }
  return std::nullopt;
}

llvm::Expected<json::Value> parseJSON(StringRef text) {
  // llvm::json::parse recurses once per nesting level: bound the depth
  // first so that a hostile file cannot overflow the stack.
  constexpr size_t kMaxDepth = 64;
  if (scanJSON(text).depth > kMaxDepth)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("nested deeper than {0} levels", kMaxDepth));
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return value.takeError();
  if (auto dup = findDuplicateKey(text))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("key \"{0}\" appears twice in one object (line {1})",
                      dup->first,
                      text.take_front(dup->second).count('\n') + 1));
  return value;
}

llvm::Expected<Manifest> parseManifest(StringRef text) {
  if (llvm::Error err = checkManifestText(text))
    return err;
  llvm::Expected<json::Value> value = parseJSON(text);
  if (!value)
    return corrupt("manifest.json",
                   "not valid JSON: " + llvm::toString(value.takeError()));
  // The version first: another version may follow another schema.
  const json::Object *top = value->getAsObject();
  std::optional<int64_t> version =
      top ? top->getInteger("version") : std::nullopt;
  if (version &&
      (*version < kMinManifestVersion || *version > kManifestVersion))
    return corrupt("manifest.json version",
                   llvm::formatv("is {0}, this runtime reads {1} to {2}",
                                 *version, kMinManifestVersion,
                                 kManifestVersion));
  if (llvm::Error err = checkKnownKeys(*value))
    return err;
  Manifest manifest;
  json::Path::Root root("manifest");
  if (!fromJSON(*value, manifest, root))
    return corrupt("manifest.json", "does not follow the schema: " +
                                        llvm::toString(root.getError()));
  if (llvm::Error err = checkManifestValues(manifest))
    return err;
  for (size_t i = 0; i < manifest.kernels.size(); ++i)
    if (llvm::Error err = checkKernel(manifest.kernels[i], i))
      return err;
  int64_t required = requiredVersion(manifest);
  if (manifest.version < required)
    return corrupt(
        "manifest.json version",
        llvm::formatv("is {0}, but {1} need version {2}", manifest.version,
                      required == 4 ? "quantized kernels (quantize_fp8, "
                                      "typed workspace buffers, their "
                                      "tensor maps)"
                                    : "kernels of several launches (splits, "
                                      "then, workspace)",
                      required));
  return manifest;
}

//===----------------------------------------------------------------------===//
// Description
//===----------------------------------------------------------------------===//

static std::string lengthText(const std::optional<int64_t> &len) {
  return len ? std::to_string(*len) : std::string("?");
}

/// "bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=? Nk=? scale=0.08838835
/// strided".
/// A paged kernel adds " page_size=16" after the lengths, a quantized one
/// " quantize_fp8(<options>)" at the end.
static std::string keyText(const FwdKey &k) {
  return llvm::formatv("{0} D={1}{2}{3} B={4} Hq={5} Hkv={6} Nq={7} Nk={8}"
                       "{11} scale={9} {10}{12}{13}",
                       k.dtype, k.headDim, k.causal ? " causal" : "",
                       k.hasLse ? " +lse" : "", lengthText(k.batch),
                       lengthText(k.numHeadsQ), lengthText(k.numHeadsKV),
                       lengthText(k.seqLenQ), lengthText(k.seqLenK),
                       llvm::format("%.7g", k.scale),
                       k.strided ? "strided" : "contiguous",
                       k.pageSize ? " page_size=" + std::to_string(k.pageSize)
                                  : std::string(),
                       k.varlen ? " varlen" : "",
                       k.quantizeFp8 ? " quantize_fp8(" + *k.quantizeFp8 + ")"
                                     : std::string())
      .str();
}

std::string describeKey(const KernelEntry &kernel) {
  return kernel.name + ": " + keyText(kernel.key);
}

/// The later launches: "k_0 (256 threads, 58 registers, 0/0 B spilled)".
static std::string describeThen(const KernelEntry &kernel) {
  std::string out;
  for (const KernelLaunch &l : kernel.then) {
    const Resources &r = l.resources;
    out += llvm::formatv("{0}{1}/{2} ({3} threads, {4} registers, {5}/{6} B "
                         "spilled)",
                         out.empty() ? "" : ", ", l.cubin, l.name,
                         l.threads[0] * l.threads[1] * l.threads[2],
                         r.registers, r.spillStoreBytes, r.spillLoadBytes)
               .str();
  }
  return out;
}

std::string describe(const KernelEntry &kernel) {
  const Resources &r = kernel.resources;
  return kernel.name + ": " + kernel.kind + " " + keyText(kernel.key) +
         llvm::formatv(
             " {8} BLOCK_M={0} BLOCK_N={1} | {2} threads, {3} "
             "registers, {4} B smem, {5} B stack, {6}/{7} B spilled",
             kernel.key.blockM, kernel.key.blockN,
             kernel.threads[0] * kernel.threads[1] * kernel.threads[2],
             r.registers, r.sharedBytes + kernel.dynamicSharedBytes,
             r.stackBytes, r.spillStoreBytes, r.spillLoadBytes, kernel.key.path)
             .str() +
         (kernel.key.splits > 1
              ? llvm::formatv(" | splits {0}, then {1}", kernel.key.splits,
                              describeThen(kernel))
                    .str()
          : kernel.isBackward() || kernel.isQuantized()
              ? " | then " + describeThen(kernel)
              : "") +
         (kernel.variant.empty() ? "" : " | variant " + kernel.variant);
}

} // namespace attn::bundle

//===- ManifestDecode.cpp - manifest.json decoding and parsing ------------===//

#include "ManifestChecks.h"
#include "attn/manifest/Manifest.h"

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

/// dims (4) and strides (3) of a workspace buffer's tensor map.
static bool mapWorkspaceView(json::ObjectMapper &o, const json::Value &value,
                             Param &param, json::Path path) {
  std::vector<int64_t> dims, strides;
  if (!o.map("dims", dims) || !o.map("strides", strides))
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
    path.field("workspace")
        .report("a parameter names an operand or a "
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
  for (StringRef key : {"dims", "strides"})
    if (!workspaceMap && value.getAsObject()->get(key)) {
      path.field(key).report("only a workspace buffer's tensor_map states "
                             "its view (dims, strides)");
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
    if (value.getAsObject()->get("swizzle")) {
      path.field("swizzle").report("only a tensor_map has a swizzle");
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
    if (!o.map("box", box) || !o.map("swizzle", param.swizzle) ||
        !o.mapOptional("transposed", param.transposed) ||
        !o.mapOptional("heads_inner", param.headsInner) ||
        !o.mapOptional("packed", param.packed))
      return false;
    if (box.size() != 4) {
      path.field("box").report(
          param.transposed   ? "expected 4 extents (N, D, H, B)"
          : param.headsInner ? "expected 4 extents (D, H, N, B)"
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
// Parsing
//===----------------------------------------------------------------------===//

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
  if (version && *version != kManifestVersion)
    return corrupt("manifest.json version",
                   llvm::formatv("is {0}, this runtime reads version {1} "
                                 "only (it holds each tensor map's recorded "
                                 "swizzle): rebuild the bundle with "
                                 "attn-compile",
                                 *version, kManifestVersion));
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
  return manifest;
}

} // namespace attn::bundle

//===- ManifestEncode.cpp - manifest.json encoding ------------------------===//

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
  if (param.field == Param::Field::TensorMap) {
    obj["box"] = json::Array(param.box);
    obj["swizzle"] = param.swizzle;
  }
  if (param.field == Param::Field::TensorMap && param.workspace >= 0) {
    obj["dims"] = json::Array(param.dims);
    obj["strides"] = json::Array(param.strides);
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

json::Value toJSON(const Manifest &manifest) {
  json::Array kernels;
  for (const KernelEntry &kernel : manifest.kernels)
    kernels.push_back(toJSON(kernel));
  return json::Object{{"version", manifest.version},
                      {"generator", manifest.generator},
                      {"chip", manifest.chip},
                      {"kernels", std::move(kernels)}};
}

} // namespace attn::bundle

//===- ManifestOperands.cpp - operand types recorded against the key ------===//
//
// The runtime dispatches on the key alone and then launches the cubin, so
// the key must describe what the cubin was compiled for. attn-compile
// records each operand's element type and static sizes off the kernel
// function ("operands"); the reader checks that they say what the key
// says, and that no other size is static (the key could not select on it).
//
//===----------------------------------------------------------------------===//

#include "ManifestChecks.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using llvm::formatv;
using llvm::StringRef;
namespace json = llvm::json;

namespace attn::bundle {

json::Value operandsToJSON(const std::vector<OperandType> &operands) {
  json::Object out;
  for (const OperandType &t : operands) {
    json::Array shape;
    for (const std::optional<int64_t> &d : t.shape)
      shape.push_back(d ? json::Value(*d) : json::Value(nullptr));
    out[operandName(t.operand)] =
        json::Object{{"dtype", t.dtype}, {"shape", std::move(shape)}};
  }
  return out;
}

bool operandsFromJSON(const json::Value &value,
                      std::vector<OperandType> &operands, json::Path path) {
  const json::Object *obj = value.getAsObject();
  if (!obj) {
    path.report("expected an object of operand types");
    return false;
  }
  operands.clear();
  for (const auto &[name, type] : *obj) {
    OperandType t;
    json::Path at = path.field(name);
    std::optional<Operand> op = parseOperand(name);
    if (!op) {
      at.report("not an operand name (q, k, v, o, lse, ...)");
      return false;
    }
    t.operand = *op;
    json::ObjectMapper o(type, at);
    if (!o || !o.map("dtype", t.dtype) || !o.map("shape", t.shape))
      return false;
    operands.push_back(std::move(t));
  }
  llvm::sort(operands, [](const OperandType &a, const OperandType &b) {
    return a.operand < b.operand;
  });
  return true;
}

namespace {

/// What the key says of one dimension of an operand: the key field and its
/// value (nullopt: dynamic), or a size the key has no field for (`free`),
/// which must be dynamic.
struct Dim {
  StringRef name;
  std::optional<int64_t> value;
  bool free = false;
};

Dim freeDim(StringRef name) { return {name, std::nullopt, true}; }

/// The dimensions of `op` in a kernel of `k` (docs/bundle.md): [B, Hq, Nq,
/// D] and [B, Hkv, Nk, D], [num_pages, page_size, Hkv, D] caches, varlen's
/// packed [total, H, D] and [Hq, total_q], the tables.
std::vector<Dim> expectedDims(Operand op, const FwdKey &k) {
  Dim b{"batch", k.batch}, hq{"num_heads_q", k.numHeadsQ},
      hkv{"num_heads_kv", k.numHeadsKV}, nq{"seqlen_q", k.seqLenQ},
      nk{"seqlen_k", k.seqLenK}, d{"head_dim", k.headDim},
      page{"page_size", k.pageSize};
  switch (op) {
  case Operand::Q:
  case Operand::O:
  case Operand::DO:
  case Operand::DQ:
    if (k.varlen)
      return {freeDim("total_q"), hq, d};
    return {b, hq, nq, d};
  case Operand::K:
  case Operand::V:
  case Operand::DK:
  case Operand::DV:
    if (k.pageSize > 0)
      return {freeDim("num_pages"), page, hkv, d};
    if (k.varlen)
      return {freeDim("total_k"), hkv, d};
    return {b, hkv, nk, d};
  case Operand::LSE:
    if (k.varlen)
      return {hq, freeDim("total_q")};
    return {b, hq, nq};
  case Operand::QDescale:
  case Operand::KDescale:
  case Operand::VDescale:
    return {b, hkv};
  case Operand::BlockTable:
    return {b, freeDim("max_pages")};
  case Operand::CacheSeqlens:
    return {b};
  case Operand::CuSeqlensQ:
  case Operand::CuSeqlensK:
    return {freeDim("batch + 1")};
  case Operand::MaxSeqlenQ:
  case Operand::MaxSeqlenK:
    break;
  }
  return {};
}

} // namespace

int64_t sampleSize(Operand op, int64_t dim, const FwdKey &key,
                   const CallSample &s) {
  if (op == Operand::MaxSeqlenQ)
    return s.seqLenQ;
  if (op == Operand::MaxSeqlenK)
    return s.seqLenK;
  std::vector<Dim> dims = expectedDims(op, key);
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size()))
    return 0;
  const Dim &d = dims[dim];
  int64_t pages = key.pageSize > 0 ? llvm::divideCeil(s.seqLenK, key.pageSize)
                                   : 0;
  return llvm::StringSwitch<int64_t>(d.name)
      .Case("batch", s.batch)
      .Case("num_heads_q", s.numHeadsQ)
      .Case("num_heads_kv", s.numHeadsKV)
      .Case("seqlen_q", s.seqLenQ)
      .Case("seqlen_k", s.seqLenK)
      .Case("head_dim", key.headDim)
      .Case("page_size", key.pageSize)
      .Case("total_q", s.batch * s.seqLenQ)
      .Case("total_k", s.batch * s.seqLenK)
      .Case("num_pages", s.batch * pages)
      .Case("max_pages", pages)
      .Case("batch + 1", s.batch + 1)
      .Default(0);
}

/// The element type of `op` in a kernel of `k`: the key's dtype, but a
/// bf16 O for e4m3, f32 LSE and descales, i32 tables.
StringRef expectedDtype(Operand op, const FwdKey &k) {
  if (op == Operand::LSE || isDescale(op))
    return "f32";
  if (isPagedOperand(op) || op == Operand::CuSeqlensQ ||
      op == Operand::CuSeqlensK)
    return "i32";
  if (op == Operand::O && k.dtype == "e4m3")
    return "bf16";
  return k.dtype;
}

std::optional<std::array<int64_t, 4>> staticDims(Operand op,
                                                 const FwdKey &key) {
  std::vector<Dim> dims = expectedDims(op, key);
  if (dims.size() != 4)
    return std::nullopt;
  std::array<int64_t, 4> out;
  for (size_t i = 0; i < 4; ++i) {
    if (!dims[i].value)
      return std::nullopt;
    out[i] = *dims[i].value;
  }
  return out;
}

namespace {

std::string dimText(const std::optional<int64_t> &d) {
  return d ? std::to_string(*d) : std::string("dynamic");
}

llvm::Error checkOne(const KernelEntry &kernel, const OperandType &t,
                     const std::string &at) {
  if (auto why = whyAbsent(kernel, t.operand))
    return corrupt(at, "is a type of " + operandName(t.operand) +
                           ", which is no operand " + *why);
  if (isScalarOperand(t.operand))
    return corrupt(at, operandName(t.operand) +
                           " is a scalar: it has no recorded type");
  std::vector<Dim> dims = expectedDims(t.operand, kernel.key);
  if (t.shape.size() != dims.size())
    return corrupt(at, formatv("has rank {0}, but {1} has rank {2} in this "
                               "kernel",
                               t.shape.size(), operandName(t.operand),
                               dims.size()));
  StringRef dtype = expectedDtype(t.operand, kernel.key);
  if (t.dtype != dtype)
    return corrupt(at, formatv("dtype is {0}, but {1} is {2} in a kernel "
                               "of key dtype {3}",
                               t.dtype, operandName(t.operand), dtype,
                               kernel.key.dtype));
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim &want = dims[i];
    if (want.free && t.shape[i])
      return corrupt(at, formatv("dim {0} ({1}) is {2}, but the key has no "
                                 "field for it: the runtime would launch the "
                                 "kernel on calls of any {1}",
                                 i, want.name, *t.shape[i]));
    if (!want.free && t.shape[i] != want.value)
      return corrupt(at, formatv("dim {0} is {1} in the kernel, but the "
                                 "key's {2} is {3}: the key does not "
                                 "describe the kernel",
                                 i, dimText(t.shape[i]), want.name,
                                 dimText(want.value)));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error checkOperandTypes(const KernelEntry &kernel,
                              const llvm::Twine &at) {
  if (kernel.operands.empty())
    return llvm::Error::success();
  std::string where = (at + ".operands").str();
  std::array<bool, kNumOperands> recorded = {};
  for (const OperandType &t : kernel.operands) {
    if (llvm::Error err =
            checkOne(kernel, t, where + "." + operandName(t.operand).str()))
      return err;
    recorded[static_cast<size_t>(t.operand)] = true;
  }
  for (size_t i = 0; i < kNumOperands; ++i) {
    auto op = static_cast<Operand>(i);
    if (!recorded[i] && !isScalarOperand(op) && !whyAbsent(kernel, op))
      return corrupt(where, "records no type of " + operandName(op) +
                                ", an operand of this kernel");
  }
  return llvm::Error::success();
}

} // namespace attn::bundle

//===- ManifestSchema.cpp - the manifest's size, keys and free values -----===//
//
// The reader refuses what it would otherwise ignore or trip over: a text
// too large to parse in bounded memory, a key the schema does not have (a
// typo, or a field of a newer writer this reader would drop, such as a
// later launch's own `then`), a chip that is not an NVIDIA target, two
// kernels of one name, quantize options it cannot read.
//
//===----------------------------------------------------------------------===//

#include "ManifestChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using llvm::formatv;
using llvm::StringRef;
namespace json = llvm::json;

namespace attn::bundle {

JsonShape scanJSON(StringRef text) {
  JsonShape shape;
  size_t depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      inString = escaped || c != '"';
      escaped = !escaped && c == '\\';
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      shape.depth = std::max(shape.depth, ++depth);
      shape.objects += c == '{';
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return shape;
}

llvm::Error checkManifestText(StringRef text) {
  if (text.size() > kMaxManifestBytes)
    return corrupt("manifest.json",
                   formatv("is {0} bytes, more than the {1} a manifest may "
                           "have",
                           text.size(), kMaxManifestBytes));
  size_t objects = scanJSON(text).objects;
  if (objects > kMaxManifestObjects)
    return corrupt("manifest.json",
                   formatv("has {0} JSON objects, more than the {1} a "
                           "manifest may have",
                           objects, kMaxManifestObjects));
  return llvm::Error::success();
}

namespace {

/// Walks the parsed manifest, holding each object to the keys of its place.
class KeyChecker {
public:
  llvm::Error manifest(const json::Value &root);

private:
  /// `value` (an object, or anything else: the decoder reports its type)
  /// has only `keys`.
  llvm::Error only(const json::Value &value, const std::string &at,
                   StringRef what, llvm::ArrayRef<StringRef> keys);
  llvm::Error kernel(const json::Value &value, const std::string &at);
  llvm::Error launch(const json::Value &value, const std::string &at,
                     bool entry);
  llvm::Error gridDims(const json::Value *dims, const std::string &at,
                       StringRef what);
  llvm::Error params(const json::Value *params, const std::string &at);
  llvm::Error workspace(const json::Value *buffers, const std::string &at);
  llvm::Error operands(const json::Value *operands, const std::string &at);
};

/// The elements of `value` if it is an array (else none: the decoder
/// reports it).
llvm::ArrayRef<json::Value> elements(const json::Value *value) {
  const json::Array *array = value ? value->getAsArray() : nullptr;
  if (!array)
    return {};
  return llvm::ArrayRef<json::Value>(array->data(), array->size());
}

const json::Value *member(const json::Value &value, StringRef key) {
  const json::Object *obj = value.getAsObject();
  return obj ? obj->get(key) : nullptr;
}

std::string at(const std::string &base, StringRef key) {
  return base + "." + key.str();
}

std::string at(const std::string &base, StringRef key, size_t i) {
  return formatv("{0}.{1}[{2}]", base, key, i).str();
}

llvm::Error KeyChecker::only(const json::Value &value, const std::string &where,
                             StringRef what, llvm::ArrayRef<StringRef> keys) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return llvm::Error::success();
  for (const auto &[key, unused] : *obj)
    if (!llvm::is_contained(keys, StringRef(key)))
      return corrupt(where,
                     formatv("unknown key \"{0}\" in {1} (it has {2})",
                             StringRef(key), what, llvm::join(keys, ", ")));
  return llvm::Error::success();
}

llvm::Error KeyChecker::manifest(const json::Value &root) {
  if (llvm::Error err = only(root, "manifest.json", "the manifest",
                             {"version", "generator", "chip", "kernels"}))
    return err;
  llvm::ArrayRef<json::Value> kernels = elements(member(root, "kernels"));
  if (kernels.size() > kMaxManifestKernels)
    return corrupt("manifest.json kernels",
                   formatv("{0} kernels, more than the {1} a bundle may have",
                           kernels.size(), kMaxManifestKernels));
  for (size_t i = 0; i < kernels.size(); ++i)
    if (llvm::Error err = kernel(kernels[i], formatv("kernels[{0}]", i)))
      return err;
  return llvm::Error::success();
}

llvm::Error KeyChecker::kernel(const json::Value &value,
                               const std::string &where) {
  if (llvm::Error err = launch(value, where, /*entry=*/true))
    return err;
  if (const json::Value *key = member(value, "key"))
    if (llvm::Error err =
            only(*key, at(where, "key"), "a kernel key",
                 {"dtype", "head_dim", "causal", "lse", "scale", "batch",
                  "num_heads_q", "num_heads_kv", "seqlen_q", "seqlen_k",
                  "layout", "block_m", "block_n", "path", "splits", "page_size",
                  "varlen", "quantize_fp8"}))
      return err;
  llvm::ArrayRef<json::Value> then = elements(member(value, "then"));
  for (size_t i = 0; i < then.size(); ++i)
    if (llvm::Error err =
            launch(then[i], at(where, "then", i), /*entry=*/false))
      return err;
  if (llvm::Error err = workspace(member(value, "workspace"), where))
    return err;
  return operands(member(value, "operands"), at(where, "operands"));
}

/// A kernel entry's own fields, or those of one of its later launches
/// (`then`), which have no key, kind, later launches or workspace.
llvm::Error KeyChecker::launch(const json::Value &value,
                               const std::string &where, bool entry) {
  static constexpr StringRef launchKeys[] = {
      "name", "cubin", "cubin_sha256", "ptx", "launch", "params", "resources"};
  static constexpr StringRef entryKeys[] = {
      "name",      "cubin",   "cubin_sha256",    "ptx",
      "launch",    "params",  "resources",       "kind",
      "key",       "variant", "persistent_ctas", "then",
      "workspace", "operands"};
  if (llvm::Error err =
          entry ? only(value, where, "a kernel", entryKeys)
                : only(value, where, "a later launch (then)", launchKeys))
    return err;
  if (const json::Value *l = member(value, "launch")) {
    if (llvm::Error err =
            only(*l, at(where, "launch"), "a launch shape",
                 {"grid", "threads", "dynamic_shared_bytes", "cluster"}))
      return err;
    if (llvm::Error err =
            gridDims(member(*l, "grid"), at(at(where, "launch"), "grid"),
                     "a grid dimension"))
      return err;
  }
  if (const json::Value *r = member(value, "resources"))
    if (llvm::Error err = only(*r, at(where, "resources"), "resources",
                               {"registers", "shared_bytes", "stack_bytes",
                                "spill_store_bytes", "spill_load_bytes"}))
      return err;
  return params(member(value, "params"), where);
}

/// Grid dimensions and workspace extents (`what`): a constant and terms.
/// A stray "operand" (the version-1 form) would leave which extent the
/// writer meant unknown.
llvm::Error KeyChecker::gridDims(const json::Value *dims,
                                 const std::string &where, StringRef what) {
  llvm::ArrayRef<json::Value> all = elements(dims);
  for (size_t i = 0; i < all.size(); ++i) {
    std::string dim = formatv("{0}[{1}]", where, i);
    if (llvm::Error err = only(all[i], dim, what, {"constant", "terms"}))
      return err;
    llvm::ArrayRef<json::Value> terms = elements(member(all[i], "terms"));
    for (size_t j = 0; j < terms.size(); ++j)
      if (llvm::Error err = only(terms[j], at(dim, "terms", j), "a term",
                                 {"operand", "dim", "divisor", "offset"}))
        return err;
  }
  return llvm::Error::success();
}

llvm::Error KeyChecker::params(const json::Value *params,
                               const std::string &where) {
  // The decoder refuses keys of another field (an index on a pointer, a
  // box on a size) by name.
  llvm::ArrayRef<json::Value> all = elements(params);
  for (size_t i = 0; i < all.size(); ++i)
    if (llvm::Error err =
            only(all[i], at(where, "params", i), "a parameter",
                 {"operand", "workspace", "field", "index", "box", "transposed",
                  "heads_inner", "packed", "dims", "strides", "swizzle"}))
      return err;
  return llvm::Error::success();
}

llvm::Error KeyChecker::workspace(const json::Value *buffers,
                                  const std::string &where) {
  llvm::ArrayRef<json::Value> all = elements(buffers);
  for (size_t i = 0; i < all.size(); ++i) {
    std::string buffer = at(where, "workspace", i);
    if (llvm::Error err = only(all[i], buffer, "a workspace buffer",
                               {"name", "shape", "dtype", "copy_of"}))
      return err;
    if (llvm::Error err = gridDims(member(all[i], "shape"), at(buffer, "shape"),
                                   "a workspace extent"))
      return err;
  }
  return llvm::Error::success();
}

/// The operand names are the decoder's; each type has a dtype and shape.
llvm::Error KeyChecker::operands(const json::Value *operands,
                                 const std::string &where) {
  const json::Object *obj = operands ? operands->getAsObject() : nullptr;
  if (!obj)
    return llvm::Error::success();
  for (const auto &[name, type] : *obj)
    if (llvm::Error err =
            only(type, at(where, name), "an operand type", {"dtype", "shape"}))
      return err;
  return llvm::Error::success();
}

} // namespace

llvm::Error checkKnownKeys(const json::Value &manifest) {
  return KeyChecker().manifest(manifest);
}

/// "sm_<NN>" with NN >= 80 (what attn-compile targets), optionally with
/// the "a" or "f" suffix of the architecture-specific features.
static bool isKnownChip(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return false;
  if (!chip.consume_back("a"))
    chip.consume_back("f");
  unsigned number = 0;
  return !chip.empty() && llvm::all_of(chip, llvm::isDigit) &&
         !chip.getAsInteger(10, number) && number >= 80 && number < 1000;
}

llvm::Error checkManifestValues(const Manifest &manifest) {
  if (!isKnownChip(manifest.chip))
    return corrupt("manifest.json chip",
                   formatv("expected an NVIDIA target sm_<NN> with NN >= 80 "
                           "(such as \"sm_90a\"), got \"{0}\"",
                           manifest.chip));
  llvm::StringMap<size_t> names;
  for (size_t i = 0; i < manifest.kernels.size(); ++i) {
    auto [it, inserted] = names.try_emplace(manifest.kernels[i].name, i);
    if (!inserted)
      return corrupt(formatv("kernels[{0}].name", i),
                     formatv("\"{0}\" is also the name of kernels[{1}]; each "
                             "kernel has a name of its own (tuning.json and "
                             "messages name kernels)",
                             it->first(), it->second));
  }
  return llvm::Error::success();
}

llvm::Error checkQuantizeOptions(StringRef options, const llvm::Twine &where) {
  auto bad = [&](const llvm::Twine &why) {
    return corrupt(where, "\"" + options + "\": " + why +
                              " (attn-compile records block-m, block-n, "
                              "hadamard, qk-granularity and v-granularity)");
  };
  llvm::StringSet<> seen;
  llvm::SmallVector<StringRef> tokens;
  options.split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    auto [key, value] = token.split('=');
    int64_t number = 0;
    bool valid = key == "block-m" || key == "block-n"
                     ? !value.getAsInteger(10, number) && number >= 0
                 : key == "hadamard" ? value == "true" || value == "false"
                 : key == "qk-granularity"
                     ? value == "tensor" || value == "head" || value == "block"
                 : key == "v-granularity"
                     ? value == "head" || value == "channel"
                     : false;
    if (!valid)
      return bad("\"" + token +
                 "\" is not an option of attn-quantize-fp8 "
                 "with a value it takes");
    if (!seen.insert(key).second)
      return bad("\"" + key + "\" is given twice");
  }
  if (seen.size() != 5)
    return bad("an option is missing");
  return llvm::Error::success();
}

} // namespace attn::bundle

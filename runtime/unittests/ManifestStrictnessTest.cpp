//===- ManifestStrictnessTest.cpp - what the manifest reader refuses ------===//
//
// The reader refuses what it used to ignore: a key its schema does not have
// in any object (a later launch's own `then` included), a chip that is no
// NVIDIA target, two kernels of one name, key.page_size 0, quantize options
// it cannot read, a manifest too large to parse in bounded memory, and a
// key edited so that it no longer says what the operand types attn-compile
// recorded say (head_dim 128 -> 64). Edits go through the JSON text, as a
// user's would.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <functional>
#include <set>

using namespace attn::bundle;
using namespace attn::testing;
namespace json = llvm::json;

namespace {

/// parseManifest's error for `text` ("" when it parses).
std::string errorOf(const std::string &text) {
  llvm::Expected<Manifest> parsed = parseManifest(text);
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

/// The text of `m` after `edit` of its JSON.
std::string edited(const Manifest &m,
                   const std::function<void(json::Object &)> &edit) {
  json::Value value = toJSON(m);
  edit(*value.getAsObject());
  return llvm::formatv("{0:2}", value).str();
}

json::Object &kernelAt(json::Object &root, size_t i) {
  return *(*root.getArray("kernels"))[i].getAsObject();
}

#define EXPECT_ERROR(text, part)                                               \
  do {                                                                         \
    std::string error_ = errorOf(text);                                        \
    EXPECT_NE(error_.find(part), std::string::npos)                            \
        << "error: " << (error_.empty() ? "(none: it parsed)" : error_);       \
  } while (false)

/// Kernels whose manifest has every kind of object: later launches, grid
/// terms with offsets, workspace buffers, tensor maps of operands and of
/// workspace buffers, value parameters.
Manifest everyObject() {
  return manifestOf({splitKernel("split", 4), quantizedKernel("quantized"),
                     varlenKernel("varlen"), wgmmaKernel("wgmma")});
}

/// Calls `f` on every object in `value`, depth first, with its path.
void forEachObject(
    json::Value &value, const std::string &path,
    const std::function<void(json::Object &, const std::string &)> &f) {
  if (json::Object *obj = value.getAsObject()) {
    f(*obj, path);
    for (auto &[key, child] : *obj)
      forEachObject(child, path + "." + std::string(llvm::StringRef(key)), f);
  } else if (json::Array *array = value.getAsArray()) {
    for (size_t i = 0; i < array->size(); ++i)
      forEachObject((*array)[i], path + "[" + std::to_string(i) + "]", f);
  }
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

/// The place of an object in the schema: its path without indices.
std::string placeOf(const std::string &path) {
  std::string place;
  bool index = false;
  for (char c : path) {
    index = c == '[' || (index && c != ']');
    if (!index && c != ']')
      place += c;
  }
  return place;
}

/// One object of each place (the first), whatever it holds.
TEST(ManifestKeys, AnUnknownKeyInAnyObjectIsRefused) {
  Manifest m = everyObject();
  ASSERT_EQ(errorOf(manifestText(m)), "");
  json::Value base = toJSON(m);
  std::vector<std::string> paths;
  std::set<std::string> places;
  forEachObject(base, "manifest", [&](json::Object &, const std::string &p) {
    paths.push_back(places.insert(placeOf(p)).second ? p : "");
  });
  ASSERT_GE(places.size(), 17u); // manifest, kernels[], key, launch, ...
  for (size_t target = 0; target < paths.size(); ++target) {
    if (paths[target].empty())
      continue;
    SCOPED_TRACE(paths[target]);
    json::Value value = toJSON(m);
    size_t n = 0;
    forEachObject(value, "manifest",
                  [&](json::Object &obj, const std::string &) {
                    if (n++ == target)
                      obj["surplus"] = 1;
                  });
    EXPECT_ERROR(llvm::formatv("{0:2}", value).str(),
                 "unknown key \"surplus\"");
  }
}

/// A later launch has no later launches of its own: a nested `then` was
/// ignored, and its launch never ran.
TEST(ManifestKeys, NestedThenIsRefused) {
  Manifest m = manifestOf({splitKernel("s", 4)});
  std::string text = edited(m, [](json::Object &root) {
    json::Array &then = *kernelAt(root, 0).getArray("then");
    json::Value inner = then[0];
    then[0].getAsObject()->try_emplace("then", json::Array{inner});
  });
  EXPECT_ERROR(text, "kernels[0].then[0]: unknown key \"then\" in a later "
                     "launch (then)");
}

/// Keys of another field of a parameter: an index on a pointer, a box on
/// a size.
TEST(ManifestKeys, ParameterKeysOfAnotherField) {
  Manifest m = manifestOf({fwdKernel("k")});
  EXPECT_ERROR(edited(m,
                      [](json::Object &root) {
                        (*(*kernelAt(root, 0).getArray("params"))[0]
                              .getAsObject())["index"] = 0;
                      }),
               "only a size or stride parameter has an index");
  EXPECT_ERROR(
      edited(
          m,
          [](json::Object &root) {
            (*(*kernelAt(root, 0).getArray("params"))[4].getAsObject())["box"] =
                json::Array{64, 64, 1, 1};
          }),
      "only a tensor_map has a box");
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

TEST(ManifestValues, ChipIsAnNvidiaTarget) {
  Manifest m = manifestOf({fwdKernel("k")});
  for (const char *chip : {"banana", "", "sm_", "sm_70", "sm_90b", "sm90a",
                           "compute_90", "sm_-90", "sm_99999"}) {
    SCOPED_TRACE(chip);
    m.chip = chip;
    EXPECT_ERROR(manifestText(m), "chip: expected an NVIDIA target sm_<NN>");
  }
  for (const char *chip : {"sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120f"}) {
    m.chip = chip;
    EXPECT_EQ(errorOf(manifestText(m)), "") << chip;
  }
}

TEST(ManifestValues, KernelNamesAreUnique) {
  EXPECT_ERROR(manifestText(manifestOf(
                   {fwdKernel("a"), fwdKernel("k"), wgmmaKernel("k")})),
               "kernels[2].name: \"k\" is also the name of kernels[1]");
}

/// Absent is contiguous K/V; a page_size written must be a page size.
TEST(ManifestValues, PageSizeZeroIsRefused) {
  Manifest m = manifestOf({fwdKernel("k")});
  EXPECT_ERROR(edited(m,
                      [&](json::Object &root) {
                        (*kernelAt(root, 0).getObject("key"))["page_size"] = 0;
                      }),
               "must be in [1, 1048576]: a kernel on contiguous K/V has no "
               "page_size at manifest.kernels[0].key.page_size");
}

TEST(ManifestValues, QuantizeOptionsAreTheFiveAttnCompileRecords) {
  Manifest m = manifestOf({quantizedKernel("q")});
  ASSERT_EQ(errorOf(manifestText(m)), "");
  for (const char *options :
       {"banana", "",
        "block-m=128 block-n=128 hadamard=false "
        "qk-granularity=block",
        "block-m=128 block-n=128 hadamard=false qk-granularity=block "
        "v-granularity=head hadamard=true",
        "block-m=128 block-n=128 hadamard=maybe qk-granularity=block "
        "v-granularity=head",
        "block-m=-1 block-n=128 hadamard=false qk-granularity=block "
        "v-granularity=head",
        "block-m=128 block-n=128 hadamard=false qk-granularity=row "
        "v-granularity=head",
        "block-m=128 block-n=128 hadamard=false qk-granularity=block "
        "v-granularity=head stages=3"}) {
    SCOPED_TRACE(options);
    m.kernels[0].key.quantizeFp8 = options;
    EXPECT_ERROR(manifestText(m), "kernels[0].key.quantize_fp8: \"");
  }
}

//===----------------------------------------------------------------------===//
// Operand types against the key
//===----------------------------------------------------------------------===//

json::Value dim(std::optional<int64_t> d) {
  return d ? json::Value(*d) : json::Value(nullptr);
}

/// The operand types attn-compile records for `k` (docs/bundle.md): each
/// tensor operand's dtype and sizes, null where dynamic.
json::Object operandRecord(const KernelEntry &k) {
  const FwdKey &key = k.key;
  std::optional<int64_t> none, d = key.headDim, page = key.pageSize;
  auto type = [](const std::string &dtype,
                 std::vector<std::optional<int64_t>> shape) {
    json::Array dims;
    for (const auto &s : shape)
      dims.push_back(dim(s));
    return json::Object{{"dtype", dtype}, {"shape", std::move(dims)}};
  };
  bool paged = key.pageSize > 0;
  std::vector<std::optional<int64_t>> qForm =
      key.varlen ? std::vector<std::optional<int64_t>>{none, key.numHeadsQ, d}
                 : std::vector<std::optional<int64_t>>{key.batch, key.numHeadsQ,
                                                       key.seqLenQ, d};
  std::vector<std::optional<int64_t>> kForm =
      paged ? std::vector<std::optional<int64_t>>{none, page, key.numHeadsKV, d}
      : key.varlen
          ? std::vector<std::optional<int64_t>>{none, key.numHeadsKV, d}
          : std::vector<std::optional<int64_t>>{key.batch, key.numHeadsKV,
                                                key.seqLenK, d};
  json::Object out{
      {"q", type(key.dtype, qForm)},
      {"k", type(key.dtype, kForm)},
      {"v", type(key.dtype, kForm)},
      {"o", type(key.dtype == "e4m3" ? "bf16" : key.dtype, qForm)}};
  if (key.hasLse)
    out["lse"] = type(
        "f32", key.varlen
                   ? std::vector<std::optional<int64_t>>{key.numHeadsQ, none}
                   : std::vector<std::optional<int64_t>>{
                         key.batch, key.numHeadsQ, key.seqLenQ});
  if (key.dtype == "e4m3")
    for (const char *name : {"q_descale", "k_descale", "v_descale"})
      out[name] = type("f32", {key.batch, key.numHeadsKV});
  if (paged)
    out["block_table"] = type("i32", {key.batch, none});
  if (paged && !key.varlen)
    out["cache_seqlens"] = type("i32", {key.batch});
  if (key.varlen) {
    out["cu_seqlens_q"] = type("i32", {none});
    out["cu_seqlens_k"] = type("i32", {none});
  }
  if (k.isBackward()) {
    out["dout"] = type(key.dtype, qForm);
    out["dq"] = type(key.dtype, qForm);
    out["dk"] = type(key.dtype, kForm);
    out["dv"] = type(key.dtype, kForm);
  }
  return out;
}

std::vector<KernelEntry> everyForm() {
  return {fwdKernel("fwd", true),
          withShape(fwdKernel("static"), 2, 8, 4, 100, 130),
          wgmmaKernel("wgmma"),
          fp8Kernel("fp8"),
          gqaPackedKernel("gqa"),
          pagedKernel("paged", 16),
          varlenKernel("varlen"),
          varlenPagedKernel("varlen_paged", 16),
          splitKernel("split", 4),
          quantizedKernel("quantized"),
          bwdKernel("bwd")};
}

/// `kernel` alone in a manifest, with its operand record after `edit`.
std::string withRecord(const KernelEntry &kernel,
                       const std::function<void(json::Object &)> &edit) {
  return edited(manifestOf({kernel}), [&](json::Object &root) {
    json::Object record = operandRecord(kernel);
    edit(record);
    kernelAt(root, 0)["operands"] = std::move(record);
  });
}

TEST(OperandTypes, TheRecordOfEveryFormLoads) {
  for (const KernelEntry &k : everyForm()) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(errorOf(withRecord(k, [](json::Object &) {})), "");
  }
}

/// Each recorded size and dtype changed in turn: a static size to another,
/// a dynamic one to static (the key has it dynamic, or no field for it).
TEST(OperandTypes, EverySizeAndDtypeMustAgreeWithTheKey) {
  for (const KernelEntry &k : everyForm()) {
    SCOPED_TRACE(k.name);
    json::Object record = operandRecord(k);
    for (auto &[name, type] : record) {
      std::string op = llvm::StringRef(name).str();
      size_t rank = type.getAsObject()->getArray("shape")->size();
      for (size_t i = 0; i < rank; ++i) {
        SCOPED_TRACE(op + " dim " + std::to_string(i));
        EXPECT_ERROR(
            withRecord(k,
                       [&](json::Object &r) {
                         json::Value &d =
                             (*(*r.getObject(op)).getArray("shape"))[i];
                         std::optional<int64_t> n = d.getAsInteger();
                         d = n ? *n + 1 : 7;
                       }),
            "kernels[0].operands." + op + ": dim " + std::to_string(i));
      }
      EXPECT_ERROR(
          withRecord(
              k, [&](json::Object &r) { (*r.getObject(op))["dtype"] = "f64"; }),
          "kernels[0].operands." + op + ": dtype is f64");
      EXPECT_ERROR(withRecord(k,
                              [&](json::Object &r) {
                                r.getObject(op)->getArray("shape")->push_back(
                                    1);
                              }),
                   "kernels[0].operands." + op + ": has rank");
      EXPECT_ERROR(withRecord(k, [&](json::Object &r) { r.erase(op); }),
                   "records no type of " + op);
    }
  }
}

/// The edit: head_dim 128 -> 64, everything else (tensor-map
/// boxes included) unchanged.
TEST(OperandTypes, EditedHeadDimNoLongerDescribesTheKernel) {
  KernelEntry k = wgmmaKernel("k");
  std::string text = edited(manifestOf({k}), [&](json::Object &root) {
    kernelAt(root, 0)["operands"] = operandRecord(k);
    (*kernelAt(root, 0).getObject("key"))["head_dim"] = 64;
  });
  EXPECT_ERROR(text, "kernels[0].operands.q: dim 3 is 128 in the kernel, but "
                     "the key's head_dim is 64: the key does not describe "
                     "the kernel");
}

TEST(OperandTypes, OperandsTheKernelDoesNotHave) {
  KernelEntry k = fwdKernel("k"); // no LSE
  EXPECT_ERROR(
      withRecord(k,
                 [](json::Object &r) {
                   r["lse"] = json::Object{
                       {"dtype", "f32"},
                       {"shape", json::Array{nullptr, nullptr, nullptr}}};
                 }),
      "kernels[0].operands.lse: is a type of lse, which is no "
      "operand in a kernel without LSE");
  EXPECT_ERROR(
      withRecord(
          k,
          [](json::Object &r) {
            r["x"] = json::Object{{"dtype", "f32"}, {"shape", json::Array{}}};
          }),
      "not an operand name");
}

//===----------------------------------------------------------------------===//
// Size
//===----------------------------------------------------------------------===//

TEST(ManifestSize, TooManyBytesObjectsOrKernels) {
  std::string text = manifestText(manifestOf({fwdKernel("k")}));
  std::string padded = text + std::string((16 << 20) + 1 - text.size(), ' ');
  EXPECT_ERROR(padded, "manifest.json: is 16777217 bytes, more than the "
                       "16777216 a manifest may have");
  std::string objects = "{\"version\": 5, \"pad\": [{}";
  for (int i = 0; i < (1 << 18); ++i)
    objects += ",{}";
  objects += "]}";
  EXPECT_ERROR(objects, "manifest.json: has 262146 JSON objects, more than "
                        "the 262144 a manifest may have");
  std::string kernels = "{\"version\": 5, \"generator\": \"g\", "
                        "\"chip\": \"sm_90a\", \"kernels\": [{}";
  for (int i = 1; i < 1025; ++i)
    kernels += ", {}";
  EXPECT_ERROR(kernels + "]}",
               "1025 kernels, more than the 1024 a bundle may have");
}

/// The case: 10,000 kernels in 30 MB took 7 s and 3.7 GB. It is
/// refused by its size before a byte is parsed.
TEST(ManifestSize, HugeManifestIsRefusedFast) {
  json::Value one = toJSON(manifestOf({fwdKernel("k")}));
  std::string entry =
      llvm::formatv("{0}", (*one.getAsObject()->getArray("kernels"))[0]).str();
  std::string text = "{\"version\": 5, \"generator\": \"g\", \"chip\": "
                     "\"sm_90a\", \"kernels\": [" +
                     entry;
  while (text.size() < (30u << 20))
    text += "," + entry;
  text += "]}";
  TempDir dir;
  dir.write("manifest.json", text);
  auto start = std::chrono::steady_clock::now();
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "bytes, more than the 16777216");
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      1.0);
}

} // namespace

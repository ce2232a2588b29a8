//===- ManifestTest.cpp - manifest.json encoding and checks ---------------===//

#include "TestBundles.h"

#include "llvm/Support/JSON.h"

using namespace attn::bundle;
using namespace attn::testing;
namespace json = llvm::json;

namespace {

/// Two kernels covering every encoded form: static and dynamic lengths,
/// constant and operand grid dimensions, LSE and indexed parameters.
Manifest sampleManifest() {
  // A wgmma kernel: a folded 1-D grid ceil(Nq / 128) * Hq * B, tensor maps.
  KernelEntry a = withShape(wgmmaKernel("fwd_static"), 1, 32, 8, 8192, 8192);
  a.key.hasLse = true;
  appendDescriptor(a.params, Operand::LSE);
  a.key.causal = true;
  a.key.strided = false;
  a.key.scale = 0.125;
  a.grid[2] = GridDim{3, {}};
  a.dynamicSharedBytes = 65536;
  a.cluster = {2, 1, 1};
  a.resources = {255, 1024, 16, 4, 8};
  KernelEntry b = fwdKernel("fwd_dynamic");
  b.key.dtype = "f16";
  b.key.headDim = 64;
  b.key.numHeadsQ = 16; // the other lengths stay dynamic
  b.key.blockM = 128;
  b.key.blockN = 32;
  b.threads = {32, 4, 1};
  return manifestOf({a, b});
}

void expectSameKernel(const KernelEntry &x, const KernelEntry &y) {
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.cubin, y.cubin);
  EXPECT_EQ(x.ptx, y.ptx);
  EXPECT_EQ(x.key.dtype, y.key.dtype);
  EXPECT_EQ(x.key.headDim, y.key.headDim);
  EXPECT_EQ(x.key.causal, y.key.causal);
  EXPECT_EQ(x.key.hasLse, y.key.hasLse);
  EXPECT_EQ(x.key.scale, y.key.scale); // exact: printed with 17 digits
  EXPECT_EQ(x.key.batch, y.key.batch);
  EXPECT_EQ(x.key.numHeadsQ, y.key.numHeadsQ);
  EXPECT_EQ(x.key.numHeadsKV, y.key.numHeadsKV);
  EXPECT_EQ(x.key.seqLenQ, y.key.seqLenQ);
  EXPECT_EQ(x.key.seqLenK, y.key.seqLenK);
  EXPECT_EQ(x.key.strided, y.key.strided);
  EXPECT_EQ(x.key.blockM, y.key.blockM);
  EXPECT_EQ(x.key.blockN, y.key.blockN);
  EXPECT_EQ(x.key.path, y.key.path);
  EXPECT_EQ(x.key.varlen, y.key.varlen);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(x.grid[i].constant, y.grid[i].constant) << "grid " << i;
    ASSERT_EQ(x.grid[i].terms.size(), y.grid[i].terms.size()) << "grid " << i;
    for (size_t t = 0; t < x.grid[i].terms.size(); ++t) {
      EXPECT_EQ(x.grid[i].terms[t].operand, y.grid[i].terms[t].operand);
      EXPECT_EQ(x.grid[i].terms[t].dim, y.grid[i].terms[t].dim);
      EXPECT_EQ(x.grid[i].terms[t].divisor, y.grid[i].terms[t].divisor);
      EXPECT_EQ(x.grid[i].terms[t].offset, y.grid[i].terms[t].offset);
    }
  }
  EXPECT_EQ(x.threads, y.threads);
  EXPECT_EQ(x.dynamicSharedBytes, y.dynamicSharedBytes);
  EXPECT_EQ(x.cluster, y.cluster);
  ASSERT_EQ(x.params.size(), y.params.size());
  for (size_t i = 0; i < x.params.size(); ++i) {
    EXPECT_EQ(x.params[i].operand, y.params[i].operand) << "param " << i;
    EXPECT_EQ(x.params[i].field, y.params[i].field) << "param " << i;
    EXPECT_EQ(x.params[i].index, y.params[i].index) << "param " << i;
    EXPECT_EQ(x.params[i].box, y.params[i].box) << "param " << i;
    EXPECT_EQ(x.params[i].transposed, y.params[i].transposed) << "param " << i;
    EXPECT_EQ(x.params[i].headsInner, y.params[i].headsInner) << "param " << i;
    EXPECT_EQ(x.params[i].packed, y.params[i].packed) << "param " << i;
  }
  EXPECT_EQ(x.resources.registers, y.resources.registers);
  EXPECT_EQ(x.resources.sharedBytes, y.resources.sharedBytes);
  EXPECT_EQ(x.resources.stackBytes, y.resources.stackBytes);
  EXPECT_EQ(x.resources.spillStoreBytes, y.resources.spillStoreBytes);
  EXPECT_EQ(x.resources.spillLoadBytes, y.resources.spillLoadBytes);
}

TEST(Manifest, VariantIsOptionalAndRoundTrips) {
  Manifest m = sampleManifest();
  m.kernels[1].variant = "block-n=192 ping-pong=0";
  std::string text = manifestText(m);
  // Only variants carry the field: a default kernel's entry is unchanged.
  EXPECT_EQ(llvm::StringRef(text).count("\"variant\""), 1u);
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->kernels[0].variant, "");
  EXPECT_EQ(parsed->kernels[1].variant, "block-n=192 ping-pong=0");
}

TEST(Manifest, PersistentCtasMustBeTheConstantGridOfAWgmmaKernel) {
  Manifest m = sampleManifest();
  KernelEntry &k = m.kernels[0];
  k.key.path = "wgmma";
  k.grid[0] = GridDim{132, {}};
  k.persistentCtas = 132;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  if (parsed) {
    EXPECT_EQ(parsed->kernels[0].persistentCtas, 132);
  } else {
    // sampleManifest's kernel 0 may not satisfy the wgmma invariants: the
    // error must not be about persistent_ctas.
    std::string error = llvm::toString(parsed.takeError());
    EXPECT_EQ(error.find("persistent_ctas"), std::string::npos) << error;
  }
  for (auto mutate : std::vector<std::function<void(KernelEntry &)>>{
           [](KernelEntry &e) {
             e.grid[0] = GridDim{100, {}};
           },
           [](KernelEntry &e) { e.grid[0].terms.push_back({}); },
           [](KernelEntry &e) { e.key.path = "fma"; }}) {
    Manifest bad = m;
    mutate(bad.kernels[0]);
    llvm::Expected<Manifest> p = parseManifest(manifestText(bad));
    ASSERT_FALSE(bool(p));
    std::string error = llvm::toString(p.takeError());
    EXPECT_NE(error.find("persistent_ctas"), std::string::npos) << error;
  }
}

TEST(Manifest, RoundTrip) {
  Manifest m = sampleManifest();
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->version, kManifestVersion);
  EXPECT_EQ(parsed->generator, m.generator);
  EXPECT_EQ(parsed->chip, m.chip);
  ASSERT_EQ(parsed->kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    expectSameKernel(parsed->kernels[i], m.kernels[i]);
  EXPECT_EQ(parsed->kernels[0].key.numStaticLengths(), 5);
  EXPECT_EQ(parsed->kernels[1].key.numStaticLengths(), 1);
  EXPECT_FALSE(parsed->kernels[1].key.batch.has_value());
}

TEST(Manifest, EncodesDynamicLengthsAsNull) {
  std::string text = manifestText(sampleManifest());
  EXPECT_NE(text.find("\"seqlen_q\": null"), std::string::npos) << text;
  EXPECT_NE(text.find("\"layout\": \"contiguous\""), std::string::npos);
  EXPECT_NE(text.find("\"constant\": 3"), std::string::npos);
}

TEST(Manifest, Describe) {
  std::string text = describe(sampleManifest().kernels[0]);
  for (const char *part :
       {"fwd_static", "bf16", "B=1", "Hq=32", "Hkv=8", "Nq=8192", "D=128",
        "causal", "+lse", "scale=0.125", "contiguous", "255 registers"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " in " << text;
  EXPECT_NE(describe(sampleManifest().kernels[1]).find("B=?"),
            std::string::npos);
}

/// Parses `manifest` after `edit` changed its JSON and returns the error
/// message ("" when it parsed).
template <typename Edit>
std::string errorAfterEditing(const Manifest &manifest, Edit edit) {
  json::Value value = toJSON(manifest);
  edit(*value.getAsObject());
  llvm::Expected<Manifest> parsed =
      parseManifest(llvm::formatv("{0}", value).str());
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

/// errorAfterEditing of the sample manifest.
template <typename Edit> std::string errorAfter(Edit edit) {
  return errorAfterEditing(sampleManifest(), edit);
}

json::Object &kernel0(json::Object &top) {
  return *(*top.getArray("kernels"))[0].getAsObject();
}

#define EXPECT_ERROR_HAS(message, part)                                        \
  EXPECT_NE(std::string(message).find(part), std::string::npos)                \
      << "message: " << (message)

TEST(ManifestCorrupt, BadJSON) {
  llvm::Expected<Manifest> parsed = parseManifest("{\"version\": 1,");
  ASSERT_FALSE(bool(parsed));
  EXPECT_ERROR_HAS(llvm::toString(parsed.takeError()), "not valid JSON");
}

TEST(ManifestCorrupt, ValidSampleParses) {
  EXPECT_EQ(errorAfter([](json::Object &) {}), "");
}

TEST(ManifestCorrupt, MissingFieldNamesItsPath) {
  std::string message = errorAfter(
      [](json::Object &top) { kernel0(top).getObject("key")->erase("dtype"); });
  EXPECT_ERROR_HAS(message, "manifest.kernels[0].key.dtype");
  message = errorAfter([](json::Object &top) {
    (*top.getArray("kernels"))[1].getAsObject()->getObject("key")->erase(
        "seqlen_k");
  });
  EXPECT_ERROR_HAS(message, "manifest.kernels[1].key.seqlen_k");
  message = errorAfter([](json::Object &top) { kernel0(top).erase("launch"); });
  EXPECT_ERROR_HAS(message, "manifest.kernels[0].launch");
  message = errorAfter([](json::Object &top) { top.erase("chip"); });
  EXPECT_ERROR_HAS(message, "manifest.chip");
}

// Version 5 records each tensor map's swizzle; older manifests were held to
// the compiler's tiling rules instead: rebuild them.
TEST(ManifestCorrupt, WrongVersion) {
  for (int64_t version : {1, 2, 3, 4, 6}) {
    std::string message =
        errorAfter([&](json::Object &top) { top["version"] = version; });
    EXPECT_ERROR_HAS(message, "manifest.json version: is " +
                                  std::to_string(version) +
                                  ", this runtime reads version 5 only");
    EXPECT_ERROR_HAS(message, "rebuild the bundle with attn-compile");
  }
}

TEST(ManifestCorrupt, CubinHash) {
  EXPECT_ERROR_HAS(
      errorAfter([](json::Object &top) { kernel0(top).erase("cubin_sha256"); }),
      "manifest.kernels[0].cubin_sha256");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     kernel0(top)["cubin_sha256"] = std::string(64, 'A');
                   }),
                   "kernels[0].cubin_sha256: must be 64 lowercase hex digits");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     kernel0(top)["cubin_sha256"] = "abc";
                   }),
                   "kernels[0].cubin_sha256: must be 64 lowercase hex digits");
}

TEST(Manifest, Sha256Hex) {
  // FIPS 180-2 test vector.
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9"
                              "cb410ff61f20015ad");
}

TEST(ManifestCorrupt, DuplicateKeys) {
  // llvm::json keeps the last of two equal keys; a manifest must not.
  std::string text = manifestText(sampleManifest());
  size_t at = text.find("\"generator\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"chip\": \"sm_80\", ");
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_FALSE(bool(parsed));
  EXPECT_ERROR_HAS(llvm::toString(parsed.takeError()),
                   "key \"chip\" appears twice in one object");
}

TEST(ManifestCorrupt, UnknownKind) {
  std::string message =
      errorAfter([](json::Object &top) { kernel0(top)["kind"] = "bwd_dq"; });
  EXPECT_ERROR_HAS(message, "kernels[0].kind");
  EXPECT_ERROR_HAS(message, "unknown kernel kind \"bwd_dq\"");
}

TEST(ManifestCorrupt, BadDtype) {
  std::string message = errorAfter([](json::Object &top) {
    (*kernel0(top).getObject("key"))["dtype"] = "f32";
  });
  EXPECT_ERROR_HAS(message, "kernels[0].key.dtype");
  EXPECT_ERROR_HAS(message, "\"f32\"");
}

TEST(ManifestCorrupt, CubinPathWithSlash) {
  for (const char *path : {"sub/k.cubin", "../k.cubin", ""}) {
    std::string message =
        errorAfter([&](json::Object &top) { kernel0(top)["cubin"] = path; });
    EXPECT_ERROR_HAS(message, "kernels[0].cubin");
  }
}

TEST(ManifestCorrupt, TooManyThreads) {
  std::string message = errorAfter([](json::Object &top) {
    (*kernel0(top).getObject("launch"))["threads"] = json::Array{512, 4, 1};
  });
  EXPECT_ERROR_HAS(message, "kernels[0].launch.threads");
  EXPECT_ERROR_HAS(message, "1024");
}

TEST(ManifestCorrupt, LseParamWithoutLse) {
  std::string message = errorAfter([](json::Object &top) {
    (*top.getArray("kernels"))[1].getAsObject()->getArray("params")->push_back(
        json::Object{{"operand", "lse"}, {"field", "aligned_ptr"}});
  });
  EXPECT_ERROR_HAS(message, "kernels[1].params");
  EXPECT_ERROR_HAS(message, "lse");
}

TEST(ManifestCorrupt, LseGridWithoutLse) {
  std::string message = errorAfter([](json::Object &top) {
    json::Object *launch =
        (*top.getArray("kernels"))[1].getAsObject()->getObject("launch");
    (*launch->getArray("grid"))[0] =
        json::Object{{"operand", "lse"}, {"dim", 2}, {"divisor", 64}};
  });
  EXPECT_ERROR_HAS(message, "kernels[1].launch.grid");
}

TEST(ManifestCorrupt, MoreInvariants) {
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["scale"] = -1.0;
                   }),
                   "kernels[0].key.scale");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["layout"] = "tiled";
                   }),
                   "manifest.kernels[0].key.layout");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["num_heads_kv"] = 5;
                   }),
                   "multiple of num_heads_kv");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getArray("params"))[3] = json::Object{
                         {"operand", "q"}, {"field", "size"}, {"index", 4}};
                   }),
                   "kernels[0].params");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getArray("params"))[0] = json::Object{
                         {"operand", "x"}, {"field", "size"}, {"index", 0}};
                   }),
                   "expected one of q, k, v, o, lse");
  EXPECT_ERROR_HAS(
      errorAfter([](json::Object &top) {
        (*kernel0(top).getObject("launch"))["cluster"] = json::Array{1, 1};
      }),
      "3 entries");
}

// What attn-compile never writes is corrupt.
// A grid dimension has exactly the keys constant and terms: the version-1
// form (operand, dim, divisor), alone or beside a constant, would leave
// which extent the writer meant unknown.
TEST(ManifestCorrupt, GridDimHasOnlyConstantAndTerms) {
  EXPECT_ERROR_HAS(
      errorAfter([](json::Object &top) {
        json::Object *launch = kernel0(top).getObject("launch");
        (*launch->getArray("grid"))[0] = json::Object{
            {"constant", 4}, {"terms", json::Array{}}, {"operand", "q"}};
      }),
      "kernels[0].launch.grid[0]: unknown key \"operand\" in a grid "
      "dimension (it has constant, terms)");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     json::Object *launch = kernel0(top).getObject("launch");
                     (*launch->getArray("grid"))[1] =
                         json::Object{{"constant", 4}, {"divisor", 64}};
                   }),
                   "launch.grid[1]: unknown key \"divisor\"");
}

TEST(ManifestCorrupt, StaticLengthsArePositive) {
  for (const char *length : {"batch", "num_heads_kv", "seqlen_k"})
    EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                       (*kernel0(top).getObject("key"))[length] = 0;
                     }),
                     "kernels[0].key: static lengths must be >= 1 (or null)")
        << length;
}

TEST(ManifestCorrupt, Resources) {
  for (const char *field : {"registers", "shared_bytes", "stack_bytes",
                            "spill_store_bytes", "spill_load_bytes"})
    EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                       (*kernel0(top).getObject("resources"))[field] = -1;
                     }),
                     "kernels[0].resources: registers must be in [0, 255]")
        << field;
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("resources"))["registers"] = 256;
                   }),
                   "kernels[0].resources");
}

// Entries are bounded before their product is taken: 2^62 * 4 would wrap.
TEST(ManifestCorrupt, LaunchShapeBounds) {
  int64_t huge = int64_t(1) << 62;
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     (*kernel0(top).getObject("launch"))["threads"] =
                         json::Array{huge, 4, 1};
                   }),
                   "kernels[0].launch.threads");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     (*kernel0(top).getObject("launch"))["cluster"] =
                         json::Array{int64_t(1) << 32, int64_t(1) << 32, 1};
                   }),
                   "kernels[0].launch.cluster");
  EXPECT_ERROR_HAS(
      errorAfter([](json::Object &top) {
        (*kernel0(top).getObject("launch"))["cluster"] = json::Array{4, 8, 1};
      }),
      "more than 16 CTAs");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject(
                         "launch"))["dynamic_shared_bytes"] = int64_t(1) << 40;
                   }),
                   "kernels[0].launch.dynamic_shared_bytes");
}

TEST(ManifestCorrupt, HeadDim) {
  for (int64_t d : {12, 0, 264})
    EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                       (*kernel0(top).getObject("key"))["head_dim"] = d;
                     }),
                     "kernels[0].key.head_dim");
}

// A kernel whose parameters miss an operand would run on garbage pointers.
TEST(ManifestCorrupt, EveryOperandReachesTheKernel) {
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     kernel0(top)["params"] = json::Array{};
                   }),
                   "no aligned_ptr or tensor_map of operand q");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     json::Array kept;
                     for (json::Value &p : params)
                       if (*p.getAsObject()->getString("operand") != "lse")
                         kept.push_back(std::move(p));
                     params = std::move(kept);
                   }),
                   "no aligned_ptr of operand lse");
}

/// The parameter of kernel 0 (a wgmma kernel) that is the tensor map of
/// `operand`.
json::Object &tensorMap0(json::Object &top, llvm::StringRef operand) {
  for (json::Value &p : *kernel0(top).getArray("params")) {
    json::Object &param = *p.getAsObject();
    if (param.getString("field") == "tensor_map" &&
        param.getString("operand") == operand)
      return param;
  }
  ADD_FAILURE() << "no tensor map of " << operand.str();
  return kernel0(top);
}

// Tensor maps belong to wgmma kernels, for q, k, v or o.
TEST(ManifestCorrupt, TensorMapOperands) {
  auto addMap = [](json::Object &top, const char *operand) {
    kernel0(top).getArray("params")->push_back(
        json::Object{{"operand", operand},
                     {"field", "tensor_map"},
                     {"box", json::Array{64, 128, 1, 1}},
                     {"swizzle", 128}});
  };
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     (*kernel0(top).getObject("key"))["path"] = "fma";
                   }),
                   "tensor maps are for q, k, v and o of wgmma kernels");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) { addMap(top, "lse"); }),
                   "tensor maps are for q, k, v and o of wgmma kernels");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     tensorMap0(top, "k")["box"] = json::Array{64, 128, 1};
                   }),
                   "expected 4 extents");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["path"] = "tensor";
                   }),
                   "kernels[0].key.path");
}

// Each tensor map records its swizzle; the reader holds it to TMA's spans.
TEST(ManifestCorrupt, TensorMapSwizzleIsRecorded) {
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     tensorMap0(top, "k").erase("swizzle");
                   }),
                   "swizzle");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["swizzle"] = 48;
                   }),
                   ".swizzle: must be 0, 32, 64 or 128 (bytes), got 48");
  // Only a tensor map has a swizzle.
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     for (json::Value &p : *kernel0(top).getArray("params"))
                       if (p.getAsObject()->getString("field") == "offset")
                         (*p.getAsObject())["swizzle"] = 128;
                   }),
                   "only a tensor_map has a swizzle");
}

// A box is inside TMA's limits: 1 to 256 per dimension.
TEST(ManifestCorrupt, TensorMapBoxWithinTmaLimits) {
  for (json::Array box : {json::Array{64, 512, 1, 1}, json::Array{64, 0, 1, 1},
                          json::Array{64, 128, 300, 1}})
    EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                       tensorMap0(top, "k")["box"] = std::move(box);
                     }),
                     ".box: entries must be in [1, 256] (TMA's box limit)");
}

// The innermost box extent is whole 16-byte units inside the swizzle span it
// records (bf16: 64 elements fill a 128-byte span).
TEST(ManifestCorrupt, TensorMapSwizzleSpanHoldsTheBox) {
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["swizzle"] = 64;
                   }),
                   ".box: the innermost extent 64 (128 bytes of 2-byte "
                   "elements) must be a multiple of 16 bytes within the "
                   "swizzle span of 64");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["box"] = json::Array{12, 128, 1, 1};
                     tensorMap0(top, "k")["swizzle"] = 0;
                   }),
                   "the innermost extent 12 (24 bytes");
  // Consistent spans other than the compiler's pass: the span is recorded.
  EXPECT_EQ(errorAfter([](json::Object &top) {
              tensorMap0(top, "k")["box"] = json::Array{32, 128, 1, 1};
              tensorMap0(top, "k")["swizzle"] = 64;
            }),
            "");
}

// The reader holds a wgmma kernel to CUDA's limits, not to the compiler's
// tiling (producer and consumer warpgroups, rows per box, how many maps):
// those are recorded, and the runtime launches what is recorded.
TEST(ManifestCorrupt, WgmmaKernelShapeIsRecorded) {
  EXPECT_EQ(
      errorAfter([](json::Object &top) {
        (*kernel0(top).getObject("launch"))["threads"] = json::Array{256, 1, 1};
        tensorMap0(top, "q")["box"] = json::Array{64, 64, 1, 1};
        (*kernel0(top).getObject("key"))["block_n"] = 64;
      }),
      "");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("launch"))["threads"] =
                         json::Array{2048, 1, 1};
                   }),
                   "kernels[0].launch.threads: entries must be in [1, 1024]");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     json::Array kept;
                     for (json::Value &p : params)
                       if (p.getAsObject()->getString("field") !=
                               "tensor_map" ||
                           p.getAsObject()->getString("operand") != "v")
                         kept.push_back(std::move(p));
                     params = std::move(kept);
                   }),
                   "no aligned_ptr or tensor_map of operand v");
}

// A memref descriptor passes every field, or the kernel reads the next
// operand's fields in its place.
TEST(ManifestCorrupt, DescriptorsAreComplete) {
  for (const char *field : {"allocated_ptr", "offset", "size", "stride"})
    EXPECT_ERROR_HAS(
        errorAfter([&](json::Object &top) {
          json::Array &params =
              *(*top.getArray("kernels"))[1].getAsObject()->getArray("params");
          json::Array kept;
          bool dropped = false;
          for (json::Value &p : params) {
            json::Object &o = *p.getAsObject();
            if (!dropped && o.getString("operand") == "k" &&
                o.getString("field") == field) {
              dropped = true;
              continue;
            }
            kept.push_back(std::move(p));
          }
          params = std::move(kept);
        }),
        "kernels[1].params: operand k's memref descriptor is "
        "incomplete")
        << field;
}

TEST(ManifestCorrupt, GridYZLimit) {
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("launch")->getArray("grid"))[2] =
                         json::Object{{"constant", 65536},
                                      {"terms", json::Array{}}};
                   }),
                   "grid y and z constants must be at most 65535");
}

// A grid dimension is constant * prod ceil(size / divisor).
TEST(ManifestCorrupt, GridTerms) {
  auto term = [](int64_t dim, int64_t divisor) {
    return json::Object{{"operand", "q"}, {"dim", dim}, {"divisor", divisor}};
  };
  auto setGrid0 = [](json::Object &top, json::Value dim) {
    (*kernel0(top).getObject("launch")->getArray("grid"))[0] = std::move(dim);
  };
  EXPECT_ERROR_HAS(
      errorAfter([&](json::Object &top) {
        setGrid0(top, json::Object{{"constant", 0}, {"terms", json::Array{}}});
      }),
      "constants must be in [1, 2^31)");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     setGrid0(top,
                              json::Object{{"constant", 1},
                                           {"terms", json::Array{term(4, 1)}}});
                   }),
                   "0 <= dim < rank(operand)");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     setGrid0(top,
                              json::Object{{"constant", 1},
                                           {"terms", json::Array{term(2, 0)}}});
                   }),
                   "divisor >= 1");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     json::Array terms;
                     for (int i = 0; i < 5; ++i)
                       terms.push_back(term(1, 1));
                     setGrid0(top, json::Object{{"constant", 1},
                                                {"terms", std::move(terms)}});
                   }),
                   "at most 4 terms");
  EXPECT_ERROR_HAS(errorAfter([&](json::Object &top) {
                     setGrid0(top, json::Object{{"terms", json::Array{}}});
                   }),
                   "launch.grid[0].constant");
}

// llvm::json::parse recurses per level: deep input must not reach it.
TEST(ManifestCorrupt, DeepNestingIsRejectedNotRecursedInto) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  llvm::Expected<Manifest> parsed = parseManifest(deep);
  ASSERT_FALSE(bool(parsed));
  EXPECT_ERROR_HAS(llvm::toString(parsed.takeError()), "nested deeper than");
  // Brackets inside strings do not count.
  EXPECT_TRUE(
      bool(parseJSON("{\"a\": \"" + std::string(1000, '[') + "\\\"\"}")));
}


//===----------------------------------------------------------------------===//
// FP8 (e4m3) kernels
//===----------------------------------------------------------------------===//

/// Parses a manifest holding fp8Kernel("f8") after `edit` changed its JSON;
/// the error message, "" when it parsed.
template <typename Edit> std::string fp8ErrorAfter(Edit edit) {
  return errorAfterEditing(manifestOf({fp8Kernel("f8")}), edit);
}

TEST(ManifestFp8, RoundTripsDescalesAndTheTransposedMap) {
  Manifest m = manifestOf({fp8Kernel("f8")});
  std::string text = manifestText(m);
  EXPECT_NE(text.find("\"transposed\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"q_descale\""), std::string::npos);
  EXPECT_EQ(text.find("\"transposed\": false"), std::string::npos);
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  expectSameKernel(parsed->kernels[0], m.kernels[0]);
  const Param &v = parsed->kernels[0].params[0];
  EXPECT_EQ(v.operand, Operand::V);
  EXPECT_TRUE(v.transposed);
  EXPECT_EQ(v.box, (std::array<int64_t, 4>{128, 128, 1, 1}));
  EXPECT_EQ(parsed->kernels[0].params.back().operand, Operand::VDescale);
  EXPECT_EQ(operandRank(Operand::KDescale), 2);
  EXPECT_EQ(parseOperand("v_descale"), Operand::VDescale);
}

TEST(ManifestFp8, TransposedMapsAreFp8VOnly) {
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["transposed"] = true;
                   }),
                   "the tensor map of k is transposed; only v's may be");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     tensorMap0(top, "v").erase("transposed");
                   }),
                   "the tensor map of v in an e4m3 kernel must be transposed");
  // A bf16 kernel reads V with unit stride on D.
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     tensorMap0(top, "v")["transposed"] = true;
                   }),
                   "only e4m3 kernels take V^T storage");
  // Only tensor maps have a transposed form.
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params.back().getAsObject())["transposed"] = true;
                   }),
                   "only a tensor_map may be transposed");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     tensorMap0(top, "v")["transposed"] = 1;
                   }),
                   "transposed");
}

//===----------------------------------------------------------------------===//
// GQA packing: heads_inner tensor maps
//===----------------------------------------------------------------------===//

/// Parses a manifest holding gqaPackedKernel("p") after `edit`.
template <typename Edit> std::string packedErrorAfter(Edit edit) {
  return errorAfterEditing(manifestOf({gqaPackedKernel("p")}), edit);
}

TEST(ManifestGqaPack, RoundTripsTheHeadsInnerMap) {
  Manifest m = manifestOf({gqaPackedKernel("p")});
  std::string text = manifestText(m);
  EXPECT_NE(text.find("\"heads_inner\": true"), std::string::npos) << text;
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  expectSameKernel(parsed->kernels[0], m.kernels[0]);
  const Param &q = parsed->kernels[0].params[2];
  EXPECT_EQ(q.operand, Operand::Q);
  EXPECT_TRUE(q.headsInner);
  EXPECT_FALSE(q.transposed);
  // O's map (the TMA-store epilogue) may be heads_inner too: 64 rows.
  EXPECT_EQ(packedErrorAfter([](json::Object &top) {
              kernel0(top).getArray("params")->push_back(
                  json::Object{{"operand", "o"},
                               {"field", "tensor_map"},
                               {"heads_inner", true},
                               {"box", json::Array{64, 2, 32, 1}},
                               {"swizzle", 128}});
            }),
            "");
}

TEST(ManifestGqaPack, HeadsInnerMapsAreChecked) {
  EXPECT_ERROR_HAS(packedErrorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["heads_inner"] = true;
                   }),
                   "the tensor map of k has heads_inner; only q's and o's may");
  // The G heads of a box are the key's Hq / Hkv.
  EXPECT_ERROR_HAS(packedErrorAfter([](json::Object &top) {
                     tensorMap0(top, "q")["box"] = json::Array{64, 4, 32, 1};
                   }),
                   "packs 4 heads; GQA packing needs static num_heads_q = 4 * "
                   "num_heads_kv");
  EXPECT_ERROR_HAS(packedErrorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["num_heads_q"] = nullptr;
                   }),
                   "GQA packing needs static num_heads_q");
  EXPECT_ERROR_HAS(packedErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->back().getAsObject()
                         ->insert({"heads_inner", true});
                   }),
                   "only a tensor_map may be heads_inner");
}

// The swizzle span is in bytes of the operand's element type: 128 e4m3
// columns of q, k and V^T (Nk), 64 bf16 columns of o.
TEST(ManifestFp8, BoxSpansAreInTheOperandsBytes) {
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     tensorMap0(top, "v")["box"] = json::Array{256, 128, 1, 1};
                   }),
                   "the innermost extent 256 (256 bytes of 1-byte elements) "
                   "must be a multiple of 16 bytes within the swizzle span "
                   "of 128");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(
                         json::Object{{"operand", "o"},
                                      {"field", "tensor_map"},
                                      {"box", json::Array{128, 64, 1, 1}},
                                      {"swizzle", 128}});
                   }),
                   "the innermost extent 128 (256 bytes of 2-byte elements)");
  EXPECT_EQ(fp8ErrorAfter([](json::Object &top) {
              kernel0(top).getArray("params")->push_back(
                  json::Object{{"operand", "o"},
                               {"field", "tensor_map"},
                               {"box", json::Array{64, 64, 1, 1}},
                               {"swizzle", 128}});
            }),
            "");
}

TEST(ManifestFp8, DescalesBelongToFp8Kernels) {
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     json::Array kept;
                     for (json::Value &p : params)
                       if (*p.getAsObject()->getString("operand") !=
                           "k_descale")
                         kept.push_back(std::move(p));
                     params = std::move(kept);
                   }),
                   "no aligned_ptr of operand k_descale in an e4m3 kernel");
  EXPECT_ERROR_HAS(errorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(json::Object{
                         {"operand", "q_descale"}, {"field", "aligned_ptr"}});
                   }),
                   "a q_descale parameter in a kernel that is not e4m3");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(
                         json::Object{{"operand", "q_descale"},
                                      {"field", "stride"},
                                      {"index", 2}});
                   }),
                   "index out of the operand's rank");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(
                         json::Object{{"operand", "v_descale"},
                                      {"field", "tensor_map"},
                                      {"box", json::Array{128, 128, 1, 1}},
                                      {"swizzle", 128}});
                   }),
                   "tensor maps are for q, k, v and o of wgmma kernels");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(json::Object{
                         {"operand", "s_descale"}, {"field", "offset"}});
                   }),
                   "expected one of q, k, v, o, lse, q_descale, k_descale, "
                   "v_descale");
}

TEST(ManifestFp8, KeyIsStridedWgmmaWithD16) {
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["layout"] = "contiguous";
                   }),
                   "kernels[0].key.layout: e4m3 kernels are \"strided\"");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["path"] = "fma";
                   }),
                   "kernels[0].key.path: e4m3 kernels are \"wgmma\" kernels");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["head_dim"] = 72;
                   }),
                   "kernels[0].key.head_dim: must be a multiple of 16 in [16, "
                   "256] for e4m3");
  EXPECT_ERROR_HAS(fp8ErrorAfter([](json::Object &top) {
                     (*kernel0(top).getObject("key"))["dtype"] = "e5m2";
                   }),
                   "expected \"f16\", \"bf16\" or \"e4m3\", got \"e5m2\"");
}

} // namespace

namespace {

/// A manifest with one split-KV kernel (testing::splitKernel).
Manifest splitManifest() { return manifestOf({splitKernel("k", 4)}); }

std::string splitError(const std::function<void(KernelEntry &)> &mutate,
                       int64_t version = kManifestVersion) {
  Manifest m = splitManifest();
  mutate(m.kernels[0]);
  m.version = version;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  if (parsed)
    return "";
  return llvm::toString(parsed.takeError());
}

} // namespace

TEST(Manifest, SplitKVRoundTrips) {
  Manifest m = splitManifest();
  EXPECT_EQ(m.version, kManifestVersion);
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const KernelEntry &k = parsed->kernels[0], &x = m.kernels[0];
  expectSameKernel(k, x);
  EXPECT_EQ(k.key.splits, 4);
  ASSERT_EQ(k.numLaunches(), 2u);
  EXPECT_EQ(k.then[0].cubin, "k_0.cubin");
  EXPECT_EQ(k.then[0].threads, x.then[0].threads);
  ASSERT_EQ(k.then[0].params.size(), x.then[0].params.size());
  for (size_t i = 0; i < k.then[0].params.size(); ++i) {
    EXPECT_EQ(k.then[0].params[i].workspace, x.then[0].params[i].workspace);
    EXPECT_EQ(k.then[0].params[i].operand, x.then[0].params[i].operand);
    EXPECT_EQ(k.then[0].params[i].field, x.then[0].params[i].field);
    EXPECT_EQ(k.then[0].params[i].index, x.then[0].params[i].index);
  }
  ASSERT_EQ(k.workspace.size(), 2u);
  EXPECT_EQ(k.workspace[0].name, "o_partial");
  ASSERT_EQ(k.workspace[0].shape.size(), 5u);
  EXPECT_EQ(k.workspace[0].shape[0].constant, 4);
  EXPECT_EQ(k.workspace[0].shape[4].constant, 128);
  EXPECT_EQ(k.workspace[0].shape[3].terms[0].operand, Operand::Q);
  EXPECT_EQ(k.workspace[1].shape.size(), 4u);
  // A workspace parameter names its buffer, not an operand.
  EXPECT_NE(manifestText(m).find("\"workspace\": 1"), std::string::npos);
}

TEST(ManifestCorrupt, SplitKV) {
  auto none = [](KernelEntry &) {};
  EXPECT_ERROR_HAS(splitError(none, 3), "this runtime reads version 5 only");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) { k.then.clear(); }),
                   "kernels[0].key.splits");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) { k.key.splits = 1; }),
                   "kernels[0].key.splits");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) { k.key.splits = 1000; }),
                   "kernels[0].key.splits");
  EXPECT_ERROR_HAS(
      splitError([](KernelEntry &k) { k.workspace[1].shape.clear(); }),
      "kernels[0].workspace[1]");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) {
                     k.workspace[0].shape[1].terms[0].dim = 7;
                   }),
                   "kernels[0].workspace[0].shape");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) {
                     k.then[0].params[0].workspace = 2;
                   }),
                   "kernels[0].then[0].params");
  EXPECT_ERROR_HAS(
      splitError([](KernelEntry &k) { k.then[0].params.pop_back(); }),
      "kernels[0].then[0].params");
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) {
                     // The workspace descriptor loses a stride.
                     k.then[0].params.erase(k.then[0].params.begin() + 12);
                   }),
                   "workspace buffer's memref descriptor is incomplete");
  EXPECT_ERROR_HAS(
      splitError([](KernelEntry &k) { k.then[0].threads = {2048, 1, 1}; }),
      "kernels[0].then[0].launch.threads");
  EXPECT_ERROR_HAS(
      splitError([](KernelEntry &k) { k.then[0].cubin = "../x.cubin"; }),
      "kernels[0].then[0].cubin");
  // O must reach one of the launches.
  EXPECT_ERROR_HAS(splitError([](KernelEntry &k) {
                     std::vector<Param> &p = k.then[0].params;
                     p.erase(p.begin() + 24, p.begin() + 35);
                   }),
                   "operand o");
}

//===----------------------------------------------------------------------===//
// Paged K/V: page_size, heads_inner K/V maps, block_table / cache_seqlens
//===----------------------------------------------------------------------===//

namespace {

/// Parses a manifest holding pagedKernel("p", 16) after `edit`.
template <typename Edit> std::string pagedErrorAfter(Edit edit) {
  return errorAfterEditing(manifestOf({pagedKernel("p", 16)}), edit);
}

json::Object &key0(json::Object &top) { return *kernel0(top).getObject("key"); }

/// Removes kernel 0's parameters of `operand`.
void dropParams(json::Object &top, llvm::StringRef operand) {
  json::Array &params = *kernel0(top).getArray("params");
  json::Array kept;
  for (json::Value &p : params)
    if (p.getAsObject()->getString("operand") != operand)
      kept.push_back(std::move(p));
  params = std::move(kept);
}

} // namespace

TEST(ManifestPaged, RoundTripsPageSizeMapsAndTables) {
  for (int64_t pageSize : {16, 256}) {
    Manifest m = manifestOf({pagedKernel("p", pageSize)});
    std::string text = manifestText(m);
    EXPECT_NE(text.find("\"page_size\": " + std::to_string(pageSize)),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\"block_table\""), std::string::npos);
    EXPECT_NE(text.find("\"cache_seqlens\""), std::string::npos);
    llvm::Expected<Manifest> parsed = parseManifest(text);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    const KernelEntry &k = parsed->kernels[0];
    expectSameKernel(k, m.kernels[0]);
    EXPECT_EQ(k.key.pageSize, pageSize);
    const Param &v = k.params[0];
    EXPECT_EQ(v.operand, Operand::V);
    EXPECT_TRUE(v.headsInner);
    EXPECT_EQ(v.box, (std::array<int64_t, 4>{64, std::min<int64_t>(pageSize,
                                                                   128),
                                              1, 1}));
    EXPECT_EQ(k.params.back().operand, Operand::BlockTable);
    EXPECT_EQ(k.params.back().field, Param::Field::Stride);
    EXPECT_EQ(k.params.back().index, 1);
  }
  // Without page_size the key has no page_size field.
  EXPECT_EQ(manifestText(manifestOf({wgmmaKernel("w")})).find("page_size"),
            std::string::npos);
  EXPECT_EQ(operandRank(Operand::BlockTable), 2);
  EXPECT_EQ(operandRank(Operand::CacheSeqlens), 1);
  EXPECT_TRUE(isPagedOperand(Operand::CacheSeqlens));
  EXPECT_FALSE(isPagedOperand(Operand::K));
}

TEST(ManifestPaged, DescribeShowsThePageSize) {
  std::string text = describe(pagedKernel("p", 16));
  EXPECT_NE(text.find("Nk=? page_size=16 scale="), std::string::npos) << text;
  EXPECT_EQ(describe(wgmmaKernel("w")).find("page_size"), std::string::npos);
}

TEST(ManifestPaged, KeyIsWgmmaNotE4m3WithDynamicSeqlenK) {
  EXPECT_EQ(pagedErrorAfter([](json::Object &) {}), "");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     key0(top)["path"] = "fma";
                   }),
                   "kernels[0].key.path: paged K/V (page_size) kernels are "
                   "\"wgmma\" kernels");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     key0(top)["dtype"] = "e4m3";
                   }),
                   "kernels[0].key.dtype: paged K/V (page_size) kernels are "
                   "not e4m3");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     key0(top)["seqlen_k"] = 4096;
                   }),
                   "kernels[0].key.seqlen_k: must be null in a paged K/V "
                   "(page_size) kernel");
  for (int64_t bad : {int64_t(-1), (int64_t(1) << 20) + 1})
    EXPECT_ERROR_HAS(pagedErrorAfter([&](json::Object &top) {
                       key0(top)["page_size"] = bad;
                     }),
                     "kernels[0].key.page_size: must be in [1, 1048576]");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     key0(top)["page_size"] = "16";
                   }),
                   "page_size");
  // Page size 2^20 is the largest; its box holds block_n rows.
  EXPECT_EQ(pagedErrorAfter([](json::Object &top) {
              key0(top)["page_size"] = int64_t(1) << 20;
              tensorMap0(top, "k")["box"] = json::Array{64, 128, 1, 1};
              tensorMap0(top, "v")["box"] = json::Array{64, 128, 1, 1};
            }),
            "");
}

TEST(ManifestPaged, KVMapsAreHeadsInnerWithPageRows) {
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     tensorMap0(top, "k").erase("heads_inner");
                   }),
                   "the tensor map of k in a paged K/V kernel must be "
                   "heads_inner");
  // A box holds rows of one page (page_size 16) of one KV head.
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     tensorMap0(top, "v")["box"] = json::Array{64, 128, 1, 1};
                   }),
                   "the tensor map box of v in a paged K/V kernel holds rows "
                   "of one page of one KV head: [*, rows <= page_size = 16, "
                   "1, 1], got [64, 128, 1, 1]");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     tensorMap0(top, "k")["box"] = json::Array{64, 16, 2, 1};
                   }),
                   "the tensor map box of k in a paged K/V kernel holds rows");
  // Fewer rows than a page: the compiler's tile, recorded.
  EXPECT_EQ(pagedErrorAfter([](json::Object &top) {
              tensorMap0(top, "k")["box"] = json::Array{64, 8, 1, 1};
            }),
            "");
  // Without page_size, k and v maps stay (D, N, H, B).
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     key0(top).erase("page_size");
                   }),
                   "the tensor map of v has heads_inner; only q's and o's may");
}

TEST(ManifestPaged, TablesArePassedWholeToPagedKernelsOnly) {
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     dropParams(top, "block_table");
                   }),
                   "kernels[0].params: no memref descriptor of operand "
                   "block_table in a paged K/V (page_size) kernel");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     dropParams(top, "cache_seqlens");
                   }),
                   "no memref descriptor of operand cache_seqlens");
  // Part of a descriptor is not enough.
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->pop_back();
                   }),
                   "operand block_table's memref descriptor is incomplete");
  EXPECT_ERROR_HAS(pagedErrorAfter([](json::Object &top) {
                     kernel0(top).getArray("params")->push_back(
                         json::Object{{"operand", "block_table"},
                                      {"field", "tensor_map"},
                                      {"box", json::Array{64, 16, 1, 1}},
                                      {"swizzle", 128}});
                   }),
                   "tensor maps are for q, k, v and o of wgmma kernels");
  // In a kernel without page_size they are corrupt.
  Manifest plain = manifestOf({wgmmaKernel("w")});
  appendDescriptor(plain.kernels[0].params, Operand::BlockTable);
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(plain));
  ASSERT_FALSE(bool(parsed));
  EXPECT_NE(llvm::toString(parsed.takeError())
                .find("kernels[0].params: a block_table parameter in a kernel "
                      "without page_size (paged K/V)"),
            std::string::npos);
  plain = manifestOf({wgmmaKernel("w")});
  plain.kernels[0].grid[1] = GridDim{1, {{Operand::CacheSeqlens, 0, 1}}};
  parsed = parseManifest(manifestText(plain));
  ASSERT_FALSE(bool(parsed));
  EXPECT_NE(llvm::toString(parsed.takeError())
                .find("refers to cache_seqlens in a kernel without page_size"),
            std::string::npos);
}

// GQA packing over a paged cache: q's map packs the G heads of a KV group
// (static head counts, Hkv being the caches' dim 2).
TEST(ManifestPaged, GqaPackedQueriesOverPagedCaches) {
  KernelEntry k = pagedKernel("p", 16);
  k.key.numHeadsQ = 4;
  k.key.numHeadsKV = 2;
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand == Operand::Q) {
      p.box = {64, 2, 64, 1};
      p.headsInner = true;
    }
  llvm::Expected<Manifest> parsed =
      parseManifest(manifestText(manifestOf({k})));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
}

// Paged split-KV: the partial launch takes the tables.
TEST(ManifestPaged, SplitKernelsTakeTheTablesInALaunch) {
  Manifest m = manifestOf({pagedSplitKernel("s", 2, 256)});
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->kernels[0].key.pageSize, 256);
  EXPECT_EQ(parsed->kernels[0].key.splits, 2);
}

//===----------------------------------------------------------------------===//
// Varlen: packed maps, cu_seqlens / max_seqlen operands, scalar grid terms
//===----------------------------------------------------------------------===//

namespace {

/// Parses a manifest holding varlenKernel("vl") after `edit`.
template <typename Edit> std::string varlenErrorAfter(Edit edit) {
  return errorAfterEditing(manifestOf({varlenKernel("vl")}), edit);
}

/// Kernel 0's grid x terms.
json::Array &gridXTerms0(json::Object &top) {
  json::Object &launch = *kernel0(top).getObject("launch");
  return *(*launch.getArray("grid"))[0].getAsObject()->getArray("terms");
}

} // namespace

TEST(ManifestVarlen, RoundTripsKeyMapsScalarsAndGridTerms) {
  Manifest m = manifestOf({varlenKernel("vl")});
  std::string text = manifestText(m);
  EXPECT_NE(text.find("\"varlen\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"packed\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"field\": \"value\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"offset\": -1"), std::string::npos) << text;
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const KernelEntry &k = parsed->kernels[0];
  expectSameKernel(k, m.kernels[0]);
  EXPECT_TRUE(k.key.varlen);
  EXPECT_TRUE(k.params[0].packed);
  EXPECT_FALSE(k.params[0].headsInner);
  EXPECT_EQ(k.params[3].operand, Operand::MaxSeqlenQ);
  EXPECT_EQ(k.params[3].field, Param::Field::Value);
  ASSERT_EQ(k.grid[0].terms.size(), 3u);
  EXPECT_EQ(k.grid[0].terms[0].operand, Operand::MaxSeqlenQ);
  EXPECT_EQ(k.grid[0].terms[0].divisor, 128);
  EXPECT_EQ(k.grid[0].terms[2].operand, Operand::CuSeqlensQ);
  EXPECT_EQ(k.grid[0].terms[2].offset, -1);
  EXPECT_EQ(k.params.back().operand, Operand::CuSeqlensK);
  // Without varlen neither key nor flags appear.
  std::string plain = manifestText(manifestOf({wgmmaKernel("w")}));
  EXPECT_EQ(plain.find("varlen"), std::string::npos);
  EXPECT_EQ(plain.find("packed"), std::string::npos);
  EXPECT_EQ(plain.find("offset\": -1"), std::string::npos);
  EXPECT_EQ(operandRank(Operand::Q, /*varlen=*/true), 3);
  EXPECT_EQ(operandRank(Operand::LSE, /*varlen=*/true), 2);
  EXPECT_EQ(operandRank(Operand::LSE), 3);
  EXPECT_EQ(operandRank(Operand::CuSeqlensQ), 1);
  EXPECT_EQ(operandRank(Operand::MaxSeqlenK), 0);
  EXPECT_TRUE(isVarlenOperand(Operand::MaxSeqlenK));
  EXPECT_TRUE(isScalarOperand(Operand::MaxSeqlenQ));
  EXPECT_FALSE(isScalarOperand(Operand::CuSeqlensQ));
  EXPECT_FALSE(isVarlenOperand(Operand::CacheSeqlens));
  EXPECT_EQ(parseOperand("cu_seqlens_k"), Operand::CuSeqlensK);
  EXPECT_EQ(parseOperand("max_seqlen_q"), Operand::MaxSeqlenQ);
}

TEST(ManifestVarlen, DescribeShowsVarlen) {
  std::string text = describe(varlenKernel("vl"));
  EXPECT_NE(text.find(" strided varlen wgmma"), std::string::npos) << text;
  EXPECT_EQ(describe(wgmmaKernel("w")).find("varlen"), std::string::npos);
}

TEST(ManifestVarlen, KeyIsWgmmaBf16StridedWithDynamicLengths) {
  EXPECT_EQ(varlenErrorAfter([](json::Object &) {}), "");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["path"] = "fma";
                   }),
                   "kernels[0].key.path: varlen kernels are \"wgmma\" kernels");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["dtype"] = "e4m3";
                   }),
                   "kernels[0].key.dtype: varlen kernels are not e4m3");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["layout"] = "contiguous";
                   }),
                   "kernels[0].key.layout: varlen kernels are \"strided\"");
  // The key may be paged and split (VarlenComboTest.cpp); then the maps,
  // the block table and the launches must be those of that form.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["page_size"] = 16;
                   }),
                   "the tensor map of v in a paged K/V kernel reads the "
                   "[num_pages, page_size, Hkv, D] cache: heads_inner, not "
                   "packed");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["splits"] = 2;
                   }),
                   "kernels[0].key.splits: must be in [1, 256], and above 1 "
                   "exactly when the kernel has later launches");
  for (const char *len : {"batch", "seqlen_q", "seqlen_k"})
    EXPECT_ERROR_HAS(varlenErrorAfter([&](json::Object &top) {
                       key0(top)[len] = 4;
                     }),
                     "kernels[0].key: batch, seqlen_q and seqlen_k must be "
                     "null in a varlen kernel");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top)["varlen"] = "yes";
                   }),
                   "varlen");
}

TEST(ManifestVarlen, MapsArePackedInVarlenKernelsOnly) {
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     tensorMap0(top, "k").erase("packed");
                   }),
                   "the tensor map of k in a varlen kernel must be packed");
  // Q heads-inner (GQA packing) is (D, H, total, 1): a G-head box.
  EXPECT_EQ(varlenErrorAfter([](json::Object &top) {
              tensorMap0(top, "q")["heads_inner"] = true;
              tensorMap0(top, "q")["box"] = json::Array{64, 4, 32, 1};
            }),
            "");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     tensorMap0(top, "v")["heads_inner"] = true;
                   }),
                   "the tensor map of v has heads_inner");
  EXPECT_ERROR_HAS(errorAfterEditing(manifestOf({wgmmaKernel("w")}),
                                     [](json::Object &top) {
                                       tensorMap0(top, "q")["packed"] = true;
                                     }),
                   "the tensor map of q is packed, but only varlen kernels "
                   "take packed [total, H, D] operands");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params[4].getAsObject())["packed"] = true;
                   }),
                   "only a tensor_map may be packed");
}

TEST(ManifestVarlen, ScalarsAreValuesAndSequenceTablesArePassedWhole) {
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     dropParams(top, "cu_seqlens_q");
                   }),
                   "kernels[0].params: no memref descriptor of operand "
                   "cu_seqlens_q in a varlen kernel");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     dropParams(top, "cu_seqlens_k");
                   }),
                   "no memref descriptor of operand cu_seqlens_k");
  // max_seqlen_q as a memref descriptor field, or q as a value.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params[3].getAsObject())["field"] = "aligned_ptr";
                   }),
                   "max_seqlen_q is a scalar: its one parameter is a value");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params[3].getAsObject())["operand"] = "o";
                   }),
                   "a value parameter of o, which is not a scalar");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params[3].getAsObject())["field"] = "velue";
                   }),
                   "expected allocated_ptr, aligned_ptr, offset, size, "
                   "stride, tensor_map or value");
  // o is rank 3 in a varlen kernel: index 3 is out of range.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     json::Array &params = *kernel0(top).getArray("params");
                     (*params[7].getAsObject())["index"] = 3;
                   }),
                   "index out of the operand's rank");
  // Varlen operands only in varlen kernels.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     key0(top).erase("varlen");
                   }),
                   "kernels[0].launch.grid: refers to max_seqlen_q in a "
                   "kernel that is not varlen");
  EXPECT_ERROR_HAS(errorAfterEditing(manifestOf({wgmmaKernel("w")}),
                                     [](json::Object &top) {
                                       kernel0(top).getArray("params")->push_back(
                                           json::Object{
                                               {"operand", "max_seqlen_q"},
                                               {"field", "value"}});
                                     }),
                   "a max_seqlen_q parameter in a kernel that is not varlen");
}

TEST(ManifestVarlen, GridTermsOfScalarsAndOffsets) {
  // A scalar term names no dimension.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     (*gridXTerms0(top)[0].getAsObject())["dim"] = 0;
                   }),
                   "a scalar operand has no dimension");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     gridXTerms0(top)[2].getAsObject()->erase("dim");
                   }),
                   "dim");
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     (*gridXTerms0(top)[2].getAsObject())["offset"] = -2;
                   }),
                   "kernels[0].launch.grid: offset must be 0, or -1 in a "
                   "varlen kernel");
  EXPECT_ERROR_HAS(errorAfterEditing(manifestOf({wgmmaKernel("w")}),
                                     [](json::Object &top) {
                                       (*gridXTerms0(top)[0].getAsObject())
                                           ["offset"] = -1;
                                     }),
                   "offset must be 0, or -1 in a varlen kernel");
  EXPECT_ERROR_HAS(errorAfterEditing(manifestOf({wgmmaKernel("w")}),
                                     [](json::Object &top) {
                                       gridXTerms0(top).push_back(json::Object{
                                           {"operand", "max_seqlen_q"},
                                           {"divisor", 128}});
                                     }),
                   "refers to max_seqlen_q in a kernel that is not varlen");
  // q is rank 3 in a varlen kernel.
  EXPECT_ERROR_HAS(varlenErrorAfter([](json::Object &top) {
                     (*gridXTerms0(top)[1].getAsObject())["dim"] = 3;
                   }),
                   "needs 0 <= dim < rank(operand)");
}

//===----------------------------------------------------------------------===//
// Quantized FP8 kernels (quantize_fp8): typed workspaces, maps over them
//===----------------------------------------------------------------------===//

namespace {

/// The error of a manifest of quantizedKernel("qf") after `mutate`, at
/// `version`; "" when it parses.
std::string quantizedError(const std::function<void(KernelEntry &)> &mutate,
                           int64_t version = kManifestVersion) {
  Manifest m = manifestOf({quantizedKernel("qf")});
  mutate(m.kernels[0]);
  m.version = version;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

/// The attention launch of quantizedKernel, and its map of the copy of
/// operand `which` (0: v, 1: k, 2: q).
KernelLaunch &attention(KernelEntry &k) { return k.then.back(); }
Param &copyMap(KernelEntry &k, int which) { return attention(k).params[which]; }

} // namespace

TEST(ManifestQuantized, RoundTrips) {
  Manifest m = manifestOf({quantizedKernel("qf")});
  std::string text = manifestText(m);
  llvm::Expected<Manifest> parsed = parseManifest(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const KernelEntry &k = parsed->kernels[0], &x = m.kernels[0];
  expectSameKernel(k, x);
  EXPECT_TRUE(k.isQuantized());
  EXPECT_EQ(k.key.quantizeFp8, x.key.quantizeFp8);
  ASSERT_EQ(k.workspace.size(), 7u);
  EXPECT_EQ(k.workspace[0].dtype, "e4m3");
  EXPECT_EQ(k.workspace[0].copyOf, Operand::Q);
  EXPECT_EQ(k.workspace[1].dtype, "f32");
  EXPECT_EQ(k.workspace[1].copyOf, std::nullopt);
  EXPECT_EQ(k.workspace[6].dtype, "f32");
  const Param &v = k.then[0].params[0];
  EXPECT_EQ(v.workspace, 4);
  EXPECT_EQ(v.field, Param::Field::TensorMap);
  EXPECT_EQ(v.dims, (std::array<int64_t, 4>{128, 128, 2, 1}));
  EXPECT_EQ(v.strides, (std::array<int64_t, 3>{128, 16384, 32768}));
  EXPECT_EQ(v.swizzle, 128);
  EXPECT_TRUE(v.transposed);
  // f32 buffers keep their untyped form.
  EXPECT_EQ(llvm::StringRef(text).count("\"dtype\": \"f32\""), 0u);
  EXPECT_EQ(llvm::StringRef(text).count("\"copy_of\""), 3u);
  EXPECT_NE(describe(k).find("quantize_fp8(block-m=128"), std::string::npos);
}

/// persistent_ctas of a quantized kernel describes its attention (the last
/// launch): its grid x must be the CTA count; the quantize launches keep
/// grids that scale with the shape.
TEST(ManifestQuantized, PersistentCtasDescribeTheAttentionLaunch) {
  auto persistent = [](KernelEntry &k) {
    attention(k).grid[0] = GridDim{132, {}};
    k.persistentCtas = 132;
  };
  EXPECT_EQ(quantizedError(persistent), "");
  EXPECT_ERROR_HAS(quantizedError([&](KernelEntry &k) {
                     persistent(k);
                     attention(k).grid[0] = GridDim{4, {}};
                   }),
                   "kernels[0].persistent_ctas: must be absent, or the "
                   "constant grid x of a wgmma kernel's attention launch");
  // The quantize launch's grid is not the one that must match.
  EXPECT_ERROR_HAS(quantizedError([&](KernelEntry &k) {
                     persistent(k);
                     attention(k).grid[0] = GridDim{8, {}};
                     k.grid[0] = GridDim{132, {}};
                   }),
                   "kernels[0].persistent_ctas");
}

/// Other kernels of several launches (split-KV: the combine reads every
/// tile's partial results) are never persistent.
TEST(Manifest, SplitKernelsAreNotPersistent) {
  KernelEntry k = splitKernel("k", 4);
  k.key.path = "wgmma";
  k.grid[0] = GridDim{132, {}};
  k.persistentCtas = 132;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(manifestOf({k})));
  ASSERT_FALSE(bool(parsed));
  EXPECT_ERROR_HAS(llvm::toString(parsed.takeError()),
                   "kernels[0].persistent_ctas: a kernel of several launches "
                   "is not persistent");
}

TEST(ManifestQuantized, KeyIsStaticBf16Wgmma) {
  EXPECT_EQ(quantizedError([](KernelEntry &) {}), "");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) { k.key.dtype = "f16"; }),
                   "kernels[0].key.dtype: quantized (quantize_fp8) kernels "
                   "take \"bf16\"");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.key.seqLenK = std::nullopt; }),
      "quantized (quantize_fp8) kernels have static batch");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) { k.key.splits = 2; }),
                   "kernels[0].key");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) { k.key.path = "fma"; }),
                   "kernels[0].key.path");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) { k.then.clear(); }),
                   "kernels[0].then: a quantized (quantize_fp8) kernel has "
                   "quantize launches");
}

TEST(ManifestQuantized, WorkspaceBuffers) {
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[1].dtype = "f64"; }),
      "kernels[0].workspace[1].dtype: expected \"f32\", \"i32\" or \"e4m3\"");
  // An e4m3 buffer that is no copy.
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[4].copyOf.reset(); }),
      "kernels[0].workspace[4].dtype: a quantized (quantize_fp8) kernel's "
      "descales and scratch are \"f32\"");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     k.workspace[4].copyOf = Operand::K;
                   }),
                   "exactly one e4m3 copy each of q, k and v");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     k.workspace[4].copyOf = Operand::O;
                   }),
                   "kernels[0].workspace[4].copy_of");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[2].dtype = "f32"; }),
      "kernels[0].workspace[2].copy_of");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) {
        k.workspace[0].shape[2].terms.push_back({Operand::Q, 2, 1});
      }),
      "have static extents");
  // Copies belong to quantized kernels: a split kernel keeps none.
  Manifest split = manifestOf({splitKernel("s", 4)});
  split.kernels[0].workspace[0].copyOf = Operand::Q;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(split));
  ASSERT_FALSE(bool(parsed));
  EXPECT_ERROR_HAS(llvm::toString(parsed.takeError()),
                   "only a quantized (quantize_fp8) kernel keeps copies");
}

/// The maps of the copies view the operands the key gives them, (D, N, H,
/// B) or transposed (Nk, D, Hkv, B) for V^T; the buffers' sizes are the
/// compiler's, recorded (the runtime allocates them), and each view lies
/// inside its buffer (WorkspaceMapsStayInsideTheirBuffer).
TEST(ManifestQuantized, CopyViewsFollowTheKey) {
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.key.seqLenQ = 200; }),
      "kernels[0].then[0].params[2].dims: the tensor map of the e4m3 copy of "
      "q views [128, 200, 4, 1] (innermost first: the key's shape), got "
      "[128, 100, 4, 1]");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.key.numHeadsQ = 8; }),
      "the tensor map of the e4m3 copy of q views [128, 100, 8, 1]");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     copyMap(k, 0).dims = {128, 64, 2, 1};
                   }),
                   "kernels[0].then[0].params[0].dims: the tensor map of the "
                   "e4m3 copy of v views [128, 128, 2, 1] (transposed, "
                   "innermost first");
  // Sizes are the compiler's, recorded: a copy padded further loads.
  EXPECT_EQ(quantizedError([](KernelEntry &k) {
              k.workspace[4].shape[3] = GridDim{144, {}};
            }),
            "");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[1].dtype = "e4m3"; }),
      "kernels[0].workspace[1].dtype: a quantized (quantize_fp8) kernel's "
      "descales and scratch are \"f32\"");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[6].dtype = "i32"; }),
      "kernels[0].workspace[6].dtype");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { k.workspace[3].name = "scratch3"; }),
      "exactly one buffer each named q_descale, k_descale and v_descale");
}

TEST(ManifestQuantized, WorkspaceMapsStayInsideTheirBuffer) {
  // One element past the end of v_fp8 [1, 2, 128, 128].
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { copyMap(k, 0).dims[1] = 129; }),
      "the tensor map view of workspace v_fp8 reaches element "
      "32895, past its 32768 (static) elements");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     copyMap(k, 0).strides[2] = int64_t(1) << 62;
                   }),
                   "strides that are multiples of 16 bytes below 2^40");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     copyMap(k, 0).strides[0] = 100; // not 16-byte aligned
                   }),
                   "strides that are multiples of 16 bytes");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { copyMap(k, 0).dims[3] = 0; }),
      "dims in [1, 2^32]");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     copyMap(k, 0).dims[3] = int64_t(1) << 32;
                     copyMap(k, 0).strides[2] = int64_t(1) << 39;
                   }),
                   "a workspace tensor map's view overflows 64 bits");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { copyMap(k, 1).swizzle = 16; }),
      "kernels[0].then[0].params[1].swizzle: must be 0, 32, 64 or 128");
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { copyMap(k, 1).swizzle = 64; }),
      "kernels[0].then[0].params[1].box: the innermost extent 128 (128 bytes "
      "of 1-byte elements) must be a multiple of 16 bytes within the "
      "swizzle span of 64");
  // Box rows are the compiler's tile, recorded.
  EXPECT_EQ(quantizedError([](KernelEntry &k) {
              copyMap(k, 2).box = {128, 64, 1, 1};
            }),
            "");
  // Descales and scratch are passed as memrefs, never as maps.
  EXPECT_ERROR_HAS(
      quantizedError([](KernelEntry &k) { copyMap(k, 2).workspace = 1; }),
      "tensor maps of workspace buffers are of the e4m3 copies");
}

// The attention's launch shape is recorded, held to CUDA's limits only.
TEST(ManifestQuantized, TheAttentionLaunchIsRecorded) {
  EXPECT_EQ(quantizedError([](KernelEntry &k) {
              attention(k).threads = {256, 1, 1};
            }),
            "");
  EXPECT_ERROR_HAS(quantizedError([](KernelEntry &k) {
                     attention(k).threads = {1025, 1, 1};
                   }),
                   "kernels[0].then[0].launch.threads");
}

TEST(ManifestQuantized, ViewKeysBelongToWorkspaceMaps) {
  auto edit = [](const char *key) {
    return [key](json::Object &top) {
      json::Object &param =
          *(*kernel0(top).getArray("params"))[0].getAsObject();
      param[key] = json::Array{1, 2, 3};
    };
  };
  Manifest m = manifestOf({quantizedKernel("qf")});
  for (const char *key : {"dims", "strides"})
    EXPECT_ERROR_HAS(errorAfterEditing(m, edit(key)),
                     "only a workspace buffer's tensor_map states its view");
  // A workspace map without its view.
  EXPECT_ERROR_HAS(errorAfterEditing(
                       m,
                       [](json::Object &top) {
                         json::Object &then =
                             *(*kernel0(top).getArray("then"))[0].getAsObject();
                         (*then.getArray("params"))[0].getAsObject()->erase(
                             "dims");
                       }),
                   "dims");
}

//===- OddCallsTest.cpp - the C API under ASan/UBSan, called oddly --------===//
//
// Built only into attn-runtime-sanitized-tests, whose runtime is compiled
// with -fsanitize=address,undefined: any report ends the run (ctest entry
// runtime-asan). OddCalls.c makes the calls a C program can get wrong; the
// tests here add bundles with odd files, every call form against a fake
// driver, and a stream of calls with random fields.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include <random>
#include <sys/stat.h>
#include <unistd.h>

extern "C" int attn_odd_c_calls(const char *dir, uintptr_t base,
                                const char **message);

using namespace attn::bundle;
using namespace attn::testing;

namespace {

/// The fake driver's device memory: 8 MiB at fakeAddress(0) (OddCalls.c's
/// tensors lie 1 MiB apart from there), 1 MiB at fakeAddress(1) to (10).
class OddCalls : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    state.allocations[0].size = 8 << 20;
    for (int i = 8; i < 11; ++i)
      state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                   1 << 20, 0, CU_MEMORYTYPE_DEVICE});
  }
};

TEST_F(OddCalls, FromC) {
  writeBundle(dir, manifestOf({fwdKernel("k", /*lse=*/true)}));
  const char *message = "";
  EXPECT_EQ(attn_odd_c_calls(dir.path().c_str(),
                             reinterpret_cast<uintptr_t>(fakeAddress(0)),
                             &message),
            0)
      << message;
}

/// Loads of bundles whose files are odd: each must return a status.
TEST_F(OddCalls, OddBundleFiles) {
  Manifest m = manifestOf({splitKernel("s", 4), bwdKernel("g")});
  for (const char *name :
       {"manifest.json", "s.cubin", "s_0.cubin", "g_2.cubin", "tuning.json"}) {
    TempDir d;
    writeBundle(d, m);
    std::string path = d.file(name);
    ::unlink(path.c_str());
    for (int kind = 0; kind < 4; ++kind) {
      SCOPED_TRACE(std::string(name) + " kind " + std::to_string(kind));
      ::unlink(path.c_str());
      ::rmdir(path.c_str());
      if (kind == 0)
        ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
      else if (kind == 1)
        ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
      else if (kind == 2)
        ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
      else
        d.write(name, "{\"version\": 1, \"choices\": [{\"shape\": ");
      attn_bundle *b = reinterpret_cast<attn_bundle *>(1);
      EXPECT_STATUS(attn_bundle_load(d.path().c_str(), &b),
                    ATTN_ERROR_BUNDLE_CORRUPT, name);
      EXPECT_EQ(b, nullptr);
    }
    ::rmdir(path.c_str());
  }
}

/// One valid call per form, launched through the fake driver.
TEST_F(OddCalls, EveryFormLaunches) {
  load({fwdKernel("fwd", true), fp8Kernel("fp8"), pagedKernel("paged", 16),
        varlenKernel("varlen"), varlenPagedKernel("vp", 16),
        quantizedKernel("quantized"), bwdKernel("bwd")});
  attn_bundle_set_check_values(bundle, 0);
  attn_fwd_args quantized = makeArgs(1, 4, 2, 100, 128, 128, true);
  quantized.quantize = ATTN_QUANTIZE_FP8;
  for (const attn_fwd_args &args :
       {makeArgs(1, 4, 2, 100, 128, 128, true), makeFp8Args(1, 4, 2, 64, 64),
        makePagedArgs(2, 4, 2, 64, 8, 16, 4),
        makeVarlenArgs(2, 32, 8, 20, 24, 16, 16),
        makeVarlenPagedArgs(2, 32, 8, 20, 16, 16, 8, 16, 4), quantized})
    EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  attn_bwd_args bwd = makeBwdArgs();
  EXPECT_STATUS(attn_bwd(bundle, &bwd, stream), ATTN_SUCCESS, "");
}

/// Calls with random fields (sizes, strides, ranks, dtypes, pointers, the
/// optional tensors, the scalars) against every kind of kernel: every one
/// must come back with a status.
TEST_F(OddCalls, RandomFields) {
  load({fwdKernel("fwd", true), fp8Kernel("fp8"), pagedKernel("paged", 16),
        varlenKernel("varlen"), varlenPagedKernel("vp", 16),
        splitKernel("split", 4), quantizedKernel("quantized"),
        bwdKernel("bwd")});
  std::mt19937_64 rng(20261207);
  const int64_t values[] = {
      0,        1,  2,         3,         7,
      8,        16, 64,        100,       128,
      256,      -1, INT64_MAX, INT64_MIN, int64_t(1) << 40,
      INT32_MAX};
  auto pick = [&] { return values[rng() % std::size(values)]; };
  auto mutate = [&](attn_tensor &t) {
    switch (rng() % 8) {
    case 0:
      t.sizes[rng() % 4] = pick();
      break;
    case 1:
      t.strides[rng() % 4] = pick();
      break;
    case 2:
      t.rank = static_cast<int32_t>(pick());
      break;
    case 3: {
      int dtype = static_cast<int>(rng() % 7) - 1;
      std::memcpy(&t.dtype, &dtype, sizeof(dtype));
      break;
    }
    case 4:
      t.data = rng() % 2 ? nullptr : fakeAddress(static_cast<int>(rng() % 11));
      break;
    case 5:
      t = {};
      break;
    default:
      break;
    }
  };
  std::vector<attn_fwd_args> bases = {
      makeArgs(1, 4, 2, 100, 128, 128, true), makeFp8Args(1, 4, 2, 64, 64),
      makePagedArgs(2, 4, 2, 64, 8, 16, 4),
      makeVarlenArgs(2, 32, 8, 20, 24, 16, 16),
      makeVarlenPagedArgs(2, 32, 8, 20, 16, 16, 8, 16, 4)};
  for (int i = 0; i < 20000; ++i) {
    attn_fwd_args a = bases[rng() % bases.size()];
    attn_tensor *fields[] = {&a.q,
                             &a.k,
                             &a.v,
                             &a.o,
                             &a.lse,
                             &a.q_descale,
                             &a.block_table,
                             &a.cache_seqlens,
                             &a.cu_seqlens_q,
                             &a.cu_seqlens_k};
    for (int n = 1 + rng() % 3; n > 0; --n)
      mutate(*fields[rng() % std::size(fields)]);
    if (rng() % 8 == 0)
      a.max_seqlen_q = pick();
    if (rng() % 8 == 0)
      a.quantize = static_cast<int32_t>(rng() % 3);
    if (rng() % 8 == 0)
      a.softmax_scale = rng() % 2 ? -1.0f : std::nanf("");
    int64_t index = -1;
    attn_status s = rng() % 4 ? attn_fwd_select(bundle, &a, &index)
                              : attn_fwd(bundle, &a, stream);
    EXPECT_TRUE(s >= ATTN_SUCCESS && s <= ATTN_ERROR_CUDA);
    attn_bwd_args b = makeBwdArgs();
    attn_tensor *grads[] = {&b.q,   &b.k,  &b.v,  &b.o, &b.dout,
                            &b.lse, &b.dq, &b.dk, &b.dv};
    mutate(*grads[rng() % std::size(grads)]);
    s = attn_bwd_select(bundle, &b, &index);
    EXPECT_TRUE(s >= ATTN_SUCCESS && s <= ATTN_ERROR_CUDA);
  }
}

} // namespace

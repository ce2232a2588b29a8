//===- KernelKeyTest.cpp - attn_bundle_kernel_key -------------------------===//
//
// The C API's structured kernel key (and attn_dtype_name): each field of the
// manifest's key as data, the strings owned by the bundle, the errors of a bad
// query, and (against the fake driver) a call built from the key alone selects
// and launches that kernel, as attn-run builds its calls.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

using namespace attn::bundle;
using namespace attn::testing;

namespace {

attn_kernel_key keyOf(const attn_bundle *bundle, int64_t index) {
  attn_kernel_key key;
  std::memset(&key, 0xab, sizeof(key));
  EXPECT_EQ(attn_bundle_kernel_key(bundle, index, &key), ATTN_SUCCESS)
      << attn_last_error();
  return key;
}

TEST(KernelKey, ForwardFields) {
  TempDir dir;
  KernelEntry plain = fwdKernel("plain");
  KernelEntry shaped =
      withShape(fwdKernel("shaped", /*lse=*/true), 2, 32, 8, 1000, 3000);
  shaped.variant = "block-n=128";
  BundleOwner owner{loadBundle(
      dir, manifestOf({plain, shaped, fp8Kernel("fp8"),
                       pagedKernel("paged", 16), varlenKernel("varlen"),
                       splitKernel("split", 4), quantizedKernel("quant")}))};
  ASSERT_NE(owner.bundle, nullptr) << attn_last_error();

  attn_kernel_key k = keyOf(owner.bundle, 0);
  EXPECT_EQ(k.kind, ATTN_KERNEL_FWD);
  EXPECT_EQ(k.dtype, ATTN_DTYPE_BF16);
  EXPECT_EQ(k.quantize, ATTN_QUANTIZE_NONE);
  EXPECT_EQ(k.head_dim, plain.key.headDim);
  EXPECT_EQ(k.causal, plain.key.causal);
  EXPECT_EQ(k.has_lse, 0);
  EXPECT_EQ(k.strided, 1);
  EXPECT_EQ(k.varlen, 0);
  EXPECT_EQ(k.tensor_cores, 0);
  EXPECT_EQ(k.batch, -1);
  EXPECT_EQ(k.num_heads_q, -1);
  EXPECT_EQ(k.seqlen_k, -1);
  EXPECT_EQ(k.page_size, 0);
  EXPECT_EQ(k.splits, 1);
  EXPECT_EQ(k.block_m, plain.key.blockM);
  EXPECT_EQ(k.block_n, plain.key.blockN);
  EXPECT_DOUBLE_EQ(k.scale, plain.key.scale);
  EXPECT_STREQ(k.name, "plain");
  EXPECT_STREQ(k.variant, "");
  EXPECT_STREQ(k.quantize_options, "");

  k = keyOf(owner.bundle, 1);
  EXPECT_EQ(k.has_lse, 1);
  EXPECT_EQ(k.batch, 2);
  EXPECT_EQ(k.num_heads_q, 32);
  EXPECT_EQ(k.num_heads_kv, 8);
  EXPECT_EQ(k.seqlen_q, 1000);
  EXPECT_EQ(k.seqlen_k, 3000);
  EXPECT_STREQ(k.variant, "block-n=128");

  EXPECT_EQ(keyOf(owner.bundle, 2).dtype, ATTN_DTYPE_E4M3);
  k = keyOf(owner.bundle, 3);
  EXPECT_EQ(k.page_size, 16);
  EXPECT_EQ(k.tensor_cores, 1);
  k = keyOf(owner.bundle, 4);
  EXPECT_EQ(k.varlen, 1);
  EXPECT_EQ(k.batch, -1);
  EXPECT_EQ(k.num_heads_q, 32);
  EXPECT_EQ(keyOf(owner.bundle, 5).splits, 4);
  k = keyOf(owner.bundle, 6);
  EXPECT_EQ(k.quantize, ATTN_QUANTIZE_FP8);
  EXPECT_EQ(k.dtype, ATTN_DTYPE_BF16);
  EXPECT_STREQ(k.quantize_options, "block-m=128 block-n=128 hadamard=false "
                                   "qk-granularity=block v-granularity=head");
}

TEST(KernelKey, BackwardKind) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({bwdKernel("g")}))};
  ASSERT_NE(owner.bundle, nullptr) << attn_last_error();
  attn_kernel_key k = keyOf(owner.bundle, 0);
  EXPECT_EQ(k.kind, ATTN_KERNEL_BWD);
  EXPECT_EQ(k.has_lse, 1);
  EXPECT_GE(k.batch, 1); // a backward kernel's lengths are static
  EXPECT_GE(k.seqlen_k, 1);
  EXPECT_EQ(k.tensor_cores, 1);
}

TEST(KernelKey, BadQueries) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({fwdKernel("a")}))};
  ASSERT_NE(owner.bundle, nullptr);
  attn_kernel_key key;
  EXPECT_STATUS(attn_bundle_kernel_key(owner.bundle, 1, &key),
                ATTN_ERROR_INVALID_ARGUMENT,
                "kernel index 1 is out of range: the bundle has 1 kernels");
  EXPECT_STATUS(attn_bundle_kernel_key(owner.bundle, -1, &key),
                ATTN_ERROR_INVALID_ARGUMENT, "out of range");
  EXPECT_STATUS(attn_bundle_kernel_key(owner.bundle, 0, nullptr),
                ATTN_ERROR_INVALID_ARGUMENT, "key is null");
  EXPECT_EQ(attn_bundle_kernel_key(nullptr, 0, &key),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bundle_kernel_key(owner.bundle, 0, &key), ATTN_SUCCESS,
                "");
}

TEST(KernelKey, DestroyedBundle) {
  TempDir dir;
  attn_bundle *bundle = loadBundle(dir, manifestOf({fwdKernel("a")}));
  ASSERT_NE(bundle, nullptr);
  attn_bundle_destroy(bundle);
  attn_kernel_key key;
  EXPECT_EQ(attn_bundle_kernel_key(bundle, 0, &key),
            ATTN_ERROR_INVALID_ARGUMENT);
}

TEST(KernelKey, DtypeNames) {
  EXPECT_STREQ(attn_dtype_name(ATTN_DTYPE_F16), "f16");
  EXPECT_STREQ(attn_dtype_name(ATTN_DTYPE_BF16), "bf16");
  EXPECT_STREQ(attn_dtype_name(ATTN_DTYPE_F32), "f32");
  EXPECT_STREQ(attn_dtype_name(ATTN_DTYPE_E4M3), "e4m3");
  EXPECT_STREQ(attn_dtype_name(ATTN_DTYPE_I32), "i32");
  attn_dtype odd;
  int value = 9;
  std::memcpy(&odd, &value, sizeof(odd));
  EXPECT_EQ(attn_dtype_name(odd), nullptr);
}

/// A call made from the key alone (the lengths of a static kernel, its
/// dtype, D and LSE) selects that kernel and launches it.
TEST_F(FakeLaunch, CallFromKeyLaunchesThatKernel) {
  KernelEntry fixed = withShape(fwdKernel("static"), 1, 4, 2, 100, 128);
  load({fwdKernel("dyn"), fixed});
  state.paramsPerLaunch = fixed.params.size();
  attn_kernel_key key = keyOf(bundle, 1);
  attn_fwd_args args =
      makeArgs(key.batch, key.num_heads_q, key.num_heads_kv, key.seqlen_q,
               key.seqlen_k, key.head_dim, key.has_lse != 0, key.dtype);
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].stream, stream);
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{2, 4, 1}));
}

} // namespace

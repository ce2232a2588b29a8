//===- CallMessagesTest.cpp - errors that say what the caller did ---------===//
//
// Messages in the caller's terms: a required tensor left zero-initialized
// is "required"; an optional tensor is absent only when zero-initialized,
// so a given one with NULL data is an error naming it, never "absent";
// NO_MATCHING_KERNEL names the fields in which the closest kernel differs;
// a block table says that it made the call paged. And handles: a bundle
// used after attn_bundle_destroy is refused, destroyed twice ignored.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

using namespace attn::bundle;
using namespace attn::testing;

namespace {

attn_status selectFwd(attn_bundle *bundle, const attn_fwd_args &args) {
  int64_t index = -1;
  return attn_fwd_select(bundle, &args, &index);
}

attn_status selectBwd(attn_bundle *bundle, const attn_bwd_args &args) {
  int64_t index = -1;
  return attn_bwd_select(bundle, &args, &index);
}

//===----------------------------------------------------------------------===//
// Required and optional tensors
//===----------------------------------------------------------------------===//

TEST(RequiredTensors, ZeroInitializedLseOfTheBackwardIsRequired) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({bwdKernel("g")}))};
  attn_bwd_args args = makeBwdArgs();
  args.lse = {};
  EXPECT_STATUS(selectBwd(owner.bundle, args), kInvalid,
                "lse is required: f32 [B, Hq, Nq] = [1, 2, 200], got a "
                "zero-initialized tensor (rank 0, data NULL)");
}

/// Every tensor of either call is required when zero-initialized.
TEST(RequiredTensors, EveryZeroInitializedOperandIsNamed) {
  TempDir dir;
  BundleOwner owner{
      loadBundle(dir, manifestOf({fwdKernel("k"), bwdKernel("g")}))};
  for (attn_tensor attn_fwd_args::*t : {&attn_fwd_args::q, &attn_fwd_args::k,
                                        &attn_fwd_args::v, &attn_fwd_args::o}) {
    attn_fwd_args args = makeArgs(1, 8, 8, 128, 128);
    args.*t = {};
    EXPECT_STATUS(selectFwd(owner.bundle, args), kInvalid, "is required: [");
  }
  std::pair<const char *, attn_tensor attn_bwd_args::*> bwd[] = {
      {"q", &attn_bwd_args::q},       {"k", &attn_bwd_args::k},
      {"v", &attn_bwd_args::v},       {"o", &attn_bwd_args::o},
      {"dout", &attn_bwd_args::dout}, {"dq", &attn_bwd_args::dq},
      {"dk", &attn_bwd_args::dk},     {"dv", &attn_bwd_args::dv}};
  for (auto [name, t] : bwd) {
    attn_bwd_args args = makeBwdArgs();
    args.*t = {};
    EXPECT_STATUS(selectBwd(owner.bundle, args), kInvalid,
                  std::string(name) + " is required: [");
  }
}

/// A call of one form with the optional tensors it gives.
struct OptionalCase {
  const char *form;
  KernelEntry kernel;
  attn_fwd_args args;
  std::vector<std::pair<const char *, attn_tensor attn_fwd_args::*>> given;
};

/// An optional tensor is absent only when zero-initialized: given with
/// NULL data over elements it is an error naming it, in every form.
TEST(OptionalTensors, GivenWithNullDataIsAnError) {
  using A = attn_fwd_args;
  std::vector<OptionalCase> cases = {
      {"batched",
       fwdKernel("k", true),
       makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true),
       {{"lse", &A::lse}}},
      {"fp8",
       fp8Kernel("k"),
       makeFp8Args(1, 8, 2, 128, 96),
       {{"q_descale", &A::q_descale},
        {"k_descale", &A::k_descale},
        {"v_descale", &A::v_descale}}},
      {"paged",
       pagedKernel("k", 16),
       makePagedArgs(2, 8, 2, 64, 8, 16, 4),
       {{"block_table", &A::block_table},
        {"cache_seqlens", &A::cache_seqlens}}},
      {"varlen",
       varlenKernel("k"),
       makeVarlenArgs(2, 32, 8, 100, 120, 64, 64),
       {{"lse", &A::lse},
        {"cu_seqlens_q", &A::cu_seqlens_q},
        {"cu_seqlens_k", &A::cu_seqlens_k}}},
      {"varlen paged",
       varlenPagedKernel("k", 16),
       makeVarlenPagedArgs(2, 32, 8, 100, 64, 64, 8, 16, 4),
       {{"lse", &A::lse}, {"block_table", &A::block_table}}}};
  for (const OptionalCase &c : cases) {
    SCOPED_TRACE(c.form);
    TempDir dir;
    BundleOwner owner{loadBundle(dir, manifestOf({c.kernel}))};
    EXPECT_STATUS(selectFwd(owner.bundle, c.args), ATTN_SUCCESS, "");
    for (auto [name, t] : c.given) {
      SCOPED_TRACE(name);
      attn_fwd_args args = c.args;
      (args.*t).data = nullptr;
      EXPECT_STATUS(selectFwd(owner.bundle, args), kInvalid,
                    std::string(name) + ": data pointer is null");
    }
  }
}

/// A batched bf16 call given a rank-3 LSE with NULL data against a kernel
/// without LSE: not "no LSE requested" (which would match), an error.
TEST(OptionalTensors, NullLseIsNotAbsent) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({fwdKernel("k")}))};
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.data = nullptr;
  EXPECT_STATUS(selectFwd(owner.bundle, args), kInvalid,
                "lse: data pointer is null");
  args.lse = {};
  EXPECT_STATUS(selectFwd(owner.bundle, args), ATTN_SUCCESS, "");
}

//===----------------------------------------------------------------------===//
// NO_MATCHING_KERNEL: what differs
//===----------------------------------------------------------------------===//

/// One key field differing between a bundle's only kernel and a call.
struct FieldCase {
  const char *field;
  KernelEntry kernel;
  attn_fwd_args args;
  const char *differs;
};

TEST(NoMatch, NamesEachFieldInWhichTheClosestKernelDiffers) {
  KernelEntry base = withShape(fwdKernel("k"), 1, 8, 8, 128, 128);
  attn_fwd_args call = makeArgs(1, 8, 8, 128, 128);
  auto kernelWith = [&](auto edit) {
    KernelEntry k = base;
    edit(k);
    return k;
  };
  auto callWith = [&](auto edit) {
    attn_fwd_args a = call;
    edit(a);
    return a;
  };
  attn_fwd_args quantizedCall = makeArgs(1, 4, 2, 100, 128, 128, true);
  std::vector<FieldCase> cases = {
      {"dtype", base, callWith([](attn_fwd_args &a) {
         for (attn_tensor *t : {&a.q, &a.k, &a.v, &a.o})
           t->dtype = ATTN_DTYPE_F16;
       }),
       "dtype (call f16, kernel bf16)"},
      {"head_dim", kernelWith([](KernelEntry &k) { k.key.headDim = 64; }), call,
       "head_dim (call 128, kernel 64)"},
      {"causal", base, callWith([](attn_fwd_args &a) { a.causal = 1; }),
       "causal (call true, kernel false)"},
      {"lse", base, makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true),
       "lse (call given, kernel writes none)"},
      {"scale", base,
       callWith([](attn_fwd_args &a) { a.softmax_scale = 0.5f; }),
       "scale (call 0.5, kernel 0.08838835)"},
      {"batch", kernelWith([](KernelEntry &k) { k.key.batch = 2; }), call,
       "batch (call 1, kernel 2)"},
      {"num_heads_q", kernelWith([](KernelEntry &k) { k.key.numHeadsQ = 16; }),
       call, "num_heads_q (call 8, kernel 16)"},
      {"num_heads_kv", kernelWith([](KernelEntry &k) { k.key.numHeadsKV = 4; }),
       call, "num_heads_kv (call 8, kernel 4)"},
      {"seqlen_q", kernelWith([](KernelEntry &k) { k.key.seqLenQ = 64; }), call,
       "seqlen_q (call 128, kernel 64)"},
      {"seqlen_k", kernelWith([](KernelEntry &k) { k.key.seqLenK = 64; }), call,
       "seqlen_k (call 128, kernel 64)"},
      {"layout", kernelWith([](KernelEntry &k) { k.key.strided = false; }),
       callWith(
           [](attn_fwd_args &a) { a.o = bnhdView(a.o.data, 1, 8, 128, 128); }),
       "layout (call strided, kernel contiguous only)"},
      {"page_size", pagedKernel("k", 16), call,
       "page_size (call 0: contiguous K/V, no block_table, kernel 16)"},
      {"varlen", varlenKernel("k"),
       makeArgs(1, 32, 8, 128, 128, 128, /*lse=*/true),
       "varlen (call false, kernel true)"},
      {"quantize", quantizedKernel("k"), quantizedCall,
       "quantize (call none, kernel fp8 (block-m=128 block-n=128 "
       "hadamard=false qk-granularity=block v-granularity=head))"}};
  for (const FieldCase &c : cases) {
    SCOPED_TRACE(c.field);
    TempDir dir;
    BundleOwner owner{loadBundle(dir, manifestOf({c.kernel}))};
    EXPECT_STATUS(
        selectFwd(owner.bundle, c.args), ATTN_ERROR_NO_MATCHING_KERNEL,
        std::string("; closest: kernel 'k' differs in: ") + c.differs);
  }
}

/// The case: two fields, and the closest of two kernels.
TEST(NoMatch, ClosestOfSeveralKernels) {
  KernelEntry far = fwdKernel("far");
  far.key.dtype = "f16";
  far.key.causal = true;
  far.key.headDim = 64;
  far.key.hasLse = true;
  appendDescriptor(far.params, Operand::LSE);
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({far, fwdKernel("near")}))};
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128, 96);
  args.causal = 1;
  EXPECT_STATUS(selectFwd(owner.bundle, args), ATTN_ERROR_NO_MATCHING_KERNEL,
                "; closest: kernel 'near' differs in: head_dim (call 96, "
                "kernel 128), causal (call true, kernel false)");
}

TEST(NoMatch, BackwardNamesTheDifferingLength) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({bwdKernel("g")}))};
  EXPECT_STATUS(selectBwd(owner.bundle, makeBwdArgs(1, 2, 1, 201, 300)),
                ATTN_ERROR_NO_MATCHING_KERNEL,
                "; closest: kernel 'g' differs in: seqlen_q (call 201, "
                "kernel 200)");
}

/// A varlen call that also passes a block table is paged: against a
/// varlen kernel on contiguous K/V the message says so, and with packed
/// [total_k, Hkv, D] K the rank error says why K must be a cache.
TEST(NoMatch, BlockTableMakesAVarlenCallPaged) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({varlenKernel("v")}))};
  attn_fwd_args paged = makeVarlenPagedArgs(2, 32, 8, 100, 64, 64, 8, 16, 4);
  EXPECT_STATUS(selectFwd(owner.bundle, paged), ATTN_ERROR_NO_MATCHING_KERNEL,
                "; closest: kernel 'v' differs in: page_size (call 16: "
                "block_table given, so the call is paged, kernel 0: "
                "contiguous K/V)");
  attn_fwd_args packed = makeVarlenArgs(2, 32, 8, 100, 120, 64, 64);
  packed.block_table =
      attn::makeTensor(fakeAddress(10), ATTN_DTYPE_I32, {2, 4});
  EXPECT_STATUS(selectFwd(owner.bundle, packed), kInvalid,
                "k: rank must be 4 ([num_pages, page_size, Hkv, D]: paged "
                "K/V caches, since block_table is given), got 3");
}

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

/// A bundle pointer after attn_bundle_destroy is refused by every function
/// (none reads the freed bundle), and a second destroy is ignored.
TEST(Handles, DestroyedBundleIsRefusedAndDestroyIsIdempotent) {
  TempDir dir;
  attn_bundle *bundle = loadBundle(dir, manifestOf({fwdKernel("k")}));
  ASSERT_NE(bundle, nullptr);
  attn_bundle_destroy(bundle);
  attn_bundle_destroy(bundle);
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128);
  attn_bwd_args bwd = makeBwdArgs();
  int64_t index = -1;
  const char *refused = "is not a loaded bundle";
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), kInvalid, refused);
  EXPECT_STATUS(attn_fwd(bundle, &args, nullptr), kInvalid, refused);
  EXPECT_STATUS(attn_tune(bundle, &args, nullptr, &index), kInvalid, refused);
  EXPECT_STATUS(attn_bwd_select(bundle, &bwd, &index), kInvalid, refused);
  EXPECT_STATUS(attn_bwd(bundle, &bwd, nullptr), kInvalid, refused);
  EXPECT_STATUS(attn_bundle_set_auto_tune(bundle, 1), kInvalid, refused);
  EXPECT_STATUS(attn_bundle_set_check_values(bundle, 0), kInvalid, refused);
  EXPECT_EQ(attn_bundle_num_kernels(bundle), 0);
  EXPECT_EQ(attn_bundle_kernel_info(bundle, 0), nullptr);
  // A pointer attn_bundle_load never returned.
  int stray = 0;
  auto *bogus = reinterpret_cast<attn_bundle *>(&stray);
  EXPECT_STATUS(attn_fwd_select(bogus, &args, &index), kInvalid, refused);
  attn_bundle_destroy(bogus);
}

} // namespace

//===- BackwardTest.cpp - "bwd" kernels and attn_bwd without a GPU --------===//
//
// The backward on the runtime side: the manifest form of an
// attn.attention_grad kernel (four launches, three fp32 workspace buffers,
// the operands dout, dq, dk, dv), validation and dispatch of attn_bwd
// calls through the C API, and their launches through the fake driver.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

using namespace attn::bundle;
using namespace attn::testing;

namespace {

#define EXPECT_HAS(message, part)                                              \
  EXPECT_NE(std::string(message).find(part), std::string::npos)                \
      << "message: " << (message)

/// The error parseManifest gives a manifest of `kernels` ("" when it
/// parses).
std::string manifestError(std::vector<KernelEntry> kernels) {
  llvm::Expected<Manifest> parsed =
      parseManifest(manifestText(manifestOf(std::move(kernels))));
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

/// The first parameter of `launch` that describes `op` in `field`.
Param &paramOf(KernelLaunch &launch, Operand op, Param::Field field) {
  for (Param &p : launch.params)
    if (p.workspace < 0 && p.operand == op && p.field == field)
      return p;
  ADD_FAILURE() << "no parameter of " << operandName(op).str();
  return launch.params.front();
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

TEST(BwdManifest, RoundTripsLaunchesAndWorkspace) {
  Manifest m = manifestOf({bwdKernel("g")});
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const KernelEntry &k = parsed->kernels[0];
  EXPECT_TRUE(k.isBackward());
  EXPECT_EQ(k.numLaunches(), 4u);
  ASSERT_EQ(k.workspace.size(), 3u);
  EXPECT_EQ(k.workspace[2].shape.size(), 4u);
  EXPECT_EQ(k.then[1].params[0].operand, Operand::DO);
  EXPECT_EQ(k.then[2].params.back().operand, Operand::DQ);
  EXPECT_HAS(describe(k), "g: bwd bf16 D=128 causal +lse B=1 Hq=2 Hkv=1 "
                          "Nq=200 Nk=300");
  EXPECT_HAS(describe(k), "| then g_1.cubin/g");
  EXPECT_HAS(manifestText(m), "\"operand\": \"dout\"");
}

TEST(BwdManifest, KeyIsStaticF16OrBf16) {
  KernelEntry k = bwdKernel("g");
  k.key.seqLenK = std::nullopt;
  EXPECT_HAS(manifestError({k}), "kernels[0].key: backward kernels have "
                                 "static batch");
  k = bwdKernel("g");
  k.key.dtype = "e4m3";
  k.key.strided = true; // as an e4m3 forward is
  EXPECT_HAS(manifestError({k}), "backward kernels are f16 or bf16");
  k = bwdKernel("g");
  k.key.hasLse = false;
  EXPECT_HAS(manifestError({k}), "kernels[0].key.lse: must be true in a "
                                 "backward kernel");
  k = bwdKernel("g");
  k.key.splits = 2;
  EXPECT_HAS(manifestError({k}), "backward kernels have no splits");
  k = bwdKernel("g");
  k.kind = "bwd_dq";
  EXPECT_HAS(manifestError({k}), "unknown kernel kind \"bwd_dq\" (expected "
                                 "\"fwd\" or \"bwd\")");
}

TEST(BwdManifest, GradientOperandsOnlyInBackwardKernels) {
  // Each of dout, dq, dk, dv reaches a launch.
  for (Operand op : {Operand::DO, Operand::DQ, Operand::DK, Operand::DV}) {
    KernelEntry k = bwdKernel("g");
    for (size_t i = 0; i < k.numLaunches(); ++i) {
      KernelLaunch &l = i ? k.then[i - 1] : k;
      llvm::erase_if(l.params, [&](const Param &p) {
        return p.workspace < 0 && p.operand == op;
      });
    }
    EXPECT_HAS(manifestError({k}), "no aligned_ptr or tensor_map of operand " +
                                       operandName(op).str() +
                                       " in a backward kernel");
  }
  KernelEntry f = fwdKernel("f");
  appendDescriptor(f.params, Operand::DQ);
  EXPECT_HAS(manifestError({f}), "a dq parameter in a kernel that is not "
                                 "backward (bwd)");
  f = fwdKernel("f");
  f.grid[1].terms[0].operand = Operand::DK;
  EXPECT_HAS(manifestError({f}), "refers to dk in a kernel that is not "
                                 "backward");
}

TEST(BwdManifest, TensorMapsOfQDoutKV) {
  // Box rows are the pass's tiles, recorded; the span is TMA's.
  KernelEntry k = bwdKernel("g");
  paramOf(k.then[1], Operand::Q, Param::Field::TensorMap).box = {64, 128, 1,
                                                                 1};
  EXPECT_EQ(manifestError({k}), "");
  paramOf(k.then[1], Operand::Q, Param::Field::TensorMap).box = {128, 64, 1, 1};
  EXPECT_HAS(manifestError({k}), "kernels[0].then[1].params[1].box: the "
                                 "innermost extent 128 (256 bytes of 2-byte "
                                 "elements)");
  k = bwdKernel("g");
  paramOf(k.then[1], Operand::K, Param::Field::TensorMap).headsInner = true;
  EXPECT_HAS(manifestError({k}), "tensor maps of a backward kernel are plain");
  k = bwdKernel("g");
  paramOf(k.then[1], Operand::DO, Param::Field::TensorMap).operand =
      Operand::O;
  EXPECT_HAS(manifestError({k}), "tensor maps of a backward kernel are for "
                                 "q, k, v and dout");
}

//===----------------------------------------------------------------------===//
// Calls: validation and dispatch
//===----------------------------------------------------------------------===//

class BwdArgs : public ::testing::Test {
protected:
  void SetUp() override {
    owner.bundle = loadBundle(dir, manifestOf({fwdKernel("f"), bwdKernel("g")}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  attn_status select(const attn_bwd_args &a) {
    index = -1;
    return attn_bwd_select(owner.bundle, &a, &index);
  }
  TempDir dir;
  BundleOwner owner{nullptr};
  attn_bwd_args args = makeBwdArgs();
  int64_t index = -1;
};

TEST_F(BwdArgs, ValidCallSelectsTheBackwardKernel) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  // The forward never picks it, nor the backward the forward kernel.
  attn_fwd_args f = makeArgs(1, 2, 1, 200, 300, 128, /*lse=*/true);
  f.causal = 1;
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &f, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "no kernel in bundle");
}

TEST_F(BwdArgs, NullsAreRefused) {
  EXPECT_STATUS(attn_bwd_select(nullptr, &args, &index), kInvalid,
                "bundle is null");
  EXPECT_STATUS(attn_bwd_select(owner.bundle, nullptr, &index), kInvalid,
                "args is null");
  EXPECT_STATUS(attn_bwd(owner.bundle, nullptr, nullptr), kInvalid,
                "args is null");
}

TEST_F(BwdArgs, DtypesAreOneOfF16AndBf16) {
  attn_bwd_args a = args;
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = ATTN_DTYPE_F32;
  EXPECT_STATUS(select(a), kInvalid,
                "q: dtype must be f16 or bf16 (there is no FP8 or f32 "
                "backward), got f32");
  a = args;
  a.dq.dtype = ATTN_DTYPE_F16;
  EXPECT_STATUS(select(a), kInvalid, "dq: dtype f16 does not match q's bf16");
  a = args;
  a.lse.dtype = ATTN_DTYPE_BF16;
  EXPECT_STATUS(select(a), kInvalid, "lse: dtype must be f32, got bf16");
}

TEST_F(BwdArgs, ShapesAgree) {
  attn_bwd_args a = args;
  a.dk.sizes[2] = 299;
  EXPECT_STATUS(select(a), kInvalid,
                "dk: sizes [1, 1, 299, 128] must equal k's [1, 1, 300, 128]");
  a = args;
  a.dout.rank = 3;
  EXPECT_STATUS(select(a), kInvalid,
                "dout: rank must be 4 ([B, Hq, Nq, D]), got 3");
  a = makeBwdArgs(1, 3, 2);
  EXPECT_STATUS(select(a), kInvalid, "Hq = 3 is not a multiple of Hkv = 2");
  a = makeBwdArgs(1, 2, 1, 200, 300, 12);
  EXPECT_STATUS(select(a), kInvalid,
                "q: head dim D = 12 must be a multiple of 8 in [8, 256]");
  a = args;
  a.lse.sizes[2] = 100;
  EXPECT_STATUS(select(a), kInvalid,
                "lse: sizes must be [B, Hq, Nq] = [1, 2, 200], got [1, 2, 100]");
  a = args;
  a.dq.data = nullptr;
  EXPECT_STATUS(select(a), kInvalid, "dq: data pointer is null");
}

TEST_F(BwdArgs, StridesAndAlignmentSuitTMA) {
  attn_bwd_args a = args;
  a.dv.strides[3] = 2;
  EXPECT_STATUS(select(a), kInvalid, "dv: stride along D must be 1, got 2");
  a = args;
  a.dout.strides[2] = 130;
  EXPECT_STATUS(select(a), kInvalid,
                "dout: stride[2] = 130 must be a multiple of 8 elements "
                "(16 bytes)");
  a = args;
  a.k.data = static_cast<char *>(a.k.data) + 8;
  EXPECT_STATUS(select(a), kInvalid, "k: data pointer");
  EXPECT_STATUS(select(a), kInvalid, "is not 16-byte aligned");
}

TEST_F(BwdArgs, OutputsDoNotAlias) {
  attn_bwd_args a = args;
  a.dq.data = a.dout.data;
  EXPECT_STATUS(select(a), kInvalid,
                "dq overlaps dout (bytes [");
  a = args;
  a.dv.data = a.dk.data;
  EXPECT_STATUS(select(a), kInvalid, "dk overlaps dv");
}

TEST_F(BwdArgs, KeyMustMatchExactly) {
  attn_bwd_args a = makeBwdArgs(1, 2, 1, 201, 300);
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL,
                "no backward kernel in bundle");
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL,
                "(bwd bf16 D=128 causal B=1 Hq=2 Hkv=1 Nq=201 Nk=300 "
                "scale=0.08838835 contiguous); its backward kernels: g: bf16");
  a = args;
  a.causal = 0;
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL, "");
  a = args;
  a.softmax_scale = 0.5f;
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL, "scale=0.5");
  a = args;
  a.softmax_scale = -1;
  EXPECT_STATUS(select(a), kInvalid, "softmax_scale must be positive");
  // A strided view needs a "strided" kernel.
  a = args;
  a.dq = bnhdView(a.dq.data, 1, 2, 200, 128);
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL, "strided)");
}

TEST(BwdDispatch, ContiguousOverStridedAndNoBackwardKernel) {
  TempDir dir;
  KernelEntry strided = bwdKernel("s");
  strided.key.strided = true;
  BundleOwner owner{loadBundle(dir, manifestOf({strided, bwdKernel("c")}))};
  ASSERT_NE(owner.bundle, nullptr);
  attn_bwd_args a = makeBwdArgs();
  int64_t index = -1;
  EXPECT_STATUS(attn_bwd_select(owner.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  a.dq = bnhdView(a.dq.data, 1, 2, 200, 128);
  EXPECT_STATUS(attn_bwd_select(owner.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);

  TempDir fwdOnly;
  BundleOwner f{loadBundle(fwdOnly, manifestOf({fwdKernel("f")}))};
  a = makeBwdArgs();
  EXPECT_STATUS(attn_bwd_select(f.bundle, &a, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL,
                "it has no backward (bwd) kernel");
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

class BwdLaunch : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    // dv: the fixture allocates addresses 0 to 7.
    state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(8)),
                                 1 << 20, 0, CU_MEMORYTYPE_DEVICE});
  }
  attn_bwd_args args = makeBwdArgs();
};

// The four launches in order on the stream, their constant grids, the
// three workspace buffers allocated before and freed after them, the maps
// of dout, q (64-row boxes), v and k (128-row boxes), dq's descriptor last.
TEST_F(BwdLaunch, FourLaunchesShareTheWorkspace) {
  KernelEntry k = bwdKernel("g");
  load({k});
  state.paramsByLaunch = {k.params.size(), k.then[0].params.size(),
                          k.then[1].params.size(), k.then[2].params.size()};
  EXPECT_STATUS(attn_bwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 4u);
  const unsigned grids[] = {4, 26, 3, 26};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(state.launches[i].grid, (std::array<unsigned, 3>{grids[i], 1, 1}));
    EXPECT_EQ(state.launches[i].stream, stream);
  }
  EXPECT_EQ(state.launches[2].block, (std::array<unsigned, 3>{384, 1, 1}));
  EXPECT_EQ(state.launches[2].sharedBytes, 163840u);
  // The three buffers in one allocation, freed after the launches.
  std::vector<uint64_t> at =
      workspaceLayout({2 * 200 * 4, 2 * 200 * 4, 2 * 200 * 128 * 4});
  ASSERT_EQ(state.allocs.size(), 1u);
  auto [base, total, allocStream] = state.allocs[0];
  EXPECT_EQ(total, at[3]);
  EXPECT_EQ(allocStream, stream);
  ASSERT_EQ(state.frees.size(), 1u);
  EXPECT_EQ(state.frees[0], std::make_tuple(base, stream, size_t(4)));
  ASSERT_EQ(state.encodes.size(), 4u);
  const int address[] = {5, 0, 2, 1};
  const cuuint32_t rows[] = {64, 64, 128, 128};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(state.encodes[i].address, fakeAddress(address[i]));
    EXPECT_EQ(state.encodes[i].box,
              (std::array<cuuint32_t, 4>{64, rows[i], 1, 1}));
  }
  EXPECT_EQ(state.encodes[2].dims, (std::array<cuuint64_t, 4>{128, 300, 1, 1}));
  // The dQ launch: dQ_acc's descriptor, then dq's.
  const std::vector<int64_t> &dq = state.launches[3].params;
  EXPECT_EQ(dq[0], int64_t(base + at[2]));
  EXPECT_EQ(dq[11 + 1], addressOf(6));
  // The preprocess reads o first.
  EXPECT_EQ(state.launches[0].params[1], addressOf(3));
}

// The buffers are generic: a tiled dQ accumulator of rank 6 ([B, Hq,
// ceil(Nq / 64), 2, 64, D / 2]) needs nothing of the runtime but its extents.
TEST_F(BwdLaunch, WorkspaceOfAnyRank) {
  KernelEntry k = bwdKernel("g");
  GridDim one{1, {}}, two{2, {}}, four{4, {}}, rows{64, {}};
  k.workspace[2].shape = {one, two, four, two, rows, rows};
  for (size_t i = 0; i < k.numLaunches(); ++i) {
    KernelLaunch &l = i ? k.then[i - 1] : k;
    std::vector<Param> params;
    for (const Param &p : l.params)
      if (p.workspace != 2)
        params.push_back(p);
    if (params.size() != l.params.size())
      appendWorkspace(params, 2, 6);
    l.params = params;
  }
  load({k});
  state.paramsByLaunch = {k.params.size(), k.then[0].params.size(),
                          k.then[1].params.size(), k.then[2].params.size()};
  EXPECT_STATUS(attn_bwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.allocs.size(), 1u);
  EXPECT_EQ(std::get<1>(state.allocs[0]),
            workspaceLayout({2 * 200 * 4, 2 * 200 * 4,
                             2 * 4 * 2 * 64 * 64 * 4})
                .back());
  ASSERT_EQ(state.launches.size(), 4u);
  // dQ_acc's descriptor in the zeroing launch: sizes, then row-major
  // strides.
  const std::vector<int64_t> &p = state.launches[1].params;
  EXPECT_EQ(std::vector<int64_t>(p.begin() + 3, p.end()),
            (std::vector<int64_t>{1, 2, 4, 2, 64, 64, 2 * 4 * 2 * 64 * 64,
                                  4 * 2 * 64 * 64, 2 * 64 * 64, 64 * 64, 64,
                                  1}));
}

TEST_F(BwdLaunch, PointersAreDeviceMemoryAndEmptyCallsLaunchNothing) {
  load({bwdKernel("g")});
  args.dv.data = fakeAddress(9); // no allocation there
  EXPECT_STATUS(attn_bwd(bundle, &args, stream), kInvalid,
                "dv: 0x814000000000 is not CUDA device memory");
  EXPECT_TRUE(state.launches.empty());
  EXPECT_TRUE(state.allocs.empty());
  attn_bwd_args empty = makeBwdArgs(0);
  state.hasContext = false;
  EXPECT_STATUS(attn_bwd(bundle, &empty, stream), ATTN_SUCCESS, "");
  EXPECT_TRUE(state.launches.empty());
  state.hasContext = true;
  args.dv.data = fakeAddress(8);
  state.allocResult = CUDA_ERROR_OUT_OF_MEMORY;
  EXPECT_STATUS(attn_bwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "kernel g: workspace (scratch0, scratch1, scratch2; 208384 "
                "bytes)");
  EXPECT_TRUE(state.launches.empty());
}

} // namespace

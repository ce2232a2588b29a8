//===- VarlenComboTest.cpp - varlen with paged K/V, varlen with split-KV --===//
//
// The two combinations of varlen and paged on the runtime side: a varlen kernel
// that reads paged K/V caches (flash_attn_varlen_func with block_table),
// and a varlen kernel split over its keys (two launches and a workspace of
// total_q rows). Manifest checks, call validation and dispatch through the
// C API, launches and value checks through the fake driver (FakeDriver.h).
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

using namespace attn::bundle;
using namespace attn::testing;

namespace {

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

/// The error parseManifest gives a manifest of `kernels` ("" when it
/// parses).
std::string manifestError(std::vector<KernelEntry> kernels,
                          int64_t version = kManifestVersion) {
  Manifest m = manifestOf(std::move(kernels));
  m.version = version;
  llvm::Expected<Manifest> parsed = parseManifest(manifestText(m));
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

#define EXPECT_HAS(message, part)                                              \
  EXPECT_NE(std::string(message).find(part), std::string::npos)                \
      << "message: " << (message)

/// Kernel `k`'s tensor map of `op`.
Param &mapOf(KernelEntry &k, Operand op) {
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand == op)
      return p;
  ADD_FAILURE() << "no tensor map of " << operandName(op).str();
  return k.params.front();
}

TEST(VarlenPagedManifest, RoundTripsMapsAndTable) {
  llvm::Expected<Manifest> parsed =
      parseManifest(manifestText(manifestOf({varlenPagedKernel("vp", 16)})));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  KernelEntry &k = parsed->kernels[0];
  EXPECT_TRUE(k.key.varlen);
  EXPECT_EQ(k.key.pageSize, 16);
  EXPECT_TRUE(mapOf(k, Operand::Q).packed);
  for (Operand op : {Operand::K, Operand::V}) {
    EXPECT_TRUE(mapOf(k, op).headsInner);
    EXPECT_FALSE(mapOf(k, op).packed);
    EXPECT_EQ(mapOf(k, op).box, (std::array<int64_t, 4>{64, 16, 1, 1}));
  }
  EXPECT_EQ(k.params.back().operand, Operand::BlockTable);
  EXPECT_EQ(manifestText(*parsed).find("cache_seqlens"), std::string::npos);
  std::string text = describe(k);
  EXPECT_HAS(text, "Nk=? page_size=16 scale=");
  EXPECT_HAS(text, "strided varlen wgmma");
  // The caches are rank 4 in a varlen paged kernel, q stays rank 3.
  EXPECT_EQ(operandRank(Operand::K, k.key), 4);
  EXPECT_EQ(operandRank(Operand::Q, k.key), 3);
  EXPECT_EQ(operandRank(Operand::V, /*varlen=*/true), 3);
  EXPECT_EQ(operandRank(Operand::V, /*varlen=*/true, /*paged=*/true), 4);
  EXPECT_EQ(operandRank(Operand::LSE, /*varlen=*/true, /*paged=*/true), 2);
}

TEST(VarlenPagedManifest, CachesAreReadThroughPagedMaps) {
  KernelEntry k = varlenPagedKernel("vp", 16);
  mapOf(k, Operand::K).packed = true;
  EXPECT_HAS(manifestError({k}),
             "the tensor map of k in a paged K/V kernel reads the [num_pages, "
             "page_size, Hkv, D] cache: heads_inner, not packed");
  mapOf(k, Operand::K).headsInner = false;
  EXPECT_HAS(manifestError({k}), "heads_inner, not packed");
  mapOf(k, Operand::K).packed = false;
  EXPECT_HAS(manifestError({k}), "the tensor map of k in a paged K/V kernel "
                                 "must be heads_inner");
  // q stays packed.
  k = varlenPagedKernel("vp", 16);
  mapOf(k, Operand::Q).packed = false;
  EXPECT_HAS(manifestError({k}), "the tensor map of q in a varlen kernel "
                                 "must be packed");
  k = varlenPagedKernel("vp", 16);
  mapOf(k, Operand::V).box = {64, 128, 1, 1};
  EXPECT_HAS(manifestError({k}), "the tensor map box of v in a paged K/V "
                                 "kernel holds rows of one page of one KV "
                                 "head: [*, rows <= page_size = 16, 1, 1]");
}

// The key counts come from cu_seqlens_k: cache_seqlens is no operand of a
// varlen paged kernel; block_table is.
TEST(VarlenPagedManifest, BlockTableButNoCacheSeqlens) {
  KernelEntry k = varlenPagedKernel("vp", 16);
  appendDescriptor(k.params, Operand::CacheSeqlens);
  EXPECT_HAS(manifestError({k}),
             "kernels[0].params: a cache_seqlens parameter in a varlen paged "
             "kernel (sequence b has cu_seqlens_k[b + 1] - cu_seqlens_k[b] "
             "keys)");
  k = varlenPagedKernel("vp", 16);
  k.grid[1].terms.push_back({Operand::CacheSeqlens, 0, 1});
  EXPECT_HAS(manifestError({k}), "kernels[0].launch.grid: refers to "
                                 "cache_seqlens in a varlen paged kernel");
  k = varlenPagedKernel("vp", 16);
  k.params.resize(k.params.size() - 7); // block_table's descriptor
  EXPECT_HAS(manifestError({k}), "no memref descriptor of operand "
                                 "block_table in a paged K/V (page_size) "
                                 "kernel");
  // Grid terms may read the caches' Hkv (dim 2 of 4); a varlen kernel's k
  // has no dim 3.
  k = varlenPagedKernel("vp", 16);
  k.grid[1].terms.push_back({Operand::K, 2, 1});
  EXPECT_EQ(manifestError({k}), "");
  k = varlenKernel("vl");
  k.grid[1].terms.push_back({Operand::K, 3, 1});
  EXPECT_HAS(manifestError({k}), "needs 0 <= dim < rank(operand)");
  k = varlenPagedKernel("vp", 16);
  k.key.seqLenK = 4096;
  EXPECT_HAS(manifestError({k}), "kernels[0].key.seqlen_k: must be null");
}

TEST(VarlenSplitManifest, WorkspaceOfTotalQRows) {
  EXPECT_EQ(manifestError({varlenSplitKernel("vs", 4)}), "");
  EXPECT_EQ(manifestError({varlenSplitKernel("vps", 4, 16)}), "");
  EXPECT_HAS(manifestError({varlenSplitKernel("vs", 4)}, 3),
             "is 3, this runtime reads version 5 only");
  llvm::Expected<Manifest> parsed =
      parseManifest(manifestText(manifestOf({varlenSplitKernel("vs", 4)})));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const KernelEntry &k = parsed->kernels[0];
  EXPECT_EQ(k.key.splits, 4);
  ASSERT_EQ(k.workspace.size(), 2u);
  EXPECT_EQ(k.workspace[1].shape[2].terms[0].operand, Operand::Q);
  EXPECT_EQ(k.workspace[1].shape[2].terms[0].dim, 0); // total_q
  // Workspace terms: a scalar is fine, q has no dim 3 in a varlen kernel,
  // cache_seqlens is no operand of a varlen paged kernel.
  KernelEntry e = varlenSplitKernel("vs", 4);
  e.workspace[1].shape[0].terms.push_back({Operand::MaxSeqlenK, 0, 64});
  EXPECT_EQ(manifestError({e}), "");
  e = varlenSplitKernel("vs", 4);
  e.workspace[0].shape[1].terms[0].dim = 3;
  EXPECT_HAS(manifestError({e}), "kernels[0].workspace[0].shape: needs 0 <= "
                                 "dim < rank(operand)");
  e = varlenSplitKernel("vps", 4, 16);
  e.workspace[0].shape[0].terms.push_back({Operand::CacheSeqlens, 0, 1});
  EXPECT_HAS(manifestError({e}), "kernels[0].workspace[0].shape: refers to "
                                 "cache_seqlens in a varlen paged kernel");
  // Split exactly with the later launch and the workspace.
  e = varlenSplitKernel("vs", 4);
  e.key.splits = 1;
  EXPECT_HAS(manifestError({e}), "kernels[0].key.splits: must be in [1, "
                                 "256], and above 1 exactly when");
}

//===----------------------------------------------------------------------===//
// Varlen paged calls: validation and dispatch
//===----------------------------------------------------------------------===//

/// B2 Hq32 Hkv8 total_q 50, max_seqlen_q 30, max_seqlen_k 60, 8 pages of
/// 16 keys, 4 pages per sequence.
attn_fwd_args varlenPagedArgs() {
  return makeVarlenPagedArgs(2, 32, 8, 50, 30, 60, 8, 16, 4);
}

class VarlenPagedArgs : public ::testing::Test {
protected:
  void SetUp() override {
    owner.bundle = loadBundle(dir, manifestOf({varlenPagedKernel("vp", 16)}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  attn_status select(const attn_fwd_args &a) {
    int64_t index = -1;
    return attn_fwd_select(owner.bundle, &a, &index);
  }
  TempDir dir;
  BundleOwner owner{nullptr};
  attn_fwd_args args = varlenPagedArgs();
};

TEST_F(VarlenPagedArgs, ValidCallPasses) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  // The table takes any strides; no pages at all is valid too.
  args.block_table.strides[0] = 9;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  args = makeVarlenPagedArgs(2, 32, 8, 50, 30, 0, 0, 16, 0);
  args.k.data = args.v.data = args.block_table.data = nullptr;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(VarlenPagedArgs, CacheSeqlensIsRefused) {
  attn_fwd_args a = args;
  a.cache_seqlens = attn::makeTensor(fakeAddress(11), ATTN_DTYPE_I32, {2});
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: a varlen call takes none (zero-initialized): "
                "sequence b has cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys");
  // Also on a varlen call without a block table.
  a = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
  a.cache_seqlens = attn::makeTensor(fakeAddress(11), ATTN_DTYPE_I32, {2});
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: a varlen call takes "
                "none");
}

TEST_F(VarlenPagedArgs, BlockTableIsI32OfBRows) {
  attn_fwd_args a = args;
  a.block_table.dtype = ATTN_DTYPE_F32;
  EXPECT_STATUS(select(a), kInvalid, "block_table: dtype must be i32, got f32");
  a = args;
  a.block_table.rank = 1;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: rank must be 2 ([B, max_pages]), got 1");
  // B is cu_seqlens_q's: 3 entries, 2 sequences.
  a = args;
  a.block_table.sizes[0] = 3;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: sizes must be [B, max_pages] = [2, 4], got [3, "
                "4]");
  a = args;
  a.block_table.data = static_cast<char *>(a.block_table.data) + 2;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: data pointer "
                "0x818000000002 is not 4-byte aligned");
  a = args;
  a.block_table.sizes[1] = INT64_MAX / 8;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: max_pages * page_size = 1152921504606846975 * "
                "16 overflows 64 bits");
  a = args;
  a.o.data = a.block_table.data;
  EXPECT_STATUS(select(a), kInvalid, "o overlaps block_table");
}

TEST_F(VarlenPagedArgs, CachesArePagesOfHeads) {
  attn_fwd_args a = args;
  a.k.rank = 3;
  EXPECT_STATUS(select(a), kInvalid,
                "k: rank must be 4 ([num_pages, page_size, Hkv, D]: paged "
                "K/V caches, since block_table is given), got 3");
  a = args;
  a.k.sizes[3] = a.v.sizes[3] = 64;
  EXPECT_STATUS(select(a), kInvalid,
                "k: sizes [8, 16, 8, 64] ([num_pages, page_size, Hkv, D]) "
                "must have q's D = 128");
  a = args;
  a.k.sizes[1] = a.v.sizes[1] = 0;
  EXPECT_STATUS(select(a), kInvalid,
                "k: page_size (dim 1 of [num_pages, "
                "page_size, Hkv, D] = [8, 0, 8, 128]) "
                "must be >= 1");
  a = args;
  a.k.sizes[2] = a.v.sizes[2] = 6;
  EXPECT_STATUS(select(a), kInvalid, "Hq = 32 is not a multiple of Hkv = 6");
  a = args;
  a.v.sizes[0] = 9;
  EXPECT_STATUS(select(a), kInvalid,
                "v: sizes [9, 16, 8, 128] must equal k's [8, 16, 8, 128]");
  a = args;
  a.v.strides[1] = 8 * 128 + 4;
  EXPECT_STATUS(select(a), kInvalid,
                "v: stride[1] = 1028 must be a multiple of 8 elements");
  a = args;
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = ATTN_DTYPE_E4M3;
  EXPECT_STATUS(select(a), kInvalid,
                "q: dtype must be f16 or bf16 in a varlen call, got e4m3");
}

// A varlen paged kernel takes varlen calls of its page size only; its
// dispatch Nk is max_seqlen_k (the capacity bounds it too).
TEST(VarlenPagedDispatch, VarlenCallsOfItsPageSizeOnly) {
  KernelEntry plainPaged = pagedKernel("p", 16);
  TempDir dir;
  BundleOwner owner{
      loadBundle(dir, manifestOf({varlenKernel("vl"),
                                  varlenPagedKernel("vp", 16), plainPaged}))};
  int64_t index = -1;
  attn_fwd_args a = varlenPagedArgs();
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  a = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
  a = makePagedArgs(2, 32, 8, 1, 8, 16, 4);
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 2);

  TempDir only;
  BundleOwner vp{loadBundle(only, manifestOf({varlenPagedKernel("vp", 16)}))};
  a = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
  EXPECT_STATUS(attn_fwd_select(vp.bundle, &a, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL,
                "vp: bf16 D=128 +lse B=? Hq=32 Hkv=8 Nq=? Nk=? page_size=16 "
                "scale=0.08838835 strided varlen");
  a = makePagedArgs(2, 32, 8, 1, 8, 16, 4);
  a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {2, 32, 1});
  EXPECT_STATUS(attn_fwd_select(vp.bundle, &a, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "Nk=64 page_size=16");
  a = makeVarlenPagedArgs(2, 32, 8, 50, 30, 60, 8, 32, 4);
  EXPECT_STATUS(attn_fwd_select(vp.bundle, &a, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL,
                "(bf16 D=128 +lse B=2 Hq=32 Hkv=8 Nq=30 Nk=60 page_size=32 "
                "scale=0.08838835 contiguous varlen)");
}

//===----------------------------------------------------------------------===//
// Varlen paged calls: launch and value checks
//===----------------------------------------------------------------------===//

class VarlenPagedLaunch : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    // cu_seqlens_q, cu_seqlens_k, block_table.
    for (int i : {8, 9, 10})
      state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                   1 << 20, 0, CU_MEMORYTYPE_DEVICE});
    // Sequence 0: 20 queries, no keys (its table row is never read);
    // sequence 1: 30 queries, 60 keys in pages 5, 2, 7, 1.
    cuQ() = {0, 20, 50};
    cuK() = {0, 0, 60};
    table() = {9, 9, 9, 9, 5, 2, 7, 1};
  }
  std::vector<int32_t> &ints(int i) {
    return state.ints[reinterpret_cast<uintptr_t>(fakeAddress(i))];
  }
  std::vector<int32_t> &cuQ() { return ints(8); }
  std::vector<int32_t> &cuK() { return ints(9); }
  std::vector<int32_t> &table() { return ints(10); }
  attn_fwd_args args = varlenPagedArgs();
};

// q's map is packed (D, total_q, Hq, 1), the caches' heads_inner (D,
// page_size, Hkv, num_pages); the grid is the varlen one; block_table's
// descriptor comes last.
TEST_F(VarlenPagedLaunch, MapsTableAndGridReachTheKernel) {
  KernelEntry k = varlenPagedKernel("vp", 16);
  load({k});
  state.paramsPerLaunch = k.params.size();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{32 * 2, 1, 1}));
  ASSERT_EQ(state.encodes.size(), 3u);
  for (int i : {0, 1}) {
    const FakeState::Encode &e = state.encodes[i];
    EXPECT_EQ(e.address, fakeAddress(2 - i));
    EXPECT_EQ(e.box, (std::array<cuuint32_t, 4>{64, 16, 1, 1}));
    EXPECT_EQ(e.dims, (std::array<cuuint64_t, 4>{128, 16, 8, 8}));
    // Rows of a page: Hkv * D elements apart; heads: D; pages: a page.
    EXPECT_EQ(e.strides, (std::array<cuuint64_t, 3>{8 * 128 * 2, 128 * 2,
                                                    16 * 8 * 128 * 2}));
  }
  EXPECT_EQ(state.encodes[2].dims, (std::array<cuuint64_t, 4>{128, 50, 32, 1}));
  const std::vector<int64_t> &p = state.launches[0].params;
  EXPECT_EQ(p[3], 30); // max_seqlen_q
  EXPECT_EQ(
      std::vector<int64_t>(p.end() - 7, p.end()),
      (std::vector<int64_t>{addressOf(10), addressOf(10), 0, 2, 4, 4, 1}));
  // cu_seqlens_q, cu_seqlens_k and the table in one synchronization.
  EXPECT_EQ(state.copies, 3);
  EXPECT_EQ(state.syncs, std::vector<CUstream>{stream});
}

// Each sequence's keys, cu_seqlens_k[b + 1] - cu_seqlens_k[b], within
// max_seqlen_k and the capacity max_pages * page_size; the table entries a
// sequence reads in [0, num_pages); no total_k (the keys live in pages).
TEST_F(VarlenPagedLaunch, KeyCountsAndTableAreCheckedUnlessTurnedOff) {
  load({varlenPagedKernel("vp", 16)});
  cuK() = {0, 0, 61};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "sequence 1 has cu_seqlens_k = 61 - 0 = 61 rows, more than "
                "max_seqlen_k = 60");
  args.max_seqlen_k = 100;
  cuK() = {0, 0, 65};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "sequence 1 has cu_seqlens_k = 65 - 0 = 65 keys, more than "
                "max_pages * page_size = 4 * 16 = 64");
  cuK() = {0, 17, 17}; // sequence 0 reads two pages
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table[0, 0] = 9 must be a page of k and v in [0, "
                "num_pages = 8) (sequence 0 has 17 keys: its first 2 entries "
                "are read)");
  cuK() = {0, 0, 49};
  table()[7] = -1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table[1, 3] = -1 must be a page");
  cuK() = {1, 1, 49};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_k[0] = 1 must be 0");
  cuK() = {0, 30, 20};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_k[2] = 20 is below cu_seqlens_k[1] = 30");
  cuQ() = {0, 20, 51};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_q[2] = 51 is past the packed rows (total = 50)");
  EXPECT_TRUE(state.launches.empty());
  // Each sequence reads 3 pages (entry 3 unread); the sums run past k's
  // dim 0 (8 pages): there is no total_k to check them against.
  cuQ() = {0, 20, 50};
  table() = {3, 4, 6, 9, 5, 2, 7, -1};
  cuK() = {0, 48, 96};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  cuK() = {0, 48, 108};
  table()[7] = 0;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 2u);
  // Off: nothing read, nothing synchronized.
  cuK() = {5, 0, 1000};
  attn_bundle_set_check_values(bundle, 0);
  int copies = state.copies;
  size_t syncs = state.syncs.size();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, copies);
  EXPECT_EQ(state.syncs.size(), syncs);
  EXPECT_EQ(state.launches.size(), 3u);
}

TEST_F(VarlenPagedLaunch, TableIsDeviceMemoryOfTheContext) {
  load({varlenPagedKernel("vp", 16)});
  state.allocations.back().size = 16; // the table: 2 x 4 i32 = 32 bytes
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table: view extends past its allocation");
  EXPECT_EQ(state.copies, 0);
}

//===----------------------------------------------------------------------===//
// Varlen split-KV: two launches, a workspace of total_q rows
//===----------------------------------------------------------------------===//

/// The descriptor of a contiguous fp32 workspace buffer at `ptr`.
std::vector<int64_t> workspaceDescriptor(CUdeviceptr ptr,
                                         std::vector<int64_t> shape) {
  std::vector<int64_t> d = {int64_t(ptr), int64_t(ptr), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * shape[i];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

using VarlenSplitLaunch = VarlenPagedLaunch;

// O_partial [S, total_q, Hq, D] and LSE_partial [S, Hq, total_q] from q's
// sizes; the partial grid ceil(max_seqlen_q / 64) * S by Hq by B, the
// combine's ceil(total_q / 64) by Hq; both launches in order, the
// workspace freed after them.
TEST_F(VarlenSplitLaunch, WorkspaceOfTotalQAndHq) {
  for (int64_t pageSize : {int64_t(0), int64_t(16)}) {
    SCOPED_TRACE(pageSize);
    state.launches.clear();
    state.allocs.clear();
    state.frees.clear();
    attn_bundle_destroy(bundle);
    TempDir fresh;
    KernelEntry k = varlenSplitKernel("vs", 4, pageSize);
    bundle = loadBundle(fresh, manifestOf({k}));
    ASSERT_NE(bundle, nullptr);
    state.paramsByLaunch = {k.params.size(), k.then[0].params.size()};
    attn_fwd_args a =
        pageSize ? args : makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
    EXPECT_STATUS(attn_fwd(bundle, &a, stream), ATTN_SUCCESS, "");
    // One allocation: [S, total_q, Hq, D] fp32, then [S, Hq, total_q].
    std::vector<uint64_t> at =
        workspaceLayout({4u * 50 * 32 * 128 * 4, 4u * 32 * 50 * 4});
    ASSERT_EQ(state.allocs.size(), 1u);
    auto [base, bytes, allocStream] = state.allocs[0];
    EXPECT_EQ(bytes, at[2]);
    EXPECT_EQ(allocStream, stream);
    CUdeviceptr op = base + at[0], lp = base + at[1];
    ASSERT_EQ(state.launches.size(), 2u);
    const Launch &partial = state.launches[0], &combine = state.launches[1];
    EXPECT_EQ(partial.grid, (std::array<unsigned, 3>{4, 32, 2}));
    EXPECT_EQ(combine.grid, (std::array<unsigned, 3>{1, 32, 1}));
    std::vector<int64_t> ws = workspaceDescriptor(op, {4, 50, 32, 128}),
                         lse = workspaceDescriptor(lp, {4, 32, 50});
    ws.insert(ws.end(), lse.begin(), lse.end());
    EXPECT_EQ(
        std::vector<int64_t>(partial.params.end() - 20, partial.params.end()),
        ws);
    EXPECT_EQ(std::vector<int64_t>(combine.params.begin(),
                                   combine.params.begin() + 20),
              ws);
    // Then o [50, 32, 128] and lse [32, 50].
    EXPECT_EQ(combine.params[20 + 1], addressOf(3));
    EXPECT_EQ(combine.params[20 + 9 + 1], addressOf(4));
    if (pageSize) { // the table reaches the partial launch
      EXPECT_EQ(partial.params[3 + 1 + 5 + 5 + 1], addressOf(10));
    }
    ASSERT_EQ(state.frees.size(), 1u);
    EXPECT_EQ(state.frees[0], std::make_tuple(base, stream, size_t(2)));
  }
}

// The split count of a varlen call (--variant="splits=S"): the partial
// grid of B sequences and max_seqlen_q rows, K/V blocks from max_seqlen_k.
TEST_F(VarlenSplitLaunch, SplitCountIsChosenPerCall) {
  std::vector<KernelEntry> kernels;
  for (int64_t splits : {4, 16}) {
    KernelEntry k = varlenSplitKernel("vs" + std::to_string(splits), splits);
    k.key.numHeadsQ = 4;
    k.key.numHeadsKV = 2;
    k.dynamicSharedBytes = 200 * 1024; // one CTA per SM
    kernels.push_back(k);
  }
  load(kernels);
  state.multiprocessors = 132;
  auto pick = [&](int64_t b, int64_t maxQ, int64_t maxK) {
    attn_fwd_args a = makeVarlenArgs(b, 4, 2, b * maxQ, b * maxK, maxQ, maxK);
    int64_t index = -1;
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index), ATTN_SUCCESS, "");
    return index;
  };
  // B1 Hq4, one query block: 16 or 64 CTAs on 132 SMs: 16 splits.
  EXPECT_EQ(pick(1, 1, 4096), 1);
  // B64: 1024 or 4096 CTAs, 0.97 wave efficiency both: the fewer splits.
  EXPECT_EQ(pick(64, 1, 4096), 0);
  // max_seqlen_k 640: 5 K/V blocks of 128, 16 splits would leave 11 empty.
  EXPECT_EQ(pick(1, 1, 640), 0);
  // max_seqlen_q 256: 4 query blocks, 64 or 256 CTAs: 0.48 or 0.97.
  EXPECT_EQ(pick(1, 256, 4096), 1);
  EXPECT_EQ(pick(8, 256, 4096), 0);
}

} // namespace

//===- RuntimeTest.cpp - bundles, validation, dispatch, fake launches -----===//
//
// Everything goes through the C API of attn/runtime.h; launches run against
// a fake CUDA driver (setDriverForTesting), so no GPU is needed.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include "llvm/Support/MemoryBuffer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace attn::bundle;
using namespace attn::testing;
using attn::runtime::DriverApi;

namespace {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

TEST(BundleLoad, MissingDirectory) {
  TempDir dir;
  std::string missing = dir.file("no-such-bundle");
  attn_bundle *bundle = reinterpret_cast<attn_bundle *>(1);
  EXPECT_STATUS(attn_bundle_load(missing.c_str(), &bundle),
                ATTN_ERROR_BUNDLE_NOT_FOUND, missing);
  EXPECT_EQ(bundle, nullptr);
}

TEST(BundleLoad, MissingManifest) {
  TempDir dir;
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_NOT_FOUND, dir.file("manifest.json"));
}

TEST(BundleLoad, MissingCubin) {
  TempDir dir;
  Manifest m = manifestOf({fwdKernel("a"), fwdKernel("b")});
  dir.write("manifest.json", manifestText(m));
  dir.write("a.cubin", fakeCubin());
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_NOT_FOUND, dir.file("b.cubin"));
  EXPECT_EQ(bundle, nullptr);
}

TEST(BundleLoad, NonElfCubinIsCorrupt) {
  TempDir dir;
  Manifest m = manifestOf({fwdKernel("a")});
  dir.write("manifest.json", manifestText(m));
  dir.write("a.cubin", "// PTX, not a cubin\n");
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "a.cubin");
}

// A cubin rebuilt (or mixed in) after its manifest was
// written must not launch as the kernel the manifest describes.
TEST(BundleLoad, CubinHashMismatchIsCorrupt) {
  TempDir dir;
  writeBundle(dir, manifestOf({fwdKernel("a"), fwdKernel("b")}));
  std::string other = fakeCubin();
  other[20] = 'X';
  dir.write("b.cubin", other);
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT,
                "cubin b.cubin of kernel b does not match the SHA-256");
  EXPECT_EQ(bundle, nullptr);
}

TEST(BundleLoad, TruncatedElfIsCorrupt) {
  TempDir dir;
  dir.write("manifest.json", manifestText(manifestOf({fwdKernel("a")})));
  dir.write("a.cubin", "\x7f"
                       "ELF");
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "is not an ELF file");
}

// A FIFO would block the read forever; a directory is no cubin either.
TEST(BundleLoad, CubinThatIsNotARegularFile) {
  TempDir dir;
  dir.write("manifest.json", manifestText(manifestOf({fwdKernel("a")})));
  ASSERT_EQ(::mkfifo(dir.file("a.cubin").c_str(), 0600), 0);
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "is a FIFO, not a regular file");
  ASSERT_EQ(::unlink(dir.file("a.cubin").c_str()), 0);
  ASSERT_EQ(::mkdir(dir.file("a.cubin").c_str(), 0700), 0);
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT,
                "is a directory, not a regular file");
  ::rmdir(dir.file("a.cubin").c_str());
}

TEST(BundleLoad, CorruptManifest) {
  TempDir dir;
  dir.write("manifest.json", "{\"version\": 1, \"kernels\": [");
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "not valid JSON");
  Manifest m = manifestOf({fwdKernel("a")});
  m.kernels[0].kind = "decode";
  dir.write("manifest.json", manifestText(m));
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                ATTN_ERROR_BUNDLE_CORRUPT, "unknown kernel kind \"decode\"");
}

TEST(BundleLoad, NullArguments) {
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(nullptr, &bundle), ATTN_ERROR_INVALID_ARGUMENT,
                "dir");
  EXPECT_STATUS(attn_bundle_load("/tmp", nullptr), ATTN_ERROR_INVALID_ARGUMENT,
                "out");
}

TEST(BundleLoad, KernelInfo) {
  TempDir dir;
  Manifest m = manifestOf({fwdKernel("a"), fwdKernel("b", /*lse=*/true)});
  BundleOwner owner{loadBundle(dir, m)};
  EXPECT_EQ(std::string(attn_last_error()), "");
  EXPECT_EQ(attn_bundle_num_kernels(owner.bundle), 2);
  EXPECT_EQ(std::string(attn_bundle_kernel_info(owner.bundle, 1)),
            describe(m.kernels[1]));
  EXPECT_EQ(attn_bundle_kernel_info(owner.bundle, 2), nullptr);
  EXPECT_EQ(attn_bundle_kernel_info(owner.bundle, -1), nullptr);
  EXPECT_EQ(attn_bundle_num_kernels(nullptr), 0);
  EXPECT_EQ(attn_bundle_kernel_info(nullptr, 0), nullptr);
  attn_bundle_destroy(nullptr);
}

TEST(BundleLoad, StatusNames) {
  EXPECT_STREQ(attn_status_name(ATTN_SUCCESS), "ATTN_SUCCESS");
  EXPECT_STREQ(attn_status_name(ATTN_ERROR_NO_MATCHING_KERNEL),
               "ATTN_ERROR_NO_MATCHING_KERNEL");
  EXPECT_STREQ(attn_status_name(ATTN_ERROR_CUDA), "ATTN_ERROR_CUDA");
  EXPECT_STREQ(attn_status_name(static_cast<attn_status>(7)),
               "ATTN_ERROR_UNKNOWN");
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

class Dispatch : public ::testing::Test {
protected:
  /// The index attn_fwd_select picks for `args` in a bundle of `kernels`.
  int64_t pick(std::vector<KernelEntry> kernels, const attn_fwd_args &args) {
    TempDir dir;
    BundleOwner owner{loadBundle(dir, manifestOf(std::move(kernels)))};
    int64_t index = -1;
    attn_status s = attn_fwd_select(owner.bundle, &args, &index);
    EXPECT_EQ(s, ATTN_SUCCESS) << attn_last_error();
    EXPECT_STREQ(attn_last_error(), "");
    return index;
  }

  /// The message of a NO_MATCHING_KERNEL select.
  std::string noMatch(std::vector<KernelEntry> kernels,
                      const attn_fwd_args &args) {
    TempDir dir;
    BundleOwner owner{loadBundle(dir, manifestOf(std::move(kernels)))};
    int64_t index = -1;
    attn_status s = attn_fwd_select(owner.bundle, &args, &index);
    EXPECT_EQ(s, ATTN_ERROR_NO_MATCHING_KERNEL) << attn_last_error();
    EXPECT_EQ(index, -1);
    return attn_last_error();
  }
};

TEST_F(Dispatch, ExactStaticBeatsDynamic) {
  attn_fwd_args args = makeArgs(2, 32, 8, 1024, 1024);
  KernelEntry dynamic = fwdKernel("dynamic");
  KernelEntry exact = withShape(fwdKernel("exact"), 2, 32, 8, 1024, 1024);
  KernelEntry other = withShape(fwdKernel("other"), 2, 32, 8, 2048, 2048);
  EXPECT_EQ(pick({dynamic, exact, other}, args), 1);
  EXPECT_EQ(pick({other, exact, dynamic}, args), 1);
  EXPECT_EQ(pick({other, dynamic}, args), 1);
}

TEST_F(Dispatch, MoreStaticLengthsWin) {
  attn_fwd_args args = makeArgs(2, 32, 8, 1000, 3000);
  KernelEntry heads = fwdKernel("heads");
  heads.key.numHeadsQ = 32;
  heads.key.numHeadsKV = 8;
  KernelEntry headsAndBatch = heads;
  headsAndBatch.name = "heads_batch";
  headsAndBatch.key.batch = 2;
  KernelEntry wrongNk = withShape(fwdKernel("wrong_nk"), 2, 32, 8, 1000, 4096);
  EXPECT_EQ(pick({fwdKernel("dynamic"), heads, headsAndBatch, wrongNk}, args),
            2);
  EXPECT_EQ(pick({headsAndBatch, heads}, args), 0);
}

TEST_F(Dispatch, TieGoesToContiguousThenManifestOrder) {
  attn_fwd_args args = makeArgs(1, 8, 8, 256, 256);
  KernelEntry strided = fwdKernel("strided");
  KernelEntry contiguous = fwdKernel("contiguous");
  contiguous.key.strided = false;
  EXPECT_EQ(pick({strided, contiguous}, args), 1);
  EXPECT_EQ(pick({contiguous, strided}, args), 0);
  KernelEntry strided2 = fwdKernel("strided2");
  EXPECT_EQ(pick({strided, strided2}, args), 0);
  EXPECT_EQ(pick({strided2, strided}, args), 0);
  // More static lengths still beat the layout.
  KernelEntry staticStrided = withShape(strided, 1, 8, 8, 256, 256);
  EXPECT_EQ(pick({contiguous, staticStrided}, args), 1);
}

TEST_F(Dispatch, TensorCoresWinTies) {
  attn_fwd_args args = makeArgs(2, 32, 8, 1000, 3000);
  KernelEntry fma = fwdKernel("fma");
  KernelEntry wgmma = wgmmaKernel("wgmma");
  EXPECT_EQ(pick({fma, wgmma}, args), 1);
  EXPECT_EQ(pick({wgmma, fma}, args), 0);
  // More static lengths still come first.
  EXPECT_EQ(
      pick({wgmma, withShape(fwdKernel("exact"), 2, 32, 8, 1000, 3000)}, args),
      1);
}

TEST_F(Dispatch, ContiguousKernelRefusedForStridedCall) {
  attn_fwd_args args = makeArgs(1, 8, 8, 256, 256);
  args.q = bnhdView(fakeAddress(0), 1, 8, 256, 128);
  KernelEntry contiguous = fwdKernel("contiguous");
  contiguous.key.strided = false;
  std::string message = noMatch({contiguous}, args);
  EXPECT_NE(message.find("strided"), std::string::npos) << message;
  EXPECT_EQ(pick({contiguous, fwdKernel("strided")}, args), 1);
  // A strided LSE makes the call strided too.
  attn_fwd_args lseArgs = makeArgs(1, 8, 8, 256, 256, 128, /*lse=*/true);
  lseArgs.lse.strides[1] = 512;
  KernelEntry contiguousLse = fwdKernel("contiguous_lse", /*lse=*/true);
  contiguousLse.key.strided = false;
  noMatch({contiguousLse}, lseArgs);
}

TEST_F(Dispatch, KeyMismatchesFindNoKernel) {
  KernelEntry k = fwdKernel("bf16_d128");
  attn_fwd_args causal = makeArgs(1, 8, 8, 128, 128);
  causal.causal = 1;
  std::string message = noMatch({k}, causal);
  EXPECT_NE(message.find("causal"), std::string::npos) << message;
  EXPECT_NE(message.find("bf16_d128"), std::string::npos) << message;
  noMatch({k}, makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true));
  noMatch({fwdKernel("lse", /*lse=*/true)}, makeArgs(1, 8, 8, 128, 128));
  noMatch({k}, makeArgs(1, 8, 8, 128, 128, 128, false, ATTN_DTYPE_F16));
  noMatch({k}, makeArgs(1, 8, 8, 128, 128, 64));
  attn_fwd_args scaled = makeArgs(1, 8, 8, 128, 128);
  scaled.softmax_scale = 0.125f;
  message = noMatch({k}, scaled);
  EXPECT_NE(message.find("scale=0.125"), std::string::npos) << message;
  // Static lengths must all equal the call's.
  noMatch({withShape(k, 1, 8, 8, 128, 256)}, makeArgs(1, 8, 8, 128, 128));
}

// A varlen kernel takes varlen calls only (cu_seqlens_q given), a batched
// kernel none; the listing says "varlen".
TEST_F(Dispatch, VarlenKernelsTakeVarlenCallsOnly) {
  attn_fwd_args args = makeArgs(1, 32, 8, 128, 128, 128, /*lse=*/true);
  std::string message = noMatch({varlenKernel("vl")}, args);
  EXPECT_NE(message.find("vl: bf16 D=128 +lse B=? Hq=32 Hkv=8 Nq=? Nk=?"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("strided varlen"), std::string::npos) << message;
  KernelEntry plain = wgmmaKernel("plain");
  plain.key.hasLse = true;
  appendDescriptor(plain.params, Operand::LSE);
  EXPECT_EQ(pick({varlenKernel("vl"), plain}, args), 1);
  attn_fwd_args varlen = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
  EXPECT_EQ(pick({plain, varlenKernel("vl")}, varlen), 1);
  std::string none = noMatch({plain}, varlen);
  EXPECT_NE(none.find("bf16 D=128 +lse B=2 Hq=32 Hkv=8 Nq=30 Nk=60 "
                      "scale=0.08838835 contiguous varlen"),
            std::string::npos)
      << none;
  // Static head counts still have to match.
  noMatch({varlenKernel("vl")}, makeVarlenArgs(2, 16, 8, 50, 60, 30, 60));
}

//===----------------------------------------------------------------------===//
// Varlen calls: host validation
//===----------------------------------------------------------------------===//

class VarlenArgs : public Dispatch {
protected:
  /// The status and message attn_fwd_select gives `args` in a bundle of
  /// varlenKernel("vl").
  void expectInvalid(const attn_fwd_args &args, const std::string &part) {
    TempDir dir;
    BundleOwner owner{loadBundle(dir, manifestOf({varlenKernel("vl")}))};
    int64_t index = -1;
    EXPECT_STATUS(attn_fwd_select(owner.bundle, &args, &index),
                  ATTN_ERROR_INVALID_ARGUMENT, part);
  }
  attn_fwd_args args = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
};

TEST_F(VarlenArgs, EveryOperandIsChecked) {
  EXPECT_EQ(pick({varlenKernel("vl")}, args), 0);
  attn_fwd_args a = args;
  a.cu_seqlens_k = {};
  expectInvalid(a, "cu_seqlens_k: a varlen call (cu_seqlens_q given) needs "
                   "it: i32 [B + 1]");
  a = args;
  a.cu_seqlens_q = {};
  expectInvalid(a, "cu_seqlens_q: cu_seqlens_k is given but cu_seqlens_q is "
                   "not");
  a = args;
  // A block table makes the call varlen paged: k and v are then caches.
  a.block_table = attn::makeTensor(fakeAddress(10), ATTN_DTYPE_I32, {2, 4});
  expectInvalid(a, "k: rank must be 4 ([num_pages, page_size, Hkv, D]: paged "
                   "K/V caches, since block_table is given), got 3");
  a = args;
  a.q.dtype = ATTN_DTYPE_E4M3;
  expectInvalid(a, "q: dtype must be f16 or bf16 in a varlen call, got e4m3");
  a = args;
  a.k.rank = 4;
  expectInvalid(a, "k: rank must be 3 ([total_k, Hkv, D]), got 4");
  a = makeArgs(1, 32, 8, 30, 60, 128, true);
  a.cu_seqlens_q = args.cu_seqlens_q;
  a.cu_seqlens_k = args.cu_seqlens_k;
  expectInvalid(a, "q: rank must be 3 ([total_q, Hq, D]), got 4");
  a = args;
  a.o.dtype = ATTN_DTYPE_F16;
  expectInvalid(a, "o: dtype f16 does not match q's bf16");
  a = args;
  a.v.sizes[0] = 61;
  expectInvalid(a, "v: sizes [61, 8, 128] must equal k's [60, 8, 128]");
  a = args;
  a.o.sizes[0] = 49;
  expectInvalid(a, "o: sizes [49, 32, 128] must equal q's [50, 32, 128]");
  a = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
  a.k = attn::makeTensor(fakeAddress(1), ATTN_DTYPE_BF16, {60, 8, 64});
  a.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_BF16, {60, 8, 64});
  expectInvalid(a, "k: sizes [60, 8, 64] ([total_k, Hkv, D]) must have q's "
                   "D = 128");
  a = makeVarlenArgs(2, 32, 6, 50, 60, 30, 60);
  expectInvalid(a, "Hq = 32 is not a multiple of Hkv = 6");
  a = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60, 100);
  expectInvalid(a, "q: head dim D = 100 must be a multiple of 8");
  a = args;
  a.q.strides[2] = 2;
  expectInvalid(a, "q: stride along D must be 1, got 2");
  a = args;
  a.k.strides[0] = 8 * 128 + 4;
  expectInvalid(a, "k: stride[0] = 1028 must be a multiple of 8 elements");
  a = args;
  a.v.data = static_cast<char *>(fakeAddress(2)) + 8;
  expectInvalid(a, "v: data pointer");
  expectInvalid(a, "is not 16-byte aligned");
}

TEST_F(VarlenArgs, LseTablesAndBounds) {
  attn_fwd_args a = args;
  a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {1, 32, 50});
  expectInvalid(a, "lse: rank must be 2 ([Hq, total_q]), got 3");
  a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {50, 32});
  expectInvalid(a, "lse: sizes must be [Hq, total_q] = [32, 50], got [50, 32]");
  a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_BF16, {32, 50});
  expectInvalid(a, "lse: dtype must be f32, got bf16");
  a = args;
  a.cu_seqlens_q.dtype = ATTN_DTYPE_F32;
  expectInvalid(a, "cu_seqlens_q: dtype must be i32, got f32");
  a = args;
  a.cu_seqlens_k.sizes[0] = 4;
  expectInvalid(a, "cu_seqlens_k: sizes must be [B + 1] (cu_seqlens_q's B) "
                   "= [3], got [4]");
  a = args;
  a.cu_seqlens_q.sizes[0] = 0;
  expectInvalid(a, "cu_seqlens_q: sizes [0] must be [B + 1] with B >= 0");
  a = args;
  a.cu_seqlens_q.rank = 2;
  expectInvalid(a, "cu_seqlens_q: rank must be 1 ([B + 1])");
  a = args;
  a.cu_seqlens_k.data = static_cast<char *>(fakeAddress(9)) + 2;
  expectInvalid(a, "cu_seqlens_k: data pointer");
  a = args;
  a.max_seqlen_k = -1;
  expectInvalid(a, "max_seqlen_q = 30 and max_seqlen_k = -1 must be >= 0");
  // A batched call leaves the varlen fields zero.
  a = makeArgs(1, 32, 8, 30, 60, 128, true);
  a.max_seqlen_q = 5;
  expectInvalid(a, "max_seqlen_q = 5, max_seqlen_k = 0: only a varlen call "
                   "(cu_seqlens_q given) takes them");
  // o overlapping cu_seqlens_q.
  a = args;
  a.cu_seqlens_q.data = fakeAddress(3);
  expectInvalid(a, "o overlaps cu_seqlens_q");
}

TEST_F(Dispatch, NoMatchMessageStatesCallAndLists4Kernels) {
  std::vector<KernelEntry> kernels;
  for (int i = 0; i < 6; ++i)
    kernels.push_back(fwdKernel("kernel" + std::to_string(i)));
  attn_fwd_args args = makeArgs(2, 16, 4, 100, 300, 64);
  std::string message = noMatch(kernels, args);
  for (const char *part :
       {"bf16 D=64", "B=2 Hq=16 Hkv=4 Nq=100 Nk=300", "scale=0.125",
        "kernel0: bf16 D=128", "kernel3", "and 2 more"})
    EXPECT_NE(message.find(part), std::string::npos) << part << ": " << message;
  EXPECT_EQ(message.find("kernel4"), std::string::npos) << message;
}

TEST_F(Dispatch, ScaleDefaultAndTolerance) {
  KernelEntry k = fwdKernel("k");
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128);
  args.softmax_scale = 0; // 1/sqrt(128)
  EXPECT_EQ(pick({k}, args), 0);
  args.softmax_scale = static_cast<float>(1.0 / std::sqrt(128.0));
  EXPECT_EQ(pick({k}, args), 0);
  k.key.scale = 0.5;
  args.softmax_scale = 0.5f * (1 + 5e-7f);
  EXPECT_EQ(pick({k}, args), 0);
  args.softmax_scale = 0.5f * (1 + 1e-5f);
  noMatch({k}, args);
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

class Validation : public ::testing::Test {
protected:
  void SetUp() override {
    owner.bundle = loadBundle(dir, manifestOf({fwdKernel("k")}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  /// attn_fwd_select's status for `args`.
  attn_status select(const attn_fwd_args &args) {
    int64_t index = -1;
    return attn_fwd_select(owner.bundle, &args, &index);
  }
  TempDir dir;
  BundleOwner owner{nullptr};
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128);
};


TEST_F(Validation, ValidCallPasses) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  EXPECT_STREQ(attn_last_error(), "");
}

TEST_F(Validation, NullHandles) {
  int64_t index;
  EXPECT_STATUS(attn_fwd_select(nullptr, &args, &index), kInvalid, "bundle");
  EXPECT_STATUS(attn_fwd_select(owner.bundle, nullptr, &index), kInvalid,
                "args");
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &args, nullptr), kInvalid,
                "kernel_index");
  EXPECT_STATUS(attn_fwd(nullptr, &args, nullptr), kInvalid, "bundle");
  EXPECT_STATUS(attn_fwd(owner.bundle, nullptr, nullptr), kInvalid, "args");
}

TEST_F(Validation, Dtypes) {
  args.k.dtype = ATTN_DTYPE_F16;
  EXPECT_STATUS(select(args), kInvalid, "k: dtype f16 does not match q's bf16");
  args = makeArgs(1, 8, 8, 128, 128);
  args.o.dtype = ATTN_DTYPE_F32;
  EXPECT_STATUS(select(args), kInvalid, "o: dtype f32 does not match q's bf16");
  args = makeArgs(1, 8, 8, 128, 128, 128, false, ATTN_DTYPE_F32);
  EXPECT_STATUS(select(args), kInvalid,
                "q: dtype must be f16, bf16 or e4m3, got f32");
  args.q.dtype = ATTN_DTYPE_I32;
  EXPECT_STATUS(select(args), kInvalid,
                "q: dtype must be f16, bf16 or e4m3, got i32");
  args.q.dtype = static_cast<attn_dtype>(5);
  EXPECT_STATUS(select(args), kInvalid,
                "q: dtype must be f16, bf16 or e4m3, got <dtype 5>");
}

TEST_F(Validation, Ranks) {
  args.q.rank = 3;
  EXPECT_STATUS(select(args), kInvalid,
                "q: rank must be 4 ([B, Hq, Nq, D]), got 3");
  args = makeArgs(1, 8, 8, 128, 128);
  args.v.rank = 5;
  EXPECT_STATUS(select(args), kInvalid,
                "v: rank must be 4 ([B, Hkv, Nk, D]), got 5");
}

TEST_F(Validation, Sizes) {
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_BF16, {1, 8, 100, 128});
  EXPECT_STATUS(select(args), kInvalid,
                "v: sizes [1, 8, 100, 128] must equal k's [1, 8, 128, 128]");
  args = makeArgs(1, 8, 8, 128, 128);
  args.o.sizes[2] = 64;
  EXPECT_STATUS(select(args), kInvalid,
                "o: sizes [1, 8, 64, 128] must equal "
                "q's [1, 8, 128, 128]");
  args = makeArgs(1, 8, 8, 128, 128);
  args.k.sizes[0] = args.v.sizes[0] = 2;
  EXPECT_STATUS(select(args), kInvalid,
                "k: sizes [2, 8, 128, 128] must have "
                "q's B = 1 and D = 128");
  args = makeArgs(1, 8, 8, 128, 128);
  args.k.sizes[1] = -8;
  EXPECT_STATUS(select(args), kInvalid,
                "k: sizes [1, -8, 128, 128] must be "
                ">= 0");
  args = makeArgs(1, 8, 8, 128, 128);
  args.q.strides[0] = -args.q.strides[0];
  EXPECT_STATUS(select(args), kInvalid,
                "q: strides [-131072, 16384, 128, 1] "
                "must be >= 0");
}

TEST_F(Validation, HeadsAndHeadDim) {
  args = makeArgs(1, 12, 5, 128, 128);
  EXPECT_STATUS(select(args), kInvalid, "Hq = 12 is not a multiple of Hkv = 5");
  args = makeArgs(1, 12, 0, 128, 128);
  EXPECT_STATUS(select(args), kInvalid, "Hq = 12 is not a multiple of Hkv = 0");
  args = makeArgs(1, 8, 8, 128, 128, 100);
  EXPECT_STATUS(select(args), kInvalid,
                "q: head dim D = 100 must be a multiple of 8 in [8, 256]");
  args = makeArgs(1, 8, 8, 128, 128, 264);
  EXPECT_STATUS(select(args), kInvalid, "q: head dim D = 264");
  args = makeArgs(1, 8, 8, 128, 128, 0);
  EXPECT_STATUS(select(args), kInvalid, "q: head dim D = 0");
  // A legal D with no kernel is a dispatch miss, not a bad argument.
  args = makeArgs(1, 8, 8, 128, 128, 96);
  EXPECT_STATUS(select(args), ATTN_ERROR_NO_MATCHING_KERNEL, "D=96");
}

TEST_F(Validation, StridesAndAlignment) {
  args.q.strides[3] = 2;
  EXPECT_STATUS(select(args), kInvalid, "q: stride along D must be 1, got 2");
  args = makeArgs(1, 8, 8, 128, 128);
  args.q.strides[2] = 100;
  EXPECT_STATUS(select(args), kInvalid,
                "q: stride[2] = 100 must be a "
                "multiple of 8 elements (16 bytes)");
  args = makeArgs(1, 8, 8, 128, 128);
  args.o.data = static_cast<char *>(args.o.data) + 8;
  EXPECT_STATUS(select(args), kInvalid,
                "o: data pointer 0x7fc000000008 is "
                "not 16-byte aligned");
  // The stride of a unit dimension is never used: any value passes.
  args = makeArgs(1, 8, 8, 128, 128);
  args.k.strides[0] = args.v.strides[0] = 3;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(Validation, NullData) {
  for (attn_tensor attn_fwd_args::*t : {&attn_fwd_args::q, &attn_fwd_args::k,
                                        &attn_fwd_args::v, &attn_fwd_args::o}) {
    args = makeArgs(1, 8, 8, 128, 128);
    (args.*t).data = nullptr;
    EXPECT_STATUS(select(args), kInvalid, ": data pointer is null");
  }
  args = makeArgs(1, 8, 8, 128, 128);
  args.k.data = nullptr;
  EXPECT_STATUS(select(args), kInvalid, "k: data pointer is null");
}

// An output that overlaps another operand is refused.
TEST_F(Validation, OutputsDoNotAlias) {
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.o.data = args.q.data;
  EXPECT_STATUS(select(args), kInvalid,
                "o overlaps q (bytes [0x7f0000000000, 0x7f0000040000) and "
                "[0x7f0000000000, 0x7f0000040000)): outputs need memory of "
                "their own");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.o.data = static_cast<char *>(args.k.data) + 4096; // partly
  EXPECT_STATUS(select(args), kInvalid, "o overlaps k");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.o.data = args.v.data;
  EXPECT_STATUS(select(args), kInvalid, "o overlaps v");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.data = static_cast<char *>(args.o.data) + 256 * 1024 - 16;
  EXPECT_STATUS(select(args), kInvalid, "o overlaps lse");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.data = args.k.data;
  EXPECT_STATUS(select(args), kInvalid, "lse overlaps k");
  // Adjacent views and shared inputs (K = V, a packed QKV buffer) are fine.
  args = makeArgs(1, 8, 8, 128, 128);
  args.o.data = static_cast<char *>(args.q.data) + 256 * 1024;
  args.v.data = args.k.data;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(Validation, Lse) {
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.dtype = ATTN_DTYPE_BF16;
  EXPECT_STATUS(select(args), kInvalid, "lse: dtype must be f32, got bf16");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.sizes[2] = 100;
  EXPECT_STATUS(select(args), kInvalid,
                "lse: sizes must be [B, Hq, Nq] = "
                "[1, 8, 128], got [1, 8, 100]");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.rank = 4;
  EXPECT_STATUS(select(args), kInvalid,
                "lse: rank must be 3 ([B, Hq, Nq]), got 4");
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.data = static_cast<char *>(args.lse.data) + 2;
  EXPECT_STATUS(select(args), kInvalid, "lse: data pointer");
  // Any strides are fine for LSE; no lse kernel in this bundle.
  args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.strides[1] = 129;
  EXPECT_STATUS(select(args), ATTN_ERROR_NO_MATCHING_KERNEL, "+lse");
}

TEST_F(Validation, SoftmaxScale) {
  for (float scale : {-1.0f, std::nanf(""), INFINITY}) {
    args.softmax_scale = scale;
    EXPECT_STATUS(select(args), kInvalid, "softmax_scale must be positive");
  }
}

TEST_F(Validation, HugeViews) {
  int64_t n = int64_t(1) << 60;
  args = makeArgs(1, 8, 8, 128, 128);
  args.q = args.o = attn::makeTensor(fakeAddress(0), ATTN_DTYPE_BF16,
                                     {1, 8, n, 128}, {0, n, 128, 1});
  EXPECT_STATUS(select(args), kInvalid, "q: the view spans more than 2^63");
}

TEST_F(Validation, GridLimits) {
  args = makeArgs(1, 70000, 1, 128, 128);
  EXPECT_STATUS(select(args), kInvalid, "grid [2, 70000, 1]");
  args = makeArgs(70000, 1, 1, 128, 128);
  EXPECT_STATUS(select(args), kInvalid, "outside the CUDA limits");
}

TEST_F(Validation, LastErrorIsPerThread) {
  args.q.rank = 2;
  EXPECT_EQ(select(args), kInvalid);
  std::string other = "unset";
  std::thread([&] { other = attn_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(attn_last_error()), "");
}

//===----------------------------------------------------------------------===//
// The C++ wrapper
//===----------------------------------------------------------------------===//

TEST(Wrapper, BundleAndTensors) {
  attn::Bundle missing;
  attn::Status s = missing.load("/nonexistent/attn-bundle");
  EXPECT_EQ(s.code, ATTN_ERROR_BUNDLE_NOT_FOUND);
  EXPECT_NE(s.message.find("/nonexistent/attn-bundle"), std::string::npos);
  EXPECT_FALSE(bool(missing));

  TempDir dir;
  writeBundle(dir, manifestOf({fwdKernel("k")}));
  attn::Bundle bundle;
  ASSERT_TRUE(bundle.load(dir.path()).ok());
  attn::Bundle moved = std::move(bundle);
  EXPECT_FALSE(bool(bundle));
  EXPECT_EQ(moved.numKernels(), 1);
  EXPECT_EQ(moved.kernelInfo(0).substr(0, 6), "k: fwd");
  EXPECT_EQ(moved.kernelInfo(1), "");
  int64_t index = -1;
  EXPECT_TRUE(moved.select(makeArgs(1, 8, 8, 64, 64), index).ok());
  EXPECT_EQ(index, 0);
  attn_fwd_args bad = makeArgs(1, 8, 8, 64, 64);
  bad.q.strides[3] = 4;
  s = moved.select(bad, index);
  EXPECT_EQ(s.code, ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "q: stride along D must be 1, got 4");

  EXPECT_EQ(attn::contiguousStrides({2, 3, 5, 8}),
            (std::array<int64_t, 4>{120, 40, 8, 1}));
  attn_tensor t = attn::makeTensor(nullptr, ATTN_DTYPE_F32, {2, 3, 5});
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.strides[0], 15);
  EXPECT_EQ(t.strides[2], 1);
}

//===----------------------------------------------------------------------===//
// Launches against the fake driver (FakeDriver.h)
//===----------------------------------------------------------------------===//

TEST_F(FakeLaunch, RecordsGridBlockStreamAndParams) {
  KernelEntry k = fwdKernel("k", /*lse=*/true);
  // A manifest order unlike the operand order: o's pointer, then lse's size,
  // then q's stride[2] and the rest.
  std::vector<Param> params = {{Operand::O, Param::Field::AlignedPtr, 0},
                               {Operand::LSE, Param::Field::Size, 2},
                               {Operand::Q, Param::Field::Stride, 2},
                               {Operand::K, Param::Field::Offset, 0},
                               {Operand::V, Param::Field::AllocatedPtr, 0},
                               {Operand::K, Param::Field::Size, 1}};
  k.params.insert(k.params.begin(), params.begin(), params.end());
  k.threads = {128, 2, 1};
  k.dynamicSharedBytes = 4096;
  load({k});
  state.paramsPerLaunch = k.params.size();
  attn_fwd_args args = smallArgs(/*lse=*/true);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  const Launch &l = state.launches[0];
  EXPECT_EQ(l.grid, (std::array<unsigned, 3>{2, 4, 1})); // ceil(100/64), Hq, B
  EXPECT_EQ(l.block, (std::array<unsigned, 3>{128, 2, 1}));
  EXPECT_EQ(l.sharedBytes, 4096u);
  EXPECT_EQ(l.stream, stream);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.function), 0x1001u + 0x100000u);
  auto addr = [](int i) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(fakeAddress(i)));
  };
  std::vector<int64_t> expected = {addr(3), 100, 128, 0, addr(2), 2};
  // Then the full descriptors of q, k, v, o and lse.
  auto descriptor = [&](int i, const attn_tensor &t) {
    expected.insert(expected.end(), {addr(i), addr(i), 0});
    expected.insert(expected.end(), t.sizes, t.sizes + t.rank);
    expected.insert(expected.end(), t.strides, t.strides + t.rank);
  };
  descriptor(0, args.q);
  descriptor(1, args.k);
  descriptor(2, args.v);
  descriptor(3, args.o);
  descriptor(4, args.lse);
  EXPECT_EQ(l.params, expected);
  EXPECT_TRUE(state.attributes.empty()); // 4 KiB needs no opt-in
}

/// Split-KV: the workspace is allocated on the call's stream, the partial
/// attention and the combine are launched in order on it with the
/// workspace's descriptors (contiguous fp32), and the workspace is freed
/// after both.
TEST_F(FakeLaunch, SplitKVLaunchesInOrderWithItsWorkspace) {
  attn_fwd_args args = loadSplitKV(); // B1 Hq4 Hkv2 Nq100 D128
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  // One allocation: o_partial [S, B, Hq, Nq, D] fp32, then lse_partial
  // [S, B, Hq, Nq].
  std::vector<uint64_t> at =
      workspaceLayout({4u * 1 * 4 * 100 * 128 * 4, 4u * 1 * 4 * 100 * 4});
  ASSERT_EQ(state.allocs.size(), 1u);
  auto [base, bytes, allocStream] = state.allocs[0];
  EXPECT_EQ(bytes, at[2]);
  EXPECT_EQ(allocStream, stream);
  CUdeviceptr op = base + at[0], lp = base + at[1];
  ASSERT_EQ(state.launches.size(), 2u);
  const Launch &partial = state.launches[0], &combine = state.launches[1];
  EXPECT_EQ(partial.grid, (std::array<unsigned, 3>{8, 4, 1})); // 4 * 2 blocks
  EXPECT_EQ(combine.grid, (std::array<unsigned, 3>{2, 4, 1}));
  EXPECT_EQ(combine.block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(partial.stream, stream);
  EXPECT_EQ(combine.stream, stream);
  EXPECT_NE(partial.function, combine.function); // two cubins
  auto workspace = [](CUdeviceptr ptr, std::vector<int64_t> shape) {
    std::vector<int64_t> d = {int64_t(ptr), int64_t(ptr), 0};
    d.insert(d.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size() - 1; i > 0; --i)
      strides[i - 1] = strides[i] * shape[i];
    d.insert(d.end(), strides.begin(), strides.end());
    return d;
  };
  std::vector<int64_t> o = workspace(op, {4, 1, 4, 100, 128}),
                       l = workspace(lp, {4, 1, 4, 100});
  EXPECT_EQ(std::vector<int64_t>(partial.params.begin() + 33,
                                 partial.params.end()),
            [&] {
              std::vector<int64_t> v = o;
              v.insert(v.end(), l.begin(), l.end());
              return v;
            }());
  EXPECT_EQ(std::vector<int64_t>(combine.params.begin(),
                                 combine.params.begin() + 24),
            [&] {
              std::vector<int64_t> v = o;
              v.insert(v.end(), l.begin(), l.end());
              return v;
            }());
  EXPECT_EQ(combine.params[24 + 1],
            int64_t(reinterpret_cast<uintptr_t>(fakeAddress(3)))); // o
  // Freed on the stream after both launches.
  ASSERT_EQ(state.frees.size(), 1u);
  EXPECT_EQ(state.frees[0], std::make_tuple(base, stream, size_t(2)));
}

TEST_F(FakeLaunch, SplitKVWorkspaceFailures) {
  attn_fwd_args args = loadSplitKV();
  // The allocation fails: no launch, a CUDA status naming the buffer.
  state.allocResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "workspace (o_partial, lse_partial; 825600 bytes): "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_TRUE(state.launches.empty());
  // A launch fails: the workspace is still freed.
  state.allocResult = CUDA_SUCCESS;
  state.launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "launching k: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(state.allocs.size(), 1u);
  EXPECT_EQ(state.frees.size(), 1u);
  // A driver without the stream-ordered allocator.
  state.launchResult = CUDA_SUCCESS;
  DriverApi old = fakeApi;
  old.memAllocAsync = nullptr;
  attn::runtime::setDriverForTesting(&old);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "needs a workspace, allocated with cuMemAllocAsync");
  attn::runtime::setDriverForTesting(&fakeApi);
}

// The device's default pool returns its free memory to the system at each
// synchronization, and the next call maps it again: the workspace comes
// from the bundle's own pool per device, which keeps what it holds.
TEST_F(FakeLaunch, WorkspaceComesFromTheBundlesPoolPerDevice) {
  attn_fwd_args args = loadSplitKV();
  for (int call = 0; call < 3; ++call)
    EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.pools.size(), 1u); // created once, on first use
  EXPECT_EQ(state.pools[0].device, 0);
  EXPECT_EQ(state.pools[0].allocType, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(state.pools[0].releaseThreshold, UINT64_MAX);
  ASSERT_EQ(state.allocPools.size(), 3u); // one allocation per call
  for (CUmemoryPool pool : state.allocPools)
    EXPECT_EQ(pool, reinterpret_cast<CUmemoryPool>(uintptr_t(1)));
  // Another device gets its own pool (its operands live there too).
  state.device = 1;
  for (Allocation &a : state.allocations)
    a.device = 1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.pools.size(), 2u);
  EXPECT_EQ(state.pools[1].device, 1);
  EXPECT_EQ(state.allocPools.back(),
            reinterpret_cast<CUmemoryPool>(uintptr_t(2)));
  // The pools live as long as the bundle.
  EXPECT_FALSE(state.pools[0].destroyed || state.pools[1].destroyed);
  attn_bundle_destroy(bundle);
  bundle = nullptr;
  EXPECT_TRUE(state.pools[0].destroyed && state.pools[1].destroyed);
}

TEST_F(FakeLaunch, WorkspacePoolFailures) {
  attn_fwd_args args = loadSplitKV();
  // No pool: a CUDA status naming the call, nothing launched.
  state.poolCreateResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "workspace (o_partial, lse_partial; 825600 bytes): "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: fake driver error "
                "(in cuMemPoolCreate)");
  EXPECT_TRUE(state.launches.empty());
  EXPECT_TRUE(state.allocs.empty());
  // The next call tries again.
  state.poolCreateResult = CUDA_SUCCESS;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.pools.size(), 1u);
  EXPECT_EQ(state.launches.size(), 2u);
  // A driver without the pool API: the default pool.
  DriverApi old = fakeApi;
  old.memPoolCreate = nullptr;
  attn::runtime::setDriverForTesting(&old);
  attn_bundle_destroy(bundle);
  bundle = nullptr;
  load({splitKernel("k", 4)});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.pools.size(), 1u);
  ASSERT_EQ(state.allocPools.size(), 2u);
  EXPECT_EQ(state.allocPools[1], nullptr);
  attn::runtime::setDriverForTesting(&fakeApi);
}

// Workspace sizes past 64 bits: one buffer's extents, or the sum of the
// buffers in the one allocation. Invalid, nothing allocated or launched.
TEST_F(FakeLaunch, WorkspaceSizeOverflowIsInvalid) {
  for (auto [rows, buffer] : {std::pair<int64_t, const char *>{
                                  int64_t(1) << 50, "o_partial"},
                              {22500000000000, "lse_partial"}}) {
    KernelEntry k = splitKernel("k", 4);
    for (Workspace &w : k.workspace)
      w.shape[2] = GridDim{rows, {{Operand::Q, 1, 1}}};
    attn_bundle_destroy(bundle);
    TempDir fresh;
    bundle = loadBundle(fresh, manifestOf({k}));
    ASSERT_NE(bundle, nullptr);
    attn_fwd_args args = smallArgs(/*lse=*/true);
    EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                  std::string("workspace ") + buffer +
                      " for this call overflows 64 bits");
    EXPECT_TRUE(state.allocs.empty());
    EXPECT_TRUE(state.launches.empty());
  }
}

TEST_F(FakeLaunch, TensorMapsAreEncodedPerCallAndPassedByValue) {
  load({wgmmaKernel("k")});
  state.paramsPerLaunch = 3 + 11;
  attn_fwd_args args = smallArgs();
  args.q = bnhdView(fakeAddress(0), 1, 4, 100, 128); // a [B, N, H, D] view
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  const Launch &l = state.launches[0];
  EXPECT_EQ(l.grid, (std::array<unsigned, 3>{4, 1, 1})); // 1 * 4 * 1
  EXPECT_EQ(l.block, (std::array<unsigned, 3>{384, 1, 1}));
  // Each map param carries the map the fake wrote: the tensor's address.
  auto addr = [](int i) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(fakeAddress(i)));
  };
  EXPECT_EQ(std::vector<int64_t>(l.params.begin(), l.params.begin() + 4),
            (std::vector<int64_t>{addr(2), addr(1), addr(0), addr(3)}));
  ASSERT_EQ(state.encodes.size(), 3u);
  const FakeState::Encode &v = state.encodes[0], &q = state.encodes[2];
  EXPECT_EQ(v.type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(v.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(v.box, (std::array<cuuint32_t, 4>{64, 128, 1, 1}));
  // V [1, 2, 128, 128] contiguous: dims (D, N, H, B); the stride of the
  // size-1 batch is the packed one, whatever the caller put there.
  EXPECT_EQ(v.dims, (std::array<cuuint64_t, 4>{128, 128, 2, 1}));
  EXPECT_EQ(v.strides, (std::array<cuuint64_t, 3>{256, 256 * 128, 256 * 256}));
  // Q as a [B, N, H, D] view: row stride H * D, head stride D.
  EXPECT_EQ(q.dims, (std::array<cuuint64_t, 4>{128, 100, 4, 1}));
  EXPECT_EQ(q.strides[0], 4u * 128 * 2);
  EXPECT_EQ(q.strides[1], 128u * 2);
}

// An operand's tensor map is encoded with the swizzle the manifest records
// (version 5), not one the runtime assumes.
TEST_F(FakeLaunch, TensorMapsUseTheRecordedSwizzle) {
  KernelEntry k = wgmmaKernel("k");
  k.params[0].swizzle = 64;
  k.params[0].box[0] = 32;
  load({k});
  state.paramsPerLaunch = k.params.size();
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.encodes.size(), 3u);
  EXPECT_EQ(state.encodes[0].swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(state.encodes[0].box[0], 32u);
  EXPECT_EQ(state.encodes[1].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
}

// The TMA-store epilogue: O reaches the kernel as a tensor map only, encoded
// like q's (here a [B, N, H, D] view) with 64-row boxes.
TEST_F(FakeLaunch, OTensorMapIsEncodedFromItsView) {
  KernelEntry k = wgmmaKernel("k");
  k.params.resize(3); // the maps of v, k, q; no memref descriptor of o
  Param map;
  map.operand = Operand::O;
  map.field = Param::Field::TensorMap;
  map.box = {64, 64, 1, 1};
  k.params.push_back(map);
  load({k});
  state.paramsPerLaunch = 4;
  attn_fwd_args args = smallArgs();
  args.o = bnhdView(fakeAddress(3), 1, 4, 100, 128);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  ASSERT_EQ(state.encodes.size(), 4u);
  const FakeState::Encode &o = state.encodes[3];
  EXPECT_EQ(o.type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(o.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(o.box, (std::array<cuuint32_t, 4>{64, 64, 1, 1}));
  EXPECT_EQ(o.dims, (std::array<cuuint64_t, 4>{128, 100, 4, 1}));
  EXPECT_EQ(o.strides[0], 4u * 128 * 2);
  EXPECT_EQ(o.strides[1], 128u * 2);
  EXPECT_EQ(state.launches[0].params[3],
            static_cast<int64_t>(reinterpret_cast<uintptr_t>(fakeAddress(3))));
}

// GQA packing: Q's map is (D, H, N, B) innermost first, so that a box of
// G heads by 64 queries lands query-major.
TEST_F(FakeLaunch, GqaPackedQIsHeadsInner) {
  load({gqaPackedKernel("k")});
  attn_fwd_args args = makeArgs(2, 4, 2, 100, 100);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.encodes.size(), 3u);
  const FakeState::Encode &q = state.encodes[2];
  EXPECT_EQ(q.box, (std::array<cuuint32_t, 4>{64, 2, 64, 1}));
  EXPECT_EQ(q.dims, (std::array<cuuint64_t, 4>{128, 4, 100, 2}));
  EXPECT_EQ(q.strides, (std::array<cuuint64_t, 3>{100 * 128 * 2, 128 * 2,
                                                  4 * 100 * 128 * 2}));
  ASSERT_EQ(state.launches.size(), 1u);
  // ceil(Nq / 64) Q blocks * Hkv * B.
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{2 * 2 * 2, 1, 1}));
}

TEST_F(FakeLaunch, SizeOneStridesNeverReachTheMap) {
  load({wgmmaKernel("k")});
  attn_fwd_args args = smallArgs();
  args.k.strides[0] = 3; // B = 1: never used, and not a TMA stride
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.encodes.size(), 3u);
  EXPECT_EQ(state.encodes[1].strides[2] % 16, 0u);
}

TEST_F(FakeLaunch, EmptyKeysEncodeAsOneRow) {
  load({wgmmaKernel("k")});
  attn_fwd_args args = makeArgs(1, 4, 2, 100, 0, 128);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.encodes.size(), 3u);
  EXPECT_EQ(state.encodes[1].dims[1], 1u);
}

TEST_F(FakeLaunch, EncodeFailureNamesTheOperand) {
  load({wgmmaKernel("k")});
  state.encodeResult = CUDA_ERROR_INVALID_VALUE;
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "v: the view cannot be described to TMA");
  EXPECT_TRUE(state.launches.empty());
}

TEST_F(FakeLaunch, DriverWithoutTensorMaps) {
  DriverApi old = fakeApi;
  old.tensorMapEncodeTiled = nullptr;
  attn::runtime::setDriverForTesting(&old);
  load({wgmmaKernel("k")});
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "lacks cuTensorMapEncodeTiled");
  attn::runtime::setDriverForTesting(&fakeApi);
}

// B = 70000 does not fit grid z, but the folded 1-D grid takes it.
TEST_F(FakeLaunch, FoldedGridTakesLargeBatches) {
  load({wgmmaKernel("k")});
  state.allocations.clear();
  for (int i = 0; i < 5; ++i)
    state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                 size_t(1) << 34, 0, CU_MEMORYTYPE_DEVICE});
  attn_fwd_args args = makeArgs(70000, 8, 8, 4, 4, 128);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].grid[0], 70000u * 8);
}

// Split-KV variants of one kernel (--variant="splits=S"): each call takes
// the split count whose partial grid fills the device best, the fewest
// within 85% of the best wave efficiency (FlashAttention-2's num_splits
// heuristic); counts above the K/V blocks are skipped; without a device to
// ask, the first variant.
TEST_F(FakeLaunch, SplitCountIsChosenPerCall) {
  std::vector<KernelEntry> kernels;
  for (int64_t splits : {4, 16}) {
    KernelEntry k = splitKernel("k_s" + std::to_string(splits), splits);
    k.dynamicSharedBytes = 200 * 1024; // one CTA per SM, as wgmma's
    kernels.push_back(k);
  }
  load(kernels);
  state.multiprocessors = 132;
  auto pick = [&](int64_t b, int64_t nk) {
    attn_fwd_args args = makeArgs(b, 4, 2, 1, nk, 128, /*lse=*/true);
    int64_t index = -1;
    EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
    return index;
  };
  // B1 Hq4: 16 or 64 CTAs on 132 SMs (efficiency 0.12 / 0.48): 16 splits.
  EXPECT_EQ(pick(1, 4096), 1);
  // B64: 1024 or 4096 CTAs, 7.8 / 31.0 waves (0.97 both): the fewer splits.
  EXPECT_EQ(pick(64, 4096), 0);
  // 10 K/V blocks of 64 keys: 16 splits would leave 6 empty.
  EXPECT_EQ(pick(1, 640), 0);
  state.multiprocessors = 0; // no answer: the first variant
  EXPECT_EQ(pick(1, 4096), 0);
  // attn_fwd launches the chosen one: 16 splits' grid.
  state.multiprocessors = 132;
  state.paramsByLaunch = {3 * 11 + 13 + 11, 13 + 11 + 11 + 9};
  attn_fwd_args args = makeArgs(1, 4, 2, 1, 2048, 128, /*lse=*/true);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 2u);
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{16, 4, 1}));
}

TEST_F(FakeLaunch, PersistentGridIsCappedAtTheSMCount) {
  KernelEntry k = wgmmaKernel("k");
  k.grid[0] = GridDim{132, {}};
  k.persistentCtas = 132;
  load({k});
  attn_fwd_args args = smallArgs();
  state.multiprocessors = 114; // an H100 PCIe
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  state.multiprocessors = 132;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  state.multiprocessors = 0; // unknown: the compiled count
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 3u);
  EXPECT_EQ(state.launches[0].grid[0], 114u);
  EXPECT_EQ(state.launches[1].grid[0], 132u);
  EXPECT_EQ(state.launches[2].grid[0], 132u);
}

TEST_F(FakeLaunch, StridedViewsPassTheirStrides) {
  load({fwdKernel("k")});
  state.paramsPerLaunch = fwdKernel("k").params.size();
  attn_fwd_args args = smallArgs();
  args.q = bnhdView(fakeAddress(0), 1, 4, 100, 128);
  args.o = bnhdView(fakeAddress(3), 1, 4, 100, 128);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  // q: allocated, aligned, offset, sizes[4], then strides [B, H, N, D].
  std::vector<int64_t> qStrides(state.launches[0].params.begin() + 7,
                                state.launches[0].params.begin() + 11);
  EXPECT_EQ(qStrides, (std::vector<int64_t>{100 * 4 * 128, 128, 512, 1}));
}

TEST_F(FakeLaunch, LargeSharedMemoryOptIn) {
  KernelEntry k = fwdKernel("k");
  k.dynamicSharedBytes = 100 * 1024;
  load({k});
  attn_fwd_args args = smallArgs();
  for (int i = 0; i < 3; ++i)
    EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.attributes.size(), 1u);
  auto [attribute, value, kernel, device] = state.attributes[0];
  EXPECT_EQ(attribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(value, 100 * 1024);
  EXPECT_EQ(device, 0);
  ASSERT_EQ(state.launches.size(), 3u);
  EXPECT_EQ(state.launches[2].sharedBytes, 100u * 1024);
  // Another device gets its own opt-in.
  state.device = 1;
  for (Allocation &a : state.allocations)
    a.device = 1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.attributes.size(), 2u);
  EXPECT_EQ(std::get<3>(state.attributes[1]), 1);
}

TEST_F(FakeLaunch, ClusterUsesLaunchKernelEx) {
  KernelEntry k = fwdKernel("k");
  k.cluster = {2, 1, 1};
  load({k});
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].cluster, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_EQ(state.launches[0].stream, stream);
}

TEST_F(FakeLaunch, LazyLoadOncePerKernelUnderConcurrency) {
  KernelEntry plain = fwdKernel("plain");
  KernelEntry causal = fwdKernel("causal");
  causal.key.causal = true;
  KernelEntry unused = fwdKernel("unused");
  unused.key.headDim = 64;
  load({plain, causal, unused});
  EXPECT_EQ(state.loads, 0); // nothing is loaded before the first launch
  constexpr int kThreads = 8, kIterations = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      attn_fwd_args args = smallArgs();
      for (int i = 0; i < kIterations; ++i) {
        args.causal = (i + t) % 2;
        if (attn_fwd(bundle, &args, stream) != ATTN_SUCCESS)
          ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(state.loads, 2);
  EXPECT_EQ(state.kernelLookups, 2);
  EXPECT_EQ(state.launches.size(), size_t(kThreads * kIterations));
  attn_bundle_destroy(bundle);
  bundle = nullptr;
  // Each loaded library is unloaded exactly once.
  EXPECT_EQ(state.unloaded,
            std::multiset<CUlibrary>(state.loaded.begin(), state.loaded.end()));
  EXPECT_EQ(state.unloaded.size(), 2u);
}

TEST_F(FakeLaunch, FailedLoadIsReportedEveryTime) {
  load({fwdKernel("k")});
  state.loadResult = CUDA_ERROR_NO_BINARY_FOR_GPU;
  attn_fwd_args args = smallArgs();
  for (int i = 0; i < 2; ++i)
    EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                  "CUDA_ERROR_NO_BINARY_FOR_GPU: fake driver error (in "
                  "cuLibraryLoadData)");
  EXPECT_EQ(state.loads, 1);
  EXPECT_TRUE(state.launches.empty());
}

TEST_F(FakeLaunch, NoContext) {
  load({fwdKernel("k")});
  state.hasContext = false;
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "no current CUDA context on this thread");
  EXPECT_TRUE(state.launches.empty());
}

TEST_F(FakeLaunch, PointerChecks) {
  load({fwdKernel("k", /*lse=*/true)});
  attn_fwd_args args = smallArgs(/*lse=*/true);
  state.allocations[0].memoryType = CU_MEMORYTYPE_HOST;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q: 0x7f0000000000 is host memory");
  state.allocations[0].memoryType = CU_MEMORYTYPE_DEVICE;
  state.allocations[1].device = 1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "k: on device 1, but the current context is on device 0");
  state.allocations[1].device = 0;
  state.allocations.erase(state.allocations.begin() + 2);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "v: 0x7f8000000000 is not CUDA device memory");
  args.v.data = fakeAddress(1); // inside k's allocation, fine
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  args.v.data = static_cast<char *>(fakeAddress(1)) + (1 << 20) - 32 * 1024;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "v: view extends past its allocation");
  args.v.data = fakeAddress(1);
  args.lse.data = static_cast<char *>(fakeAddress(4)) + (1 << 20) - 1024;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "lse: view extends past its allocation");
  EXPECT_EQ(state.launches.size(), 1u);
}

TEST_F(FakeLaunch, LaunchFailure) {
  load({fwdKernel("k")});
  state.launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: fake driver error (in "
                "cuLaunchKernel)");
  state.launchResult = CUDA_ERROR_ILLEGAL_ADDRESS; // no name in the fake
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "CUDA error 700");
}

TEST_F(FakeLaunch, EmptyCallsLaunchNothing) {
  load({fwdKernel("k")});
  attn_fwd_args args = makeArgs(1, 4, 2, 0, 128);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  args = makeArgs(0, 4, 2, 100, 128);
  args.q.data = args.o.data = args.k.data = args.v.data = nullptr;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  // No kernel needs to match an empty call (this one is causal).
  args.causal = 1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  args.causal = 0;
  EXPECT_TRUE(state.launches.empty());
  EXPECT_EQ(state.loads, 0);
  // Host validation still applies.
  args.q.strides[3] = 2;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q: stride along D");
}

TEST_F(FakeLaunch, HostErrorsComeBeforeDeviceChecks) {
  load({fwdKernel("k")});
  state.hasContext = false;
  attn_fwd_args args = smallArgs();
  args.causal = 1;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_NO_MATCHING_KERNEL,
                "causal");
}

//===----------------------------------------------------------------------===//
// Variants and tuning
//===----------------------------------------------------------------------===//

/// Kernel k and its variant k_v1 (same key, another BLOCK_N).
std::vector<KernelEntry> twoVariants() {
  KernelEntry k = fwdKernel("k"), v = fwdKernel("k_v1");
  v.key.blockN = 128;
  v.variant = "block-n=128";
  return {k, v};
}

CUfunction functionOfLoad(int load) {
  return reinterpret_cast<CUfunction>(uintptr_t(0x1000 + load + 0x100000));
}

TEST_F(FakeLaunch, VariantsRunTheFirstUntilTuned) {
  load(twoVariants());
  attn_fwd_args args = smallArgs();
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
  EXPECT_NE(std::string(attn_bundle_kernel_info(bundle, 1))
                .find("variant block-n=128"),
            std::string::npos);
  state.msByLoad = {1.0, 0.25}; // k_v1 (loaded second) is faster
  EXPECT_STATUS(attn_tune(bundle, &args, stream, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  // A warm-up and 5 timed launches per variant, then the fastest once more.
  ASSERT_EQ(state.launches.size(), 2u * (1 + 5) + 1);
  EXPECT_EQ(state.launches.back().function, functionOfLoad(2));
  EXPECT_EQ(state.eventsLive, 0);
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  // Another shape is not tuned.
  attn_fwd_args other = makeArgs(1, 4, 2, 99, 128);
  EXPECT_STATUS(attn_fwd_select(bundle, &other, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
  // The choice is in tuning.json: a new process starts tuned.
  auto text = llvm::MemoryBuffer::getFile(dir.file("tuning.json"));
  ASSERT_TRUE(bool(text));
  EXPECT_NE((*text)->getBuffer().find("\"k_v1\""), llvm::StringRef::npos);
  EXPECT_NE((*text)->getBuffer().find("Fake GPU"), llvm::StringRef::npos);
  attn_bundle *again = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &again), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd_select(again, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  attn_bundle_destroy(again);
}

TEST_F(FakeLaunch, AutoTuneTunesTheFirstCallOfEachShape) {
  load(twoVariants());
  state.msByLoad = {0.5, 2.0}; // the default is faster here
  attn_fwd_args args = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 1u); // off by default
  EXPECT_STATUS(attn_bundle_set_auto_tune(bundle, 1), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 1u + 2 * (1 + 5) + 1);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 1u + 2 * (1 + 5) + 2); // tuned: one launch
  EXPECT_EQ(state.launches.back().function, functionOfLoad(1));
  EXPECT_STATUS(attn_bundle_set_auto_tune(nullptr, 1),
                ATTN_ERROR_INVALID_ARGUMENT, "bundle");
}

TEST_F(FakeLaunch, TuneWithoutVariantsLaunchesOnce) {
  load({fwdKernel("k")});
  attn_fwd_args args = smallArgs();
  int64_t index = -1;
  EXPECT_STATUS(attn_tune(bundle, &args, stream, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
  EXPECT_EQ(state.launches.size(), 1u);
  EXPECT_FALSE(llvm::sys::fs::exists(dir.file("tuning.json")));
  args.causal = 1; // no kernel: the error of attn_fwd, no launch
  EXPECT_STATUS(attn_tune(bundle, &args, stream, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "causal");
  EXPECT_EQ(index, -1);
  EXPECT_STATUS(attn_tune(nullptr, &args, stream, nullptr),
                ATTN_ERROR_INVALID_ARGUMENT, "bundle");
}

//===----------------------------------------------------------------------===//
// FP8 (e4m3): host validation, dispatch
//===----------------------------------------------------------------------===//

class Fp8Validation : public ::testing::Test {
protected:
  void SetUp() override {
    owner.bundle = loadBundle(dir, manifestOf({fp8Kernel("f8")}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  attn_status select(const attn_fwd_args &a) {
    int64_t index = -1;
    return attn_fwd_select(owner.bundle, &a, &index);
  }
  TempDir dir;
  BundleOwner owner{nullptr};
  attn_fwd_args args = makeFp8Args(1, 8, 2, 128, 128);
};

TEST_F(Fp8Validation, ValidCallPasses) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  // Descales take any strides: one factor broadcast to every head.
  args.k_descale.strides[0] = args.k_descale.strides[1] = 0;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  // Nk = 1: the Nk stride is never used.
  args = makeFp8Args(1, 8, 2, 128, 1);
  args.v.strides[2] = 7;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(Fp8Validation, E4m3KeysMatchE4m3CallsOnly) {
  TempDir both;
  BundleOwner mixed{
      loadBundle(both, manifestOf({wgmmaKernel("bf"), fp8Kernel("f8")}))};
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(mixed.bundle, &args, &index), ATTN_SUCCESS,
                "");
  EXPECT_EQ(index, 1);
  attn_fwd_args bf16 = makeArgs(1, 8, 2, 128, 128);
  EXPECT_STATUS(attn_fwd_select(mixed.bundle, &bf16, &index), ATTN_SUCCESS,
                "");
  EXPECT_EQ(index, 0);
  EXPECT_STATUS(select(bf16), ATTN_ERROR_NO_MATCHING_KERNEL,
                "(bf16 D=128 B=1 Hq=8 Hkv=2 Nq=128 Nk=128");
  TempDir bfOnly;
  BundleOwner noFp8{loadBundle(bfOnly, manifestOf({wgmmaKernel("bf")}))};
  EXPECT_STATUS(attn_fwd_select(noFp8.bundle, &args, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "(e4m3 D=128 B=1 Hq=8 Hkv=2");
}

TEST_F(Fp8Validation, Dtypes) {
  args.o.dtype = ATTN_DTYPE_E4M3;
  EXPECT_STATUS(select(args), kInvalid,
                "o: dtype must be bf16 for an e4m3 call, got e4m3");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.k.dtype = ATTN_DTYPE_BF16;
  EXPECT_STATUS(select(args), kInvalid, "k: dtype bf16 does not match q's e4m3");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.q.dtype = ATTN_DTYPE_F32;
  EXPECT_STATUS(select(args), kInvalid,
                "q: dtype must be f16, bf16 or e4m3, got f32");
}

TEST_F(Fp8Validation, VIsStoredTransposed) {
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_E4M3, {1, 2, 128, 128});
  EXPECT_STATUS(select(args), kInvalid,
                "v: stride along Nk must be 1 (FP8 V is stored as V^T: a [B, "
                "Hkv, D, Nk] buffer viewed as [B, Hkv, Nk, D]), got 128");
  // V^T rows (the D stride) of 136 bytes are not TMA strides.
  args.v = attn::makeTensor(fakeAddress(2), ATTN_DTYPE_E4M3, {1, 2, 128, 128},
                            {2 * 128 * 144, 128 * 144, 1, 136});
  EXPECT_STATUS(select(args), kInvalid,
                "v: stride[3] = 136 must be a multiple of 16 elements (16 "
                "bytes)");
}

TEST_F(Fp8Validation, StridesAreMultiplesOf16Bytes) {
  args.q.strides[2] = 136; // 8 elements would do for bf16, not for e4m3
  args.q.strides[1] = 128 * 136;
  args.q.strides[0] = 8 * 128 * 136;
  EXPECT_STATUS(select(args), kInvalid,
                "q: stride[2] = 136 must be a multiple of 16 elements (16 "
                "bytes)");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.k.data = static_cast<char *>(args.k.data) + 8;
  EXPECT_STATUS(select(args), kInvalid, "k: data pointer");
  EXPECT_STATUS(select(args), kInvalid, "is not 16-byte aligned");
  // O is bf16: 8 elements are 16 bytes.
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.o = attn::makeTensor(fakeAddress(3), ATTN_DTYPE_BF16, {1, 8, 128, 128},
                            {8 * 128 * 136, 128 * 136, 136, 1});
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(Fp8Validation, HeadDimIsAMultipleOf16) {
  args = makeFp8Args(1, 8, 2, 128, 128, 72);
  EXPECT_STATUS(select(args), kInvalid,
                "q: head dim D = 72 must be a multiple of 16 in [16, 256] for "
                "e4m3");
}

TEST_F(Fp8Validation, Descales) {
  args.q_descale = {};
  EXPECT_STATUS(select(args), kInvalid,
                "q_descale: an FP8 (e4m3) call needs it: f32 [B, Hkv] = [1, "
                "2]");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.k_descale.dtype = ATTN_DTYPE_BF16;
  EXPECT_STATUS(select(args), kInvalid, "k_descale: dtype must be f32, got bf16");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.v_descale = attn::makeTensor(fakeAddress(7), ATTN_DTYPE_F32, {1, 2, 1});
  EXPECT_STATUS(select(args), kInvalid,
                "v_descale: rank must be 2 ([B, Hkv]), got 3");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.q_descale = attn::makeTensor(fakeAddress(5), ATTN_DTYPE_F32, {1, 8});
  EXPECT_STATUS(select(args), kInvalid,
                "q_descale: sizes must be [B, Hkv] = [1, 2], got [1, 8]");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.q_descale.data = nullptr;
  EXPECT_STATUS(select(args), kInvalid, "q_descale: data pointer is null");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.k_descale.data = static_cast<char *>(args.k_descale.data) + 2;
  EXPECT_STATUS(select(args), kInvalid,
                "k_descale: data pointer 0x808000000002 is not 4-byte aligned");
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.v_descale.strides[1] = -1;
  EXPECT_STATUS(select(args), kInvalid,
                "v_descale: strides [2, -1] must be >= 0");
  // The outputs may not overwrite a descale.
  args = makeFp8Args(1, 8, 2, 128, 128);
  args.q_descale.data = static_cast<char *>(args.o.data) + 64;
  EXPECT_STATUS(select(args), kInvalid, "o overlaps q_descale");
}

// A zero-initialized descale is the only one a bf16 or f16 call takes:
// callers written before FP8 keep working, and a stray descale is no
// silent no-op.
TEST_F(Validation, NonFp8CallsTakeNoDescales) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  args.k_descale = attn::makeTensor(fakeAddress(5), ATTN_DTYPE_F32, {1, 8});
  EXPECT_STATUS(select(args), kInvalid,
                "k_descale: only FP8 (e4m3) calls take descales; a bf16 call "
                "leaves it zero-initialized (rank 0, data NULL), got rank 2");
  args.k_descale = {};
  args.v_descale.data = fakeAddress(5);
  EXPECT_STATUS(select(args), kInvalid, "v_descale: only FP8 (e4m3) calls");
}

//===----------------------------------------------------------------------===//
// FP8 (e4m3): launches
//===----------------------------------------------------------------------===//

class Fp8Launch : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    // Every descale of a [1, 2] call is 1 unless a test says otherwise.
    for (int i = 5; i < 8; ++i)
      state.floats[reinterpret_cast<uintptr_t>(fakeAddress(i))] =
          std::vector<float>(32, 1.0f);
  }
  std::vector<float> &floats(int i) {
    return state.floats[reinterpret_cast<uintptr_t>(fakeAddress(i))];
  }
  attn_fwd_args args = makeFp8Args(1, 4, 2, 100, 100);
};

// Q and K as today's maps, but of bytes (128 e4m3 columns per swizzle
// span); V^T as the transposed map (Nk, D, Hkv, B).
TEST_F(Fp8Launch, TensorMapsAreBytesAndVIsTransposed) {
  load({fp8Kernel("f8")});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  ASSERT_EQ(state.encodes.size(), 3u);
  const FakeState::Encode &v = state.encodes[0], &k = state.encodes[1],
                          &q = state.encodes[2];
  for (const FakeState::Encode *e : {&v, &k, &q}) {
    EXPECT_EQ(e->type, CU_TENSOR_MAP_DATA_TYPE_UINT8);
    EXPECT_EQ(e->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    EXPECT_EQ(e->box, (std::array<cuuint32_t, 4>{128, 128, 1, 1}));
  }
  EXPECT_EQ(v.address, fakeAddress(2));
  // V^T: Nk = 100 keys innermost, rows of Nk' = 112 bytes (padded), heads
  // of 128 such rows; B = 1 takes the packed stride.
  EXPECT_EQ(v.dims, (std::array<cuuint64_t, 4>{100, 128, 2, 1}));
  EXPECT_EQ(v.strides, (std::array<cuuint64_t, 3>{112, 112 * 128, 112 * 256}));
  EXPECT_EQ(k.dims, (std::array<cuuint64_t, 4>{128, 100, 2, 1}));
  EXPECT_EQ(k.strides, (std::array<cuuint64_t, 3>{128, 12800, 25600}));
  EXPECT_EQ(q.dims, (std::array<cuuint64_t, 4>{128, 100, 4, 1}));
  EXPECT_EQ(q.strides, (std::array<cuuint64_t, 3>{128, 12800, 51200}));
}

// The descales' memref descriptors go where the manifest puts them, with
// the call's strides (here v_descale before q_descale and k_descale).
TEST_F(Fp8Launch, DescalesArePackedInKernelOrder) {
  KernelEntry k = fp8Kernel("f8");
  k.params.resize(3 + 11); // the maps and o's descriptor
  for (Operand op : {Operand::VDescale, Operand::QDescale, Operand::KDescale})
    appendDescriptor(k.params, op);
  load({k});
  state.paramsPerLaunch = k.params.size();
  args.k_descale.strides[0] = 16; // a column of a wider buffer
  args.k_descale.strides[1] = 4;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  auto addr = [](int i) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(fakeAddress(i)));
  };
  std::vector<int64_t> descales(state.launches[0].params.end() - 21,
                                state.launches[0].params.end());
  EXPECT_EQ(descales, (std::vector<int64_t>{
                          addr(7), addr(7), 0, 1, 2, 2, 1,   // v_descale
                          addr(5), addr(5), 0, 1, 2, 2, 1,   // q_descale
                          addr(6), addr(6), 0, 1, 2, 16, 4})); // k_descale
}

// By default attn_fwd reads the descales back on the call's stream, waits
// for it once, and refuses a factor that is not finite and > 0.
TEST_F(Fp8Launch, DescaleValuesAreCheckedUnlessTurnedOff) {
  load({fp8Kernel("f8")});
  floats(7) = {0.5f, std::nanf("")};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "v_descale[0, 1] = nan must be finite and > 0 (the factor that "
                "undoes the quantization of batch 0, KV head 1)");
  EXPECT_EQ(state.copies, 3);
  EXPECT_EQ(state.syncs, std::vector<CUstream>{stream});
  EXPECT_TRUE(state.launches.empty());
  floats(7) = {1, 1};
  floats(5) = {0, 1};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q_descale[0, 0] = 0 must be finite and > 0");
  floats(5) = {1, -2};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q_descale[0, 1] = -2 must be");
  floats(5) = {1, INFINITY};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q_descale[0, 1] = inf must be");
  // Only the view's elements count: k_descale with stride 2 skips index 1.
  floats(5) = {1, 1};
  floats(6) = {1, -1, 3};
  args.k_descale.strides[1] = 2;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 1u);
  // Off: no copy, no synchronization, the kernel runs on whatever is there.
  int copies = state.copies;
  size_t syncs = state.syncs.size();
  floats(6) = {-1, -1, -1};
  EXPECT_STATUS(attn_bundle_set_check_values(bundle, 0), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 2u);
  EXPECT_EQ(state.copies, copies);
  EXPECT_EQ(state.syncs.size(), syncs);
  EXPECT_STATUS(attn_bundle_set_check_values(bundle, 1), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "k_descale[0, 0] = -1");
  EXPECT_STATUS(attn_bundle_set_check_values(nullptr, 1),
                ATTN_ERROR_INVALID_ARGUMENT, "bundle");
  attn::Bundle wrapper;
  EXPECT_EQ(wrapper.setCheckValues(false).code, ATTN_ERROR_INVALID_ARGUMENT);
}

TEST_F(Fp8Launch, ValueCheckFailuresAreCudaErrors) {
  load({fp8Kernel("f8")});
  state.floats.erase(reinterpret_cast<uintptr_t>(fakeAddress(6)));
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "(in cuMemcpyDtoHAsync)");
  DriverApi old = fakeApi;
  old.streamSynchronize = nullptr;
  attn::runtime::setDriverForTesting(&old);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "checking the descale values needs cuMemcpyDtoHAsync and "
                "cuStreamSynchronize");
  EXPECT_STATUS(attn_bundle_set_check_values(bundle, 0), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  attn::runtime::setDriverForTesting(&fakeApi);
}

TEST_F(Fp8Launch, NonFp8CallsNeverSynchronize) {
  load({wgmmaKernel("bf")});
  attn_fwd_args bf16 = smallArgs();
  EXPECT_STATUS(attn_fwd(bundle, &bf16, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, 0);
  EXPECT_TRUE(state.syncs.empty());
}

TEST_F(Fp8Launch, DescalesAreDeviceMemoryOfTheContext) {
  load({fp8Kernel("f8")});
  state.allocations.erase(state.allocations.begin() + 5);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_INVALID_ARGUMENT,
                "q_descale: 0x804000000000 is not CUDA device memory");
  EXPECT_EQ(state.copies, 0);
}

//===----------------------------------------------------------------------===//
// Paged K/V calls
//===----------------------------------------------------------------------===//

class PagedValidation : public ::testing::Test {
protected:
  void SetUp() override {
    owner.bundle = loadBundle(dir, manifestOf({pagedKernel("p", 16)}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  attn_status select(const attn_fwd_args &a) {
    int64_t index = -1;
    return attn_fwd_select(owner.bundle, &a, &index);
  }
  TempDir dir;
  BundleOwner owner{nullptr};
  // B2 Hq8 Hkv2 Nq1, 8 pages of 16 tokens, 4 pages per sequence.
  attn_fwd_args args = makePagedArgs(2, 8, 2, 1, 8, 16, 4);
};

TEST_F(PagedValidation, ValidCallPasses) {
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  // The tables take any strides: a column of a wider table, a broadcast
  // length.
  args.block_table.strides[0] = 7;
  args.block_table.strides[1] = 1;
  args.cache_seqlens.strides[0] = 0;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
  // No page to read: max_pages = 0 and no pages at all.
  args = makePagedArgs(2, 8, 2, 1, 0, 16, 0);
  args.k.data = args.v.data = args.block_table.data = nullptr;
  EXPECT_STATUS(select(args), ATTN_SUCCESS, "");
}

TEST_F(PagedValidation, TablesComeTogether) {
  attn_fwd_args a = args;
  a.cache_seqlens = {};
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: a paged call (block_table given) needs it: "
                "i32 [B] = [2]");
  a = args;
  a.block_table = {};
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: cache_seqlens is given but block_table is not");
  // A rank alone marks a table as given.
  a.block_table.rank = 2;
  EXPECT_STATUS(select(a), kInvalid, "block_table: dtype must be i32, got f16");
}

TEST_F(PagedValidation, TableDtypesRanksSizesAlignment) {
  attn_fwd_args a = args;
  a.block_table.dtype = ATTN_DTYPE_F32;
  EXPECT_STATUS(select(a), kInvalid, "block_table: dtype must be i32, got f32");
  a = args;
  a.cache_seqlens.dtype = ATTN_DTYPE_BF16;
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: dtype must be i32, got bf16");
  a = args;
  a.block_table.rank = 1;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: rank must be 2 ([B, max_pages]), got 1");
  a = args;
  a.cache_seqlens.rank = 2;
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: rank must be 1 ([B]), got 2");
  a = args;
  a.block_table.sizes[0] = 3;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: sizes must be [B, max_pages] = [2, 4], got [3, "
                "4]");
  a = args;
  a.cache_seqlens.sizes[0] = 1;
  EXPECT_STATUS(select(a), kInvalid,
                "cache_seqlens: sizes must be [B] = [2], got [1]");
  a = args;
  a.block_table.sizes[1] = -1;
  EXPECT_STATUS(select(a), kInvalid, "block_table: sizes [2, -1] must be >= 0");
  a = args;
  a.cache_seqlens.strides[0] = -1;
  EXPECT_STATUS(select(a), kInvalid, "cache_seqlens: strides [-1] must be");
  a = args;
  a.block_table.data = static_cast<char *>(a.block_table.data) + 2;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: data pointer 0x810000000002 is not 4-byte "
                "aligned");
  a = args;
  a.cache_seqlens.data = nullptr;
  EXPECT_STATUS(select(a), kInvalid, "cache_seqlens: data pointer is null");
  a = args;
  a.block_table.sizes[1] = INT64_MAX / 8;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: max_pages * page_size = 1152921504606846975 * "
                "16 overflows 64 bits");
}

TEST_F(PagedValidation, CachesArePagesOfHeads) {
  attn_fwd_args a = args;
  a.k.rank = 3;
  EXPECT_STATUS(select(a), kInvalid,
                "k: rank must be 4 ([num_pages, page_size, Hkv, D]: paged "
                "K/V caches, since block_table is given), got 3");
  a = args;
  a.v.sizes[0] = 9;
  EXPECT_STATUS(select(a), kInvalid,
                "v: sizes [9, 16, 2, 128] must equal k's [8, 16, 2, 128]");
  a = args;
  a.k.sizes[3] = a.v.sizes[3] = 64;
  EXPECT_STATUS(select(a), kInvalid,
                "k: sizes [8, 16, 2, 64] ([num_pages, page_size, Hkv, D]) "
                "must have q's D = 128");
  a = args;
  a.k.sizes[1] = a.v.sizes[1] = 0;
  EXPECT_STATUS(select(a), kInvalid, "k: page_size (dim 1 of [num_pages, "
                                     "page_size, Hkv, D] = [8, 0, 2, 128]) "
                                     "must be >= 1");
  // Hkv is dim 2 of the caches.
  a = args;
  a.k.sizes[2] = a.v.sizes[2] = 3;
  EXPECT_STATUS(select(a), kInvalid, "Hq = 8 is not a multiple of Hkv = 3");
  a = args;
  a.v.dtype = ATTN_DTYPE_F16;
  EXPECT_STATUS(select(a), kInvalid, "v: dtype f16 does not match q's bf16");
  a = args;
  a.k.strides[3] = 2;
  EXPECT_STATUS(select(a), kInvalid, "k: stride along D must be 1, got 2");
  a = args;
  a.v.strides[1] = 260; // a row of a page: not 16 bytes
  EXPECT_STATUS(select(a), kInvalid,
                "v: stride[1] = 260 must be a multiple of 8 elements");
  a = args;
  a.k.data = static_cast<char *>(a.k.data) + 8;
  EXPECT_STATUS(select(a), kInvalid, "k: data pointer");
  // The batch of the caches is not q's: any number of pages.
  a = makePagedArgs(2, 8, 2, 1, 1, 16, 4);
  EXPECT_STATUS(select(a), ATTN_SUCCESS, "");
}

TEST_F(PagedValidation, Fp8IsNotPaged) {
  attn_fwd_args a = makeFp8Args(2, 8, 2, 1, 64);
  a.block_table = args.block_table;
  a.cache_seqlens = args.cache_seqlens;
  EXPECT_STATUS(select(a), kInvalid,
                "block_table: FP8 (e4m3) calls take no paged K/V cache");
}

TEST_F(PagedValidation, OutputsDoNotOverlapTheTables) {
  attn_fwd_args a = args;
  a.o.data = a.block_table.data;
  EXPECT_STATUS(select(a), kInvalid, "o overlaps block_table");
  a = args;
  a.lse = attn::makeTensor(a.cache_seqlens.data, ATTN_DTYPE_F32, {2, 8, 1});
  EXPECT_STATUS(select(a), kInvalid, "lse overlaps cache_seqlens");
}

// A paged kernel takes paged calls of its page size only; a contiguous
// kernel takes no paged call and a paged kernel no contiguous one.
TEST_F(PagedValidation, PageSizeIsPartOfTheKey) {
  attn_fwd_args a = makePagedArgs(2, 8, 2, 1, 8, 32, 4);
  EXPECT_STATUS(select(a), ATTN_ERROR_NO_MATCHING_KERNEL,
                "(bf16 D=128 B=2 Hq=8 Hkv=2 Nq=1 Nk=128 page_size=32 "
                "scale=0.08838835 contiguous); its 1 kernel(s): p: bf16 "
                "D=128 B=? Hq=? Hkv=? Nq=? Nk=? page_size=16");
  attn_fwd_args contiguous = makeArgs(2, 8, 2, 1, 64);
  EXPECT_STATUS(select(contiguous), ATTN_ERROR_NO_MATCHING_KERNEL, "Nk=64 "
                                                                   "scale");
  TempDir other;
  BundleOwner plain{loadBundle(other, manifestOf({wgmmaKernel("w")}))};
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(plain.bundle, &args, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "page_size=16");
  EXPECT_STATUS(attn_fwd_select(plain.bundle, &contiguous, &index),
                ATTN_SUCCESS, "");
}

// Static lengths of a paged key: Hkv is the caches' dim 2, Nk is always
// dynamic (the capacity max_pages * page_size).
TEST_F(PagedValidation, StaticHeadsMatchTheCachesHeads) {
  KernelEntry k = pagedKernel("s", 16);
  k.key.numHeadsKV = 2;
  k.key.numHeadsQ = 8;
  TempDir other;
  BundleOwner owner2{loadBundle(other, manifestOf({pagedKernel("p", 16), k}))};
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(owner2.bundle, &args, &index), ATTN_SUCCESS,
                "");
  EXPECT_EQ(index, 1);
  attn_fwd_args a = makePagedArgs(2, 8, 4, 1, 8, 16, 4);
  EXPECT_STATUS(attn_fwd_select(owner2.bundle, &a, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
}

class PagedLaunch : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    // block_table and cache_seqlens: device memory too.
    for (int i : {8, 9})
      state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                   1 << 20, 0, CU_MEMORYTYPE_DEVICE});
    // Sequence 0 has 40 keys (pages 5, 2, 7), sequence 1 is empty.
    table() = {5, 2, 7, -9, 99, 99, 99, 99};
    lengths() = {40, 0};
  }
  std::vector<int32_t> &table() {
    return state.ints[reinterpret_cast<uintptr_t>(fakeAddress(8))];
  }
  std::vector<int32_t> &lengths() {
    return state.ints[reinterpret_cast<uintptr_t>(fakeAddress(9))];
  }
  // B2 Hq4 Hkv2 Nq3, 8 pages of 16 tokens, 4 pages per sequence.
  attn_fwd_args args = makePagedArgs(2, 4, 2, 3, 8, 16, 4);
};

// The caches' maps view [num_pages, page_size, Hkv, D] as (D, page_size,
// Hkv, num_pages) in boxes of 16 rows of one page of one head; the tables'
// descriptors go where the manifest puts them, with the call's strides.
TEST_F(PagedLaunch, MapsAndTablesReachTheKernel) {
  load({pagedKernel("p", 16)});
  state.paramsPerLaunch = 3 + 11 + 5 + 7;
  args.block_table.strides[0] = 6; // a [2, 6] table's first 4 columns
  table().resize(12, 0);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  ASSERT_EQ(state.encodes.size(), 3u);
  for (int i : {0, 1}) {
    const FakeState::Encode &e = state.encodes[i];
    EXPECT_EQ(e.address, fakeAddress(2 - i));
    EXPECT_EQ(e.type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    EXPECT_EQ(e.box, (std::array<cuuint32_t, 4>{64, 16, 1, 1}));
    EXPECT_EQ(e.dims, (std::array<cuuint64_t, 4>{128, 16, 2, 8}));
    // Rows of a page: Hkv * D elements apart; heads: D; pages: a page.
    EXPECT_EQ(e.strides, (std::array<cuuint64_t, 3>{2 * 128 * 2, 128 * 2,
                                                    16 * 2 * 128 * 2}));
  }
  const std::vector<int64_t> &p = state.launches[0].params;
  std::vector<int64_t> tables(p.end() - 12, p.end());
  EXPECT_EQ(tables, (std::vector<int64_t>{
                        addressOf(9), addressOf(9), 0, 2, 1,        // lengths
                        addressOf(8), addressOf(8), 0, 2, 4, 6, 1})); // table
  // The grid is q's: ceil(Nq / 128) * Hq * B.
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{8, 1, 1}));
}

// By default attn_fwd reads the tables back once and refuses lengths
// outside [0, capacity] and the pages a sequence reads outside [0,
// num_pages); entries past a sequence's pages are never read, never checked.
TEST_F(PagedLaunch, TableValuesAreCheckedUnlessTurnedOff) {
  load({pagedKernel("p", 16)});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, 2);
  EXPECT_EQ(state.syncs, std::vector<CUstream>{stream});
  lengths() = {40, 65};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cache_seqlens[1] = 65 must be in [0, max_pages * page_size = "
                "4 * 16 = 64]");
  lengths() = {-1, 0};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cache_seqlens[0] = -1 must be in [0");
  lengths() = {49, 0}; // 4 pages: entry 3 (-9) is read
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table[0, 3] = -9 must be a page of k and v in [0, "
                "num_pages = 8) (sequence 0 has 49 keys: its first 4 entries "
                "are read)");
  lengths() = {48, 1};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table[1, 0] = 99 must be a page of k and v in [0, "
                "num_pages = 8)");
  table()[4] = 8;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table[1, 0] = 8 must be");
  table()[4] = 7; // pages may be shared
  lengths() = {48, 64 - 48}; // sequence 1 reads one page
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 2u);
  // The view's elements only: a length broadcast with stride 0 (999 is
  // not in the view), both sequences reading 3 pages.
  args.cache_seqlens.strides[0] = 0;
  lengths() = {48, 999};
  table() = {5, 2, 7, -9, 7, 1, 3, 99};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 3u);
}

TEST_F(PagedLaunch, ValueChecksOffReadNothing) {
  load({pagedKernel("p", 16)});
  lengths() = {1000, -5};
  EXPECT_STATUS(attn_bundle_set_check_values(bundle, 0), ATTN_SUCCESS, "");
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, 0);
  EXPECT_TRUE(state.syncs.empty());
  EXPECT_EQ(state.launches.size(), 1u);
}

TEST_F(PagedLaunch, ValueCheckFailuresAreCudaErrors) {
  load({pagedKernel("p", 16)});
  state.ints.erase(reinterpret_cast<uintptr_t>(fakeAddress(9)));
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "(in cuMemcpyDtoHAsync)");
  DriverApi old = fakeApi;
  old.memcpyDtoHAsync = nullptr;
  attn::runtime::setDriverForTesting(&old);
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "checking the block table and cache lengths needs "
                "cuMemcpyDtoHAsync and cuStreamSynchronize");
  attn::runtime::setDriverForTesting(&fakeApi);
  EXPECT_TRUE(state.launches.empty());
}

TEST_F(PagedLaunch, TablesAreDeviceMemoryOfTheContext) {
  load({pagedKernel("p", 16)});
  state.allocations.pop_back(); // cache_seqlens'
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cache_seqlens: 0x814000000000 is not CUDA device memory");
  state.allocations.back().size = 16; // block_table's: 2 x 4 i32 = 32 bytes
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "block_table: view extends past its allocation");
  EXPECT_EQ(state.copies, 0);
}

TEST_F(PagedLaunch, EmptyCallsLaunchNothing) {
  load({pagedKernel("p", 16)});
  attn_fwd_args a = makePagedArgs(2, 4, 2, 0, 8, 16, 4);
  EXPECT_STATUS(attn_fwd(bundle, &a, stream), ATTN_SUCCESS, "");
  a = makePagedArgs(0, 4, 2, 3, 8, 16, 4);
  a.q.data = a.o.data = a.block_table.data = a.cache_seqlens.data = nullptr;
  EXPECT_STATUS(attn_fwd(bundle, &a, stream), ATTN_SUCCESS, "");
  EXPECT_TRUE(state.launches.empty());
  EXPECT_EQ(state.copies, 0);
}

// attn_tune checks the tables as attn_fwd does before timing anything.
TEST_F(PagedLaunch, TuneChecksTheTablesFirst) {
  KernelEntry k = pagedKernel("p", 16), v = pagedKernel("p_v1", 16);
  v.variant = "stages=3";
  load({k, v});
  lengths() = {40, 65};
  int64_t chosen = 7;
  EXPECT_STATUS(attn_tune(bundle, &args, stream, &chosen), kInvalid,
                "cache_seqlens[1] = 65");
  EXPECT_TRUE(state.launches.empty());
  lengths() = {40, 0};
  EXPECT_STATUS(attn_tune(bundle, &args, stream, &chosen), ATTN_SUCCESS, "");
  EXPECT_EQ(state.launches.size(), 2u * (1 + 5) + 1);
}

TEST_F(PagedLaunch, GqaPackedQueriesOverPagedCaches) {
  KernelEntry k = pagedKernel("p", 16);
  k.key.numHeadsQ = 4;
  k.key.numHeadsKV = 2;
  k.grid[0] = GridDim{1, {{Operand::Q, 2, 64}, {Operand::K, 2, 1},
                          {Operand::Q, 0, 1}}};
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand == Operand::Q) {
      p.box = {64, 2, 64, 1};
      p.headsInner = true;
    }
  load({k});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.encodes.size(), 3u);
  EXPECT_EQ(state.encodes[2].dims, (std::array<cuuint64_t, 4>{128, 4, 3, 2}));
  EXPECT_EQ(state.encodes[1].dims, (std::array<cuuint64_t, 4>{128, 16, 2, 8}));
  // ceil(Nq / 64) * Hkv (the caches' dim 2) * B.
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].grid[0], 1u * 2 * 2);
}

// Split-KV over a paged cache: K/V blocks count from the capacity
// max_pages * page_size (the lengths are on the device).
TEST_F(PagedLaunch, SplitCountComesFromTheCapacity) {
  load({pagedSplitKernel("s4", 4, 16), pagedSplitKernel("s16", 16, 16)});
  state.multiprocessors = 132;
  auto pick = [&](int64_t maxPages) {
    attn_fwd_args a = makePagedArgs(1, 4, 2, 1, 8, 16, maxPages);
    a.lse = attn::makeTensor(fakeAddress(4), ATTN_DTYPE_F32, {1, 4, 1});
    int64_t index = -1;
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index), ATTN_SUCCESS, "");
    return index;
  };
  // 256 pages of 16: 4096 keys, 32 blocks of 128: 16 splits fill more SMs.
  EXPECT_EQ(pick(256), 1);
  // 40 pages: 640 keys, 5 blocks: 16 splits would leave 11 empty.
  EXPECT_EQ(pick(40), 0);
}

TEST(Tuning, AMalformedOrStaleCacheIsCorrupt) {
  const char *cases[][2] = {
      {"{", "not valid JSON"},
      {R"({"version": 2, "choices": []})", "version 2"},
      {R"({"version": 1})", "choices"},
      {R"({"version": 1, "choices": [{"shape": "s", "kernel": "gone", "ms": 1,
           "device": "d"}]})",
       "does not have"},
      {R"({"version": 1, "choices": [{"shape": "s", "kernel": "k", "ms": -1,
           "device": "d"}]})",
       "\"ms\" of the choice for \"s\" must be a time >= 0"},
      {R"({"version": 1, "choices": [{"shape": "", "kernel": "k", "ms": 1,
           "device": "d"}]})",
       "a choice with an empty \"shape\""},
      {R"({"version": 1, "choices": [{"shape": "s", "kernel": "k", "ms": 1,
           "device": ""}]})",
       "\"device\" of the choice for \"s\" is empty"},
      {R"({"version": 1, "choices": [
           {"shape": "s", "kernel": "k", "ms": 1, "device": "d"},
           {"shape": "s", "kernel": "k_v1", "ms": 2, "device": "d"}]})",
       "two choices for \"s\""}};
  for (auto [text, part] : cases) {
    TempDir dir;
    writeBundle(dir, manifestOf(twoVariants()));
    dir.write("tuning.json", text);
    attn_bundle *bundle = nullptr;
    EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle),
                  ATTN_ERROR_BUNDLE_CORRUPT, part);
    EXPECT_NE(std::string(attn_last_error()).find("tuning.json"),
              std::string::npos);
    EXPECT_EQ(bundle, nullptr);
  }
}

TEST(RealDriver, UnavailableOrNoContextIsACudaError) {
  // CI has no libcuda.so.1; a GPU machine has no current context here.
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({fwdKernel("k")}))};
  attn_fwd_args args = makeArgs(1, 4, 2, 100, 128);
  attn_status s = attn_fwd(owner.bundle, &args, nullptr);
  EXPECT_EQ(s, ATTN_ERROR_CUDA) << attn_last_error();
  std::string message = attn_last_error();
  EXPECT_TRUE(message.find("CUDA driver unavailable") != std::string::npos ||
              message.find("no current CUDA context") != std::string::npos)
      << message;
}

} // namespace

//===----------------------------------------------------------------------===//
// Varlen calls: launch
//===----------------------------------------------------------------------===//

namespace {

class VarlenLaunch : public FakeLaunch {
protected:
  void SetUp() override {
    FakeLaunch::SetUp();
    for (int i : {8, 9})
      state.allocations.push_back({reinterpret_cast<uintptr_t>(fakeAddress(i)),
                                   1 << 20, 0, CU_MEMORYTYPE_DEVICE});
    // Sequence 0: 20 queries, no keys; sequence 1: 30 queries, 60 keys.
    cuQ() = {0, 20, 50};
    cuK() = {0, 0, 60};
  }
  std::vector<int32_t> &cuQ() {
    return state.ints[reinterpret_cast<uintptr_t>(fakeAddress(8))];
  }
  std::vector<int32_t> &cuK() {
    return state.ints[reinterpret_cast<uintptr_t>(fakeAddress(9))];
  }
  attn_fwd_args args = makeVarlenArgs(2, 32, 8, 50, 60, 30, 60);
};

} // namespace

// The maps view [total, H, D] as (D, total, H, 1); max_seqlen_q is a value
// parameter; the grid is ceil(max_seqlen_q / 128) * Hq * B.
TEST_F(VarlenLaunch, MapsScalarsAndGridReachTheKernel) {
  load({varlenKernel("vl")});
  KernelEntry k = varlenKernel("vl");
  state.paramsPerLaunch = k.params.size();
  args.max_seqlen_q = 200;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{2 * 32 * 2, 1, 1}));
  ASSERT_EQ(state.encodes.size(), 3u);
  const FakeState::Encode &kMap = state.encodes[1];
  EXPECT_EQ(kMap.address, fakeAddress(1));
  EXPECT_EQ(kMap.box, (std::array<cuuint32_t, 4>{64, 128, 1, 1}));
  EXPECT_EQ(kMap.dims, (std::array<cuuint64_t, 4>{128, 60, 8, 1}));
  // Rows: Hkv * D elements apart; heads: D; the unit batch: packed.
  EXPECT_EQ(kMap.strides,
            (std::array<cuuint64_t, 3>{8 * 128 * 2, 128 * 2, 8 * 128 * 2}));
  const FakeState::Encode &qMap = state.encodes[2];
  EXPECT_EQ(qMap.dims, (std::array<cuuint64_t, 4>{128, 50, 32, 1}));
  const std::vector<int64_t> &p = state.launches[0].params;
  EXPECT_EQ(p[3], 200); // max_seqlen_q
  // o [50, 32, 128], then lse [32, 50], then cu_seqlens_q [3].
  EXPECT_EQ(std::vector<int64_t>(p.begin() + 4, p.begin() + 13),
            (std::vector<int64_t>{addressOf(3), addressOf(3), 0, 50, 32, 128,
                                  32 * 128, 128, 1}));
  EXPECT_EQ(std::vector<int64_t>(p.begin() + 13, p.begin() + 20),
            (std::vector<int64_t>{addressOf(4), addressOf(4), 0, 32, 50, 50,
                                  1}));
  EXPECT_EQ(std::vector<int64_t>(p.end() - 10, p.end()),
            (std::vector<int64_t>{addressOf(8), addressOf(8), 0, 3, 1,
                                  addressOf(9), addressOf(9), 0, 3, 1}));
}

// GQA packing: q's map is (D, H, total, 1).
TEST_F(VarlenLaunch, GqaPackedQIsHeadsInner) {
  KernelEntry k = varlenKernel("vl");
  k.grid[0] = GridDim{8, {{Operand::MaxSeqlenQ, 0, 32},
                          {Operand::CuSeqlensQ, 0, 1, -1}}};
  for (Param &p : k.params)
    if (p.field == Param::Field::TensorMap && p.operand == Operand::Q) {
      p.headsInner = true;
      p.box = {64, 4, 32, 1};
    }
  load({k});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 1u);
  EXPECT_EQ(state.launches[0].grid, (std::array<unsigned, 3>{8 * 1 * 2, 1, 1}));
  ASSERT_EQ(state.encodes.size(), 3u);
  EXPECT_EQ(state.encodes[2].dims, (std::array<cuuint64_t, 4>{128, 32, 50, 1}));
  EXPECT_EQ(state.encodes[2].strides,
            (std::array<cuuint64_t, 3>{128 * 2, 32 * 128 * 2,
                                       50 * 32 * 128 * 2}));
}

// Nothing to compute (B = 0 or max_seqlen_q = 0): no launch, no GPU.
TEST_F(VarlenLaunch, EmptyCallsLaunchNothing) {
  load({varlenKernel("vl")});
  attn_fwd_args a = makeVarlenArgs(0, 32, 8, 0, 0, 0, 0);
  EXPECT_STATUS(attn_fwd(bundle, &a, stream), ATTN_SUCCESS, "");
  a = args;
  a.max_seqlen_q = 0;
  EXPECT_STATUS(attn_fwd(bundle, &a, stream), ATTN_SUCCESS, "");
  EXPECT_TRUE(state.launches.empty());
  EXPECT_EQ(state.copies, 0);
}

// By default attn_fwd reads cu_seqlens back once and refuses a bad prefix
// sum; with value checks off it reads nothing.
TEST_F(VarlenLaunch, PrefixSumsAreCheckedUnlessTurnedOff) {
  load({varlenKernel("vl")});
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, 2);
  EXPECT_EQ(state.syncs, std::vector<CUstream>{stream});
  cuQ() = {1, 20, 50};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_q[0] = 1 must be 0");
  cuQ() = {0, 20, 19};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_q[2] = 19 is below cu_seqlens_q[1] = 20: the "
                "prefix sums must be non-decreasing");
  cuQ() = {0, 20, 51};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_q[2] = 51 is past the packed rows (total = 50)");
  cuQ() = {0, 20, 50};
  cuK() = {0, 61, 61};
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "cu_seqlens_k[1] = 61 is past the packed rows (total = 60)");
  cuK() = {0, 0, 60};
  args.max_seqlen_q = 25;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), kInvalid,
                "sequence 1 has cu_seqlens_q = 50 - 20 = 30 rows, more than "
                "max_seqlen_q = 25");
  size_t launches = state.launches.size();
  EXPECT_EQ(launches, 1u);
  attn_bundle_set_check_values(bundle, 0);
  int copies = state.copies;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  EXPECT_EQ(state.copies, copies);
  EXPECT_EQ(state.launches.size(), launches + 1);
}

//===----------------------------------------------------------------------===//
// Quantized FP8 kernels (quantize_fp8)
//===----------------------------------------------------------------------===//

/// A bundle with an exact bf16 kernel and a quantized one of the same shape:
/// a plain call never gets the quantized kernel (it is more specialized, but
/// not asked for), a quantize = ATTN_QUANTIZE_FP8 call only gets it.
TEST_F(FakeLaunch, QuantizedKernelsAreSelectedOnlyWhenAsked) {
  load({fwdKernel("exact", /*lse=*/true), quantizedKernel("qf")});
  attn_fwd_args args = smallArgs(/*lse=*/true);
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 0);
  args.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index), ATTN_SUCCESS, "");
  EXPECT_EQ(index, 1);
  // Another shape: the exact kernel takes it, no quantized one does.
  attn_fwd_args other = makeArgs(1, 4, 2, 64, 128, 128, /*lse=*/true);
  other.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd_select(bundle, &other, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "quantize=fp8");
}

/// A persistent quantized kernel: only its attention launch (the last) is
/// capped at the SM count; the quantize launch keeps its grid.
TEST_F(FakeLaunch, QuantizedPersistentKernelCapsOnlyTheAttention) {
  KernelEntry k = quantizedKernel("qf");
  k.then.back().grid[0] = GridDim{132, {}};
  k.grid[0] = GridDim{200, {}};
  k.persistentCtas = 132;
  load({k});
  attn_fwd_args args = smallArgs(/*lse=*/true);
  args.quantize = ATTN_QUANTIZE_FP8;
  state.multiprocessors = 114;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  ASSERT_EQ(state.launches.size(), 2u);
  EXPECT_EQ(state.launches[0].grid[0], 200u);
  EXPECT_EQ(state.launches[1].grid[0], 114u);
}

TEST_F(FakeLaunch, QuantizeArgumentIsChecked) {
  load({quantizedKernel("qf")});
  attn_fwd_args args = smallArgs(/*lse=*/true);
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index),
                ATTN_ERROR_NO_MATCHING_KERNEL, "quantize_fp8(");
  args.quantize = 7;
  EXPECT_STATUS(attn_fwd_select(bundle, &args, &index),
                ATTN_ERROR_INVALID_ARGUMENT,
                "quantize = 7: expected ATTN_QUANTIZE_NONE (0) or "
                "ATTN_QUANTIZE_FP8 (1)");
  for (attn_fwd_args other : {makePagedArgs(1, 4, 2, 100, 8, 16, 8),
                              makeVarlenArgs(2, 4, 2, 50, 60, 30, 60)}) {
    other.quantize = ATTN_QUANTIZE_FP8;
    EXPECT_STATUS(attn_fwd_select(bundle, &other, &index),
                  ATTN_ERROR_INVALID_ARGUMENT,
                  "quantize = ATTN_QUANTIZE_FP8 takes batched calls on "
                  "contiguous K/V");
  }
  attn_fwd_args fp8 = makeFp8Args(1, 4, 2, 100, 128);
  fp8.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd_select(bundle, &fp8, &index),
                ATTN_ERROR_INVALID_ARGUMENT, "got q e4m3");
  attn_fwd_args f16 =
      makeArgs(1, 4, 2, 100, 128, 128, /*lse=*/true, ATTN_DTYPE_F16);
  f16.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd_select(bundle, &f16, &index),
                ATTN_ERROR_INVALID_ARGUMENT,
                "quantize = ATTN_QUANTIZE_FP8 takes bf16 q, k, v");
}

/// The workspace is allocated per call (by dtype: e4m3 copies 1 byte per
/// element, descales and scratch f32), the attention's maps are encoded over
/// the copies with the manifest's view, and everything is freed after both
/// launches.
TEST_F(FakeLaunch, QuantizedKernelEncodesMapsOverItsWorkspace) {
  load({quantizedKernel("qf")});
  state.paramsByLaunch = {33 + 65, 3 + 7 + 9 + 9 + 11 + 9};
  attn_fwd_args args = smallArgs(/*lse=*/true);
  args.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_SUCCESS, "");
  // The seven buffers in one allocation.
  std::vector<uint64_t> at = workspaceLayout({4 * 100 * 128, 4 * 4,
                                              2 * 128 * 128, 2 * 4,
                                              2 * 128 * 128, 2 * 4, 2 * 4});
  ASSERT_EQ(state.allocs.size(), 1u);
  auto [base, bytes, allocStream] = state.allocs[0];
  EXPECT_EQ(bytes, at[7]);
  EXPECT_EQ(allocStream, stream);
  ASSERT_EQ(state.launches.size(), 2u);
  EXPECT_EQ(state.launches[0].block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(state.launches[1].block, (std::array<unsigned, 3>{384, 1, 1}));
  ASSERT_EQ(state.encodes.size(), 3u);
  auto ptr = [&](size_t w) { return base + at[w]; };
  const FakeState::Encode &v = state.encodes[0], &q = state.encodes[2];
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(v.address), ptr(4));
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(q.address), ptr(0));
  EXPECT_EQ(v.type, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(v.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(q.dims, (std::array<cuuint64_t, 4>{128, 100, 4, 1}));
  EXPECT_EQ(q.strides, (std::array<cuuint64_t, 3>{128, 12800, 51200}));
  EXPECT_EQ(q.box, (std::array<cuuint32_t, 4>{128, 128, 1, 1}));
  // The maps are the attention's first parameters (their first 8 bytes
  // hold the address).
  EXPECT_EQ(state.launches[1].params[0], int64_t(ptr(4)));
  EXPECT_EQ(state.launches[1].params[2], int64_t(ptr(0)));
  ASSERT_EQ(state.frees.size(), 1u);
  EXPECT_EQ(state.frees[0], std::make_tuple(base, stream, size_t(2)));
}

TEST_F(FakeLaunch, QuantizedWorkspaceMapFailureIsAStatus) {
  load({quantizedKernel("qf")});
  state.paramsByLaunch = {33 + 65, 3 + 7 + 9 + 9 + 11 + 9};
  state.encodeResult = CUDA_ERROR_INVALID_VALUE;
  attn_fwd_args args = smallArgs(/*lse=*/true);
  args.quantize = ATTN_QUANTIZE_FP8;
  EXPECT_STATUS(attn_fwd(bundle, &args, stream), ATTN_ERROR_CUDA,
                "workspace v_fp8: CUDA error 1: fake driver error (in "
                "cuTensorMapEncodeTiled)");
  EXPECT_EQ(state.launches.size(), 1u); // the quantize launch only
  EXPECT_EQ(state.frees.size(), 1u);    // the workspace is still freed
}

//===- BundleFilesTest.cpp - every file a bundle reads, whatever it is ----===//
//
// attn_bundle_load reads manifest.json, the cubin of every launch and
// tuning.json. Each of them is made in turn a symlink to /dev/zero, a FIFO
// and a directory, and a file over its size cap: the load must refuse it
// at once, naming the file. A load that hangs or grows without bound is
// caught by running it in a child process under an alarm.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::bundle;
using namespace attn::testing;

namespace {

/// A bundle whose files are of every kind the loader reads: a split-KV
/// kernel (two launches, two cubins) and a tuning.json naming it.
class BundleFiles : public ::testing::Test {
protected:
  void SetUp() override {
    writeBundle(dir, manifestOf({splitKernel("s", 4)}));
    dir.write("tuning.json",
              "{\"version\": 1, \"choices\": [{\"shape\": \"x\", \"kernel\": "
              "\"s\", \"ms\": 1, \"device\": \"d\"}]}");
  }

  /// The files of the bundle the loader opens.
  std::vector<std::string> files() const {
    return {"manifest.json", "s.cubin", "s_0.cubin", "tuning.json"};
  }

  /// Loads the bundle in a child process that may run for 2 seconds: its
  /// status is the exit code, its message on stderr.
  void expectLoad(attn_status status, const std::string &message) {
    std::string path = dir.path();
    EXPECT_EXIT(
        {
          alarm(2); // a hang, or /dev/zero read into memory, dies here
          attn_bundle *bundle = nullptr;
          attn_status s = attn_bundle_load(path.c_str(), &bundle);
          std::fprintf(stderr, "%s: %s\n", attn_status_name(s),
                       attn_last_error());
          std::_Exit(s);
        },
        ::testing::ExitedWithCode(status), message);
  }

  TempDir dir;
};

TEST_F(BundleFiles, TheBundleLoads) {
  expectLoad(ATTN_SUCCESS, "ATTN_SUCCESS");
}

TEST_F(BundleFiles, SymlinkToDevZeroIsRefused) {
  for (const std::string &name : files()) {
    SCOPED_TRACE(name);
    std::string saved = dir.file(name) + ".saved";
    ASSERT_EQ(::rename(dir.file(name).c_str(), saved.c_str()), 0);
    ASSERT_EQ(::symlink("/dev/zero", dir.file(name).c_str()), 0);
    expectLoad(ATTN_ERROR_BUNDLE_CORRUPT,
               name + " is a device, not a regular file");
    ASSERT_EQ(::rename(saved.c_str(), dir.file(name).c_str()), 0);
  }
}

TEST_F(BundleFiles, FifoIsRefusedWithoutBlocking) {
  for (const std::string &name : files()) {
    SCOPED_TRACE(name);
    std::string saved = dir.file(name) + ".saved";
    ASSERT_EQ(::rename(dir.file(name).c_str(), saved.c_str()), 0);
    ASSERT_EQ(::mkfifo(dir.file(name).c_str(), 0600), 0);
    expectLoad(ATTN_ERROR_BUNDLE_CORRUPT,
               name + " is a FIFO, not a regular file");
    ASSERT_EQ(::unlink(dir.file(name).c_str()), 0);
    ASSERT_EQ(::rename(saved.c_str(), dir.file(name).c_str()), 0);
  }
}

TEST_F(BundleFiles, DirectoryIsRefused) {
  for (const std::string &name : files()) {
    SCOPED_TRACE(name);
    std::string saved = dir.file(name) + ".saved";
    ASSERT_EQ(::rename(dir.file(name).c_str(), saved.c_str()), 0);
    ASSERT_EQ(::mkdir(dir.file(name).c_str(), 0700), 0);
    expectLoad(ATTN_ERROR_BUNDLE_CORRUPT,
               name + " is a directory, not a regular file");
    ASSERT_EQ(::rmdir(dir.file(name).c_str()), 0);
    ASSERT_EQ(::rename(saved.c_str(), dir.file(name).c_str()), 0);
  }
}

/// Each kind of file has its cap: manifest.json 16 MiB, a cubin 256 MiB,
/// tuning.json 4 MiB. A (sparse) file one byte over is refused before a
/// byte of it is read.
TEST_F(BundleFiles, FilesOverTheirCapAreRefused) {
  const std::pair<std::string, uint64_t> caps[] = {
      {"manifest.json", uint64_t(16) << 20},
      {"s.cubin", uint64_t(256) << 20},
      {"s_0.cubin", uint64_t(256) << 20},
      {"tuning.json", uint64_t(4) << 20}};
  for (const auto &[name, cap] : caps) {
    SCOPED_TRACE(name);
    std::string saved = dir.file(name) + ".saved";
    ASSERT_EQ(::rename(dir.file(name).c_str(), saved.c_str()), 0);
    int fd = ::open(dir.file(name).c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(cap + 1)), 0);
    ::close(fd);
    expectLoad(ATTN_ERROR_BUNDLE_CORRUPT, name + " is " +
                                              std::to_string(cap + 1) +
                                              " bytes, more than "
                                              "the " +
                                              std::to_string(cap));
    ASSERT_EQ(::rename(saved.c_str(), dir.file(name).c_str()), 0);
  }
}

/// A symlink to a regular file is a regular file: bundles may share cubins
/// that way.
TEST_F(BundleFiles, SymlinkToARegularFileIsRead) {
  ASSERT_EQ(
      ::rename(dir.file("s_0.cubin").c_str(), dir.file("shared.bin").c_str()),
      0);
  ASSERT_EQ(::symlink("shared.bin", dir.file("s_0.cubin").c_str()), 0);
  expectLoad(ATTN_SUCCESS, "ATTN_SUCCESS");
}

/// Kernels that share a cubin: it is read and hashed once, so a bundle of
/// many kernels over one large cubin loads in time linear in its size
/// (1024 kernels over an 8 MiB cubin: 8 GiB hashed when each kernel hashed
/// it again).
TEST(BundleLoadTime, SharedCubinIsHashedOnce) {
  TempDir dir;
  std::string cubin = fakeCubin();
  cubin.resize(8 << 20, '\x01');
  std::vector<KernelEntry> kernels;
  for (int i = 0; i < 1024; ++i) {
    KernelEntry k = fwdKernel("k" + std::to_string(i));
    k.cubin = "shared.cubin";
    kernels.push_back(k);
  }
  Manifest m = manifestOf(kernels);
  std::string hash = sha256Hex(cubin);
  for (KernelEntry &k : m.kernels)
    k.cubinSha256 = hash;
  dir.write("manifest.json", manifestText(m));
  dir.write("shared.cubin", cubin);
  auto start = std::chrono::steady_clock::now();
  attn_bundle *bundle = nullptr;
  EXPECT_STATUS(attn_bundle_load(dir.path().c_str(), &bundle), ATTN_SUCCESS,
                "");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // 0.7 s here; hashing the cubin per kernel took 40 s.
  EXPECT_LT(seconds, 10.0) << "the load of 1024 kernels over one cubin";
  attn_bundle_destroy(bundle);
}

} // namespace

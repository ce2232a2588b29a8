//===- Bundle.cpp - loading a bundle and its kernels ----------------------===//

#include "Bundle.h"
#include "CallChecks.h"
#include "KernelMatch.h"
#include "attn/manifest/BundleFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <mutex>

using namespace attn::runtime;
using attn::bundle::KernelEntry;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// Driver state of one kernel. `kernel` is published once loaded, so
/// launches after the first take no lock.
struct Bundle::Loaded {
  std::mutex mutex;
  std::atomic<CUkernel> kernel{nullptr};
  CUlibrary library = nullptr;
  const DriverApi *driver = nullptr; // the driver that loaded `library`
  std::string error;                 // a failed load, reported every time
  /// Devices (ordinals below 64) whose dynamic shared memory limit is set.
  std::atomic<uint64_t> sharedLimitSet{0};
};

Bundle::Bundle() = default;

Bundle::~Bundle() {
  for (const auto &launches : loaded)
    for (const std::unique_ptr<Loaded> &l : launches)
      if (l->library)
        l->driver->libraryUnload(l->library);
}

static Status notFound(const llvm::Twine &message) {
  return makeError(ATTN_ERROR_BUNDLE_NOT_FOUND, message);
}

/// Reads `path` as a file of `kind` (BundleFiles.h): a missing or
/// unreadable file is BUNDLE_NOT_FOUND, one that cannot be a file of the
/// bundle (not regular, too large) BUNDLE_CORRUPT.
static Status readFile(StringRef path, bundle::BundleFile kind,
                       std::unique_ptr<llvm::MemoryBuffer> &out) {
  if (auto error = bundle::readBundleFile(path, kind, out))
    return makeError(error->kind == bundle::FileError::NotAFile
                         ? ATTN_ERROR_BUNDLE_CORRUPT
                         : ATTN_ERROR_BUNDLE_NOT_FOUND,
                     error->message);
  return Status::success();
}

/// Reads the cubin of `launch` unless an earlier launch named it (kernels
/// may share one): an ELF file whose SHA-256 is the manifest's. A cubin
/// that is not the one the manifest was written with (a rebuilt or mixed
/// bundle) could launch the wrong kernel.
static Status
readCubin(StringRef dir, const bundle::KernelLaunch &launch,
          llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> &cubins,
          llvm::StringMap<std::string> &hashes) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, launch.cubin);
  if (!cubins.count(launch.cubin)) {
    std::unique_ptr<llvm::MemoryBuffer> cubin;
    if (Status s = readFile(path, bundle::BundleFile::Cubin, cubin); !s.ok())
      return s;
    // An ELF64 header alone is 64 bytes.
    if (cubin->getBufferSize() < 64 || !cubin->getBuffer().starts_with("\x7f"
                                                                       "ELF"))
      return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                       formatv("cubin {0} of kernel {1} is not an ELF file",
                               path, launch.name));
    hashes[launch.cubin] = bundle::sha256Hex(cubin->getBuffer());
    cubins[launch.cubin] = std::move(cubin);
  }
  if (hashes[launch.cubin] != launch.cubinSha256)
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     formatv("cubin {0} of kernel {1} does not match the "
                             "SHA-256 in {2}/manifest.json",
                             launch.cubin, launch.name, dir));
  return Status::success();
}

Status Bundle::load(StringRef dir, std::unique_ptr<Bundle> &out) {
  if (!llvm::sys::fs::exists(dir))
    return notFound("bundle directory " + dir + " not found");
  if (!llvm::sys::fs::is_directory(dir))
    return notFound("bundle " + dir + " is not a directory");
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::unique_ptr<llvm::MemoryBuffer> text;
  if (Status s = readFile(path, bundle::BundleFile::Manifest, text); !s.ok())
    return s;
  llvm::Expected<bundle::Manifest> manifest =
      bundle::parseManifest(text->getBuffer());
  if (!manifest)
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     "bundle " + dir + ": " +
                         llvm::toString(manifest.takeError()));
  std::unique_ptr<Bundle> bundle(new Bundle());
  bundle->dir = dir.str();
  bundle->manifest = std::move(*manifest);
  llvm::StringMap<std::string> hashes; // of each cubin, hashed once
  for (const KernelEntry &entry : bundle->manifest.kernels) {
    bundle->infos.push_back(bundle::describe(entry));
    bundle->loaded.emplace_back();
    for (size_t i = 0; i < entry.numLaunches(); ++i) {
      bundle->loaded.back().push_back(std::make_unique<Loaded>());
      if (Status s = readCubin(dir, entry.launch(i), bundle->cubins, hashes);
          !s.ok())
        return s;
    }
  }
  llvm::StringSet<> names;
  for (const KernelEntry &kernel : bundle->manifest.kernels) {
    names.insert(kernel.name);
    bundle->splitKV |= kernel.key.splits > 1;
  }
  if (Status s = bundle->tuning.load(dir, names); !s.ok())
    return s;
  out = std::move(bundle);
  return Status::success();
}

Status Bundle::ensureLoaded(const DriverApi &driver, size_t index, size_t which,
                            CUdevice device, CUkernel &handle) {
  Loaded &l = *loaded[index][which];
  const bundle::KernelLaunch &entry = kernel(index).launch(which);
  bool raiseLimit = entry.dynamicSharedBytes > 48 * 1024;
  uint64_t bit = device >= 0 && device < 64 ? uint64_t(1) << device : 0;
  handle = l.kernel.load(std::memory_order_acquire);
  if (handle && (!raiseLimit || (l.sharedLimitSet.load() & bit)))
    return Status::success();

  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.kernel.load() && l.error.empty()) {
    const llvm::MemoryBuffer &cubin = *cubins.find(entry.cubin)->second;
    CUlibrary library = nullptr;
    CUkernel loadedKernel = nullptr;
    CUresult result =
        driver.libraryLoadData(&library, cubin.getBufferStart(), nullptr,
                               nullptr, 0, nullptr, nullptr, 0);
    if (result != CUDA_SUCCESS) {
      l.error = formatCudaError(driver, result, "cuLibraryLoadData");
    } else if ((result = driver.libraryGetKernel(&loadedKernel, library,
                                                 entry.name.c_str())) !=
               CUDA_SUCCESS) {
      l.error = formatCudaError(driver, result, "cuLibraryGetKernel");
      driver.libraryUnload(library);
    } else {
      l.library = library;
      l.driver = &driver;
      l.kernel.store(loadedKernel, std::memory_order_release);
    }
    if (!l.error.empty())
      l.error = formatv("cannot load kernel {0} from {1}: {2}", entry.name,
                        entry.cubin, l.error)
                    .str();
  }
  if (!l.error.empty())
    return makeError(ATTN_ERROR_CUDA, l.error);
  handle = l.kernel.load();
  if (raiseLimit && !(l.sharedLimitSet.load() & bit)) {
    CUresult result = driver.kernelSetAttribute(
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(entry.dynamicSharedBytes), handle, device);
    if (result != CUDA_SUCCESS)
      return makeError(
          ATTN_ERROR_CUDA,
          formatv("kernel {0} needs {1} B of dynamic shared "
                  "memory: {2}",
                  entry.name, entry.dynamicSharedBytes,
                  formatCudaError(driver, result, "cuKernelSetAttribute")));
    l.sharedLimitSet.fetch_or(bit);
  }
  return Status::success();
}

} // namespace attn::runtime

//===- BundleFiles.cpp - reading the files of a bundle --------------------===//

#include "attn/manifest/BundleFiles.h"
#include "attn/manifest/Manifest.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::bundle {

uint64_t maxFileBytes(BundleFile kind) {
  switch (kind) {
  case BundleFile::Manifest:
    return kMaxManifestBytes; // parseManifest's cap too
  case BundleFile::Cubin:
    return uint64_t(256) << 20;
  case BundleFile::Tuning:
    return uint64_t(4) << 20;
  }
  return 0;
}

llvm::StringRef fileKindName(BundleFile kind) {
  switch (kind) {
  case BundleFile::Manifest:
    return "manifest";
  case BundleFile::Cubin:
    return "cubin";
  case BundleFile::Tuning:
    return "tuning.json";
  }
  return "file";
}

/// What a file that is not regular is, for the message.
static const char *typeText(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

std::optional<FileError>
readBundleFile(llvm::StringRef path, BundleFile kind,
               std::unique_ptr<llvm::MemoryBuffer> &out) {
  std::string name = (fileKindName(kind) + " " + path).str();
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer. The
  // checks run on the open descriptor, so the file cannot change between
  // them and the read.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT)
      return FileError{FileError::Missing, name + " not found"};
    return FileError{FileError::Unreadable,
                     "cannot read " + name + ": " +
                         std::generic_category().message(error)};
  }
  llvm::scope_exit closeFile([fd] { ::close(fd); });
  struct stat status;
  if (::fstat(fd, &status) != 0)
    return FileError{FileError::Unreadable,
                     "cannot read " + name + ": " +
                         std::generic_category().message(errno)};
  if (!S_ISREG(status.st_mode))
    return FileError{FileError::NotAFile,
                     llvm::formatv("{0} is {1}, not a regular file", name,
                                   typeText(status.st_mode))};
  auto size = static_cast<uint64_t>(status.st_size);
  if (size > maxFileBytes(kind))
    return FileError{FileError::NotAFile,
                     llvm::formatv("{0} is {1} bytes, more than the {2} a "
                                   "bundle's {3} may have",
                                   name, size, maxFileBytes(kind),
                                   fileKindName(kind))};
  auto buffer = llvm::MemoryBuffer::getOpenFile(
      fd, path, size, /*RequiresNullTerminator=*/false, /*IsVolatile=*/true);
  if (!buffer)
    return FileError{FileError::Unreadable, "cannot read " + name + ": " +
                                                buffer.getError().message()};
  out = std::move(*buffer);
  return std::nullopt;
}

} // namespace attn::bundle

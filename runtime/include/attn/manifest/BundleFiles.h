//===- BundleFiles.h - reading the files of a bundle ------------*- C++ -*-===//
//
// The one place the runtime reads a bundle's files (part of AttnManifest,
// so that the fuzzers share the limits):
// manifest.json, the cubins it names and tuning.json. Each must be a
// regular file (a symlink to one is fine) of at most its kind's size: a
// FIFO would block the load, a device such as /dev/zero would never end, a
// directory is not a file of the bundle.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MANIFEST_BUNDLEFILES_H
#define ATTN_MANIFEST_BUNDLEFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace attn::bundle {

/// The kinds of file a bundle holds that the runtime reads.
enum class BundleFile { Manifest, Cubin, Tuning };

/// The largest file of `kind` the runtime reads: manifest.json 16 MiB,
/// a cubin 256 MiB, tuning.json 4 MiB.
uint64_t maxFileBytes(BundleFile kind);

/// "manifest", "cubin" or "tuning.json", as messages name the file.
llvm::StringRef fileKindName(BundleFile kind);

/// Why a bundle file was not read; `message` names the file.
struct FileError {
  enum Kind {
    Missing,    // no such file
    Unreadable, // open or read failed (permissions, I/O)
    NotAFile    // not a regular file, or larger than its kind's cap
  } kind;
  std::string message;
};

/// Reads `path` as a file of `kind`: opened without blocking, then checked
/// on the open descriptor (regular, at most maxFileBytes(kind)) and read
/// whole. Nothing else in the runtime opens a bundle's files.
std::optional<FileError>
readBundleFile(llvm::StringRef path, BundleFile kind,
               std::unique_ptr<llvm::MemoryBuffer> &out);

} // namespace attn::bundle

#endif // ATTN_MANIFEST_BUNDLEFILES_H

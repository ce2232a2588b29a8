//===- Ptxas.cpp - PTX files -> cubins, resources, hashes -----------------===//
//
// Writes a kernel's PTX, assembles it with `ptxas -v` into a cubin,
// reads the resources ptxas reports and hashes the cubin.
//
//===----------------------------------------------------------------------===//

#include "KernelSource.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Target/Bundle.h"

#include "StagingDir.h"

#include "attn/manifest/Manifest.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::writer {

LogicalResult writeFile(Location loc, StringRef path, StringRef contents) {
  std::string err;
  {
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &err);
    if (!out)
      return emitError(loc) << err;
    out->os() << contents;
    out->os().close();
    if (std::error_code ec = out->os().error()) {
      out->os().clear_error(); // reported here, not as LLVM's fatal error
      return emitError(loc) << "cannot write " << path << ": "
                            << ec.message();
    }
    out->keep();
  }
  // After ToolOutputFile, which unregisters the path once kept.
  stageFile(path);
  return success();
}

/// The first integer captured by `pattern` in `text`, or 0.
int64_t scan(StringRef text, StringRef pattern, unsigned group = 1) {
  SmallVector<StringRef> matches;
  int64_t value = 0;
  if (llvm::Regex(pattern).match(text, &matches))
    matches[group].getAsInteger(10, value);
  return value;
}

/// Assembles `ptxPath` into `cubinPath` with `ptxas -v` and records the
/// resource usage it reports.
LogicalResult assemble(Location loc, StringRef ptxas, StringRef chip,
                       StringRef ptxPath, StringRef cubinPath,
                       bundle::Resources &res) {
  SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("attn-ptxas", "log", logPath))
    return emitError(loc, "cannot create a temporary file");
  llvm::FileRemover remover(logPath);
  llvm::sys::RemoveFileOnSignal(logPath);
  llvm::scope_exit unregister(
      [&] { llvm::sys::DontRemoveFileOnSignal(logPath); });
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", "-o", cubinPath, ptxPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string err;
  stageFile(cubinPath);
  int rc = runStagingChild(ptxas, args, redirects, &err);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  StringRef text = log ? (*log)->getBuffer() : StringRef();
  if (rc != 0)
    return emitError(loc) << "ptxas (" << ptxas << ") failed on " << ptxPath
                          << " with exit status " << rc
                          << (err.empty() ? "" : ": ") << err << "\n"
                          << text;
  // ptxas -v always reports the registers; a tool that exits 0 without a
  // cubin or a report (--ptxas=/bin/true) is not ptxas.
  if (!llvm::Regex("Used [0-9]+ registers").match(text))
    return emitError(loc) << "ptxas (" << ptxas << ") exited 0 but reported "
                          << "no resource usage for " << ptxPath
                          << " (is it ptxas? it runs as: ptxas -arch=" << chip
                          << " -v -o <cubin> <ptx>)";
  res.registers = scan(text, "Used ([0-9]+) registers");
  res.sharedBytes = scan(text, "([0-9]+) bytes smem");
  res.stackBytes = scan(text, "([0-9]+) bytes stack frame");
  res.spillStoreBytes = scan(text, "([0-9]+) bytes spill stores");
  res.spillLoadBytes = scan(text, "([0-9]+) bytes spill loads");
  // Such as C7513: the wgmmas serialized, each waited for before the next.
  SmallVector<StringRef> loss;
  if (llvm::Regex("\\((C[0-9]+)\\) Potential Performance Loss: ([^\n]*)")
          .match(text, &loss))
    emitWarning(loc) << "ptxas on " << ptxPath << ": " << loss[2] << " ("
                     << loss[1] << "): expect it to be slow";
  return success();
}

FailureOr<std::string> findPtxas(const BundleOptions &opts, Location loc) {
  if (!opts.ptxas.empty())
    return opts.ptxas;
  if (auto path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  if (auto path =
          llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *path;
  return emitError(loc, "ptxas not found in PATH or /usr/local/cuda/bin; "
                        "pass --ptxas=<path>");
}

/// The SHA-256 of the cubin ptxas wrote, once it is a non-empty ELF file.
FailureOr<std::string> hashCubin(Location loc, StringRef cubinPath) {
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!cubin)
    return emitError(loc) << "ptxas wrote no cubin " << cubinPath << ": "
                          << cubin.getError().message();
  StringRef bytes = (*cubin)->getBuffer();
  if (bytes.size() < 64 || !bytes.starts_with("\x7f"
                                              "ELF"))
    return emitError(loc) << "ptxas wrote " << cubinPath
                          << ", which is not an ELF cubin";
  return ::attn::bundle::sha256Hex(bytes);
}

/// Lowers one kernel function and writes its PTX and cubin.
/// The pipeline options of `src` (block sizes and path of its key, the
/// rest from `opts`), or for a variant: the block sizes `src` asked for
/// (not its defaults), then `variant` (pipeline option text) over them,
/// block sizes still unset taking the defaults of the variant's path and
/// BLOCK_N; the key takes the variant's block sizes and path.

} // namespace mlir::attn::writer

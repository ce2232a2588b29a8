//===- InputChecks.h - tool input checks before parsing ---------*- C++ -*-===//
//
// Inputs that MLIR's parser (22.1) cannot survive, refused with a located
// error before it runs, by every tool that parses .mlir (attn-opt,
// attn-compile, attn-fuzz):
// - a use `%x#N` with a huge N: the parser keeps one placeholder per result
//   number, so `%x#2147483647` allocates gigabytes and aborts ("LLVM ERROR:
//   out of memory"; found by attn-fuzz, upstream mlir-opt does the same);
// - deep nesting: the parser recurses once per region, attribute or type,
//   so 20,000 nested regions overflow the stack (SIGSEGV);
// - a path that is no regular file (/dev/zero grows without end, a FIFO
//   without a writer blocks forever) or a file too large to be IR or specs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_INPUTCHECKS_H
#define ATTN_TOOLS_INPUTCHECKS_H

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
class StringRef;
} // namespace llvm

namespace mlir::attn {

/// Largest `#N` a use may name: more results than any op has.
constexpr uint64_t kMaxResultNumber = 1 << 20;

/// Deepest nesting of regions, attributes and types ({, [, ( and the < of
/// `memref<`, `#attr<`, ...) the tools accept: far more than any attention
/// IR (or its lowering) needs, far less than the parser's stack allows.
constexpr unsigned kMaxNestingDepth = 256;

/// Largest input file (.mlir or spec JSON) the tools read: far more than
/// any kernel module, far less than the memory of a build machine.
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;

/// Reads the tool input `path` ("-": standard input): a regular file (after
/// symlinks) of at most kMaxInputBytes, or standard input up to that many
/// bytes. Otherwise returns null and sets `error` to a message naming the
/// path and what it is ("/dev/zero is a device, not a regular file").
std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef path,
                                                  std::string &error);

/// Checks the text of buffer `bufferId` (strings and comments aside) for a
/// result number over kMaxResultNumber and nesting deeper than
/// kMaxNestingDepth; reports the first one found (file:line:col, to
/// `sourceMgr`'s stream) and returns false then. MLIR bytecode passes.
bool checkInput(const llvm::SourceMgr &sourceMgr, unsigned bufferId);

} // namespace mlir::attn

#endif // ATTN_TOOLS_INPUTCHECKS_H

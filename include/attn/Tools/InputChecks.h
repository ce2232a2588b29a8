//===- InputChecks.h - tool input checks before parsing ---------*- C++ -*-===//
//
// MLIR's parser (22.1) keeps one placeholder per result number a use names,
// so `%x#2147483647` makes it allocate gigabytes and abort ("LLVM ERROR: out
// of memory"; found by attn-fuzz, upstream mlir-opt does the same). The
// tools reject such a number with a located error before parsing.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_INPUTCHECKS_H
#define ATTN_TOOLS_INPUTCHECKS_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::attn {

/// Largest `#N` a use may name: more results than any op has.
constexpr uint64_t kMaxResultNumber = 1 << 20;

/// Reports (to `sourceMgr`'s stream) the first `%name#N` of buffer `bufferId`
/// with N > kMaxResultNumber; returns false then.
inline bool checkResultNumbers(const llvm::SourceMgr &sourceMgr,
                               unsigned bufferId) {
  llvm::StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  auto isIdChar = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
  };
  for (size_t hash = text.find('#'); hash != llvm::StringRef::npos;
       hash = text.find('#', hash + 1)) {
    size_t start = hash;
    while (start > 0 && isIdChar(text[start - 1]))
      --start;
    if (start == hash || start == 0 || text[start - 1] != '%')
      continue;
    size_t lineStart = text.rfind('\n', start) + 1;  // npos + 1 == 0
    if (text.slice(lineStart, start).contains("//")) // a comment
      continue;
    llvm::StringRef digits =
        text.drop_front(hash + 1).take_while(llvm::isDigit);
    uint64_t number;
    if (digits.empty() ||
        (!digits.getAsInteger(10, number) && number <= kMaxResultNumber))
      continue;
    sourceMgr.PrintMessage(
        llvm::SMLoc::getFromPointer(digits.data()), llvm::SourceMgr::DK_Error,
        "result number " + digits + " is out of range (at most " +
            llvm::Twine(kMaxResultNumber) + ")");
    return false;
  }
  return true;
}

} // namespace mlir::attn

#endif // ATTN_TOOLS_INPUTCHECKS_H

//===- StrictOptions.cpp - pass options given once, by name ---------------===//

#include "attn/Transforms/StrictOptions.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <unistd.h>

using namespace mlir;

namespace {

/// The option names of `text` (split as a shell would), in order.
SmallVector<std::string> optionNames(StringRef text) {
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  SmallVector<const char *> elements;
  llvm::cl::TokenizeGNUCommandLine(text, saver, elements);
  SmallVector<std::string> names;
  for (StringRef element : elements)
    names.push_back(element.split('=').first.trim().str());
  return names;
}

/// Each element of `text` names an option, none twice.
LogicalResult checkOptionNames(StringRef text, llvm::raw_ostream &error) {
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  SmallVector<const char *> elements;
  llvm::cl::TokenizeGNUCommandLine(text, saver, elements);
  llvm::StringSet<> seen;
  for (StringRef element : elements) {
    StringRef name = element.split('=').first.trim();
    if (name.empty()) {
      error << "'" << element << "' names no option (give name=value)";
      return failure();
    }
    if (!seen.insert(name).second) {
      error << "option '" << name << "' is given twice (give each once)";
      return failure();
    }
  }
  return success();
}

/// Runs `parse` with stderr (where llvm::cl reports a bad value) going to
/// a temporary file, and returns what was written there.
std::string captureStderr(function_ref<void()> parse) {
  int fd;
  SmallString<64> path;
  if (llvm::sys::fs::createTemporaryFile("attn-options", "txt", fd, path)) {
    parse();
    return "";
  }
  llvm::FileRemover remover(path);
  llvm::errs().flush();
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  parse();
  llvm::errs().flush();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  auto text = llvm::MemoryBuffer::getFile(path);
  return text ? (*text)->getBuffer().str() : "";
}

/// "attn-opt: for the --block-m option: 'abc' value invalid for long
/// argument!" -> "block-m: 'abc' value invalid for long argument".
std::string reasonOf(StringRef printed) {
  printed = printed.trim();
  auto [head, why] = printed.split(" option: ");
  size_t at = head.find("for the ");
  if (why.empty() || at == StringRef::npos)
    return printed.str();
  StringRef name = head.drop_front(at + StringRef("for the ").size());
  return (name.ltrim('-') + ": " + why.rtrim('!')).str();
}

} // namespace

LogicalResult mlir::attn::parseOptionsStrictly(
    StringRef text, function_ref<LogicalResult(llvm::raw_ostream &)> parse,
    llvm::raw_ostream &error) {
  if (failed(checkOptionNames(text, error)))
    return failure();
  std::string parserError;
  llvm::raw_string_ostream os(parserError);
  LogicalResult parsed = failure();
  std::string printed = captureStderr([&] { parsed = parse(os); });
  if (succeeded(parsed))
    return success();
  StringRef own = StringRef(parserError).trim();
  own.consume_front("<Pass-Options-Parser>: ");
  error << (own.empty() ? reasonOf(printed) : own.str());
  return failure();
}

std::optional<std::string>
mlir::attn::findOption(StringRef text, ArrayRef<StringRef> names) {
  for (const std::string &name : optionNames(text))
    if (llvm::is_contained(names, name))
      return name;
  return std::nullopt;
}

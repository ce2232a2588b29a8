//===- InputChecks.cpp - tool input checks before parsing -----------------===//

#include "attn/Tools/InputChecks.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;

namespace {

/// What a path that is not a regular file is, for the message.
const char *typeText(sys::fs::file_type type) {
  switch (type) {
  case sys::fs::file_type::directory_file:
    return "a directory";
  case sys::fs::file_type::fifo_file:
    return "a FIFO";
  case sys::fs::file_type::block_file:
  case sys::fs::file_type::character_file:
    return "a device";
  case sys::fs::file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

/// Standard input up to kMaxInputBytes (a pipe has no size to check first).
std::unique_ptr<MemoryBuffer> readStdin(std::string &error) {
  SmallString<4096> text;
  sys::fs::file_t in = sys::fs::getStdinHandle();
  while (true) {
    size_t size = text.size();
    if (size > mlir::attn::kMaxInputBytes) {
      error = "standard input is larger than " +
              std::to_string(mlir::attn::kMaxInputBytes) + " bytes";
      return nullptr;
    }
    text.resize_for_overwrite(size + (1 << 16));
    Expected<size_t> got = sys::fs::readNativeFile(
        in, MutableArrayRef<char>(text.data() + size, 1 << 16));
    if (!got) {
      error = "cannot read standard input: " + toString(got.takeError());
      return nullptr;
    }
    text.truncate(size + *got);
    if (*got == 0)
      return MemoryBuffer::getMemBufferCopy(text, "<stdin>");
  }
}

/// The characters of an SSA name after `%` (`%x.1`, `%arg-2`).
bool isIdChar(char c) {
  return isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

/// The index of the quote (or newline: MLIR strings are one line) that ends
/// the string starting at `quote`.
size_t endOfString(StringRef text, size_t quote) {
  for (size_t i = quote + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"' || text[i] == '\n')
      return i;
  }
  return text.size();
}

/// Pops the innermost `opener` and the `<` left open inside it (a `<` that
/// was no bracket, e.g. in a dialect's own syntax, must not count forever).
void close(SmallVectorImpl<char> &open, char opener) {
  size_t n = open.size();
  while (n > 0 && open[n - 1] != opener)
    --n;
  if (n > 0)
    open.resize(n - 1);
}

} // namespace

std::unique_ptr<MemoryBuffer>
mlir::attn::readInputFile(StringRef path, std::string &error) {
  if (path == "-")
    return readStdin(error);
  // By path, before opening: opening a FIFO would wait for a writer.
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status)) {
    error = ("cannot read " + path + ": " + ec.message()).str();
    return nullptr;
  }
  if (status.type() != sys::fs::file_type::regular_file) {
    error = (path + " is " + typeText(status.type()) +
             ", not a regular file")
                .str();
    return nullptr;
  }
  if (status.getSize() > kMaxInputBytes) {
    error = (path + " is " + Twine(status.getSize()) +
             " bytes, more than the " + Twine(kMaxInputBytes) +
             " an input may have")
                .str();
    return nullptr;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/true);
  if (!file) {
    error = ("cannot read " + path + ": " + file.getError().message()).str();
    return nullptr;
  }
  return std::move(*file);
}

bool mlir::attn::checkInput(const SourceMgr &sourceMgr, unsigned bufferId) {
  const MemoryBuffer &buffer = *sourceMgr.getMemoryBuffer(bufferId);
  if (isBytecode(buffer.getMemBufferRef()))
    return true;
  StringRef text = buffer.getBuffer();
  auto report = [&](size_t at, const Twine &message) {
    sourceMgr.PrintMessage(SMLoc::getFromPointer(text.data() + at),
                           SourceMgr::DK_Error, message);
    return false;
  };
  SmallVector<char, 64> open; // the brackets open before text[i]
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      i = endOfString(text, i);
    } else if (text.substr(i).starts_with("//")) {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '%') {
      size_t hash = i + 1;
      while (hash < text.size() && isIdChar(text[hash]))
        ++hash;
      if (hash == i + 1 || hash == text.size() || text[hash] != '#')
        continue;
      StringRef digits = text.drop_front(hash + 1).take_while(isDigit);
      uint64_t number;
      if (!digits.empty() &&
          (digits.getAsInteger(10, number) || number > kMaxResultNumber))
        return report(hash + 1, "result number " + digits +
                                    " is out of range (at most " +
                                    Twine(kMaxResultNumber) + ")");
    } else if (c == '{' || c == '[' || c == '(' || c == '<') {
      open.push_back(c);
      if (open.size() > kMaxNestingDepth)
        return report(i, "'" + Twine(c) + "' opens nesting level " +
                             Twine(open.size()) + "; at most " +
                             Twine(kMaxNestingDepth) +
                             " levels of regions, attributes and types ({, "
                             "[, ( and <) are accepted");
    } else if (c == '>') {
      // Not the `->` of a function type nor a `>=`.
      bool arrow = i > 0 && text[i - 1] == '-';
      bool compare = i + 1 < text.size() && text[i + 1] == '=';
      if (!open.empty() && open.back() == '<' && !arrow && !compare)
        open.pop_back();
    } else if (c == '}' || c == ']' || c == ')') {
      close(open, c == '}' ? '{' : c == ']' ? '[' : '(');
    }
  }
  return true;
}

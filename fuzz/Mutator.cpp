//===- Mutator.cpp - structure-aware text mutations for attn-fuzz ---------===//

#include "Mutator.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace attn::fuzz;
using llvm::StringRef;

namespace {

// clang-format off
/// Lengths, block sizes and counts at the edges of what the code handles.
const char *const kNumbers[] = {
    "0",          "1",          "2",          "3",          "7",
    "8",          "15",         "16",         "17",         "31",
    "64",         "65",         "127",        "128",        "255",
    "256",        "257",        "1023",       "1024",       "1025",
    "65535",      "65536",      "2147483647", "2147483648", "4294967296",
    "1099511627776", "9223372036854775807", "-1", "-9223372036854775808",
    "99999999999999999999", "0.5", "1e400", "-0", "nan"};

/// Pairs swapped in either direction.
const char *const kSwaps[][2] = {
    {"f16", "bf16"},      {"bf16", "f32"},       {"f16", "f8E4M3FN"},
    {"f16", "i8"},        {"f32", "f16"},        {"f32", "index"},
    {"memref", "tensor"}, {"{causal}", ""},      {"causal", "casual"},
    {"x16x", "x?x"},      {"x6x", "x0x"},        {"1x", "?x"},
    {"true", "false"},    {"true", "null"},      {"\"bf16\"", "\"f16\""},
    {"null", "0"},        {"\"strided\"", "\"contiguous\""},
    {"strided<[?, ?, ?, 1], offset: ?>", "strided<[?, ?, ?, 2]>"},
    {"%k", "%q"},         {"%o", "%v"},          {"%lse", "%q"},
    {"attn.attention", "attn.online_attention"}, {"return", ""},
    {"lse(", "descale("}, {"[", "{"},            {":", ","},
    {"sinks(", "alibi("}, {"left", "right"},      {"chunk", "prefix"}};

/// Pieces of attn inputs inserted anywhere.
const char *const kTokens[] = {
    "{causal}",
    ", 3",
    ", #gpu.address_space<workgroup>",
    ", strided<[?, ?, ?, 1], offset: ?>",
    ", strided<[1, 1, 1, 1]>",
    ", affine_map<(a, b, c, d) -> (a, b, d, c)>",
    "{scale = -1.0 : f32}",
    "{scale = 0x7FC00000 : f32}",
    "{scale = 1.0e+30 : f32}",
    "{key_mask = #attn.key_mask<left = 3, right = 0>}",
    "{causal, key_mask = #attn.key_mask<chunk = 2>, softcap = 1.0 : f32}",
    "{softcap = 3.0e+38 : f32}",
    " sinks(%lse : memref<1x4x37xf32>)",
    " attributes {attn.block_m = \"32\"}",
    " attributes {attn.block_n = 100000000000 : i64}",
    "x?",
    "x0",
    "?",
    "%q",
    "\"",
    "}",
    "]",
    ")",
    ",",
    "\"causal\": false, ",
    "\"block_m\": 0, ",
    "\"block_n\": 4096, ",
    "\"name\": \"\", ",
    "\"name\": \"a b\", ",
    "\"seqlen_q\": null, ",
    "\"head_dim\": 264, ",
    "\"lse\": \"yes\", ",
    "[[[[[[[[",
    "{\"a\": {\"a\": 1}}",
    "\\u0000",
    "// -----\n",
};
// clang-format on

} // namespace

void Mutator::replaceNumber(std::string &text) {
  std::vector<std::pair<size_t, size_t>> numbers;
  for (size_t i = 0; i < text.size();) {
    if (!llvm::isDigit(text[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && llvm::isDigit(text[i]))
      ++i;
    numbers.emplace_back(start, i - start);
  }
  if (numbers.empty())
    return;
  auto [at, len] = numbers[below(numbers.size())];
  text.replace(at, len, kNumbers[below(std::size(kNumbers))]);
}

void Mutator::swapToken(std::string &text) {
  const auto &pair = kSwaps[below(std::size(kSwaps))];
  bool forward = below(2);
  StringRef from = pair[forward ? 0 : 1], to = pair[forward ? 1 : 0];
  if (from.empty())
    return;
  std::vector<size_t> hits;
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + 1))
    hits.push_back(at);
  if (hits.empty())
    return;
  if (below(2)) { // one occurrence: usually a type mismatch the parser sees
    text.replace(hits[below(hits.size())], from.size(), to.str());
    return;
  }
  // Every occurrence: a consistent change (all f16 -> bf16) that parses.
  for (size_t i = hits.size(); i > 0; --i)
    text.replace(hits[i - 1], from.size(), to.str());
}

void Mutator::insertToken(std::string &text) {
  text.insert(below(text.size() + 1), kTokens[below(std::size(kTokens))]);
}

void Mutator::eraseSpan(std::string &text) {
  if (text.empty())
    return;
  size_t at = below(text.size());
  text.erase(at, 1 + below(std::min<size_t>(32, text.size() - at)));
}

void Mutator::duplicateSpan(std::string &text) {
  if (text.empty())
    return;
  size_t at = below(text.size());
  std::string span = text.substr(at, 1 + below(64));
  text.insert(below(text.size() + 1), span);
}

void Mutator::flipByte(std::string &text) {
  if (!text.empty())
    text[below(text.size())] ^= static_cast<char>(1u << below(8));
}

void Mutator::splice(std::string &text) {
  const std::string &other = corpus[below(corpus.size())];
  size_t cut = below(text.size() + 1);
  text = text.substr(0, cut) + other.substr(below(other.size() + 1));
}

void Mutator::nestRegions(std::string &text) {
  // Whole lines from one in a function to its return, n regions deep: few
  // levels keep the IR valid (the passes see ops in nested regions), the
  // many ones are past the tools' limit (kMaxNestingDepth).
  static const size_t depths[] = {1, 2, 3, 8, 64, 255, 256, 2000, 20000};
  size_t ret = text.find("return", below(text.size() + 1));
  size_t body = text.rfind("{\n", ret == std::string::npos ? 0 : ret);
  if (ret == std::string::npos || body == std::string::npos)
    return;
  std::vector<size_t> lines;
  for (size_t at = text.find('\n', body); at != std::string::npos && at < ret;
       at = text.find('\n', at + 1))
    lines.push_back(at + 1);
  size_t end = text.rfind('\n', ret) + 1;
  size_t start = lines.empty() ? end : lines[below(lines.size())];
  if (start > end)
    return;
  size_t n = depths[below(std::size(depths))];
  std::string open, close;
  for (size_t i = 0; i < n; ++i) {
    open += "scf.execute_region {\n";
    close += "scf.yield\n}\n";
  }
  text.insert(end, close);
  text.insert(start, open);
}

void Mutator::aliasOperand(std::string &text) {
  // An op's ins(%a, %b, ... : types) and, after it, the first operand of
  // one of its output clauses, which becomes one of those inputs.
  std::vector<size_t> ins;
  for (size_t at = text.find("ins("); at != std::string::npos;
       at = text.find("ins(", at + 1))
    ins.push_back(at);
  if (ins.empty())
    return;
  size_t at = ins[below(ins.size())] + 4;
  StringRef list = StringRef(text).substr(at).split(':').first;
  llvm::SmallVector<StringRef> names;
  list.split(names, ',');
  StringRef input = names[below(names.size())].trim();
  static const char *const outputs[] = {"outs(", "lse(", "workspace("};
  size_t clause = text.find(outputs[below(std::size(outputs))], at);
  if (!input.starts_with("%") || clause == std::string::npos)
    return;
  size_t first = text.find('%', clause);
  size_t stop = text.find_first_of(",: )", first);
  if (first == std::string::npos || stop == std::string::npos)
    return;
  std::string name = input.str();
  text.replace(first, stop - first, name);
}

std::string Mutator::mutate(size_t index) {
  std::string text = corpus[index];
  // Mostly one or two mutations that keep the input parseable (numbers and
  // tokens), so that most mutants reach the passes; sometimes raw damage.
  for (size_t n = 1 + below(2) + (below(4) == 0); n > 0; --n) {
    switch (below(18)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
      replaceNumber(text);
      break;
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
      swapToken(text);
      break;
    case 11:
    case 12:
      insertToken(text);
      break;
    case 13:
      eraseSpan(text);
      break;
    case 14:
      duplicateSpan(text);
      break;
    case 15:
      nestRegions(text);
      break;
    case 16:
      aliasOperand(text);
      break;
    default:
      below(2) ? flipByte(text) : splice(text);
      break;
    }
  }
  return text;
}

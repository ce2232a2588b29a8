//===- Mutator.h - structure-aware text mutations for attn-fuzz -*- C++ -*-===//
//
// Deterministic mutations of .mlir and JSON inputs: numbers replaced by
// boundary values, tokens swapped or inserted from a dictionary of what the
// attn inputs are made of (types, layouts, attributes, JSON values), spans
// deleted or duplicated, bytes flipped, two inputs spliced, ops wrapped in
// nested regions (up to far past the tools' depth limit), an output operand
// replaced by one of the op's inputs. One seed gives
// one sequence of inputs, so a CI failure reproduces with `--seed`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FUZZ_MUTATOR_H
#define ATTN_FUZZ_MUTATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <random>
#include <string>
#include <vector>

namespace attn::fuzz {

class Mutator {
public:
  Mutator(uint64_t seed, llvm::ArrayRef<std::string> corpus)
      : rng(seed), corpus(corpus) {}

  /// A mutant of corpus entry `index`: 1 to 4 mutations in a row.
  std::string mutate(size_t index);

  uint64_t next() { return rng(); }
  size_t below(size_t n) { return n ? rng() % n : 0; }

private:
  void replaceNumber(std::string &text);
  void swapToken(std::string &text);
  void insertToken(std::string &text);
  void eraseSpan(std::string &text);
  void duplicateSpan(std::string &text);
  void flipByte(std::string &text);
  void splice(std::string &text);
  void nestRegions(std::string &text);
  void aliasOperand(std::string &text);

  std::mt19937_64 rng;
  llvm::ArrayRef<std::string> corpus;
};

} // namespace attn::fuzz

#endif // ATTN_FUZZ_MUTATOR_H

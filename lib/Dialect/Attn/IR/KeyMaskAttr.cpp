//===- KeyMaskAttr.cpp - #attn.key_mask's verifier ------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

using namespace mlir;
using namespace mlir::attn;

/// Window sides of -1 (unbounded) or more, a positive chunk, a prefix of 0
/// or more and only without a lower bound (the keys of a query stay one
/// interval), none above 2^31 - 1, and not all defaults (a mask that masks
/// nothing).
LogicalResult KeyMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t left, int64_t right,
                                  std::optional<int64_t> chunk,
                                  std::optional<int64_t> prefix) {
  // At most the longest sequence (OpChecks' kMaxLength): more would mean
  // nothing more, and the bound keeps the 64-bit interval arithmetic from
  // overflowing.
  constexpr int64_t kMax = INT32_MAX;
  for (auto [name, v] : {std::pair<StringRef, int64_t>{"left", left},
                         {"right", right},
                         {"chunk", chunk.value_or(1)},
                         {"prefix", prefix.value_or(0)}})
    if (v > kMax)
      return emitError() << name << " must be at most " << kMax
                         << " (the longest sequence), but got " << v;
  if (left < -1 || right < -1)
    return emitError() << "window sides left and right must be -1 "
                          "(unbounded) or at least 0, but got left = "
                       << left << ", right = " << right;
  if (chunk && *chunk <= 0)
    return emitError() << "chunk must be a positive number of positions, but "
                          "got "
                       << *chunk;
  if (prefix && *prefix < 0)
    return emitError() << "prefix must be 0 or more keys, but got " << *prefix;
  if (prefix && (left >= 0 || chunk))
    return emitError() << "prefix takes no left window and no chunk (a "
                          "query's keys must stay one interval)";
  if (left < 0 && right < 0 && !chunk && !prefix)
    return emitError() << "a key mask with no window side, chunk or prefix "
                          "masks nothing: leave it out";
  return success();
}

/// Causal bounds the window on the right at the diagonal; a prefix stays
/// visible to every query (prefix-LM).
KeyMaskAttr KeyMaskAttr::withCausal() const {
  return KeyMaskAttr::get(getContext(), getLeft(), /*right=*/0, getChunk(),
                          getPrefix());
}

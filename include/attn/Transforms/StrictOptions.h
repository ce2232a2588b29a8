//===- StrictOptions.h - pass options given once, by name -------*- C++ -*-===//
//
// MLIR's pass-option parser lets a later `key=value` replace an earlier one
// (`qk-granularity=block qk-granularity=head` is `head`) and skips an
// element without a name (`=` stands for the defaults); llvm::cl prints a
// bad value's reason itself, as "attn-compile: for the --block-m option:
// ...", which reads as one of the tool's own flags. The attn passes and
// pipelines (and attn-compile's --variant and --quantize-fp8) parse their
// options strictly instead, as attn-compile refuses a flag or a spec key
// given twice.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_STRICTOPTIONS_H
#define ATTN_TRANSFORMS_STRICTOPTIONS_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

/// Parses pass-option `text` with `parse` (PassOptions::parseFromString or
/// Pass::initializeOptions, reporting to the stream it is given), strictly:
/// every element of `text` (split as a shell would) names an option and
/// none is named twice, and a bad value is reported to `error` as
/// "block-m: 'abc' value invalid for long argument", not printed by
/// llvm::cl.
LogicalResult
parseOptionsStrictly(StringRef text,
                     function_ref<LogicalResult(llvm::raw_ostream &)> parse,
                     llvm::raw_ostream &error);

/// The first option of `text` whose name is one of `names` (for a caller
/// that takes some of a pipeline's options only: attn-compile's --variant).
std::optional<std::string> findOption(StringRef text,
                                      ArrayRef<StringRef> names);

/// A pass (`Base`: its generated base class) whose options are parsed by
/// parseOptionsStrictly; errors name the pass.
template <typename Base> struct StrictOptions : Base {
  using Base::Base;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    auto parse = [&](llvm::raw_ostream &os) {
      return Base::initializeOptions(options, [&](const Twine &message) {
        os << message;
        return failure();
      });
    };
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parseOptionsStrictly(options, parse, os)))
      return errorHandler(this->getArgument() + ": " + error);
    return success();
  }
};

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_STRICTOPTIONS_H

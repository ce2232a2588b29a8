//===- ClauseOrder.cpp - the clauses of the attn ops, in order ------------===//

#include "ClauseOrder.h"

using namespace mlir;

namespace {

/// Every clause keyword of the attn ops.
constexpr StringLiteral kClauses[] = {"ins",   "seqlens", "max",   "outs",
                                      "lse",   "descale", "paged", "workspace",
                                      "alibi", "sinks"};

/// After the op's last element: a clause keyword here is one the format has
/// passed, given out of order (or twice), or one the op does not have.
ParseResult checkNoClauseFollows(OpAsmParser &parser, ArrayRef<StringRef> own,
                                 StringRef order) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  SmallVector<StringRef> all(std::begin(kClauses), std::end(kClauses));
  if (failed(parser.parseOptionalKeyword(&keyword, all)))
    return success();
  // The parser names the op ("custom op 'attn.attention' ...").
  InFlightDiagnostic diag = parser.emitError(loc);
  if (llvm::is_contained(own, keyword))
    diag << "clause '" << keyword << "' is out of order or given twice";
  else
    diag << "has no clause '" << keyword << "'";
  return diag << ": the clauses are " << order << ", in this order";
}

} // namespace

ParseResult mlir::attn::parseAttentionClauseOrder(OpAsmParser &parser, Type) {
  return checkNoClauseFollows(
      parser, {"ins", "outs", "lse", "descale", "paged", "alibi", "sinks"},
      "ins(...) outs(...) [lse(...)] [descale(...)] [paged(...)] "
      "[alibi(...)] [sinks(...)] [{attributes}]");
}

ParseResult mlir::attn::parseVarlenClauseOrder(OpAsmParser &parser, Type) {
  return checkNoClauseFollows(
      parser,
      {"ins", "seqlens", "max", "paged", "outs", "lse", "workspace", "alibi",
       "sinks"},
      "ins(...) seqlens(...) max(...) [paged(...)] outs(...) [lse(...)] "
      "[workspace(...)] [alibi(...)] [sinks(...)] [{attributes}]");
}

ParseResult mlir::attn::parsePartialClauseOrder(OpAsmParser &parser, Type) {
  return checkNoClauseFollows(
      parser, {"ins", "outs", "paged", "alibi"},
      "ins(...) outs(...) [paged(...)] [alibi(...)] [{attributes}]");
}

ParseResult mlir::attn::parseCombineClauseOrder(OpAsmParser &parser, Type) {
  return checkNoClauseFollows(
      parser, {"ins", "outs", "lse", "sinks"},
      "ins(...) outs(...) [lse(...)] [sinks(...)] [{attributes}]");
}

ParseResult mlir::attn::parseGradClauseOrder(OpAsmParser &parser, Type) {
  return checkNoClauseFollows(parser, {"ins", "outs"},
                              "ins(...) outs(...) [{attributes}]");
}

//===- Diagnostics.h - the tools' diagnostics ------------------*- C++ -*-===//
//
// MLIR's SourceMgrDiagnosticHandler shows a diagnostic without a file
// location as "<unknown>:0: error:" (UnknownLoc) or `loc("name"): error:`
// (NameLoc): a fake location either way. The tools print those as
// "<tool>: error: ..." and "<name>: error: ..." instead, and count every
// error: one printed means a non-zero exit, even from a step that returned
// success.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_DIAGNOSTICS_H
#define ATTN_TOOLS_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <memory>

namespace mlir::attn {

/// Registered after the tool's SourceMgrDiagnosticHandler: prints the
/// diagnostics that have no file location (to `os`) and counts errors.
class ToolDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  ToolDiagnosticHandler(MLIRContext *ctx, StringRef tool,
                        llvm::raw_ostream &os);
  /// Errors reported since construction, whatever their location.
  size_t errors() const { return *count; }

private:
  std::shared_ptr<size_t> count = std::make_shared<size_t>(0);
};

/// The handler above for a context that outlives the caller (attn-opt's,
/// made by MlirOptMain): registered until the context goes; the result
/// counts its errors. `printLocationless` off (-verify-diagnostics) leaves
/// every diagnostic to the handlers registered before.
std::shared_ptr<const size_t> registerToolDiagnostics(MLIRContext *ctx,
                                                      StringRef tool,
                                                      bool printLocationless);

} // namespace mlir::attn

#endif // ATTN_TOOLS_DIAGNOSTICS_H

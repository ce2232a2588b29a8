//===- Diagnostics.cpp - the tools' diagnostics ---------------------------===//

#include "attn/Tools/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// What stands in front of a diagnostic without a file location.
std::optional<std::string> prefixOf(Location loc, StringRef tool) {
  if (loc->findInstanceOf<FileLineColLoc>())
    return std::nullopt;
  if (auto name = loc->findInstanceOf<NameLoc>())
    return name.getName().str();
  return tool.str();
}

StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  llvm_unreachable("unknown severity");
}

/// Prints `diag` (and its notes) if it has no file location.
LogicalResult printWithoutFileLoc(Diagnostic &diag, StringRef tool,
                                  llvm::raw_ostream &os) {
  std::optional<std::string> prefix = prefixOf(diag.getLocation(), tool);
  if (!prefix)
    return failure();
  os << *prefix << ": " << severityName(diag.getSeverity()) << ": " << diag
     << "\n";
  for (Diagnostic &note : diag.getNotes()) {
    if (auto file = note.getLocation()->findInstanceOf<FileLineColLoc>())
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
    else
      os << *prefix;
    os << ": note: " << note << "\n";
  }
  os.flush();
  return success();
}

} // namespace

mlir::attn::ToolDiagnosticHandler::ToolDiagnosticHandler(MLIRContext *ctx,
                                                         StringRef tool,
                                                         llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(ctx) {
  setHandler([count = count, tool = tool.str(), &os](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++*count;
    return printWithoutFileLoc(diag, tool, os);
  });
}

std::shared_ptr<const size_t>
mlir::attn::registerToolDiagnostics(MLIRContext *ctx, StringRef tool,
                                    bool printLocationless) {
  auto count = std::make_shared<size_t>(0);
  ctx->getDiagEngine().registerHandler(
      [count, tool = tool.str(), printLocationless](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          ++*count;
        if (!printLocationless)
          return failure();
        return printWithoutFileLoc(diag, tool, llvm::errs());
      });
  return count;
}

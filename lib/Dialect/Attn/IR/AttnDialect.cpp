//===- AttnDialect.cpp - attn dialect -------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnOpsTypes.cpp.inc"

/// `<` BLOCK_M [`x` D] `x` f32 `>`.
Type WgFragmentType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elt;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elt) || parser.parseGreater())
    return Type();
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape, elt);
}

void WgFragmentType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType() << ">";
}

/// f32, [BLOCK_M] or [BLOCK_M, D], BLOCK_M a multiple of a warpgroup's 64
/// rows, D > 0.
LogicalResult
WgFragmentType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> shape, Type elementType) {
  if (!elementType.isF32())
    return emitError() << "!attn.wg_fragment holds f32, not " << elementType;
  if (shape.empty() || shape.size() > 2 ||
      llvm::any_of(shape, [](int64_t d) { return d <= 0; }) ||
      shape[0] % kWarpgroupRows != 0)
    return emitError() << "!attn.wg_fragment must be [BLOCK_M] or [BLOCK_M, "
                          "D] with BLOCK_M a multiple of "
                       << kWarpgroupRows;
  return success();
}

void AttnDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/Attn/IR/AttnOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

//===- ClauseOrder.h - the clauses of the attn ops, in order ----*- C++ -*-===//
//
// The optional clauses of the user-facing ops (lse(...), descale(...),
// paged(...), workspace(...)) come in a fixed order. One given out of order
// ended the op early, and MLIR's parser then reported its keyword as an
// unknown op ("custom op 'lse' is unknown"). Each op's assembly format ends
// with a custom directive that names the clause and gives the order.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_IR_CLAUSEORDER_H
#define ATTN_LIB_DIALECT_ATTN_IR_CLAUSEORDER_H

#include "mlir/IR/OpImplementation.h"

namespace mlir::attn {

ParseResult parseAttentionClauseOrder(OpAsmParser &parser, Type first);
ParseResult parseVarlenClauseOrder(OpAsmParser &parser, Type first);
ParseResult parsePartialClauseOrder(OpAsmParser &parser, Type first);
ParseResult parseCombineClauseOrder(OpAsmParser &parser, Type first);
ParseResult parseGradClauseOrder(OpAsmParser &parser, Type first);

/// `first` (the type of the op's first operand) is only there because a
/// directive takes an argument. They print nothing: the printers write the
/// clauses in order.
inline void printAttentionClauseOrder(OpAsmPrinter &, Operation *, Type) {}
inline void printVarlenClauseOrder(OpAsmPrinter &, Operation *, Type) {}
inline void printPartialClauseOrder(OpAsmPrinter &, Operation *, Type) {}
inline void printCombineClauseOrder(OpAsmPrinter &, Operation *, Type) {}
inline void printGradClauseOrder(OpAsmPrinter &, Operation *, Type) {}

} // namespace mlir::attn

#endif // ATTN_LIB_DIALECT_ATTN_IR_CLAUSEORDER_H

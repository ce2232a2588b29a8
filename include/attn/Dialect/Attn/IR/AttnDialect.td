//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Exact scaled-dot-product attention and its FlashAttention tiles";
  let description = [{
    The `attn` dialect holds attention at two levels:

    * `attn.attention`: the whole operation
      `O = softmax(Q K^T * scale [+ causal mask]) V` on memrefs, in
      destination-passing style (see docs/ir.md for the contract).
    * Tile ops produced by `attn-tile`: `attn.load_tile`,
      `attn.online_attention` (one FlashAttention-2 step over a K/V block
      that carries the online-softmax state m, l, acc as explicit values)
      and `attn.epilogue`. `attn-online-softmax` decomposes them into
      vector/arith/math IR.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

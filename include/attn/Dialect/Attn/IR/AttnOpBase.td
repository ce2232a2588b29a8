//===- AttnOpBase.td - what every attn op shares ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPBASE_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPBASE_TD

include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnTypes.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every attribute without a dialect prefix is one of the op's own, and the
// only `attn.` ones are those passes set on attn ops (CtaAttributes.h): MLIR
// would keep a misspelt `casual` (or `attn.causal`) as a discardable
// attribute, silently ignored.
def Attn_OwnAttributes : NativeOpTrait<"OwnAttributes"> {
  let cppNamespace = "::mlir::attn";
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, !listconcat(traits, [Attn_OwnAttributes])>;

/// The online-softmax state of a tensor-core step or epilogue: the CTA's
/// vectors, or (from attn-tma-ring on) its warpgroup fragments.
def Attn_SoftmaxState : AnyTypeOf<[AnyVectorOfNonZeroRank, Attn_WgFragment]>;

/// A gradient tile to store: the CTA's vector (attn-tile-grad), or the
/// warpgroup fragments of the tensor-core backward's dK, dV
/// (attn-grad-async-pipeline).
def Attn_GradTile : AnyTypeOf<[AnyVectorOfNonZeroRank, Attn_WgFragment]>;

//===----------------------------------------------------------------------===//
// Mask kinds
//===----------------------------------------------------------------------===//

def Attn_MaskKind : I32EnumAttr<"MaskKind", "which (q, k) pairs a K/V block masks", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"bounds", 1>,
    I32EnumAttrCase<"causal", 2>
  ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPBASE_TD

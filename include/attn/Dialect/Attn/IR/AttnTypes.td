//===- AttnTypes.td - attn dialect types -------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD
#define ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_WgFragment : TypeDef<Attn_Dialect, "WgFragment"> {
  let mnemonic = "wg_fragment";
  let summary = "a CTA-level f32 tile held in the consumer warpgroups' accumulator registers";
  let description = [{
    `!attn.wg_fragment<BLOCK_M x f32>` (the row statistics m and l) and
    `!attn.wg_fragment<BLOCK_M x D x f32>` (the accumulator O) are the
    online-softmax state of a warp-specialized consumer (attn-tma-ring
    assigns them), and `!attn.wg_fragment<BLOCK_N x D x f32>` the dK and
    dV of the tensor-core backward (attn-grad-async-pipeline; its rows are
    keys): the value is the CTA's [BLOCK_M] or [BLOCK_M, D] tile,
    but no thread holds it whole. Consumer warpgroup w holds rows
    [64 w, 64 w + 64) in the register layout of a wgmma m64nNk16 f32
    accumulator (N = D rounded up to a multiple of 8): each thread holds
    two rows, so m and l are `vector<2xf32>` per thread and acc (dK, dV)
    `vector<N / 2 x f32>` (attn-lower-to-wgmma's type conversion). BLOCK_M
    is a multiple of 64 (one warpgroup's rows). Source: the PTX ISA,
    "Register fragments and shared memory matrix layouts" (wgmma D
    fragments); FlashAttention-3 section 3 and appendix B.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "VectorType":$tile), [{
      return $_get(tile.getContext(), tile.getShape(), tile.getElementType());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The CTA-level vector this fragment holds a part of.
    VectorType getTileType() const {
      return VectorType::get(getShape(), getElementType());
    }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD

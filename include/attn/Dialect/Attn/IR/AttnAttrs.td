//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Attn_ConfigAttr : AttrDef<Attn_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "The tile and schedule of one attention kernel, chosen once";
  let description = [{
    What `attn-select-config` decides for a forward attention op
    (`attn.attention`, `attn.partial_attention`, `attn.varlen_attention`),
    carried as the discardable attribute `attn.config` so that `attn-tile`
    and `attn-tma-ring` read it instead of choosing again:

    ```
    #attn.config<block_m = 128, block_n = 128, stages = 3,
                 consumer_warpgroups = 2, ping_pong = true, overlap = true>
    ```

    * `block_m`, `block_n`: the FlashAttention tile (query rows, keys).
    * `consumer_warpgroups`: Hopper consumer warpgroups of 64 rows
      (`block_m / 64`, 1 to 3); 0 on the CUDA-core path.
    * `stages`: K/V ring stages (at least 2; 0 on the CUDA-core path).
    * `ping_pong`: the consumer warpgroups take turns issuing GEMMs
      (FlashAttention-3 section 3.1; two or three warpgroups only).
    * `overlap`: softmax of block j runs while P V of block j - 1 is in
      flight (FlashAttention-3 section 3.2; 3 or more stages only).

    The verifier refuses a tile outside the limits every pass accepts
    (block_m in [1, 1024], block_n in [1, 256]) and a schedule that no
    lowering can run (the bounds above).
  }];
  let parameters = (ins "int64_t":$block_m, "int64_t":$block_n,
                        "int64_t":$stages, "int64_t":$consumer_warpgroups,
                        "BoolAttr":$ping_pong, "BoolAttr":$overlap);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the tile runs on Hopper's tensor cores (attn-tma-ring).
    bool isTensorCore() const { return getConsumerWarpgroups() != 0; }
    bool isPingPong() const { return getPingPong().getValue(); }
    bool isOverlap() const { return getOverlap().getValue(); }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

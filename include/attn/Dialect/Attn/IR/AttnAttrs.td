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

def Attn_KeyMaskAttr : AttrDef<Attn_Dialect, "KeyMask"> {
  let mnemonic = "key_mask";
  let summary = "Which keys each query sees: an interval affine in the "
                "indices";
  let description = [{
    The structured masks of FlashAttention and cuDNN, composable by
    intersection. With `p = i + Nk - Nq` the key position of query i
    (bottom-right alignment, as `causal`), query i sees key j iff

    ```
    p - left <= j <= p + right              (window; -1: unbounded side)
    and floor(p / chunk) = floor(j / chunk) (chunked local attention)
    or  j < prefix                          (prefix-LM: bidirectional prefix)
    ```

    and `0 <= j < Nk`. Parameters, each optional:
    * `left`, `right` (>= -1, default -1 = unbounded): the sliding window
      of FlashAttention-2's `window_size = (left, right)`; a causal window
      of W keys, the query's own included, is left = W - 1, right = 0, and
      causal alone is right = 0.
    * `chunk` (> 0): query and key in the same chunk of `chunk` positions
      (Llama-4's chunked local attention, with right = 0).
    * `prefix` (>= 0): keys below `prefix` are visible to every query
      (prefix-LM, with right = 0); only without `left` and `chunk`, so that
      every query's keys stay one interval.

    ```
    #attn.key_mask<left = 4095, right = 0>
    #attn.key_mask<right = 0, chunk = 8192>
    ```

    Each query's keys form one interval `[lo(p), hi(p)]` whose ends never
    decrease with p, so the K/V blocks a Q block visits, and which of them
    need no mask, follow exactly from the interval ends of its first and
    last rows (attn-causal-split).
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "-1">:$left,
                        DefaultValuedParameter<"int64_t", "-1">:$right,
                        OptionalParameter<"std::optional<int64_t>">:$chunk,
                        OptionalParameter<"std::optional<int64_t>">:$prefix);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Some query's first key may lie past key 0 (a left window or chunks).
    bool hasLowerBound() const { return getLeft() >= 0 || getChunk(); }
    /// This mask under `causal`: the window's right side at the diagonal.
    KeyMaskAttr withCausal() const;
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// The whole-attention ops users write; the tile and pipeline ops the
// passes produce are in AttnTileOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnOpBase.td"

//===----------------------------------------------------------------------===//
// attn.attention
//===----------------------------------------------------------------------===//

def Attn_AttentionOp : Attn_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "exact scaled-dot-product attention (forward)";
  let description = [{
    Computes `O = softmax(Q K^T * scale + mask) V` and, when `lse` is given,
    the natural-log softmax denominator `LSE = log(sum_j exp(S_ij))` of the
    scaled scores `S = Q K^T * scale`. Destination-passing style: O and LSE
    are written in place.

    Shapes (any strides; D must have unit stride at run time):
    * `q`: [B, Hq, Nq, D], `k` and `v`: [B, Hkv, Nk, D], `o`: [B, Hq, Nq, D].
    * `lse`: fp32 [B, Hq, Nq].
    * GQA/MQA: `Hq % Hkv == 0`; query head h reads KV head `h / (Hq / Hkv)`.

    Attributes:
    * `scale` (f32 > 0), default `1/sqrt(D)`.
    * `causal`: bottom-right aligned as in FlashAttention >= 2.1: query i
      sees key j iff `j <= i + Nk - Nq`.
    * `key_mask` (`#attn.key_mask<...>`): a sliding window, chunked local
      attention or a prefix-LM prefix (see the attribute), intersected
      with `causal` when both are given. A row that sees no key yields
      O = 0, LSE = -inf. Lowers to the host and the tensor-core path.
    * `softcap` (f32, 0 = off): logit softcapping as Gemma-2 and
      FlashAttention's `softcap`: each score becomes
      `softcap * tanh(S / softcap)` before the mask and the softmax. Host
      lowering only so far.
    * `sinks` (operand, f32 [Hq]): learned attention sinks (gpt-oss;
      StreamingLLM's sink token as a logit): one logit per query head that
      joins every row's softmax denominator and adds no value,
      `O_i = sum_j e^(S_ij - m) V_j / (e^(sink_h - m) + sum_j e^(S_ij - m))`;
      LSE includes it, so a row that sees no key gets O = 0, LSE = sink_h
      (-inf: no sink; +inf and NaN are not sinks: O is undefined). With
      split-KV the sink enters once, in the combine.
      Host lowering only so far.
    * `alibi_slopes` (operand, the `alibi` clause, f32 [Hq]): ALiBi (Press
      et al., "Train Short, Test Long", ICLR 2022; FlashAttention's
      `alibi_slopes`): query head h's scores get the bias
      `-alibi_slopes[h] * |i + Nk - Nq - j|`, after softcapping and before
      the mask. Host lowering only so far.

    Element types: Q, K, V all f16, all bf16 or all f32 (f32: host lowering
    only so far), O of the same type; or all
    f8E4M3FN with `descale` operands (fp32, the factors that undo the
    quantization scales) and a bf16 O.
    Accumulation is fp32. A row that sees no key yields O = 0, LSE = -inf.

    FP8 descales. With qd(b, h, i) the factor of query row i of query head
    h, kd(b, g, j) that of key j of KV head g = h / (Hq / Hkv), and
    vd(b, g, c) that of column c of V:
    ```
    S[b, h, i, j] = (sum_c Q8[b, h, i, c] K8[b, g, j, c]) * qd(b, h, i)
                    * kd(b, g, j) * scale
    O[b, h, i, c] = (sum_j P[b, h, i, j] V8[b, g, j, c]) * vd(b, g, c)
    ```
    i.e. attention on the dequantized inputs Q8 * qd, K8 * kd, V8 * vd.
    * `q_descale`: [B, Hkv] (per KV head, as FlashAttention-3: qd(b, h, i)
      = q_descale[b, g]) or, with `q_descale_block` = bm, [B, Hq,
      ceil(Nq / bm)] (per block of bm rows of one query head: qd(b, h, i) =
      q_descale[b, h, i / bm]).
    * `k_descale`: [B, Hkv] (kd(b, g, j) = k_descale[b, g]) or, with
      `k_descale_block` = bn, [B, Hkv, ceil(Nk / bn)] (kd(b, g, j) =
      k_descale[b, g, j / bn]).
    * `v_descale`: [B, Hkv] (vd(b, g, c) = v_descale[b, g]) or [B, Hkv, D]
      (per channel: vd(b, g, c) = v_descale[b, g, c]).
    The tensor-core path (attn-to-cubin) takes [B, Hkv] descales only; the
    per-block and per-channel forms lower to the host (attn-to-cpu).

    Paged K/V (the `paged` clause, as FlashAttention-2's
    `flash_attn_with_kvcache` with `block_table` and `cache_seqlens`; vLLM's
    PagedAttention): `k` and `v` are caches of fixed-size pages,
    [num_pages, page_size, Hkv, D]; `block_table` (i32 [B, max_pages])
    lists the pages of each sequence and `cache_seqlens` (i32 [B]) its
    length Nk_b. Key j of sequence b is row `j % page_size` of page
    `block_table[b, j / page_size]`; the causal mask and the bounds use
    Nk_b (query i sees key j iff `j <= i + Nk_b - Nq`). The caller's
    contract, as in FlashAttention: `0 <= Nk_b <= max_pages * page_size`
    and the first `ceil(Nk_b / page_size)` entries of row b are pages in
    `[0, num_pages)`; later entries are never read. Cache rows past Nk_b in
    a sequence's last page may be read (not used) by the tensor-core path
    and must hold finite values. f16, bf16 and f32 only (no FP8).

    Example:
    ```mlir
    attn.attention ins(%q, %k, %v : memref<1x32x8192x128xbf16>,
        memref<1x8x8192x128xbf16>, memref<1x8x8192x128xbf16>)
        outs(%o : memref<1x32x8192x128xbf16>)
        lse(%lse : memref<1x32x8192xf32>) {causal}
    ```
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$k, AnyMemRef:$v,
                       AnyMemRef:$o, Optional<AnyMemRef>:$lse,
                       Optional<AnyMemRef>:$q_descale,
                       Optional<AnyMemRef>:$k_descale,
                       Optional<AnyMemRef>:$v_descale,
                       Optional<AnyMemRef>:$block_table,
                       Optional<AnyMemRef>:$cache_seqlens,
                       Optional<AnyMemRef>:$sinks,
                       Optional<AnyMemRef>:$alibi_slopes,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<Attn_KeyMaskAttr>:$key_mask,
                       OptionalAttr<I64Attr>:$q_descale_block,
                       OptionalAttr<I64Attr>:$k_descale_block,
                       OptionalAttr<F32Attr>:$softcap);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `:` type($q) `,` type($k) `,` type($v) `)`
    `outs` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`descale` `(` $q_descale^ `,` $k_descale `,` $v_descale `:`
        type($q_descale) `,` type($k_descale) `,` type($v_descale) `)`)?
    (`paged` `(` $block_table^ `,` $cache_seqlens `:` type($block_table) `,`
        type($cache_seqlens) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    attr-dict
    `` custom<AttentionClauseOrder>(ref(type($q)))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    float getScaleOrDefault();
    /// Static head dimension D (ShapedType::kDynamic if dynamic).
    int64_t getHeadDim();
    /// K/V are paged caches [num_pages, page_size, Hkv, D].
    bool isPaged() { return getBlockTable() != nullptr; }
    bool isFP8() ;
    /// FP8 with [B, Hkv] descales only (what the tensor-core path takes).
    bool hasPerHeadDescales();
  }];
}

//===----------------------------------------------------------------------===//
// attn.attention_grad
//===----------------------------------------------------------------------===//

def Attn_AttentionGradOp : Attn_Op<"attention_grad"> {
  let summary = "gradients dQ, dK, dV of exact attention (backward)";
  let description = [{
    The backward of `attn.attention` with the same layouts and semantics:
    given Q, K, V, the forward's output O, the output gradient dO and the
    forward's `LSE`, writes

    ```
    P     = exp(S - LSE),  S = Q K^T * scale (+ causal mask: P = 0 there)
    dV    = P^T dO                      (summed over the query heads of a group)
    dP    = dO V^T
    Delta = rowsum(dO * O)              (fp32, [B, Hq, Nq])
    dS    = P * (dP - Delta)
    dQ    = dS K * scale
    dK    = dS^T Q * scale              (summed over the query heads of a group)
    ```

    Shapes (any strides; D must have unit stride at run time):
    * `q`, `o`, `do`, `dq`: [B, Hq, Nq, D]; `k`, `v`, `dk`, `dv`:
      [B, Hkv, Nk, D]; `lse`: fp32 [B, Hq, Nq], natural log (the forward's
      LSE: `log(sum_j exp(S_ij))`, -inf for a row that sees no key).
    * GQA/MQA: `Hq % Hkv == 0`; query head h reads KV head `h / (Hq / Hkv)`,
      and dK, dV of a KV head sum the contributions of its `Hq / Hkv` query
      heads.

    Attributes, as the forward's: `scale` (f32 > 0, default `1/sqrt(D)`);
    `causal`, bottom-right aligned (query i sees key j iff
    `j <= i + Nk - Nq`). A row that sees no key contributes nothing: its dQ
    is 0, never NaN; a key no row sees gets dK = dV = 0.

    Element types: Q, K, V, O, dO, dQ, dK, dV all f16, all bf16 or all f32
    (no FP8 backward); accumulation is fp32 and the gradients are rounded to
    the element type once, at the end. D is a multiple of 8 in [8, 256].

    Source: FlashAttention-2 (Dao 2023, arXiv 2307.08691) Algorithm 2, with
    dQ computed by a separate loop nest instead of atomic adds (deterministic):
    a preprocess for Delta, dK/dV with the K/V loop outside, dQ with the Q
    loop outside.

    Example:
    ```mlir
    attn.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x32x1024x128xbf16>,
        memref<1x8x1024x128xbf16>, memref<1x8x1024x128xbf16>,
        memref<1x32x1024x128xbf16>, memref<1x32x1024x128xbf16>,
        memref<1x32x1024xf32>)
        outs(%dq, %dk, %dv : memref<1x32x1024x128xbf16>,
             memref<1x8x1024x128xbf16>, memref<1x8x1024x128xbf16>) {causal}
    ```
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$k, AnyMemRef:$v,
                       AnyMemRef:$o, AnyMemRef:$dO, AnyMemRef:$lse,
                       AnyMemRef:$dQ, AnyMemRef:$dK, AnyMemRef:$dV,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `,` $o `,` $dO `,` $lse `:` type($q) `,`
        type($k) `,` type($v) `,` type($o) `,` type($dO) `,` type($lse) `)`
    `outs` `(` $dQ `,` $dK `,` $dV `:` type($dQ) `,` type($dK) `,`
        type($dV) `)`
    attr-dict
    `` custom<GradClauseOrder>(ref(type($q)))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    float getScaleOrDefault();
    /// Static head dimension D (ShapedType::kDynamic if dynamic).
    int64_t getHeadDim();
  }];
}

//===----------------------------------------------------------------------===//
// Split-KV decode (produced by attn-split-kv)
//===----------------------------------------------------------------------===//

def Attn_PartialAttentionOp : Attn_Op<"partial_attention", [
    AttrSizedOperandSegments]> {
  let summary = "split-KV attention: one partial O and LSE per K/V split";
  let description = [{
    The first kernel of split-KV (flash-decoding): the keys of each
    (batch, KV head) are cut into S contiguous splits, S being the leading
    dimension of the workspace operands, and every split is attended to
    independently, as `attn.attention` would over its keys alone:

    ```
    O_partial[s]   = softmax(Q K_s^T * scale + mask) V_s      // fp32
    LSE_partial[s] = log(sum_{j in split s} exp(S_ij))        // natural log
    ```

    A split whose rows see no key (an empty split, or causal) writes
    O_s = 0 and LSE_s = -inf: it carries weight zero in
    `attn.decode_combine`. Causal masking is the full problem's
    (bottom-right: query i sees key j iff `j <= i + Nk - Nq`, with j the
    key's index in K). The splits are contiguous, in order, and cover every
    key once; the cut is the tiling's (attn-tile: whole K/V blocks,
    `ceil(ceil(Nk / BLOCK_N) / S)` blocks per split, as FlashAttention-2's
    `num_splits`), and the combined result does not depend on it.

    Shapes (any strides; D must have unit stride at run time):
    * `q`: [B, Hq, Nq, D], `k` and `v`: [B, Hkv, Nk, D] (f16, bf16 or f32,
      GQA as `attn.attention`);
    * `o_partial`: fp32 [S, B, Hq, Nq, D]; `lse_partial`: fp32
      [S, B, Hq, Nq], S static and >= 1 (the workspace, written whole).

    Paged K/V: the `paged` clause as on `attn.attention`; the splits cut
    each sequence's own Nk_b keys.

    Attributes: `scale` (default `1/sqrt(D)`), `causal`, `key_mask` and
    `softcap`, and the `alibi` clause, as `attn.attention`. Source: flash-decoding (Dao, Haziza, Massa, Sizov
    2023); FlashAttention-2's split-KV forward (`num_splits`).
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$k, AnyMemRef:$v,
                       AnyMemRef:$o_partial, AnyMemRef:$lse_partial,
                       Optional<AnyMemRef>:$block_table,
                       Optional<AnyMemRef>:$cache_seqlens,
                       Optional<AnyMemRef>:$alibi_slopes,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<Attn_KeyMaskAttr>:$key_mask,
                       OptionalAttr<F32Attr>:$softcap);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `:` type($q) `,` type($k) `,` type($v) `)`
    `outs` `(` $o_partial `,` $lse_partial `:` type($o_partial) `,`
        type($lse_partial) `)`
    (`paged` `(` $block_table^ `,` $cache_seqlens `:` type($block_table) `,`
        type($cache_seqlens) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    attr-dict
    `` custom<PartialClauseOrder>(ref(type($q)))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    float getScaleOrDefault();
    /// Static head dimension D (ShapedType::kDynamic if dynamic).
    int64_t getHeadDim();
    /// The number of splits S (the workspace's leading dimension).
    int64_t getNumSplits();
  }];
}

def Attn_DecodeCombineOp : Attn_Op<"decode_combine", [
    AttrSizedOperandSegments]> {
  let summary = "merge split-KV partial results with their LSE weights";
  let description = [{
    The second kernel of split-KV (`decode_combine`): for every row,

    ```
    LSE = log(sum_s exp(LSE_partial[s]))                      // logsumexp
    O   = sum_s exp(LSE_partial[s] - LSE) * O_partial[s]
    ```

    rounded to O's element type once. Splits with LSE_s = -inf carry weight
    zero; a row whose every split is -inf saw no key: O = 0, LSE = -inf,
    never NaN. This is the online softmax's rescaling applied to whole
    splits (`attn.combine_step`).

    Shapes: `o_partial` fp32 [S, B, Hq, Nq, D], `lse_partial` fp32
    [S, B, Hq, Nq] (as `attn.partial_attention` wrote them); `o`
    [B, Hq, Nq, D] of f16, bf16 or f32; optional `lse` fp32 [B, Hq, Nq].
    `sinks` (f32 [Hq], as `attn.attention`'s) join each row's denominator
    once, here: the partial results carry none.
    Source: flash-decoding's reduction step; FlashAttention-2's
    `combine_attn_seqk_parallel`.
  }];
  let arguments = (ins AnyMemRef:$o_partial, AnyMemRef:$lse_partial,
                       AnyMemRef:$o, Optional<AnyMemRef>:$lse,
                       Optional<AnyMemRef>:$sinks);
  let assemblyFormat = [{
    `ins` `(` $o_partial `,` $lse_partial `:` type($o_partial) `,`
        type($lse_partial) `)`
    `outs` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    attr-dict
    `` custom<CombineClauseOrder>(ref(type($o_partial)))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.varlen_attention
//===----------------------------------------------------------------------===//

def Attn_VarlenAttentionOp : Attn_Op<"varlen_attention", [
    AttrSizedOperandSegments]> {
  let summary = "attention over a packed batch of variable-length sequences";
  let description = [{
    `attn.attention` applied to each sequence of a batch stored without
    padding, as FlashAttention-2's varlen API (`flash_attn_varlen_func`).
    Sequence b holds the query rows `[cu_seqlens_q[b], cu_seqlens_q[b + 1])`
    of `q` and `o` and the keys `[cu_seqlens_k[b], cu_seqlens_k[b + 1])` of
    `k` and `v`; with Nq_b and Nk_b its lengths:

    ```
    O_b   = softmax(Q_b K_b^T * scale + mask_b) V_b
    LSE_b = log(sum_j exp(S_ij + mask_ij))              // natural log
    ```

    Shapes (any strides; D must have unit stride at run time):
    * `q`, `o`: [total_q, Hq, D]; `k`, `v`: [total_k, Hkv, D].
    * `cu_seqlens_q`, `cu_seqlens_k`: i32 [B + 1], prefix sums of the
      sequence lengths (`cu_seqlens[0] = 0`, non-decreasing, the last entry
      at most total_q / total_k).
    * `max_seqlen_q`, `max_seqlen_k` (index): at least every Nq_b / Nk_b;
      the grid is sized by max_seqlen_q (rows past it are not computed).
    * `lse`: fp32 [Hq, total_q] (FlashAttention-2's varlen layout).
    * GQA/MQA: `Hq % Hkv == 0`; query head h reads KV head `h / (Hq / Hkv)`.

    The values of cu_seqlens and max_seqlen are the caller's contract, as
    in FlashAttention: one that breaks it is undefined behaviour.

    Paged K/V, `paged(%block_table)` (FlashAttention-2's
    `flash_attn_varlen_func(..., block_table=)`): `k` and `v` are caches
    [num_pages, page_size, Hkv, D] and `block_table` i32 [B, max_pages].
    Sequence b still has Nk_b = cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys;
    key j of it is row `j % page_size` of page `block_table[b, j /
    page_size]`. Nk_b is taken as at most max_pages * page_size.

    Split-KV, `workspace(%o_partial, %lse_partial)`: the op is computed as
    S split-KV partials combined by their LSE (flash-decoding, as
    `attn.partial_attention` and `attn.decode_combine`), through fp32
    scratch `o_partial` [S, total_q, Hq, D] and `lse_partial`
    [S, Hq, total_q] (S static, >= 1; attn-split-kv allocates them). The
    result is the op's, up to rounding; the splits cut each sequence's own
    K/V blocks.

    Attributes: `scale` (f32 > 0, default `1/sqrt(D)`); `causal`,
    bottom-right aligned per sequence: query i of sequence b sees key j iff
    `j <= i + Nk_b - Nq_b`; `key_mask`, `softcap`, `alibi` and `sinks` as
    `attn.attention`'s,
    with each sequence's own Nq_b and Nk_b. A row that sees no key gets O = 0,
    LSE = -inf. A sequence with Nq_b = 0 writes nothing; B = 0 and batches
    whose sequences are all empty are valid.

    Element types: Q, K, V and O all f16, all bf16 or all f32 (f32: host
    only); no FP8. Accumulation is fp32. D is a multiple of 8 in [8, 256].
    Source: FlashAttention-2 (Dao 2023), `flash_attn_varlen_func`
    (cu_seqlens, max_seqlen, LSE [H, total_q]); FlashAttention >= 2.1 for
    the bottom-right causal mask.

    Example:
    ```mlir
    attn.varlen_attention ins(%q, %k, %v : memref<?x32x128xbf16>,
        memref<?x8x128xbf16>, memref<?x8x128xbf16>)
        seqlens(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
        max(%max_q, %max_k)
        outs(%o : memref<?x32x128xbf16>)
        lse(%lse : memref<32x?xf32>) {causal}
    ```
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$k, AnyMemRef:$v,
                       AnyMemRef:$cu_seqlens_q, AnyMemRef:$cu_seqlens_k,
                       Index:$max_seqlen_q, Index:$max_seqlen_k,
                       Optional<AnyMemRef>:$block_table,
                       AnyMemRef:$o, Optional<AnyMemRef>:$lse,
                       Optional<AnyMemRef>:$o_partial,
                       Optional<AnyMemRef>:$lse_partial,
                       Optional<AnyMemRef>:$sinks,
                       Optional<AnyMemRef>:$alibi_slopes,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<Attn_KeyMaskAttr>:$key_mask,
                       OptionalAttr<F32Attr>:$softcap);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `:` type($q) `,` type($k) `,` type($v) `)`
    `seqlens` `(` $cu_seqlens_q `,` $cu_seqlens_k `:` type($cu_seqlens_q) `,`
        type($cu_seqlens_k) `)`
    `max` `(` $max_seqlen_q `,` $max_seqlen_k `)`
    (`paged` `(` $block_table^ `:` type($block_table) `)`)?
    `outs` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`workspace` `(` $o_partial^ `,` $lse_partial `:` type($o_partial) `,`
        type($lse_partial) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    attr-dict
    `` custom<VarlenClauseOrder>(ref(type($q)))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    float getScaleOrDefault();
    /// Static head dimension D (ShapedType::kDynamic if dynamic).
    int64_t getHeadDim();
    /// The number of splits S (1 without a workspace).
    int64_t getNumSplits();
  }];
}

include "attn/Dialect/Attn/IR/AttnTileOps.td"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

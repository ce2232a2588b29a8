//===- AttnTileOps.td - the ops the attn passes produce ----*- tablegen -*-===//
//
// Tile ops (attn-tile, attn-tile-grad) and the Hopper pipeline's ops
// (attn-async-pipeline, attn-grad-async-pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD

include "attn/Dialect/Attn/IR/AttnOpBase.td"

//===----------------------------------------------------------------------===//
// Tile ops (produced by attn-tile)
//===----------------------------------------------------------------------===//

def Attn_LoadTileOp : Attn_Op<"load_tile", [
    MemoryEffects<[MemRead]>]> {
  let summary = "load a [BLOCK_M, D] Q tile";
  let description = [{
    Reads rows `row .. row + BLOCK_M - 1`, columns `col .. col + Dt - 1` of
    the [B, H, N, D] memref at (`batch`, `head`), where the result is
    vector<BLOCK_M x Dt>. Rows at or past N read as zero, so a tail block
    never reads out of bounds. The result is the resident Q tile of one CTA
    (Dt = D) or of one thread after `attn-distribute-rows` (one row, a
    slice of D).

    GQA packing (`gqa_pack` = G > 1, attn-tile pack-gqa): the rows are
    those of the packed sequence of G * N rows of the G query heads
    `head .. head + G - 1` of one KV group, query-major: packed row r is
    query `r / G` of head `head + r % G`. Rows whose query is at or past N
    read as zero.
  }];
  let arguments = (ins AnyMemRef:$source, Index:$batch, Index:$head,
                       Index:$row, Index:$col,
                       DefaultValuedAttr<I64Attr, "1">:$gqa_pack);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `,` $col `]` attr-dict `:`
    type($source)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_OnlineAttentionOp : Attn_Op<"online_attention", [
    AttrSizedOperandSegments, MemoryEffects<[MemRead]>,
    AllTypesMatch<["m", "new_m"]>, AllTypesMatch<["l", "new_l"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one FlashAttention-2 step: fold a K/V block into (m, l, acc)";
  let description = [{
    For the Q tile `q` ([BLOCK_M, D], rows `q_pos ..`) and the K/V block of
    `block_n` keys starting at `k_pos` of (`batch`, `kv_head`) in `k`/`v`
    ([B, Hkv, Nk, D]), with S = Q K^T * scale * log2(e) (log2 domain):

    ```
    m'   = max(m, rowmax(S))                    // running row max
    P    = exp2(S - m')
    l'   = exp2(m - m') * l + rowsum(P)         // running denominator
    acc' = exp2(m - m') * acc + P V             // unnormalized output
    ```

    `mask` selects which entries of S are -inf first: `none`; `bounds`
    (keys at or past Nk); `causal` (bounds, and key j > row i +
    `causal_offset`, where `causal_offset` = Nk - Nq; with `key_mask`,
    the keys outside that mask's interval at p = i + `causal_offset`
    instead). `softcap` (f32 > 0): S' = softcap * tanh(S' / softcap) on the
    natural-log scores S' = Q K^T * scale, before the mask (Gemma-2).
    `alibi_slopes` (vector<BLOCK_M x f32>, each row's ALiBi slope times
    log2(e)) subtracts slope * |i + `causal_offset` - j| from row i's
    log2-domain score of key j, after softcapping; it needs
    `causal_offset` with any mask. The state types are
    m, l: vector<BLOCK_M x f32>, acc: vector<BLOCK_M x Dt x f32>.

    Splitting D: the tile may hold columns `d_offset .. d_offset + Dt - 1`
    of D only. Then `row_lanes` (a power of two, at most 32) consecutive GPU
    lanes hold the slices of one row, and the partial dot products of S are
    summed across them with `gpu.shuffle xor` (requires BLOCK_M = 1).
    GQA packing (`gqa_pack` = G > 1): `q_pos` counts packed rows (see
    `attn.load_tile`), and the causal mask uses tile row t's query index
    `(q_pos + t) / G`, not the packed row.

    FP8: for an f8E4M3FN tile, `qk_descale` (f32, the product
    `q_descale * k_descale` of the KV head) multiplies S together with
    `scale * log2(e)`, so the descaling is folded into the exp2 argument and
    the softmax stays fp32 (FlashAttention-3, arXiv 2407.08608, section 3.3).
    Absent, it is 1; it is rejected for f16/bf16 tiles.
    Per-block descales (attn.attention's rank-3 q_descale / k_descale):
    `row_descale` (vector<BLOCK_M x f32>, the q descale of each tile row)
    and `key_descale` (vector<block_n x f32>, the k descale of each key of
    the block) multiply S too: S[i, j] is multiplied by
    `qk_descale * row_descale[i] * key_descale[j]` (each absent is 1).
    FP8 tiles only; the host lowering takes them, the GPU passes refuse them.

    Paged K/V: with `block_table` (i32 [B, max_pages]) `k` and `v` are
    [num_pages, Hkv, page_size, D] views of the caches (a page where
    [B, Hkv, Nk, D] has a batch): key j of sequence `batch` is row
    `j % page_size` of page `block_table[batch, j / page_size]`.
    `num_keys` (required with `block_table`, optional otherwise) is the
    sequence's key count Nk, which `bounds` and `causal_offset` refer to;
    absent, Nk is k's dimension 2.

    Varlen: `key_offset` (index; not with `block_table`) is where the
    sequence's keys start in k/v's dimension 2: key j is row
    `key_offset + j`, while `k_pos`, the masks and `num_keys` count keys
    of the sequence.
    Source: online softmax (Milakov & Gimelshein 2018), FlashAttention-2
    Algorithm 1 and section 3.1 (exp2 domain).
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$q, AnyMemRef:$k, AnyMemRef:$v,
                       Index:$batch, Index:$kv_head, Index:$k_pos,
                       Index:$d_offset,
                       Index:$q_pos, Optional<Index>:$causal_offset,
                       AnyVectorOfNonZeroRank:$m, AnyVectorOfNonZeroRank:$l,
                       AnyVectorOfNonZeroRank:$acc,
                       Optional<F32>:$qk_descale,
                       Optional<AnyVectorOfNonZeroRank>:$row_descale,
                       Optional<AnyVectorOfNonZeroRank>:$key_descale,
                       Optional<AnyMemRef>:$block_table,
                       Optional<Index>:$num_keys,
                       Optional<Index>:$key_offset,
                       Optional<AnyVectorOfNonZeroRank>:$alibi_slopes,
                       F32Attr:$scale, I64Attr:$block_n,
                       Attn_MaskKindAttr:$mask,
                       DefaultValuedAttr<I64Attr, "1">:$row_lanes,
                       DefaultValuedAttr<I64Attr, "1">:$gqa_pack,
                       OptionalAttr<Attn_KeyMaskAttr>:$key_mask,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs AnyVectorOfNonZeroRank:$new_m,
                      AnyVectorOfNonZeroRank:$new_l,
                      AnyVectorOfNonZeroRank:$new_acc);
  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `kv` `(` $k `,` $v `:` type($k) `,` type($v) `)`
    `at` `[` $batch `,` $kv_head `,` $k_pos `,` $d_offset `]`
    `rows` `(` $q_pos (`,` `causal_offset` $causal_offset^)? `)`
    `state` `(` $m `,` $l `,` $acc `:` type($m) `,` type($l) `,` type($acc) `)`
    (`descale` `(` $qk_descale^ `)`)?
    (`row_descale` `(` $row_descale^ `:` type($row_descale) `)`)?
    (`key_descale` `(` $key_descale^ `:` type($key_descale) `)`)?
    (`pages` `(` $block_table^ `:` type($block_table) `)`)?
    (`num_keys` `(` $num_keys^ `)`)?
    (`key_offset` `(` $key_offset^ `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Nk: `num_keys`, or k's dimension 2 (a memref.dim built at `b`).
    Value getKeyCount(OpBuilder &b);
  }];
}

def Attn_EpilogueOp : Attn_Op<"epilogue", [
    AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "normalize the online-softmax state and store O (and LSE)";
  let description = [{
    Writes `O = acc / l` (cast to O's element type) for rows
    `q_pos .. q_pos + BLOCK_M - 1` of (`batch`, `head`) that are below Nq
    and the columns `col .. col + Dt - 1` the tile holds. LSE is written by
    the tile holding column 0,
    and, if `lse` is given, `LSE = (m + log2(l)) * ln(2)` (m is in the
    log2 domain). A row with l == 0 saw no key: O = 0 and LSE = -inf.

    `v_descale` (f32), when given, multiplies O: `O = acc * v_descale / l`,
    the `v_descale` of an FP8 attention's KV head (P V is linear in V, so
    the factor is applied once per row here rather than per key).
    `channel_descale` (vector<Dt x f32>, a per-channel `v_descale` for the
    columns `col ..` the tile holds), when given, multiplies column c of O
    by `channel_descale[c]` (host lowering only; the GPU passes refuse it).

    `staging`, when given, is a workgroup-memory tile [C, BLOCK_M, 64] of O's
    element type (the layout of `attn.online_attention_mma`'s Q operand)
    that the tensor-core lowering may overwrite to turn the accumulator's
    scattered register layout into coalesced 16-byte stores of O.

    `o_map`, when given with `staging`, is O's TMA descriptor
    (`!nvgpu.tensormap.descriptor` of [1, 1, 64, 64] boxes of O's element
    type, 128-byte swizzled): each warpgroup then writes its 64 staged rows
    with TMA bulk tensor stores (one per 64-column chunk), which clip rows
    at or past Nq and columns at or past D (FlashAttention-3's O epilogue).

    O may be fp32 (the split-KV workspace of `attn.partial_attention`).
    GQA packing (`gqa_pack` = G > 1): `q_pos` counts packed rows, stored
    as `attn.load_tile` reads them (row r: query r / G of head
    `head + r % G`); rows whose query is at or past Nq are not stored.
  }];
  let arguments = (ins Attn_SoftmaxState:$m, Attn_SoftmaxState:$l,
                       Attn_SoftmaxState:$acc, AnyMemRef:$o,
                       Optional<AnyMemRef>:$lse, Index:$batch, Index:$head,
                       Index:$q_pos, Index:$col,
                       Optional<AnyMemRef>:$staging,
                       Optional<AnyType>:$o_map, Optional<F32>:$v_descale,
                       Optional<AnyVectorOfNonZeroRank>:$channel_descale,
                       DefaultValuedAttr<I64Attr, "1">:$gqa_pack);
  let assemblyFormat = [{
    `state` `(` $m `,` $l `,` $acc `:` type($m) `,` type($l) `,` type($acc) `)`
    `to` $o (`,` `lse` $lse^)? `[` $batch `,` $head `,` $q_pos `,` $col `]`
    (`staging` `(` $staging^ `:` type($staging) `)`)?
    (`tma_store` `(` $o_map^ `:` type($o_map) `)`)?
    (`descale` `(` $v_descale^ `)`)?
    (`channel_descale` `(` $channel_descale^ `:` type($channel_descale) `)`)?
    attr-dict `:` type($o) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

def Attn_CombineStepOp : Attn_Op<"combine_step", [
    Pure, AllTypesMatch<["m", "new_m"]>, AllTypesMatch<["l", "new_l"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "fold one split's (O_s, LSE_s) into the online-softmax state";
  let description = [{
    The step of the `decode_combine` loop (attn-tile) over the splits, in the
    state of `attn.online_attention` (log2 domain), so that `attn.epilogue`
    finishes it: with `o_s` ([BLOCK_M, D] fp32, a split's normalized O) and
    `lse_s` (vector<BLOCK_M x f32>, its natural-log LSE),

    ```
    x    = LSE_s * log2(e)
    m'   = max(m, x)                     // m' = -inf: no split saw a key
    w    = exp2(x - m'), alpha = exp2(m - m')   (m' taken as 0 when -inf)
    l'   = alpha * l + w
    acc' = alpha * acc + w * O_s
    ```

    so O = acc / l and LSE = (m + log2 l) * ln 2 at the end. Source:
    flash-decoding's reduction; the online softmax (Milakov & Gimelshein
    2018) applied to whole splits.
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$o_s,
                       AnyVectorOfNonZeroRank:$lse_s,
                       AnyVectorOfNonZeroRank:$m, AnyVectorOfNonZeroRank:$l,
                       AnyVectorOfNonZeroRank:$acc);
  let results = (outs AnyVectorOfNonZeroRank:$new_m,
                      AnyVectorOfNonZeroRank:$new_l,
                      AnyVectorOfNonZeroRank:$new_acc);
  let assemblyFormat = [{
    `partial` `(` $o_s `,` $lse_s `:` type($o_s) `,` type($lse_s) `)`
    `state` `(` $m `,` $l `,` $acc `:` type($m) `,` type($l) `,` type($acc) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Backward tile ops (produced by attn-tile-grad)
//===----------------------------------------------------------------------===//

def Attn_LoadRowsOp : Attn_Op<"load_rows", [MemoryEffects<[MemRead]>]> {
  let summary = "load BLOCK_M per-row fp32 values (LSE, Delta)";
  let description = [{
    Reads rows `row .. row + BLOCK_M - 1` of the fp32 [B, H, N] memref at
    (`batch`, `head`) into a `vector<BLOCK_M x f32>`. Rows at or past N read
    as zero (the backward tile ops make such rows contribute nothing).

    Per-block values (attn-tile, the per-block FP8 descales of Q and K):
    with `row_block` = R, element t is entry `(row + t) / R` of the [B, H,
    N] memref, whose N counts blocks of R rows. With `gqa_pack` = G, rows
    are packed GQA rows (`attn.load_tile`): row r reads head `head + r % G`
    at `(r / G) / R`. Entries at or past N read as zero.
  }];
  let arguments = (ins AnyMemRef:$source, Index:$batch, Index:$head,
                       Index:$row,
                       DefaultValuedAttr<I64Attr, "1">:$row_block,
                       DefaultValuedAttr<I64Attr, "1">:$gqa_pack);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` attr-dict `:` type($source)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_StoreRowsOp : Attn_Op<"store_rows", [MemoryEffects<[MemWrite]>]> {
  let summary = "store BLOCK_M per-row fp32 values (Delta)";
  let description = [{
    Writes a `vector<BLOCK_M x f32>` to rows `row ..` of the fp32
    [B, H, N] memref at (`batch`, `head`); rows at or past N are not written.
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$value, AnyMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row);
  let assemblyFormat = [{
    $value `,` $dest `[` $batch `,` $head `,` $row `]` attr-dict `:`
    type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Attn_StoreTileOp : Attn_Op<"store_tile", [MemoryEffects<[MemWrite]>]> {
  let summary = "store an fp32 [ROWS, D] gradient tile (dQ, dK, dV)";
  let description = [{
    Rounds the fp32 tile `value` ([ROWS, D]) to the element type of the
    [B, H, N, D] memref `dest` and writes it to rows `row ..` of
    (`batch`, `head`); rows at or past N are not written. `value` is a
    `vector<ROWS x D x f32>`, or the consumer warpgroups' fragments
    `!attn.wg_fragment<ROWS x D x f32>` (the tensor-core backward's dK and
    dV, each thread storing the registers it holds).
  }];
  let arguments = (ins Attn_GradTile:$value, AnyMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row);
  let assemblyFormat = [{
    $value `,` $dest `[` $batch `,` $head `,` $row `]` attr-dict `:`
    type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Attn_GradDeltaOp : Attn_Op<"grad_delta", [Pure]> {
  let summary = "the backward preprocess: Delta = rowsum(dO * O) in fp32";
  let description = [{
    For an O tile and a dO tile ([BLOCK_M, D], the same element type),
    returns `Delta_i = sum_d dO[i, d] * O[i, d]` accumulated in fp32
    (`vector<BLOCK_M x f32>`). Delta is the `D_i` of FlashAttention-2
    Algorithm 2 (line 4), computed by a preprocess before the dK/dV nest.
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$o, AnyVectorOfNonZeroRank:$dO);
  let results = (outs AnyVectorOfNonZeroRank:$delta);
  let assemblyFormat = [{
    $o `,` $dO attr-dict `:` type($o) `,` type($dO) `->` type($delta)
  }];
  let hasVerifier = 1;
}

def Attn_GradDKDVOp : Attn_Op<"grad_dkdv", [
    Pure, AllTypesMatch<["dK", "new_dK"]>, AllTypesMatch<["dV", "new_dV"]>]> {
  let summary = "one dK/dV step: fold a Q block into a stationary K/V block";
  let description = [{
    With the K/V block `k`, `v` ([BLOCK_N, D], keys `k_pos ..`) resident
    and the Q block `q`, `dO` ([BLOCK_M, D], query rows `q_pos ..`) with
    their fp32 rows `lse` (the forward's natural-log LSE) and `delta`
    (rowsum(dO * O)), all `vector<BLOCK_M x f32>`:

    ```
    S   = Q K^T * scale * log2(e)              // exp2 domain, as the forward
    P   = exp2(S - LSE * log2(e))              // P = 0 where masked or LSE = -inf
    dV' = dV + P^T dO
    dP  = dO V^T
    dS  = P * (dP - Delta)
    dK' = dK + dS^T Q * scale
    ```

    `mask`: `none` or `causal` (P = 0 where key j > row i +
    `causal_offset`, `causal_offset` = Nk - Nq, present exactly for this
    kind). `bounds` is not needed: rows past Nq load as zero (Q, dO, LSE,
    Delta) and contribute nothing, and the rows of dK, dV past Nk are never
    stored. State: dK, dV: `vector<BLOCK_N x D x f32>`.
    Source: FlashAttention-2 Algorithm 2 (lines 10-20, without dQ).
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$q, AnyVectorOfNonZeroRank:$dO,
                       AnyVectorOfNonZeroRank:$lse,
                       AnyVectorOfNonZeroRank:$delta,
                       AnyVectorOfNonZeroRank:$k, AnyVectorOfNonZeroRank:$v,
                       Index:$q_pos, Index:$k_pos,
                       Optional<Index>:$causal_offset,
                       AnyVectorOfNonZeroRank:$dK, AnyVectorOfNonZeroRank:$dV,
                       F32Attr:$scale, Attn_MaskKindAttr:$mask);
  let results = (outs AnyVectorOfNonZeroRank:$new_dK,
                      AnyVectorOfNonZeroRank:$new_dV);
  let assemblyFormat = [{
    `q` `(` $q `,` $dO `:` type($q) `,` type($dO) `)`
    `lse_delta` `(` $lse `,` $delta `:` type($lse) `,` type($delta) `)`
    `kv` `(` $k `,` $v `:` type($k) `,` type($v) `)`
    `at` `(` $q_pos `,` $k_pos (`,` `causal_offset` $causal_offset^)? `)`
    `state` `(` $dK `,` $dV `:` type($dK) `,` type($dV) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def Attn_GradDQOp : Attn_Op<"grad_dq", [
    MemoryEffects<[MemRead]>, AllTypesMatch<["dQ", "new_dQ"]>]> {
  let summary = "one dQ step: fold a K/V block into the Q block's dQ";
  let description = [{
    The dQ loop nest's step (Q block resident, K/V blocks walked): for the
    `block_n` keys starting at `k_pos` of (`batch`, `kv_head`) in `k`, `v`
    ([B, Hkv, Nk, D] memrefs), with `q`, `dO`, `lse`, `delta` as in
    `attn.grad_dkdv`:

    ```
    P   = exp2(Q K^T * scale * log2(e) - LSE * log2(e))
    dS  = P * (dO V^T - Delta)
    dQ' = dQ + dS K * scale
    ```

    `mask` as in `attn.online_attention`: `none`, `bounds` (keys at or past
    Nk: P = 0, never read) or `causal` (bounds, and key j > row i +
    `causal_offset`). State: dQ: `vector<BLOCK_M x D x f32>`.
    Source: FlashAttention-2 Algorithm 2 (line 21) as a separate loop
    nest (no atomics).
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$q, AnyVectorOfNonZeroRank:$dO,
                       AnyVectorOfNonZeroRank:$lse,
                       AnyVectorOfNonZeroRank:$delta,
                       AnyMemRef:$k, AnyMemRef:$v,
                       Index:$batch, Index:$kv_head, Index:$k_pos,
                       Index:$q_pos, Optional<Index>:$causal_offset,
                       AnyVectorOfNonZeroRank:$dQ,
                       F32Attr:$scale, I64Attr:$block_n,
                       Attn_MaskKindAttr:$mask);
  let results = (outs AnyVectorOfNonZeroRank:$new_dQ);
  let assemblyFormat = [{
    `q` `(` $q `,` $dO `:` type($q) `,` type($dO) `)`
    `lse_delta` `(` $lse `,` $delta `:` type($lse) `,` type($delta) `)`
    `kv` `(` $k `,` $v `:` type($k) `,` type($v) `)`
    `at` `[` $batch `,` $kv_head `,` $k_pos `]`
    `rows` `(` $q_pos (`,` `causal_offset` $causal_offset^)? `)`
    `state` `(` $dQ `:` type($dQ) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Hopper pipeline ops (produced by attn-async-pipeline)
//===----------------------------------------------------------------------===//

def Attn_ToWgFragmentOp : Attn_Op<"to_wg_fragment", [Pure]> {
  let summary = "a CTA-level f32 tile as the consumer warpgroups' fragments";
  let description = [{
    The same [BLOCK_M] or [BLOCK_M, D] f32 tile, typed as the warpgroup
    fragments (`!attn.wg_fragment`) in which the consumer warpgroups of an
    `attn.warp_specialize` hold it. attn-tma-ring converts the initial
    online-softmax state (m, l, acc) so at the start of the consumer
    region, attn-grad-async-pipeline the zero dK and dV. attn-lower-to-wgmma lowers only a splat `arith.constant`
    source (every thread's registers get the splat value; a splat needs no
    data movement), and refuses any other.
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$source);
  let results = (outs Attn_WgFragment:$result);
  let assemblyFormat = [{
    $source attr-dict `:` type($source) `to` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Attn_WarpSpecializeOp : Attn_Op<"warp_specialize", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "split a CTA into a TMA producer and MMA consumer warpgroups";
  let description = [{
    The CTA runs `1 + consumer_warpgroups` warpgroups of 128 threads each
    (1 to 3 consumers).
    Warpgroup 0 runs the `producer` region: it only issues TMA copies, so
    `setmaxnreg` lowers its budget to `producer_registers` per thread.
    Warpgroups 1 .. consumer_warpgroups run the `consumer` region (tensor-core
    MMA and the softmax) with `consumer_registers` per thread; consumer
    warpgroup w owns query rows [64 w, 64 w + 64) of the CTA's Q tile. The
    regions share nothing but shared memory and the mbarriers created before
    this op.

    With `ping_pong` (two or three consumer warpgroups), the consumers take
    turns, in warpgroup order, to issue their GEMMs, so that one warpgroup's
    softmax runs while another's GEMMs occupy the tensor cores
    (FlashAttention-3 section 3.1: one named barrier per warpgroup; each
    waits for its turn, issues, and hands the turn to the next).

    With `overlap`, each consumer warpgroup software-pipelines its K/V loops
    by one block (FlashAttention-3 section 3.2): S_j = Q K_j^T is issued
    together with P_{j-1} V_{j-1}, and the softmax of S_j runs while that
    P V is in flight. A block then holds its ring slot until the next
    iteration's P V is done, so the ring needs at least three stages.

    Register budgets are multiples of 8 in [24, 256] and must fit the
    register file: 128 * (producer + consumer_warpgroups * consumer) <=
    65536. Source: FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608)
    section 3.1; the warp-specialized GEMM of mlir/test/Examples/NVGPU/Ch5.
  }];
  let arguments = (ins I64Attr:$consumer_warpgroups,
                       I64Attr:$producer_registers,
                       I64Attr:$consumer_registers,
                       UnitAttr:$ping_pong,
                       UnitAttr:$overlap);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumer);
  let assemblyFormat = [{
    `consumers` `(` $consumer_warpgroups `)`
    `registers` `(` $producer_registers `,` $consumer_registers `)`
    (`ping_pong` $ping_pong^)?
    (`overlap` $overlap^)?
    `producer` $producer `consumer` $consumer attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Threads of the CTA: 128 per warpgroup, producer included.
    int64_t getNumThreads() { return 128 * (1 + getConsumerWarpgroups()); }
  }];
}

def Attn_OnlineAttentionMmaOp : Attn_Op<"online_attention_mma", [
    MemoryEffects<[MemRead]>, AttrSizedOperandSegments,
    AllTypesMatch<["m", "new_m"]>, AllTypesMatch<["l", "new_l"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one FlashAttention step on tensor cores, tiles in shared memory";
  let description = [{
    The step of `attn.online_attention` (same state, same exp2-domain math)
    with its operands where Hopper's tensor cores read them: `q` is the
    resident Q tile and `k`, `v` one K/V block, each in workgroup memory in
    chunks of 128-byte rows (written by TMA with the 128-byte swizzle). For
    f16/bf16, C = ceil(D / 64) chunks of 64 columns: q is [C, BLOCK_M, 64],
    k and v [C, BLOCK_N, 64]. Columns at or past `head_dim` are zero.

    FP8 (f8E4M3FN, FlashAttention-3 section 3.3): C = ceil(D / 128) chunks
    of 128 columns, q [C, BLOCK_M, 128] and k [C, BLOCK_N, 128]; v is V^T
    (the MMA reads FP8 B operands K-major only): [ceil(BLOCK_N / 128), D,
    128], 128 keys per row chunk (BLOCK_N a multiple of 32; keys of the last
    chunk past BLOCK_N unused), with the keys of every 16-byte unit in the
    order 0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15 (the order
    in which the S accumulator gives a thread its keys; attn-async-pipeline
    permutes V^T so). `qk_descale` (f32,
    required) is q_descale * k_descale of the KV head: it multiplies S
    inside the exp2 argument, so the softmax stays fp32. P is quantized to
    e4m3 for P V, scaled by 2^s (attn-lower-to-wgmma's fp8-p-scale-log2,
    8 by default; exact: O and l carry the same factor) so that
    probabilities down to 2^-(9 + s) stay representable next to an
    attention sink.

    The block holds keys `k_pos .. k_pos + BLOCK_N - 1` of `num_keys` (Nk);
    `mask` works as in `attn.online_attention` (`bounds`: keys >= Nk are
    -inf; `causal`: also key j > row i + `causal_offset`, rows counted from
    `q_pos`, or with `key_mask` the keys outside that mask's interval at
    p = i + `causal_offset`). Zero-filled key rows past Nk give S = 0, so `bounds` must be
    set on any block that may reach past Nk. `unfilled_tail`: K and V rows
    past Nk were not zero-filled and may hold anything, NaN included (TMA
    bounds the packed buffer of a varlen batch or a paged cache, not the
    sequence): their scores are masked, and V's rows past Nk are zeroed in
    shared memory before P V, since P = 0 times NaN is NaN. f16/bf16 only.

    GQA packing (`gqa_pack` = G > 1, as on `attn.online_attention`): the
    tile's rows are packed (query, head-in-group) rows, query-major, so
    `q_pos` counts packed rows and the causal mask uses row i's query
    index `(q_pos + i) / G`.

    Lowered by `attn-lower-to-wgmma`: S = Q K^T with both operands in
    shared memory, the online softmax on the accumulator registers, P
    converted in registers to the A operand of O += P V (V row-major,
    transposed by the MMA). Source: FlashAttention-3 section 3
    (register layouts).
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$k, AnyMemRef:$v,
                       Index:$k_pos, Index:$num_keys, Index:$q_pos,
                       Optional<Index>:$causal_offset,
                       Optional<F32>:$qk_descale,
                       Attn_SoftmaxState:$m, Attn_SoftmaxState:$l,
                       Attn_SoftmaxState:$acc,
                       F32Attr:$scale, I64Attr:$head_dim,
                       Attn_MaskKindAttr:$mask,
                       DefaultValuedAttr<I64Attr, "1">:$gqa_pack,
                       UnitAttr:$unfilled_tail,
                       OptionalAttr<Attn_KeyMaskAttr>:$key_mask);
  let results = (outs Attn_SoftmaxState:$new_m,
                      Attn_SoftmaxState:$new_l,
                      Attn_SoftmaxState:$new_acc);
  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `kv` `(` $k `,` $v `:` type($k) `,` type($v) `)`
    `keys` `(` $k_pos `,` $num_keys `)`
    `rows` `(` $q_pos (`,` `causal_offset` $causal_offset^)? `)`
    (`descale` `(` $qk_descale^ `)`)?
    `state` `(` $m `,` $l `,` $acc `:` type($m) `,` type($l) `,` type($acc) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getBlockM();
    int64_t getBlockN();
    /// f8E4M3FN tiles (V^T in `v`).
    bool isFP8();
  }];
}

def Attn_GradDKDVMmaOp : Attn_Op<"grad_dkdv_mma", [
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["dK", "new_dK"]>, AllTypesMatch<["dV", "new_dV"]>]> {
  let summary = "one backward step on tensor cores: dK, dV += a Q block, dQ via atomics";
  let description = [{
    The step of `attn.grad_dkdv` with its tiles where Hopper's tensor cores
    read them, plus dQ: `k`, `v` are the CTA's resident K/V block
    ([C, BLOCK_N, 64], keys `k_pos ..`), `q`, `dO` one Q block ([C, BLOCK_M,
    64], query rows `q_pos ..` of (`batch`, `head`)), all in workgroup
    memory as C = D / 64 chunks of 128-byte rows (TMA, 128-byte swizzle;
    rows past N are zero). `lse_log2` ([B, Hq, Nq'] fp32: LSE * log2(e),
    +inf where LSE = -inf) and `delta` ([B, Hq, Nq']: rowsum(dO * O)) are
    read from global memory, whole Q blocks at a time without a guard: Nq'
    is Nq rounded up to a multiple of 64, the rows past Nq holding +inf and
    0. With c = scale * log2(e):

    ```
    S^T  = K Q^T,  dP^T = V dO^T                  // per consumer warpgroup: its 64 keys
    P^T  = exp2(S^T c - LSE_log2)                 // 0 where masked
    dS^T = P^T (dP^T - Delta) scale
    dV' = dV + P^T dO,  dK' = dK + dS^T Q          // register-A wgmma
    dq_acc[batch, head, q_pos / 64] += dS K       // bulk reduction from dq_stage
    ```

    `ds` is scratch for dS ([BLOCK_N / 64, BLOCK_M, 64], the element type
    of q: dS K-major, 128-byte swizzled). `dq_acc` is the fp32 accumulator
    of dQ, zeroed before the kernel, in tiles: [B, Hq, ceil(Nq / 64), 2,
    64, D / 2], tile (b, h, Q block, half w) holding rows q_pos .. q_pos +
    63 and columns [w D / 2, (w + 1) D / 2), each row's 8-column groups
    XOR-swizzled by row mod (D / 16). Consumer warpgroup w computes its
    half, writes it to `dq_stage[w]` ([2, 64, D / 2] fp32 in workgroup
    memory, the same layout) and adds it to its tile with one bulk
    reduction (`cp.reduce.async.bulk .add.f32`). `mask`: `none` or `causal` (P = 0 where key j > row i +
    `causal_offset`, present exactly for causal). State: dK, dV as the
    consumer warpgroups' fragments `!attn.wg_fragment<BLOCK_N x D x f32>`
    (attn-grad-async-pipeline types them so), BLOCK_N = 64 per consumer
    warpgroup: warpgroup w holds keys [64 w, 64 w + 64) in the wgmma
    accumulator layout, the keys as its rows.
    Source: FlashAttention-2 Algorithm 2 (lines 10-21, dQ by atomic adds);
    FlashAttention-3 (arXiv 2407.08608) appendix B, the backward on
    wgmma.
  }];
  let arguments = (ins AnyMemRef:$q, AnyMemRef:$dO, AnyMemRef:$k,
                       AnyMemRef:$v, AnyMemRef:$ds, AnyMemRef:$dq_stage,
                       AnyMemRef:$lse_log2, AnyMemRef:$delta,
                       AnyMemRef:$dq_acc,
                       Index:$batch, Index:$head, Index:$q_pos, Index:$k_pos,
                       Optional<Index>:$causal_offset,
                       Attn_WgFragment:$dK, Attn_WgFragment:$dV,
                       F32Attr:$scale, I64Attr:$head_dim,
                       Attn_MaskKindAttr:$mask);
  let results = (outs Attn_WgFragment:$new_dK, Attn_WgFragment:$new_dV);
  let assemblyFormat = [{
    `q` `(` $q `,` $dO `:` type($q) `,` type($dO) `)`
    `kv` `(` $k `,` $v `:` type($k) `,` type($v) `)`
    `rows` `(` $lse_log2 `,` $delta `:` type($lse_log2) `,` type($delta) `)`
    `dq` `(` $dq_acc `:` type($dq_acc) `)`
    `scratch` `(` $ds `,` $dq_stage `:` type($ds) `,` type($dq_stage) `)`
    `at` `[` $batch `,` $head `]` `(` $q_pos `,` $k_pos
        (`,` `causal_offset` $causal_offset^)? `)`
    `state` `(` $dK `,` $dV `:` qualified(type($dK)) `,` qualified(type($dV)) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getBlockM();
    int64_t getBlockN();
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD

//===- Passes.td - attn passes -----------------------------*- tablegen -*-===//
//
// The forward lowering, in pipeline order (docs/passes.md):
//   [attn-split-kv] -> attn-select-config -> attn-tile -> attn-causal-split ->
//   tensor cores: attn-cta-order -> attn-tma-ring -> attn-fp8-v-permute ->
//     [attn-tma-store] -> [attn-persistent-ctas] -> attn-lower-to-wgmma
//   CUDA cores: [attn-distribute-rows] -> attn-online-softmax
//   -> attn-lower-to-nvvm | attn-lower-to-cpu
// The backward (attn.attention_grad):
//   attn-tile-grad -> attn-causal-split-grad -> attn-decompose-grad ->
//   attn-lower-to-cpu
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnSplitKV : Pass<"attn-split-kv", "func::FuncOp"> {
  let summary = "Split the keys of attn.attention across CTAs (flash-decoding)";
  let description = [{
    Rewrites an `attn.attention` into split-KV form:

    ```
    %o_part   = memref.alloc(...) : memref<S x B x Hq x Nq x D x f32>
    %lse_part = memref.alloc(...) : memref<S x B x Hq x Nq x f32>
    attn.partial_attention ins(%q, %k, %v) outs(%o_part, %lse_part)
    attn.decode_combine ins(%o_part, %lse_part) outs(%o) lse(%lse)
    memref.dealloc %o_part; memref.dealloc %lse_part
    ```

    Each split attends to a contiguous range of keys (attn-tile cuts it in
    whole K/V blocks) and writes its normalized O and natural-log LSE to
    the fp32 workspace; the combine merges them with the LSE weights
    (`O = sum_s exp(LSE_s - LSE) O_s`, `LSE = logsumexp_s LSE_s`). An empty
    split has weight zero. The workspace is an explicit buffer, as
    attn-tile-grad's Delta: the host pipeline allocates it; a GPU pipeline
    turns the allocations into kernel parameters the runtime supplies
    (FlashAttention-2's `oaccum` / `softmax_lseaccum`), S * B * Hq * Nq *
    (D + 1) * 4 bytes.

    `splits` = N > 1 rewrites every attention (not FP8) into N splits;
    `splits` = 1 leaves them alone. `splits` = 0 picks S per op (FA2's
    idea, a simpler rule): with W = B * Hq * ceil(Nq / 64) CTAs of work,
    S = 1 when W fills 80% of `sm-count` SMs, else
    S = min(ceil(sm-count / W), Nk / 256 (with a static Nk: at least 256
    keys per split), 128), and S = 1 where B, Hq or Nq is dynamic; the op is
    rewritten when S > 1. An op whose O is empty (a static B, Hq or Nq of
    0) is left alone: there is nothing to split.

    An `attn.varlen_attention` (its lengths are values: only `splits` = N >
    1 applies) keeps its form and gets a `workspace` of
    `memref<S x total_q x Hq x D x f32>` and `memref<S x Hq x total_q x
    f32>`, allocated before it and freed after; attn-tile builds its
    partial and combine grids.
    Errors: `splits` outside [0, 256], `sm-count` < 1.
    Source: flash-decoding (Dao, Haziza, Massa, Sizov 2023);
    FlashAttention-2's split-KV forward and `num_splits_heuristic`.
  }];
  let options = [
    Option<"splits", "splits", "int64_t", "0",
           "K/V splits per (batch, head, Q block): 0 picks them from the "
           "shape and sm-count, 1 leaves the op unsplit">,
    Option<"smCount", "sm-count", "int64_t", "132",
           "SMs of the target GPU for splits=0 (132: H100/H200 SXM)">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnSelectConfig : Pass<"attn-select-config", "func::FuncOp"> {
  let summary = "Choose each forward attention op's tile and schedule once";
  let description = [{
    Records on each `attn.attention`, `attn.partial_attention` and
    `attn.varlen_attention` (with a static head dim D) the tile and the
    schedule its kernel runs, as the discardable attribute `attn.config`:

    ```
    attn.attention ins(%q, %k, %v : memref<1x8x1024x128xbf16>, ...) outs(%o ...)
        {attn.config = #attn.config<block_m = 128, block_n = 128, stages = 3,
                                    consumer_warpgroups = 2, ping_pong = true,
                                    overlap = true>}
    ```

    `attn-tile` tiles by its `block_m` x `block_n` and puts the config on
    the tensor-core CTA loop, where `attn-tma-ring` reads `stages`,
    `ping_pong` and `overlap`. The choices (attn/Transforms/HopperConfig.h,
    with the H200 measurements behind them):

    * path `wgmma` (Hopper tensor cores): BLOCK_M and BLOCK_N where given,
      else BLOCK_M 192 (three consumer warpgroups) for D <= 64 and for FP8
      at 64 < D <= 128 with BLOCK_N 96 unless a static Nq pads 5% more
      rows, else 128; BLOCK_N 96 for FP8 with 192 rows at 64 < D <= 128,
      else 128 for D <= 128 or FP8, else 64. consumer_warpgroups =
      BLOCK_M / 64. stages: at most `stages` (0: 4 for one 128-byte chunk
      per row, D <= 64 at 16 bits; else 3) of those that fit 227 KiB of
      shared memory beside Q (and FP8's O staging). ping_pong with two or
      more consumer warpgroups, overlap with three or more stages.
    * path `fma` (CUDA cores): BLOCK_M 64 and BLOCK_N 16 where not given;
      no ring (stages 0, consumer_warpgroups 0).

    The choice is one function (attn/Transforms/SelectConfig.h): the
    bundle writer keys each kernel by the tile it returns, and
    attn-quantize-fp8 scales per that tile. An op that carries a config
    already keeps it. Errors (located at the
    op): on `wgmma`, a BLOCK_M that is not 64, 128 or 192, and Q with two
    K/V stages over 227 KiB of shared memory. Options are checked before
    the pass runs (no location): block sizes out of range, stages 1 or
    negative, an unknown path.
    Source: FlashAttention-2 (Dao 2023) section 3.3 (block sizes);
    FlashAttention-3 (arXiv 2407.08608) sections 3.1-3.2 (ping-pong,
    intra-warpgroup overlap), 4 (tile sizes); docs/perf-notes.md.
  }];
  let options = [
    Option<"path", "path", "std::string", "\"wgmma\"",
           "The kernel the config is for: wgmma (Hopper tensor cores, "
           "sm_90a) or fma (CUDA cores)">,
    Option<"blockM", "block-m", "int64_t", "0",
           "Query rows per tile (BLOCK_M, in [1, 1024]; 0: chosen per D)">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Keys per K/V block (BLOCK_N, in [1, 256]; 0: chosen per D)">,
    Option<"stages", "stages", "int64_t", "0",
           "K/V ring stages on wgmma (0: up to 4 for D <= 64, else 3; fewer "
           "if shared memory is short)">,
    Option<"pingPong", "ping-pong", "bool", "true",
           "The consumer warpgroups (two or three) take turns issuing "
           "their GEMMs (FlashAttention-3 section 3.1)">,
    Option<"overlap", "overlap", "bool", "true",
           "Softmax of block j while P V of block j - 1 is in flight, with "
           "3 or more stages (FlashAttention-3 section 3.2)">
  ];
}

def AttnTile : Pass<"attn-tile", "func::FuncOp"> {
  let summary = "Tile attn.attention into the FlashAttention-2 loop nest";
  let description = [{
    Rewrites each `attn.attention` into the FA2 work decomposition:

    ```
    scf.forall (%qb, %h, %b) in (ceil(Nq / BLOCK_M), Hq, B) {
      %q_tile = attn.load_tile %q[%b, %h, %qb * BLOCK_M]      // Q resident
      %m, %l, %acc = scf.for %kb = 0 to ceil(Nk / BLOCK_N)
          iter_args(m = -inf, l = 0, acc = 0) {              // fp32 state
        attn.online_attention ... mask(bounds | causal)
      }
      attn.epilogue state(%m, %l, %acc) to %o (, lse %lse)
    }
    ```

    The CTA loop is mapped to `#gpu.block<x, y, z>` (the FA2 grid), which
    also keeps `--canonicalize` from folding it away between passes.
    Every K/V block carries the mask it may need (`bounds` when Nk is not a
    static multiple of BLOCK_N, `causal` for causal attention); blocks that
    need none are found by `attn-causal-split`. GQA: query head h reads KV
    head h / (Hq / Hkv). Shapes may be dynamic except D.

    Split-KV (`attn.partial_attention` with S splits, from attn-split-kv):
    the grid's x walks (Q block, split) pairs, split-minor; split s walks
    the K/V blocks `[min(s * P, NB), min((s + 1) * P, NB))` with
    NB = ceil(Nk / BLOCK_N) and P = ceil(NB / S), and its epilogue stores
    into `memref.subview`s of the workspace at s (an empty split stores
    O = 0, LSE = -inf). `attn.decode_combine` becomes its own grid over
    (Q block, query head, batch) folding the S splits with
    `attn.combine_step` and finishing with `attn.epilogue`.

    GQA packing (`pack-gqa`, where Hq / Hkv = G is static and > 1): the
    grid's y walks KV heads, and a tile's BLOCK_M rows are packed rows of
    the group's G query heads, query-major (row r: query r / G of head
    `kv_head * G + r % G`; `gqa_pack = G` on the tile ops), so a K/V block
    is read once per group instead of once per query head. The causal mask
    uses each row's query index. An option of attn-tile rather than a pass
    of its own: it changes only the grid and the rows' mapping of the nest
    attn-tile builds.

    FP8 (f8E4M3FN with fp32 [B, Hkv] descales): each CTA loads the descales
    of its (batch, KV head) and passes `q_descale * k_descale` to
    `attn.online_attention` and `v_descale` to `attn.epilogue`. Per-block
    descales need no relation between the scale blocks and the tiles: a
    per-block `q_descale` becomes the CTA's `row_descale` (an
    `attn.load_rows {row_block}` of each tile row's scale, packed rows
    included) and a per-block `k_descale` each step's `key_descale` (the
    scale of each key of the block); a per-channel `v_descale` is read
    as vector<D x f32> and passed as the epilogue's `channel_descale`.

    Varlen (`attn.varlen_attention`, FlashAttention-2's varlen API): the
    grid is (ceil(max_seqlen_q / BLOCK_M), Hq, B) with B + 1 the length of
    `cu_seqlens_q`, marked `attn.varlen`. Each CTA loads its sequence's
    bounds from cu_seqlens_q / cu_seqlens_k and, if its Q block starts
    below Nq_b, views the packed operands as one-batch [1, H, N_b, D]
    memrefs (`memref.subview` of rows [start, start + N_b), then
    `memref.expand_shape` and `memref.transpose`; LSE [Hq, total_q] as
    [1, Hq, Nq_b]) and builds the same nest as `attn.attention` on them,
    with batch 0, dynamic N_b and `causal_offset` = Nk_b - Nq_b. A CTA
    whose Q block starts at or past Nq_b does nothing.

    Tile sizes: an op's `attn.config` (attn-select-config) where it has
    one, else `block-m` and `block-n`.

    Errors: dynamic head dim D.
    Source: FlashAttention-2 (Dao 2023) Algorithm 1 and section 3.2
    (work partitioning); split-KV: flash-decoding, FlashAttention-2's `num_splits`; GQA
    packing: FlashAttention-3's `pack_gqa`.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64",
           "Query rows per tile of an op without attn.config (BLOCK_M; 0: "
           "the tensor-core default, 192 "
           "for D <= 64 and for FP8 at D <= 128 with BLOCK_N 96 or none, "
           "else 128)">,
    Option<"blockN", "block-n", "int64_t", "64",
           "Keys per K/V block of an op without attn.config (BLOCK_N; 0: "
           "the tensor-core default, 96 for "
           "FP8 with BLOCK_M 192 at 64 < D <= 128, else 128 for D <= 128 "
           "or FP8, else 64)">,
    Option<"packGqa", "pack-gqa", "bool", "false",
           "Pack the query heads of a KV group into the rows of one tile "
           "(where Hq / Hkv is static and > 1)">,
    Option<"combineBlockM", "combine-block-m", "int64_t", "0",
           "Query rows per attn.decode_combine tile (0: block-m, or 64 "
           "where block-m is 0)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnQuantizeFP8 : Pass<"attn-quantize-fp8", "func::FuncOp"> {
  let summary = "Quantize a bf16 attn.attention to the FP8 one with descales";
  let description = [{
    Rewrites each bf16 `attn.attention` into a quantize step and the FP8
    (f8E4M3FN) `attn.attention` with fp32 descales, writing the same O
    (bf16) and LSE. The quantize step allocates f8E4M3FN copies of Q, K, V
    ([B, H, N, D], freed after the call) and, per scale group:

    ```
    amax       = max |x| over the group
    descale    = amax > 0 ? amax / 448 : 1        // 448: largest e4m3 value
    x_fp8      = satfinite_rne(x / descale)
    ```

    Groups of Q and K (`qk-granularity`):
    * `tensor`: the whole tensor; the descale fills the [B, Hkv] operand.
    * `head`: per (batch, KV head), Q's group being the query heads of that
      KV head: [B, Hkv] descales (what the tensor-core path takes).
    * `block` (default): per `block-m` rows of one query head for Q
      ([B, Hq, ceil(Nq / block-m)], `q_descale_block` = block-m) and per
      `block-n` keys of one KV head for K ([B, Hkv, ceil(Nk / block-n)],
      `k_descale_block` = block-n). Block sizes 0 are the tile
      attn-select-config chooses for the FP8 attention (192 x 96 at
      D 128), so a scale block is a tile of the FP8 kernel
      (FlashAttention-3's block quantization); that choice's errors
      (a BLOCK_M other than 64, 128 or 192 asked with block-n 0) are
      raised here.
    Groups of V (`v-granularity`): `head`, per (batch, KV head), [B, Hkv];
    or `channel`, per (batch, KV head, column of D), [B, Hkv, D].

    `hadamard=true` first rotates the rows of Q and K along D by
    R = H S / sqrt(D) (H the Sylvester-Hadamard matrix, S a fixed
    pseudo-random diagonal of signs): R R^T = I, so (Q R)(K R)^T = Q K^T in
    exact arithmetic, and outliers are spread across D before quantization
    (FlashAttention-3's incoherent processing, arXiv 2407.08608 section
    3.3); amax is taken over the rotated values. V is not rotated.

    The quantize step is grids as attn-tile's (an `scf.forall` mapped to
    GPU blocks around ones mapped to threads), no atomics. One grid takes
    every amax: CTAs of 256 threads, each of one operand, with per-thread
    maxima of 16-byte chunks in a workgroup buffer and a two-level tree.
    A per-block Q or K CTA covers one scale block and also writes its
    descale and FP8 copy; other groups are cut over up to 128 CTAs that
    store their maxima. Then, per other operand, one grid takes the
    descales from those maxima and writes the FP8 copy. x / descale is
    x * (1 / descale) corrected by two fmas where the descale is in
    [2^-88, 2^126] (Markstein: bit-equal to the division), a division
    otherwise. attn-to-cpu runs the grids as loops, attn-to-cubin as
    kernels launched before the FP8 attention (two with the defaults).
    FP8 V is written as V^T ([B, Hkv, D, Nk]
    storage, rows padded to 16 bytes and zero-filled, viewed transposed by
    `memref.transpose`), the layout the tensor cores read, by CTAs of 256
    threads per 128 keys through a [D, 128] tile in workgroup memory
    (16-byte loads of V's rows, 16-byte stores of V^T's). f16 inputs are
    not implemented. The tensor-core path takes per-block descales in
    blocks of its tiles (the default block sizes); per-channel V descales
    lower to the host only.
    A block-m or block-n longer than N is one block of N rows.
    Errors: f16 inputs; paged K/V; a dynamic shape of any operand (named);
    hadamard=true with D not a power of two; block-m or block-n negative.
  }];
  let options = [
    Option<"hadamard", "hadamard", "bool", "false",
           "Rotate Q and K along D by a random-sign Hadamard transform first">,
    Option<"qkGranularity", "qk-granularity", "QkGranularity",
           "QkGranularity::block", "Scale groups of Q and K",
           [{::llvm::cl::values(
               clEnumValN(QkGranularity::tensor, "tensor",
                          "one scale per tensor"),
               clEnumValN(QkGranularity::head, "head",
                          "one per (batch, KV head)"),
               clEnumValN(QkGranularity::block, "block",
                          "one per block-m rows of a query head (Q), "
                          "block-n keys of a KV head (K)"))}]>,
    Option<"vGranularity", "v-granularity", "VGranularity",
           "VGranularity::head", "Scale groups of V",
           [{::llvm::cl::values(
               clEnumValN(VGranularity::head, "head",
                          "one per (batch, KV head)"),
               clEnumValN(VGranularity::channel, "channel",
                          "one per (batch, KV head, column of D)"))}]>,
    Option<"blockM", "block-m", "int64_t", "0",
           "Q rows per scale with qk-granularity=block (0: the tensor-core "
           "BLOCK_M for D and Nq)">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Keys per scale with qk-granularity=block (0: the tensor-core FP8 "
           "BLOCK_N for D and Nq)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect"];
}

def AttnCausalSplit : Pass<"attn-causal-split", "func::FuncOp"> {
  let summary = "Split the K/V loop into mask-free and masked blocks";
  let description = [{
    For each K/V loop produced by `attn-tile` whose `attn.online_attention`
    is masked, computes per Q block:

    * `num_full`: blocks entirely visible to every row of the Q block and
      inside Nk — run without a mask (off-diagonal);
    * `num_end`: one past the last block any row can see — blocks in
      [num_full, num_end) keep their mask (the diagonal band and
      the Nk tail); blocks past num_end are skipped (above the diagonal).

    With bottom-right causal alignment (offset = Nk - Nq), for a Q block
    starting at q_pos:
    `num_full = clamp(q_pos + offset + 1, 0, Nk) floordiv BLOCK_N`,
    `num_end  = ceildiv(clamp(q_pos + BLOCK_M + offset, 0, Nk), BLOCK_N)`;
    without causal, `num_full = Nk floordiv BLOCK_N`. Handles BLOCK_N !=
    BLOCK_M and Nq != Nk. A loop over a K/V range [begin, end) (a split of
    split-KV) keeps its range: both bounds are clamped into it. With GQA
    packing (`gqa_pack` = G) the Q block's first and last queries are
    `q_pos / G` and `(q_pos + BLOCK_M - 1) / G`.

    Key masks (`key_mask` on the step, `#attn.key_mask`): each row sees one
    interval of keys [lo(p), end(p)) with nondecreasing ends (p = row +
    offset), so a Q block visits blocks [lo(p_first) floordiv BLOCK_N,
    ceildiv(end(p_last), BLOCK_N)) and needs no mask on [ceildiv(lo(p_last),
    BLOCK_N), end(p_first) floordiv BLOCK_N) (ends clamped to [0, Nk]): a
    masked stage for the window's left edge (only if the mask has a lower
    bound), the mask-free stage and a masked stage for the right edge and
    the Nk tail. The classification is exact and derived once per Q block
    from its first and last rows, never per element.
    Source: FlashAttention-2 (arXiv 2307.08691) section 3.1.1 (skipping
    blocks above the diagonal); the interval form generalizes it to
    sliding windows (Longformer, Mistral-7B), chunked and prefix masks.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnPrintBlockMap : Pass<"attn-print-block-map", "func::FuncOp"> {
  let summary = "Print which K/V blocks each Q block visits (test pass)";
  let description = [{
    For each `attn.attention` with static Nq and Nk that is `causal` or has
    a `key_mask`, prints the classification `attn-causal-split` derives for
    a tile of `block-m` x `block-n` (both required), as one line per Q
    block:

    ```
    q_block 3: visit [1, 4) full [2, 3)
    ```

    (blocks outside `visit` are empty, those in `full` need no mask, the
    rest are partial) and a total of visited and masked (q block, K/V
    block) pairs. The bounds are built with the pass's own IR builders and
    folded, so the lines show exactly what the kernels compute. The IR is
    left unchanged.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "0", "BLOCK_M (query rows)">,
    Option<"blockN", "block-n", "int64_t", "0", "BLOCK_N (keys)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnDistributeRows : Pass<"attn-distribute-rows", "func::FuncOp"> {
  let summary = "Give each GPU thread (a slice of) one query row";
  let description = [{
    The simple GPU mapping: the body of each CTA-level `scf.forall` produced
    by `attn-tile` moves into an inner `scf.forall` over BLOCK_M * L threads
    (`#gpu.thread<x>`). L consecutive threads (lanes) share query row
    q_pos + t / L, each holding D / L columns of Q and acc (so D = 128 keeps
    2 x 32 fp32 values per thread instead of 2 x 128); the scores' partial
    dot products are summed across the L lanes with shuffles. Every tile
    op's BLOCK_M dimension becomes 1. Loop bounds stay those of the CTA, so
    all threads of a CTA iterate the same K/V blocks.
    The outer forall is mapped to `#gpu.block<x, y, z>` = (Q block, head,
    batch). This is the correctness-first mapping; the Hopper path (TMA,
    WGMMA, warp specialization) replaces this pass.

    The split-KV combine (`attn.decode_combine`'s CTAs, whose rows are fp32
    O_s slices) takes L = min(32, D / 4) lanes by default, four columns each,
    so the one row of a decode call keeps up to a warp loading, and its
    loop over the splits is unrolled by 16 so that each thread's loads of
    16 splits are in flight together (on the H200 the combine of B1 Hq32
    D128 with 16 splits took 21 us with 4 lanes and no unrolling).
  }];
  let options = [
    Option<"lanesPerRow", "lanes-per-row", "int64_t", "0",
           "Threads per query row (0: the fewest that keep a thread's slice "
           "of D at most 32 columns, in multiples of 8; for the split-KV "
           "combine min(32, D / 4))">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// The Hopper forward CTA, in pipeline order (attn-async-pipeline runs them):
//   attn-cta-order -> attn-tma-ring -> attn-fp8-v-permute -> attn-tma-store
//   -> attn-persistent-ctas (instead of attn-cta-order)
//===----------------------------------------------------------------------===//

def AttnCtaOrder : Pass<"attn-cta-order", "func::FuncOp"> {
  let summary = "Launch the causal CTAs with the most K/V blocks first";
  let description = [{
    Rebinds the (Q block, head, batch) of a causal forward CTA loop of
    `attn-tile` / `attn-causal-split` at the top of its body, so that the
    heaviest CTAs start first. The launch runs the loop Q block fastest
    (`attn-lower-to-nvvm`), and under a causal mask Q block q of nQ sees
    q + 1 K/V blocks (square case), so launch order is lightest first:

    ```
    scf.forall (%qb, %h, %b) in (nQ, H, B) {        // before
      ... uses of %qb, %h, %b ...
    scf.forall (%qb, %h, %b) in (nQ, H, B) {        // after {attn.heaviest_first}
      // K and V of every (batch, KV head) within l2-budget bytes:
      %p = %qb + nQ * (%h + H * %b)                 // launch position
      %qb' = nQ - 1 - %p / (H B); %h' = (%p mod H B) mod H; %b' = .. / H
      // otherwise: each head's Q blocks from the last, head after head
      %qb' = nQ - 1 - %qb; %h' = %h; %b' = %b
      ... uses of %qb', %h', %b' ...
    ```

    The first order gives the block scheduler the longest tiles of the whole
    grid first (a greedy longest-first schedule); it pays where the K/V that
    the CTAs running together read stays in L2. Otherwise the CTAs running
    together share one head's K/V. A static K decides at compile time, a
    dynamic one from its sizes at run time (a select of the two orders);
    paged and varlen K/V (a cache, packed sequences) take the second order.
    Split-KV CTAs (an f32 O: their first index interleaves splits and Q
    blocks), non-causal ones, thread-mapped ones (`attn-distribute-rows`)
    and persistent ones keep launch order. The loop gets
    `attn.heaviest_first`, which `attn-persistent-ctas` refuses.
    Source: FlashAttention-3 (arXiv 2407.08608) section 3 (scheduling of
    causal tiles); FlashAttention-2 (arXiv 2307.08691) section 3.2.
  }];
  let options = [
    Option<"l2Budget", "l2-budget", "int64_t", "int64_t{40} << 20",
           "Bytes of K and V (all batches and KV heads) up to which the "
           "whole grid runs heaviest first (default 40 MiB: 80% of the 50 "
           "MiB L2 of an H100/H200); above it, head after head">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnTmaRing : Pass<"attn-tma-ring", "func::FuncOp"> {
  let summary = "Feed the K/V loop from a TMA + mbarrier ring, warp-specialized";
  let description = [{
    The Hopper form of one CTA of the FlashAttention loop nest (after
    `attn-tile`, `attn-causal-split` and optionally `attn-cta-order`;
    replaces `attn-distribute-rows`):

    ```
    // host: TMA descriptors of Q, K, V ([1, 1, rows, 64] boxes, 128B swizzle)
    %tk = nvgpu.tma.create.descriptor %k box[1, 1, BLOCK_N, 64]
    scf.forall (%qb, %h, %b) ... {
      Q [1, C, BLOCK_M, 64], K and V rings [stages, C, BLOCK_N, 64] in
      dynamic shared memory (C = ceil(D / 64) chunks of 64 columns);
      mbarriers: q (1 arrival), full[s] (1 arrival + TMA bytes),
      empty[s] (one arrival per consumer thread), initialized by thread 0
      attn.warp_specialize consumers(BLOCK_M / 64) registers(24, 240)
      producer {            // thread 0 only
        expect_tx(q, bytes of Q); TMA Q
        scf.for %kb = 0 to num_blocks {
          slot = kb mod stages; parity = (kb / stages) mod 2
          try_wait(empty[slot], parity ^ 1)   // passes on a fresh barrier
          expect_tx(full[slot], bytes of the K and V boxes)
          TMA K, V block kb -> ring[slot]
        }
      } consumer {
        m, l, acc = attn.to_wg_fragment of the initial state
        try_wait(q, 0)
        the K/V loops on !attn.wg_fragment state, each step now
          try_wait(full[slot], parity)
          attn.online_attention_mma q(Q) kv(ring[slot]) ...
          arrive(empty[slot])
        attn.epilogue ... staging(Q)
      }
    }
    ```

    The ring's stages and the schedule (`ping_pong`, `overlap`) are the
    CTA loop's `attn.config` (attn-select-config, copied there by
    attn-tile); a CTA loop without one takes the options below.

    The consumer's state is typed as warpgroup fragments
    (`!attn.wg_fragment<BLOCK_M x f32>` m and l, `<BLOCK_M x D x f32>`
    acc: the consumer warpgroups hold it in wgmma accumulator registers),
    so that attn-lower-to-wgmma converts exactly these values.

    expect_tx counts whole boxes: TMA writes every byte of a box and fills
    rows past N (and columns past D) with zeros. Paged K/V reads the block
    table before waiting for the slot and copies one box per page (or
    BLOCK_N rows of a page); varlen K/V starts at the sequence's
    key_offset. With `ping-pong` and `overlap` the `attn.warp_specialize`
    carries `ping_pong` / `overlap` for `attn-lower-to-wgmma`; `overlap`
    only with 3 or more stages (with 2 the producer could not load block
    j + 1 before block j - 1 is done).

    FP8 (f8E4M3FN, section 3.3): Q and K in 128-column chunks; V must be
    stored as V^T (unit stride along Nk) and is read through its transposed
    view into [ceil(BLOCK_N / 128), D, 128] ring tiles (whole 128-key
    rows: BLOCK_N 192 loads and leaves unused the next block's first 64
    keys); O is staged in a bf16 tile of its own. `attn-fp8-v-permute`
    then puts V^T's keys in the order the MMA needs. Per-block Q/K
    descales whose blocks are the tiles become the step's scalar
    qk_descale = q_descale[b, h, q_pos / BLOCK_M] * k_descale[b, kv_head,
    k_pos / BLOCK_N]; other blocks are refused.

    Errors (located at the attention op): BLOCK_M not 64, 128 or 192 (one
    to three consumer warpgroups); BLOCK_N not a multiple of 16 up to 256;
    three warpgroups whose S and O accumulators (BLOCK_N / 2 + D / 2) do
    not fit 128 registers beside P; a GQA group not dividing 64; tiles not
    f16, bf16 or f8E4M3FN; FP8 markers (descales) that disagree with the
    tile type; FP8 with V not stored as V^T, BLOCK_N not a multiple of 32
    or D not a multiple of 16; a paged page_size that neither divides
    BLOCK_N (as a multiple of 8) nor is a multiple of it; Q and two stages
    over 227 KiB of shared memory; register budgets over the SM's 65536;
    a nest not of attn-tile's form, or one already mapped to threads.
    Options are checked before the pass runs (no location).
    Source: FlashAttention-3 (arXiv 2407.08608) sections 3.1-3.3; the
    TMA/mbarrier ring of mlir/test/Examples/NVGPU/Ch5.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "0",
           "K/V ring stages (0: up to 4 for D <= 64, else 3; fewer if "
           "shared memory is short)">,
    Option<"producerRegisters", "producer-registers", "int64_t", "0",
           "Registers per producer thread (setmaxnreg.dec; 0: 24, or for "
           "FP8 and paged K/V what the consumers leave, up to 40)">,
    Option<"consumerRegisters", "consumer-registers", "int64_t", "0",
           "Registers per consumer thread (setmaxnreg.inc; 0: 240 for one "
           "or two consumer warpgroups, 160 for three)">,
    Option<"pingPong", "ping-pong", "bool", "false",
           "The consumer warpgroups (two or three) take turns issuing "
           "their GEMMs "
           "(FlashAttention-3 section 3.1)">,
    Option<"overlap", "overlap", "bool", "false",
           "Mark the consumers for intra-warpgroup overlap of softmax and "
           "GEMMs (FlashAttention-3 section 3.2) when the ring has at least "
           "3 stages (a block holds its slot one iteration longer)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnFP8VPermute : Pass<"attn-fp8-v-permute", "func::FuncOp"> {
  let summary = "Permute FP8 V^T ring tiles into the key order of P's registers";
  let description = [{
    For each FP8 ring of `attn-tma-ring` (f8E4M3FN tiles): the FP8 MMA
    takes P from registers as its A operand, and an e4m3 A register holds
    four consecutive k positions, but the S accumulator gives a thread keys
    2q, 2q + 1, 8 + 2q, 9 + 2q of each 16. Rather than shuffle P, producer
    warps 1-3 (96 threads) permute V^T's keys inside every 16-byte unit
    (16 keys; the 128-byte swizzle moves whole units) into the same order,
    0, 1, 8, 9, 2, 3, 10, 11, ..., with `prmt` on four 32-bit words:

    ```
    mbarriers: + loaded[s] (1 arrival + TMA bytes); full[s] now counts 96
    producer {
      scf.if thread 0 { ... expect_tx(loaded[slot]); TMA K, V^T -> ring[slot] }
      scf.if thread >= 32 {
        scf.for %kb { try_wait(loaded[slot], parity)
          scf.for %unit = tid - 32 to bytes / 16 step 96 {
            4 x i32 -> 4 x nvvm.prmt (0x5410 / 0x7632) -> 4 x i32 }
          fence.proxy.async.shared::cta; arrive(full[slot]) } }
    }
    ```

    The consumers' waits on `full` are unchanged. The warp_specialize gets
    `attn.v_permuted`; a ring that has it, and non-FP8 rings, are left
    alone. Errors: a ring not of `attn-tma-ring`'s form.
    Source: FlashAttention-3 (arXiv 2407.08608) section 3.3 (in-kernel
    transpose and register permutation for FP8).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnTmaStore : Pass<"attn-tma-store", "func::FuncOp"> {
  let summary = "Write O from the staging tile with TMA bulk tensor stores";
  let description = [{
    Gives each `attn.epilogue` that stages O in shared memory (the
    `staging` tile of `attn-tma-ring`) the TMA descriptor of O, built on
    the host before the CTA loop: [1, 1, 64, 64] boxes (one consumer
    warpgroup's rows, 128-byte swizzle; with GQA packing its [B, N, H, D]
    view in [1, 64 / G, G, 64] boxes). `attn-lower-to-wgmma` then writes O
    with TMA bulk tensor stores, which clip rows past Nq and columns past
    D, instead of 16-byte st.global (FlashAttention-3's epilogue).

    ```
    %to = nvgpu.tma.create.descriptor %o box[1, 1, 64, 64]
    scf.forall ... { ... attn.epilogue ... staging(%tile) o_map(%to) }
    ```

    Split-KV's fp32 workspace (stored from the registers) and epilogues
    that already have a descriptor are left alone. Errors: an epilogue
    without a staging tile (run `attn-tma-ring` first); an O defined inside
    the CTA loop (a varlen CTA's rows of O: its descriptor cannot be built
    on the host). Source: FlashAttention-3 (arXiv 2407.08608) section 3.1.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect"];
}

def AttnPersistentCtas : Pass<"attn-persistent-ctas", "func::FuncOp"> {
  let summary = "Run a ring CTA loop as a fixed grid of CTAs looping over tiles";
  let description = [{
    Turns each forward CTA of `attn-tma-ring` into a persistent CTA: the
    launch has `ctas` CTAs (one per SM), and each role of the
    warp_specialize loops over the (Q block, head, batch) tiles it is dealt:

    ```
    tiles = nQ * H * B
    producer / consumer {
      scf.for %round = 0 to dealtRounds(tiles, blockIdx.x, gridDim.x)
          iter_args(%before = 0) {
        %t = dealtTile(%round, blockIdx.x, gridDim.x)
        (%qb, %h, %b) = decodeTile(%t)   // the body's per-tile values, again
        ... ring position kb - first + %before; Q barrier phase %round mod 2
        yield %before + num_blocks
      }
    }
    ```

    Tiles are dealt back and forth in rounds of gridDim.x (round r gives
    CTA c tile r * ctas + c for even r, r * ctas + ctas - 1 - c for odd r),
    so that with tiles numbered heaviest first (causal: Q block slowest and
    descending) each CTA's sum of tile costs evens out. A `qEmpty` barrier
    (one arrival per consumer thread, after a proxy fence) lets the
    producer load the next tile's Q once the consumers are done with Q and,
    where O is staged in Q's tile, with the staged O; FP8 stages O in a
    buffer of its own, so its next Q loads while the epilogue runs. The
    ring's positions and both barriers' phases carry over from tile to
    tile. The CTA loop gets `attn.persistent_ctas = ctas`, from which
    `attn-lower-to-nvvm` launches `ctas` CTAs.

    Errors: split-KV tiles (an f32 O); a CTA loop already ordered by
    `attn-cta-order`; per-tile values of the CTA body with side effects
    (they are re-created per tile); a ring not of `attn-tma-ring`'s form.
    Source: FlashAttention-3 (arXiv 2407.08608) section 3.1 (persistent
    kernels, intra-CTA overlap of one tile's epilogue with the next
    tile's loads).
  }];
  let options = [
    Option<"ctas", "ctas", "int64_t", "132",
           "Persistent CTAs (one per SM: 132 on an H100/H200 SXM), in "
           "[1, 2^31 - 1]">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AttnGradAsyncPipeline
    : Pass<"attn-grad-async-pipeline", "func::FuncOp"> {
  let summary = "The backward on Hopper: K/V resident, Q/dO through a TMA ring, dQ by atomics";
  let description = [{
    The tensor-core form of `attn.attention_grad` (the GPU counterpart of
    `attn-tile-grad` + `attn-causal-split-grad`; static shapes, D = 64 or
    128, f16/bf16, unit stride along D). Four grids, in order, around fp32
    scratch buffers (`memref.alloc`, freed after the last):

    ```
    // (a) preprocess, one thread per query row:
    //     Delta = rowsum(dO * O), LSE_log2 = LSE * log2(e) (+inf for -inf)
    // (b) dQ_acc = 0: fp32 tiles [B, Hq, ceil(Nq / 64), 2, 64, D / 2]
    // (c) dK/dV: CTA (KV head, K/V block of 128 keys, batch), 3 warpgroups,
    //     in bands of KV heads filling about a wave (KV head in band fastest)
    scf.forall (%h, %kb, %band_b) in (band, ceil(Nk / 128), Hkv / band * B) {
      K, V [C, 128, 64] resident; ring of `stages` Q, dO [C, 64, 64]
      attn.warp_specialize consumers(2) registers(24, 240) producer {
        TMA: K, V once; then Q, dO of each (query head of the group,
        Q block from the causal begin) into the ring
      } consumer {
        dK, dV = attn.to_wg_fragment 0 : !attn.wg_fragment<128 x D x f32>
        for each query head of the group, for each Q block:
          attn.grad_dkdv_mma (causal on the diagonal blocks, none below)
        attn.store_tile dK, dV
      }
    }
    // (d) dQ = dQ_acc, one thread per column
    ```

    BLOCK_M = 64 query rows per Q block, BLOCK_N = 128 keys per CTA
    (64 per consumer warpgroup). dK and dV are the consumer warpgroups'
    fragments (`!attn.wg_fragment<BLOCK_N x D x f32>`: warpgroup w holds
    keys [64 w, 64 w + 64) in the wgmma accumulator layout, PTX ISA
    "Register fragments and shared memory matrix layouts"), from the zero
    splat converted at the start of the consumer region to the stores;
    attn-lower-to-wgmma converts that type. Each K/V block adds its dS K into dQ_acc
    (FlashAttention-2 Algorithm 2 line 21) by bulk reductions from shared
    memory (FlashAttention-3): not bitwise reproducible run to run (the
    host path's `attn-tile-grad` is).
    Errors: dynamic shapes; D other than 64 or 128; f8/f32 inputs; more
    stages than shared memory holds (2 at D = 128, 4 at D = 64).
    Source: FlashAttention-2 (arXiv 2307.08691) Algorithm 2;
    FlashAttention-3 (arXiv 2407.08608) appendix B.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "2",
           "Q/dO ring stages (2 to 4, as shared memory allows)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnOnlineSoftmax : Pass<"attn-online-softmax", "func::FuncOp"> {
  let summary = "Decompose tile ops into the exp2-domain online softmax";
  let description = [{
    Rewrites `attn.load_tile`, `attn.online_attention` and `attn.epilogue`
    into vector/arith/math IR. Per K/V block of BLOCK_N keys, with
    c = scale * log2(e) folded into the Q tile once:

    ```
    S_j    = rowsum(Q * K[j])                    j = 0 .. BLOCK_N-1
    S_j    = mask_j ? S_j : -inf
    m_new  = max(m, S_0, .., S_{BLOCK_N-1})
    m_safe = m_new == -inf ? 0 : m_new           // fully masked rows: no NaN
    alpha  = exp2(m - m_safe)
    P_j    = exp2(S_j - m_safe)
    l      = alpha * l + sum_j P_j
    acc    = alpha * acc + sum_j P_j (x) V[j]    // outer products
    ```

    Epilogue: `O = acc / l` (0 where l == 0), `LSE = (m + log2 l) * ln 2`
    (-inf where l == 0). K/V rows past Nk are never read (row index clamped
    and the score masked); Q rows past Nq read as 0 and are never stored.

    Split-KV and GQA packing: `attn.combine_step` folds a split's
    (O_s, LSE_s) into the same state (x = LSE_s * log2(e); m_new =
    max(m, x); alpha = exp2(m - m_safe), w = exp2(x - m_safe); l = alpha * l
    + w; acc = alpha * acc + w * O_s) and `attn.load_rows` reads LSE_s;
    packed tiles (`gqa_pack` = G) are read and stored row by row at their
    (head, query), and their causal mask uses the query (q_pos + t) / G.

    FP8 tiles: c is multiplied by the tile's `q_descale * k_descale` (the
    descaling folded into the exp2 argument, FlashAttention-3 section 3.3)
    and O by `v_descale`; P stays fp32 (the GPU's quantization of P to e4m3
    is not emulated). Per-block descales: the Q tile's rows are multiplied
    by `row_descale` with c, and S_j by `key_descale[j]`; a per-channel
    `channel_descale` multiplies O's columns.
    Source: Milakov & Gimelshein 2018; FlashAttention-2 section 3.1 (exp2
    with the scale folded in: FlashAttention-3 section 3.3).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// Backward (attn.attention_grad)
//===----------------------------------------------------------------------===//

def AttnTileGrad : Pass<"attn-tile-grad", "func::FuncOp"> {
  let summary = "Tile attn.attention_grad into the FlashAttention-2 backward";
  let description = [{
    Rewrites each `attn.attention_grad` into three CTA grids, run in order
    over an fp32 [B, Hq, Nq] scratch buffer `Delta` (`memref.alloc`, freed
    after the last):

    ```
    // (a) preprocess: Delta = rowsum(dO * O), fp32
    scf.forall (%qb, %h, %b) in (ceil(Nq / BLOCK_M), Hq, B) {
      %delta = attn.grad_delta (load_tile O), (load_tile dO)
      attn.store_rows %delta, Delta[%b, %h, %qb * BLOCK_M]
    }
    // (b) dK, dV: the K/V block stays resident, the Q blocks are walked
    scf.forall (%kb, %hkv, %b) in (ceil(Nk / BLOCK_N), Hkv, B) {
      K, V tiles [BLOCK_N, D] at %kb * BLOCK_N
      %dK, %dV = scf.for %g = 0 to Hq / Hkv iter_args(0, 0) {  // GQA group
        scf.for %qb = 0 to ceil(Nq / BLOCK_M) iter_args(...) {
          Q, dO tiles and LSE, Delta rows of head %hkv * (Hq / Hkv) + %g
          attn.grad_dkdv ... mask(none | causal)
        }
      }
      attn.store_tile %dK, dK[...]; attn.store_tile %dV, dV[...]
    }
    // (c) dQ: the Q block stays resident, the K/V blocks are walked
    scf.forall (%qb, %h, %b) in (ceil(Nq / BLOCK_M), Hq, B) {
      %dQ = scf.for %kb = 0 to ceil(Nk / BLOCK_N) iter_args(0) {
        attn.grad_dq ... mask(none | bounds | causal)
      }
      attn.store_tile %dQ, dQ[...]
    }
    ```

    dK and dV of a KV head sum its group's query heads inside one CTA and
    dQ is a separate grid: no atomics, bitwise reproducible. The grids are
    mapped to `#gpu.block<x, y, z>` as attn-tile's. Causal blocks carry the
    causal mask; `attn-causal-split-grad` splits the loops. Errors: dynamic
    head dim D; block sizes out of range.
    Source: FlashAttention-2 (arXiv 2307.08691) Algorithm 2 with a separate
    dQ pass (preprocess Delta, a dK/dV nest, a dQ nest).
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "64",
           "Query rows per Q block (BLOCK_M)">,
    Option<"blockN", "block-n", "int64_t", "64",
           "Keys per K/V block (BLOCK_N)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnCausalSplitGrad : Pass<"attn-causal-split-grad", "func::FuncOp"> {
  let summary = "Split the backward's block loops into mask-free and masked blocks";
  let description = [{
    The backward's `attn-causal-split`, on the loops of `attn-tile-grad`
    whose step is masked:

    * dQ nest (`attn.grad_dq`, a Q block walking K/V blocks): as the
      forward, `[0, num_full)` mask-free (`{attn.stage = "full"}`),
      `[num_full, num_end)` masked (`{attn.stage = "masked"}`), blocks
      past `num_end` skipped; same formulas as `attn-causal-split`.
    * dK/dV nest (`attn.grad_dkdv`, a K/V block at k_pos walking Q blocks,
      causal only): with offset = Nk - Nq, rows from `k_pos - offset` on
      see the block's first key and rows from `k_pos + BLOCK_N - 1 -
      offset` on see all of them, so
      `q_begin = clamp(k_pos - offset, 0, R) floordiv BLOCK_M` and
      `q_full = ceildiv(clamp(k_pos + BLOCK_N - 1 - offset, 0, R), BLOCK_M)`
      (R = ceil(Nq / BLOCK_M) * BLOCK_M): Q blocks before `q_begin` are
      skipped (above the diagonal), `[q_begin, q_full)` stay masked (the
      diagonal, `{attn.stage = "masked"}`, run first) and
      `[q_full, ceil(Nq / BLOCK_M))` run without a mask
      (`{attn.stage = "full"}`).

    Nq and Nk tails need no mask in the dK/dV nest (rows past Nq load as
    zero; rows of dK, dV past Nk are not stored). Loops already unmasked or
    split are left alone. Source: FlashAttention-2 section 3.1.1 (blocks
    above the diagonal skipped) applied to both backward loop nests.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnDecomposeGrad : Pass<"attn-decompose-grad", "func::FuncOp"> {
  let summary = "Decompose the backward tile ops (P recomputed in the exp2 domain)";
  let description = [{
    Rewrites `attn.load_tile`, `attn.load_rows`, `attn.store_rows`,
    `attn.store_tile`, `attn.grad_delta`, `attn.grad_dkdv` and `attn.grad_dq`
    into vector/arith/math IR (the pattern set is
    `populateDecomposeGradPatterns`). Per key j of a block (unrolled), with
    c = scale * log2(e) folded into the Q tile once and the rows of LSE
    taken to the log2 domain (`LSE2 = LSE * log2(e)`, +inf where LSE = -inf,
    so rows without keys give P = 0):

    ```
    S_j  = rowsum(Q * K[j]) * c                 // vector<BLOCK_M>
    P_j  = mask_j ? exp2(S_j - LSE2) : 0
    dP_j = rowsum(dO * V[j])
    dS_j = P_j * (dP_j - Delta)
    dK/dV step:  dV[j] += sum_i P_j[i] dO[i]   dK[j] += sum_i dS_j[i] Q[i] * scale
    dQ step:     dQ += (dS_j * scale) (x) K[j]  // outer product
    ```

    `attn.grad_delta` is `rowsum(O * dO)` in fp32; `attn.store_tile` rounds
    to the gradient's element type. Q/dO rows past Nq read as zero (and so
    do their LSE and Delta): their P V and dS terms vanish. K/V rows past Nk
    are never read by `attn.grad_dq` (row index clamped, P = 0).
    Source: FlashAttention-2 Algorithm 2, in the exp2 domain of its
    forward (section 3.1).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES_TD

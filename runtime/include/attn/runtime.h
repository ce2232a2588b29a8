/*===- attn/runtime.h - load attn kernel bundles and launch them -*- C -*-===*
 *
 * The attn runtime loads a kernel bundle written by `attn-compile` (a
 * directory with manifest.json and one cubin per kernel, docs/bundle.md),
 * validates each call, picks the most specialized kernel that matches it and
 * launches that kernel on the caller's CUDA stream. It depends on nothing but
 * the CUDA driver (libcuda.so.1, opened on first launch): no MLIR, no Python.
 *
 * Semantics are those of `attn.attention` (docs/ir.md):
 *   O = softmax(Q K^T * scale [+ causal mask]) V, accumulated in fp32;
 *   LSE[b, h, i] = natural log of row i's softmax denominator (scale included);
 *   causal is bottom-right aligned (query i sees key j iff j <= i + Nk - Nq);
 *   a row that sees no key gives O = 0 and LSE = -inf;
 *   GQA: query head h reads K/V head h / (Hq / Hkv).
 *
 * Every function reports failure through its status and never aborts the
 * process; attn_last_error() then holds a readable message for the calling
 * thread. All functions are safe to call from several host threads at once
 * on the same bundle, except attn_bundle_destroy. (Running out of host
 * memory inside the runtime is reported as ATTN_ERROR_BUNDLE_CORRUPT by
 * attn_bundle_load, ATTN_ERROR_INVALID_ARGUMENT by attn_fwd_select and
 * ATTN_ERROR_CUDA by attn_fwd, with the message "out of host memory".)
 *===----------------------------------------------------------------------===*/
#ifndef ATTN_RUNTIME_H
#define ATTN_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ATTN_API __attribute__((visibility("default")))
#else
#define ATTN_API
#endif

/* The same declaration as cuda.h's; the header does not need cuda.h. */
typedef struct CUstream_st *CUstream;

typedef enum attn_status {
  ATTN_SUCCESS = 0,
  /* A tensor or scalar argument breaks the contract: null pointer, dtype,
   * rank, disagreeing sizes, stride, alignment, a pointer that is not device
   * memory of the current context's device. */
  ATTN_ERROR_INVALID_ARGUMENT = 1,
  /* The call is valid but no kernel in the bundle was compiled for it. */
  ATTN_ERROR_NO_MATCHING_KERNEL = 2,
  /* The bundle directory, its manifest.json or a cubin it names is missing. */
  ATTN_ERROR_BUNDLE_NOT_FOUND = 3,
  /* manifest.json is not valid JSON, does not follow the schema, or names a
   * file that is not a cubin. */
  ATTN_ERROR_BUNDLE_CORRUPT = 4,
  /* The CUDA driver is unavailable or a driver call failed; the message
   * carries the driver's error name and string. */
  ATTN_ERROR_CUDA = 5
} attn_status;

typedef enum attn_dtype {
  ATTN_DTYPE_F16 = 0,
  ATTN_DTYPE_BF16 = 1,
  ATTN_DTYPE_F32 = 2,
  /* float8 e4m3fn (1 byte: 4 exponent bits, 3 mantissa bits, no infinity,
   * largest finite 448): FP8 Q, K and V. */
  ATTN_DTYPE_E4M3 = 3,
  /* int32: a paged call's block table and cache sequence lengths. */
  ATTN_DTYPE_I32 = 4
} attn_dtype;

/* What a forward call asks of the kernel beyond exact attention
 * (attn_fwd_args::quantize). */
typedef enum attn_quantize {
  /* The kernel computes in the inputs' dtype: never a quantized kernel. */
  ATTN_QUANTIZE_NONE = 0,
  /* bf16 q, k, v quantized to e4m3 inside the call, then FP8 attention,
   * bf16 O (see attn_fwd_args). */
  ATTN_QUANTIZE_FP8 = 1
} attn_quantize;

/* A strided view of device memory. Sizes and strides count elements;
 * element [i0, i1, i2, i3] is at data + sum(i_k * strides[k]). */
typedef struct attn_tensor {
  void *data;
  attn_dtype dtype;
  int32_t rank;
  int64_t sizes[4];
  int64_t strides[4];
} attn_tensor;

/* Arguments of one forward call.
 *   q   [B, Hq,  Nq, D]  f16 or bf16
 *   k,v [B, Hkv, Nk, D]  same dtype as q, Hq % Hkv == 0
 *   o   [B, Hq,  Nq, D]  same dtype as q (written)
 *   lse [B, Hq,  Nq]     f32 (written); zero-initialized: not requested
 * Q, K, V and O need unit stride on D, 16-byte aligned data pointers and
 * strides that are multiples of 8 elements (16 bytes; the stride of a
 * dimension of size 1 is never used and may be anything). LSE may have any
 * strides. A tensor with no element may have a null data pointer. D is a
 * multiple of 8 in [8, 256]. causal != 0 selects the causal mask.
 * softmax_scale == 0 selects the default 1/sqrt(D); otherwise it must be
 * positive and finite.
 *
 * Optional tensors (lse, the descales, block_table, cache_seqlens,
 * cu_seqlens_q/k) are absent exactly when zero-initialized: rank 0 and data
 * NULL. Any other value is a tensor given and is checked as such: a rank-3
 * lse with NULL data over elements is ATTN_ERROR_INVALID_ARGUMENT ("lse:
 * data pointer is null"), never "no LSE". A required tensor left
 * zero-initialized is refused as "<name> is required".
 *
 * Outputs (o, lse) give each element an address of its own: sorted by
 * stride, every dimension of size > 1 strides past all the elements that
 * the dimensions of smaller stride reach (so O's stride over Nq cannot be
 * 0, nor 8 with D = 128; a dimension of size 1 may have any stride). They
 * share no byte with another operand. Inputs may repeat elements (a K
 * broadcast over heads with stride 0).
 *
 * The descales are for FP8 calls only: a non-FP8 call leaves all three
 * zero-initialized (rank 0 and data NULL; anything else is
 * ATTN_ERROR_INVALID_ARGUMENT), so callers written before FP8 that
 * zero-initialize the struct keep working.
 *
 * FP8 (q.dtype == ATTN_DTYPE_E4M3), as in FlashAttention-3:
 *   q   [B, Hq,  Nq, D]  e4m3, unit stride on D
 *   k   [B, Hkv, Nk, D]  e4m3, unit stride on D
 *   v   [B, Hkv, Nk, D]  e4m3 stored as V^T: unit stride on Nk (dim 2),
 *                        i.e. a [B, Hkv, D, Nk] buffer viewed transposed
 *   o   [B, Hq,  Nq, D]  bf16 (written)
 *   lse [B, Hq,  Nq]     f32 (written), optional as above
 *   q_descale, k_descale, v_descale [B, Hkv] f32, any strides: the factors
 *     that undo the quantization of each (batch, KV head), e.g.
 *     q_descale = amax(Q of the group) / 448. Q of query head h uses the
 *     factor of KV head h / (Hq / Hkv). S = (Q K^T) * q_descale * k_descale
 *     * scale; O = (P V) * v_descale.
 * Strides other than the unit one are multiples of 16 elements (16 bytes;
 * for V^T storage that means the D stride, i.e. Nk padded to a multiple
 * of 16 in memory); data pointers 16-byte aligned (descales 4-byte); D a
 * multiple of 16 in [16, 256]. Descales must be finite and > 0: attn_fwd
 * checks their values unless attn_bundle_set_check_values turned that
 * off.
 *
 * Paged K/V (block_table given: data or rank non-zero), as
 * FlashAttention-2's flash_attn_with_kvcache(block_table=...,
 * cache_seqlens=...):
 *   q   [B, Hq, Nq, D]                    f16 or bf16
 *   k,v [num_pages, page_size, Hkv, D]    the caches, q's dtype, same sizes
 *   o   [B, Hq, Nq, D], lse [B, Hq, Nq]   as above
 *   block_table   [B, max_pages]  i32, any strides, 4-byte aligned
 *   cache_seqlens [B]             i32, any strides, 4-byte aligned
 * Sequence b has Nk_b = cache_seqlens[b] keys; key j of it is row
 * j % page_size of page block_table[b, j / page_size]. Causal is
 * bottom-right per sequence (query i sees key j iff j <= i + Nk_b - Nq); a
 * row that sees no key (e.g. Nk_b == 0) gives O = 0 and LSE = -inf. The
 * caches follow the k/v rules above (unit stride on D, other strides
 * multiples of 16 bytes, 16-byte aligned); page_size >= 1; Hq % Hkv == 0.
 * The caller's contract: 0 <= cache_seqlens[b] <= max_pages * page_size,
 * and block_table[b, j] in [0, num_pages) for j < ceil(Nk_b / page_size)
 * (later entries are never read). attn_fwd checks both unless
 * attn_bundle_set_check_values turned that off. cache_seqlens without
 * block_table, or the reverse, is ATTN_ERROR_INVALID_ARGUMENT, and so is
 * an FP8 paged call. For dispatch the call's Nk is its capacity max_pages
 * * page_size, and a kernel matches only calls of its page size (a
 * contiguous kernel no paged call, a paged kernel no contiguous one).
 *
 * Varlen paged K/V (cu_seqlens_q and block_table given), as
 * FlashAttention-2's flash_attn_varlen_func(q, k_cache, v_cache,
 * cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, block_table=...):
 *   q, o [total_q, Hq, D], lse [Hq, total_q], cu_seqlens_q/k [B + 1],
 *     max_seqlen_q/k                       as in the varlen form below
 *   k,v [num_pages, page_size, Hkv, D]    the caches, as in the paged form
 *   block_table   [B, max_pages]  i32, any strides, 4-byte aligned, with
 *                                 B = size(cu_seqlens_q, 0) - 1
 *   cache_seqlens                 not given (zero-initialized)
 * Sequence b has Nk_b = cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys; key j
 * of it is row j % page_size of page block_table[b, j / page_size]. The
 * caller's contract: cu_seqlens_k[0] = 0, non-decreasing, Nk_b <=
 * max_seqlen_k and Nk_b <= max_pages * page_size (there is no total_k:
 * the keys live in pages), and block_table[b, j] in [0, num_pages) for j <
 * ceil(Nk_b / page_size). A varlen paged kernel matches only varlen calls
 * of its page size; for dispatch (and the split count) the call's Nk is
 * max_seqlen_k, as for any varlen call. */
typedef struct attn_fwd_args {
  attn_tensor q, k, v, o, lse;
  int32_t causal;
  float softmax_scale;
  /* Appended for FP8: code compiled against an attn/runtime.h without them
   * passes a shorter struct and must be rebuilt. */
  attn_tensor q_descale, k_descale, v_descale;
  /* Appended for paged K/V (see attn_fwd_args' paged form): zero-initialized
   * for a call on contiguous K/V. */
  attn_tensor block_table, cache_seqlens;
  /* Appended for variable-length batches (FlashAttention-2's varlen layout,
   * docs/bundle.md "Varlen calls"): cu_seqlens_q given (data or rank) makes
   * the call varlen: q, o [total_q, Hq, D], k, v [total_k, Hkv, D] (or,
   * with block_table given, the paged caches of the varlen paged form
   * above; cache_seqlens is never given), lse [Hq, total_q], cu_seqlens_q /
   * cu_seqlens_k i32 [B + 1], max_seqlen_q / max_seqlen_k >= every
   * sequence's length. Zero-initialized for a batched call. */
  attn_tensor cu_seqlens_q, cu_seqlens_k;
  int64_t max_seqlen_q, max_seqlen_k;
  /* Appended for quantized FP8: ATTN_QUANTIZE_NONE (0, what a
   * zero-initialized struct says) selects only kernels that compute in the
   * inputs' dtype, so a bundle that also holds quantized kernels never
   * gives such a call one. ATTN_QUANTIZE_FP8 selects only quantized kernels
   * (attn-compile --quantize-fp8, a spec's "quantize_fp8"; their key shows
   * quantize_fp8(<options>)): a batched bf16 call (q, k, v, o, lse as
   * above, no descales, no block_table, no cu_seqlens) whose kernel first
   * quantizes Q, K and V to e4m3 copies with fp32 descales in workspace
   * buffers it allocates and frees on the call's stream (the bundle's
   * workspace pool, see attn_fwd),
   * then runs the FP8 attention and writes a bf16 O (and LSE). Quantization
   * costs accuracy: expect |O - exact| / |exact| of a few 1e-2 on
   * Gaussian inputs (docs/validation.md). Other values are
   * ATTN_ERROR_INVALID_ARGUMENT, and so is ATTN_QUANTIZE_FP8 on f16 or
   * e4m3 inputs. */
  int32_t quantize;
} attn_fwd_args;

typedef struct attn_bundle attn_bundle;

/* Reads <dir>/manifest.json, the cubins it names and <dir>/tuning.json if
 * it exists. Does not touch the GPU: kernels are loaded into the driver on
 * their first launch. On failure *out is set to null. Each file must be a
 * regular file (or a symlink to one) of at most its kind's size
 * (manifest.json 16 MiB, a cubin 256 MiB, tuning.json 4 MiB): anything else
 * (a FIFO, a device, a directory) is ATTN_ERROR_BUNDLE_CORRUPT naming the
 * file, without blocking on it or reading it.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT (null dir or out),
 *         ATTN_ERROR_BUNDLE_NOT_FOUND, ATTN_ERROR_BUNDLE_CORRUPT. */
ATTN_API attn_status attn_bundle_load(const char *dir, attn_bundle **out);

/* Unloads the bundle's modules, destroys its workspace pools (their memory
 * goes back to the device once queued frees complete) and frees it. Null,
 * or a bundle already destroyed, is a no-op. Launches already queued on
 * streams must have finished. Every other function refuses a pointer that
 * is not a bundle attn_bundle_load returned and this has not destroyed
 * (ATTN_ERROR_INVALID_ARGUMENT; 0 and null for the two queries below), so a
 * stale handle is reported rather than read after it was freed. */
ATTN_API void attn_bundle_destroy(attn_bundle *bundle);

/* Number of kernels in the bundle (0 for null or a destroyed bundle). */
ATTN_API int64_t attn_bundle_num_kernels(const attn_bundle *bundle);

/* A one-line description of kernel `index` (symbol, specialization key,
 * registers, shared memory), or null when out of range. The string lives as
 * long as the bundle. */
ATTN_API const char *attn_bundle_kernel_info(const attn_bundle *bundle,
                                             int64_t index);

/* What a kernel computes (attn_kernel_key::kind). */
typedef enum attn_kernel_kind {
  /* The forward: attn_fwd and attn_tune launch it. */
  ATTN_KERNEL_FWD = 0,
  /* The backward (dQ, dK, dV from Q, K, V, O, dO and LSE): attn_bwd. */
  ATTN_KERNEL_BWD = 1
} attn_kernel_kind;

/* The specialization key of one kernel, as data (manifest.json's "key",
 * docs/bundle.md): the calls it takes. A length of -1 is dynamic (read from
 * the call); a varlen kernel's batch, seqlen_q and seqlen_k are always -1.
 * The strings live as long as the bundle. */
typedef struct attn_kernel_key {
  attn_kernel_kind kind;
  /* The dtype of Q, K and V: F16, BF16, or E4M3 (FP8, bf16 O, descales). */
  attn_dtype dtype;
  /* ATTN_QUANTIZE_FP8: a quantized kernel (bf16 operands quantized to e4m3
   * inside the call); it takes only calls that ask for it. */
  attn_quantize quantize;
  int32_t causal;       /* bottom-right aligned causal mask */
  int32_t has_lse;      /* writes (a backward: reads) LSE */
  int32_t strided;      /* 0: contiguous row-major tensors only */
  int32_t varlen;       /* a variable-length batch (cu_seqlens) */
  int32_t tensor_cores; /* 1: the Hopper wgmma path; 0: CUDA cores (fma) */
  int64_t head_dim;     /* D */
  /* The lengths the kernel was compiled for; -1: dynamic. */
  int64_t batch, num_heads_q, num_heads_kv, seqlen_q, seqlen_k;
  int64_t page_size;        /* tokens per K/V page; 0: contiguous K/V */
  int64_t splits;           /* K/V splits (split-KV); 1: unsplit */
  int64_t block_m, block_n; /* the tile: query rows, keys */
  double scale;             /* the softmax scale compiled in */
  const char *name;         /* the kernel's symbol */
  /* The attn-to-cubin options beyond the bundle's ("block-n=128"): kernels
   * with equal keys are variants of one kernel (see Tuning); "" for the
   * compiler's defaults. */
  const char *variant;
  /* A quantized kernel's attn-quantize-fp8 options; "" otherwise. */
  const char *quantize_options;
} attn_kernel_key;

/* Fills *key with the specialization key of kernel `index`, so a caller
 * (attn-run, a framework's dispatcher) can build calls for each kernel
 * without reading manifest.json.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT for a null or destroyed bundle, an
 * index outside [0, attn_bundle_num_kernels) or a null key. */
ATTN_API attn_status attn_bundle_kernel_key(const attn_bundle *bundle,
                                            int64_t index,
                                            attn_kernel_key *key);

/* Validates `args` on the host (everything but the device checks: it cannot
 * read an FP8 call's descale values or a paged call's block table and
 * lengths, which live in device memory) and returns in *kernel_index the
 * kernel attn_fwd would launch. A kernel matches when its dtype, D, causal
 * flag, LSE presence, page size (0: contiguous K/V), varlen-ness,
 * quantized-ness (a quantized kernel matches only calls with quantize =
 * ATTN_QUANTIZE_FP8, and such calls only quantized kernels) and scale
 * (within 1e-6 relative) equal the call's (a varlen call's B is
 * size(cu_seqlens_q, 0) - 1, its Nq and Nk max_seqlen_q and max_seqlen_k,
 * paged or not; a batched paged call's Nk is its capacity max_pages *
 * page_size), each of its static lengths (B, Hq, Hkv,
 * Nq, Nk) equals the call's, and its layout is "strided" or the call's
 * tensors are all contiguous row-major. The kernel with the most static
 * lengths wins (an exact static shape first), then a "contiguous" one, then
 * a tensor-core ("wgmma") one over an "fma" one, then among the kernels
 * still tied (variants of one kernel) the tuned choice for the call's shape,
 * else for split-count variants the count FlashAttention-2's heuristic
 * picks for the SMs of the current context's device (docs/bundle.md), else
 * the first in the manifest. Without a current CUDA context there is no SM
 * count: the split heuristic is skipped, so the index can differ from
 * attn_fwd's on a GPU.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT, ATTN_ERROR_NO_MATCHING_KERNEL (its
 * message gives the call's key, the bundle's kernels and the closest one
 * with the fields it differs in: "closest: kernel 'k' differs in: head_dim
 * (call 96, kernel 128), causal (call true, kernel false)"). */
ATTN_API attn_status attn_fwd_select(const attn_bundle *bundle,
                                     const attn_fwd_args *args,
                                     int64_t *kernel_index);

/* Validates `args` (as attn_fwd_select, plus: a current CUDA context, every
 * pointer is device memory of that context's device, and with value checks
 * on (the default) for an FP8 call every descale finite and > 0, for a
 * paged call the lengths and the block-table entries they use in range,
 * for a varlen call cu_seqlens_q/k starting at 0, non-decreasing, within
 * total_q/total_k, each length <= max_seqlen_q/max_seqlen_k, for a varlen
 * paged call also each key count within max_pages * page_size and the
 * block-table entries it uses in range (no total_k):
 * read with cuMemcpyDtoHAsync on `stream` and a cuStreamSynchronize of
 * it), then enqueues the forward kernel on `stream` (0: the legacy default
 * stream). Returns once the launch is queued. A split-KV kernel
 * (docs/bundle.md; batched, paged or varlen) is two launches in order on
 * `stream` with an fp32 workspace that attn_fwd allocates and frees there.
 * Workspace comes from a stream-ordered memory pool that the bundle owns
 * per device (cuMemAllocFromPoolAsync / cuMemFreeAsync; the default pool
 * where the driver lacks pools): it keeps its memory across
 * synchronizations, so the largest workspace in flight stays reserved on
 * the device until attn_bundle_destroy. A valid call with Nq == 0 or B*Hq ==
 * 0 (varlen: max_seqlen_q == 0 or B == 0) has nothing
 * to compute: it succeeds without a matching kernel, a GPU or a launch.
 * Errors: every error of attn_fwd_select, and ATTN_ERROR_CUDA. */
ATTN_API attn_status attn_fwd(attn_bundle *bundle, const attn_fwd_args *args,
                              CUstream stream);

/* Arguments of one backward call: the gradients of attn_fwd's O with
 * respect to Q, K and V, given the output gradient dO (FlashAttention-2's
 * backward; attn.attention_grad, docs/ir.md).
 *   q, o, dout [B, Hq,  Nq, D]  f16 or bf16; o and lse are the forward's
 *                               outputs for these q, k, v; dout is dO
 *   k, v       [B, Hkv, Nk, D]  same dtype, Hq % Hkv == 0
 *   lse        [B, Hq,  Nq]     f32, the forward's LSE (natural log)
 *   dq         [B, Hq,  Nq, D]  same dtype (written)
 *   dk, dv     [B, Hkv, Nk, D]  same dtype (written; GQA: summed over the
 *                               query heads of each KV head)
 * The tensor rules of attn_fwd_args hold for all nine: unit stride on D,
 * other strides multiples of 16 bytes, 16-byte aligned data (lse: any
 * strides, 4-byte aligned), D a multiple of 8 in [8, 256]. dq, dk and dv
 * must not share a byte with any other operand, and each gives its
 * elements distinct addresses (as attn_fwd_args' outputs); every tensor is
 * required (lse too: a zero-initialized one is "lse is required"). causal
 * and softmax_scale as in attn_fwd_args: the forward's. dQ is accumulated
 * with fp32 atomics, so it may differ in the last bits from run to run. */
typedef struct attn_bwd_args {
  attn_tensor q, k, v, o, dout, lse;
  attn_tensor dq, dk, dv;
  int32_t causal;
  float softmax_scale;
} attn_bwd_args;

/* Validates a backward call on the host and returns in *kernel_index the
 * "bwd" kernel attn_bwd would launch: the one whose dtype, D, causal flag,
 * scale (within 1e-6 relative) and static B, Hq, Hkv, Nq, Nk equal the
 * call's and whose layout is "strided" or the call's tensors all
 * contiguous ("contiguous" preferred, then manifest order). Backward
 * kernels have static shapes only.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT, ATTN_ERROR_NO_MATCHING_KERNEL (its
 * message gives the call's key, the bundle's kernels and the closest one
 * with the fields it differs in: "closest: kernel 'k' differs in: head_dim
 * (call 96, kernel 128), causal (call true, kernel false)"). */
ATTN_API attn_status attn_bwd_select(const attn_bundle *bundle,
                                     const attn_bwd_args *args,
                                     int64_t *kernel_index);

/* Validates `args` (as attn_bwd_select, plus a current CUDA context and
 * every pointer device memory of its device), then enqueues the backward
 * kernel's launches on `stream` (preprocess, dQ_acc = 0, dK/dV, dQ) with
 * the fp32 workspaces the manifest names, allocated and freed on `stream`
 * (the bundle's workspace pool, as attn_fwd's). Returns once the launches
 * are queued. A call whose dq, dk and dv have no element succeeds without a
 * kernel, a GPU or a launch.
 * Errors: every error of attn_bwd_select, and ATTN_ERROR_CUDA. */
ATTN_API attn_status attn_bwd(attn_bundle *bundle, const attn_bwd_args *args,
                              CUstream stream);

/* Tuning. attn-compile --variant compiles a kernel several times (other
 * BLOCK_N, stages, ping-pong, overlap, ...) into entries with the same key:
 * its variants. attn_fwd launches the first in the manifest (the compiler's
 * defaults) unless a choice was measured for the call's shape (dtype, D,
 * causal, LSE, scale, B, Hq, Hkv, Nq, Nk, layout): choices live in
 * <dir>/tuning.json, read by attn_bundle_load (a malformed file is
 * ATTN_ERROR_BUNDLE_CORRUPT) and rewritten by each tuning. Variants differ
 * only in schedule: results agree up to rounding.
 *
 * attn_tune validates `args` as attn_fwd, then launches each variant that
 * can take the call on `stream`, one warm-up and 5 timed launches each
 * (cuEvent timing; it waits for the stream), records the fastest, writes
 * tuning.json and launches the fastest once more: O and LSE hold its result.
 * *kernel_index (if not null) is its index, or -1 on failure. A call whose
 * kernel has no variants launches it once.
 * Errors: those of attn_fwd; ATTN_ERROR_BUNDLE_NOT_FOUND when tuning.json
 * cannot be written (the choice still holds for this bundle object). */
ATTN_API attn_status attn_tune(attn_bundle *bundle, const attn_fwd_args *args,
                               CUstream stream, int64_t *kernel_index);

/* With `enabled` != 0, attn_fwd tunes (as attn_tune) the first call of each
 * shape whose kernel has variants and no choice yet. Off by default.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT for a null bundle. */
ATTN_API attn_status attn_bundle_set_auto_tune(attn_bundle *bundle,
                                               int enabled);

/* With `enabled` != 0 (the default), attn_fwd and attn_tune of an FP8
 * (e4m3) call copy q_descale, k_descale and v_descale to the host and
 * return ATTN_ERROR_INVALID_ARGUMENT, naming the tensor, index and value,
 * when a factor is not finite and > 0; of a paged call they copy
 * block_table and cache_seqlens and refuse, likewise, a length outside
 * [0, max_pages * page_size] or a block-table entry a sequence reads (j <
 * ceil(cache_seqlens[b] / page_size)) outside [0, num_pages); of a varlen
 * call they copy cu_seqlens_q and cu_seqlens_k and refuse a first entry
 * other than 0, a decrease, an entry past total_q (total_k) or a length
 * above max_seqlen_q (max_seqlen_k); of a varlen paged call they also copy
 * block_table and refuse a key count Nk_b = cu_seqlens_k[b + 1] -
 * cu_seqlens_k[b] above max_pages * page_size or a block-table entry the
 * sequence reads (j < ceil(Nk_b / page_size)) outside [0, num_pages)
 * (there is no total_k to check). That costs
 * one host-device synchronization of the call's stream per such call (the
 * copy waits for the work queued before it, e.g. the kernel that computed
 * the descales or the scheduler's table update): turn it off (0) for
 * production and benchmarks once the inputs are known to be good. Other
 * calls never pay it.
 * Errors: ATTN_ERROR_INVALID_ARGUMENT for a null bundle. */
ATTN_API attn_status attn_bundle_set_check_values(attn_bundle *bundle,
                                                  int enabled);

/* The message of the calling thread's last call that returns an attn_status:
 * empty after a success. Valid until this thread's next such call. */
ATTN_API const char *attn_last_error(void);

/* "ATTN_SUCCESS", "ATTN_ERROR_INVALID_ARGUMENT", ... */
ATTN_API const char *attn_status_name(attn_status status);

/* "f16", "bf16", "f32", "e4m3" or "i32" (as messages and manifest.json name
 * the dtypes), or null for a value that is no attn_dtype. */
ATTN_API const char *attn_dtype_name(attn_dtype dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTN_RUNTIME_H */

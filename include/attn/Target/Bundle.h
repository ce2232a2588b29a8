//===- Bundle.h - kernel bundles: specs in, cubins + manifest out -*- C++ -*-===//
//
// A kernel bundle (docs/bundle.md) is a directory with
// manifest.json and, per kernel, a cubin and its PTX. The writer compiles each
// function that holds one attn.attention through the attn-to-cubin pipeline,
// derives the launch shape and parameter list from the gpu.launch_func the
// pipeline produced, assembles the PTX with `ptxas -v` (which also reports
// registers, shared memory and spills) and writes the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_BUNDLE_H
#define ATTN_TARGET_BUNDLE_H

#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

/// One forward kernel to generate: the shape of attn.attention's operands.
/// A length left unset is dynamic (read from the call at run time).
struct KernelSpec {
  std::string name; // function / kernel name; derived from the key if empty
  std::optional<int64_t> batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK;
  int64_t headDim = 128;
  std::string dtype = "bf16"; // f16, bf16 or e4m3 (FP8; strided only)
  bool causal = false;
  bool lse = true;
  double scale = 0;     // 0: 1/sqrt(D)
  bool strided = true;  // any strides with unit D stride; else contiguous
  int64_t blockM = 0, blockN = 0; // 0: the writer's defaults
  std::string path;               // "wgmma", "fma" or empty: the writer's
  /// Split-KV (attn-to-cubin splits): 1 = unsplit, else the fixed number of
  /// K/V splits, in [2, 256] (a partial-attention and a combine launch).
  int64_t splits = 1;
  /// GQA packing (attn-to-cubin pack-gqa): the Hq / Hkv query heads of a KV
  /// group share a tile (one K/V read per group); needs static head counts.
  bool packGqa = false;
  /// Paged K/V: tokens per page of the [num_pages, page_size, Hkv, D]
  /// caches, read through a block table with per-sequence lengths (0:
  /// contiguous K/V). seqLenK is then dynamic.
  int64_t pageSize = 0;
  /// A variable-length batch (attn.varlen_attention, FlashAttention-2's
  /// varlen layout): q, o [total_q, Hq, D], k, v [total_k, Hkv, D],
  /// cu_seqlens_q/k [B + 1] (i32), max_seqlen_q/k (index), lse [Hq,
  /// total_q]; batch, seqLenQ and seqLenK are then dynamic.
  bool varlen = false;
  /// The backward (attn.attention_grad): q, k, v, o, dout, lse in; dq, dk,
  /// dv out. Static lengths, f16 or bf16, D 64 or 128; lse is its input.
  bool backward = false;
  /// Quantized FP8 (attn-quantize-fp8 before attn-to-cubin): the pass's
  /// options ("" for its defaults); nullopt: not quantized. bf16, static
  /// lengths, forward only (the function gets attn.quantize_fp8).
  std::optional<std::string> quantizeFp8;
  /// Where the spec comes from, for messages: "specs.json: specs[1]" (an
  /// entry of a spec file; errors about the spec and its kernel are located
  /// there), or empty: the shape flags, or a spec built in code.
  std::string origin;
  /// The spec stands for attn-compile's shape flags: messages name them
  /// (--heads-q, --page-size) instead of the spec keys.
  bool fromFlags = false;

  /// The name used when `name` is empty, e.g.
  /// fwd_bf16_d128_causal_b1_hq32_hkv8_nq8192_nkdyn (bwd_... for the
  /// backward).
  std::string defaultName() const;
  /// A spec key (num_heads_q) as the spec's source names it: the key, or
  /// its flag (--heads-q).
  std::string keyName(llvm::StringRef key) const;
};

/// JSON form of a spec (attn-compile --spec-file): an object with the keys
/// name, batch, num_heads_q, num_heads_kv, seqlen_q, seqlen_k (integer or
/// null for dynamic), head_dim, dtype, causal, lse, scale, layout
/// ("strided" | "contiguous"), block_m, block_n, path, splits, pack_gqa,
/// page_size, varlen, backward, quantize_fp8 (true, false or a string of
/// attn-quantize-fp8 options). Lengths are required, except seqlen_k with
/// page_size and batch, seqlen_q and seqlen_k with varlen (they may only be
/// null there).
bool fromJSON(const llvm::json::Value &value, KernelSpec &spec,
              llvm::json::Path path);

/// Parses a spec file's text: a non-empty JSON array of specs (no key twice
/// in one object). The error names the offending field.
llvm::Expected<std::vector<KernelSpec>> parseKernelSpecs(llvm::StringRef text);

/// True for names a kernel may have: [A-Za-z_][A-Za-z0-9_]* (they become
/// PTX symbols and file names in the bundle).
bool isKernelName(llvm::StringRef name);

/// Appends to `module` a function `spec.name` (or its default name) taking
/// (q, k, v, o[, lse]) memrefs, for dtype e4m3 (q, k, v, o[, lse],
/// q_descale, k_descale, v_descale) with f8E4M3FN q, k, v (v stored V^T:
/// unit stride along Nk), a bf16 o and f32 [B, Hkv] descales, and holding
/// one attn.attention; for a varlen spec (q, k, v, cu_seqlens_q,
/// cu_seqlens_k, max_seqlen_q, max_seqlen_k, o[, lse]) holding one
/// attn.varlen_attention; for a backward spec (q, k, v, o, dout, lse, dq,
/// dk, dv) holding one attn.attention_grad. A quantize_fp8 spec is a bf16
/// forward function with the attn.quantize_fp8 attribute (the pass options;
/// checked here). Fails with a
/// diagnostic when the spec is invalid (verifier messages).
LogicalResult buildKernelFunction(ModuleOp module, const KernelSpec &spec);

struct BundleOptions {
  std::string outputDir;
  int64_t blockM = 0, blockN = 0; // 0: the path's defaults
  KernelPath path = KernelPath::automatic;
  int64_t maxMmaN = 256; // widest O += P V wgmma (wgmma path)
  int64_t fp8PScaleLog2 = 8; // FP8: P quantized as P * 2^this (wgmma path)
  int64_t fp8PolyExp2 = 0;   // FP8: one in this many exp2 by a polynomial
  bool fp8LazyMax = true;    // FP8: lazy row max (wgmma path)
  int64_t fp8LazyHeadroom = 3; // FP8: its headroom, log2 units
  bool pingPong = true;   // consumer warpgroups take turns (wgmma path)
  bool overlap = true;    // S_j issued with P_{j-1} V_{j-1} (wgmma path)
  int64_t stages = 0;     // K/V ring stages (wgmma path); 0: per D
  int64_t persistentCtas = 0; // persistent kernel of this many CTAs; 0: off
  bool tmaStore = false; // O written by TMA stores (wgmma path)
  int64_t splits = 1;    // split-KV K/V splits; a function's attn.splits wins
  bool packGqa = false;  // GQA packing; a function's attn.pack_gqa wins
  std::string chip = "sm_90a";
  std::string features; // empty: the chip's oldest PTX ISA
  std::string ptxas; // path to ptxas; empty: PATH, then /usr/local/cuda/bin
  /// Extra variants of every kernel, each a set of attn-to-cubin pipeline
  /// options applied over the ones above (e.g. "block-n=192 ping-pong=0").
  /// Variant i of kernel k is the kernel k_v<i + 1>, with the same key;
  /// the runtime launches the first unless tuned (attn_tune).
  std::vector<std::string> variants;
};

/// Compiles every function of `module` that holds an attn.attention (or
/// attn.varlen_attention, or attn.attention_grad: kind "bwd") into a
/// bundle in options.outputDir (created if missing) and prints one line per
/// kernel to `log`. Per-function block sizes come from the function's
/// `attn.block_m` / `attn.block_n` attributes, else from `options`. A
/// function with `attn.quantize_fp8 = "<options>"` (a bf16 attn.attention
/// of static shape) is run through attn-quantize-fp8 first: its entry keeps
/// q, k, v, o, lse and gains the quantize launches and workspace buffers
/// (e4m3 copies, descales, scratch) with tensor maps over the copies.
LogicalResult writeBundle(ModuleOp module, const BundleOptions &options,
                          llvm::raw_ostream &log);

/// Notes the signals the process inherited as ignored (a background job's
/// SIGINT), so that they stay ignored. Call it first in main: LLVM's
/// handlers (llvm::InitLLVM) replace the inherited dispositions.
void noteIgnoredSignals();

/// Installs, after llvm::InitLLVM, the handlers of every signal that a user
/// or a limit sends to end a process (SIGHUP, SIGINT, SIGQUIT, SIGTERM,
/// SIGALRM, SIGUSR2, SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU, SIGIO, SIGPWR,
/// SIGSTKFLT, the real-time signals): the running
/// ptxas is killed and the partial bundle removed, then the signal ends the
/// process as it would have, without a crash report. Those inherited as
/// ignored stay ignored, and SIGXFSZ is ignored so that a write past
/// `ulimit -f` fails with an error.
void installSignalHandlers();

/// Adds attn-quantize-fp8 with `options` (its pass-option text) to `pm`,
/// block-m and block-n defaulting to `blockM` / `blockN` (the FP8
/// attention's tiles) unless the text sets them; `normalized` (if not
/// null) gets every option's value. Fails with the parser's message.
LogicalResult addQuantizeFP8Pass(OpPassManager &pm, StringRef options,
                                 int64_t blockM, int64_t blockN,
                                 std::string *normalized,
                                 llvm::raw_ostream &errors);

} // namespace mlir::attn

#endif // ATTN_TARGET_BUNDLE_H

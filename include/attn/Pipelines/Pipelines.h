//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
//
//   attn-to-cpu   : [attn-split-kv,] attn-select-config, attn-tile,
//                   attn-causal-split,
//                   attn-tile-grad, attn-causal-split-grad,
//                   attn-online-softmax, attn-decompose-grad,
//                   attn-lower-to-cpu (LLVM dialect,
//                   run by tests; the backward lowers only here so far)
//   attn-to-cubin : [attn-split-kv,] attn-select-config, attn-tile,
//                   attn-causal-split, then
//                   path wgmma: attn-async-pipeline (attn-cta-order or
//                   attn-persistent-ctas, attn-tma-ring, attn-fp8-v-permute,
//                   [attn-tma-store]), attn-lower-to-wgmma
//                   path fma:   attn-distribute-rows, attn-online-softmax
//                   and attn-lower-to-nvvm, gpu-module-to-binary (PTX/cubin)
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace attn {

struct CPUPipelineOptions : PassPipelineOptions<CPUPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("BLOCK_M"),
                         llvm::cl::init(16)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("BLOCK_N"),
                         llvm::cl::init(16)};
  Option<int64_t> splits{
      *this, "splits",
      llvm::cl::desc("Split-KV (attn-split-kv): K/V splits; 1: none, 0: "
                     "chosen from the shape and sm-count"),
      llvm::cl::init(1)};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("SMs for splits=0 (attn-split-kv)"),
                          llvm::cl::init(132)};
  Option<bool> packGqa{*this, "pack-gqa",
                       llvm::cl::desc("GQA packing (attn-tile pack-gqa)"),
                       llvm::cl::init(false)};
};

/// Which kernel the GPU pipeline builds.
enum class KernelPath {
  automatic, // wgmma on sm_90a, fma elsewhere
  wgmma,     // Hopper: TMA + mbarrier ring, warp-specialized WGMMA
  fma        // CUDA-core reference: one query row per thread (sm_80+)
};

struct CubinPipelineOptions : PassPipelineOptions<CubinPipelineOptions> {
  Option<int64_t> blockM{
      *this, "block-m",
      llvm::cl::desc("BLOCK_M (0: 192 for D <= 64 and for FP8 at D <= 128 "
                     "with BLOCK_N 96 or none, "
                     "else 128 for wgmma; 64 = threads per CTA for fma)"),
      llvm::cl::init(0)};
  Option<int64_t> blockN{
      *this, "block-n",
      llvm::cl::desc("BLOCK_N (0: 96 for FP8 with BLOCK_M 192 at 64 < D <= "
                     "128, else 128 for D <= 128 or FP8, else 64 for wgmma; "
                     "16 for fma)"),
      llvm::cl::init(0)};
  Option<KernelPath> path{
      *this, "path", llvm::cl::desc("Kernel path"),
      llvm::cl::init(KernelPath::automatic),
      llvm::cl::values(
          clEnumValN(KernelPath::automatic, "auto",
                     "wgmma on sm_90a, fma elsewhere"),
          clEnumValN(KernelPath::wgmma, "wgmma",
                     "TMA/mbarrier pipeline + warpgroup MMA (sm_90a)"),
          clEnumValN(KernelPath::fma, "fma", "CUDA-core FMA kernel"))};
  Option<int64_t> stages{*this, "stages",
                         llvm::cl::desc("K/V ring stages of the wgmma path "
                                        "(0: chosen per D)"),
                         llvm::cl::init(0)};
  Option<bool> pingPong{*this, "ping-pong",
                        llvm::cl::desc("The consumer warpgroups take turns "
                                       "issuing GEMMs (wgmma path)"),
                        llvm::cl::init(true)};
  Option<bool> overlap{*this, "overlap",
                       llvm::cl::desc("Issue S_j with P_{j-1} V_{j-1} and run "
                                      "softmax_j while P V is in flight "
                                      "(wgmma path; with 3 or more "
                                      "stages)"),
                       llvm::cl::init(true)};
  Option<int64_t> persistentCtas{
      *this, "persistent-ctas",
      llvm::cl::desc("Persistent kernel of this many CTAs (132: one per SM "
                     "of an H100/H200 SXM) looping over the tiles; 0: one "
                     "CTA per tile (wgmma path)"),
      llvm::cl::init(0)};
  Option<bool> tmaStore{*this, "tma-store",
                        llvm::cl::desc("Write O with TMA stores from shared "
                                       "memory (wgmma path)"),
                        llvm::cl::init(false)};
  Option<int64_t> splits{
      *this, "splits",
      llvm::cl::desc("Split-KV (attn-split-kv): K/V splits; 1: none, 0: "
                     "chosen from the shape and sm-count. The partial "
                     "attention takes the path's kernel, the combine the "
                     "CUDA-core one"),
      llvm::cl::init(1)};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("SMs for splits=0 (attn-split-kv)"),
                          llvm::cl::init(132)};
  Option<bool> packGqa{
      *this, "pack-gqa",
      llvm::cl::desc("GQA packing (attn-tile pack-gqa): a tile's rows are "
                     "the query heads of one KV group, so each K/V block is "
                     "read once per group (wgmma path; Hq / Hkv static, "
                     "dividing 64)"),
      llvm::cl::init(false)};
  Option<int64_t> maxMmaN{*this, "max-mma-n",
                          llvm::cl::desc("Widest O += P V wgmma (columns)"),
                          llvm::cl::init(256)};
  Option<int64_t> fp8PScaleLog2{
      *this, "fp8-p-scale-log2",
      llvm::cl::desc("FP8: P quantized as P * 2^this (0..8; wgmma path)"),
      llvm::cl::init(8)};
  Option<int64_t> fp8PolyExp2{
      *this, "fp8-poly-exp2",
      llvm::cl::desc("FP8: one in this many of P's exponentials by a "
                     "polynomial on the FMA pipe (0, the default: all on "
                     "MUFU)"),
      llvm::cl::init(0)};
  Option<bool> fp8LazyMax{
      *this, "fp8-lazy-max",
      llvm::cl::desc("FP8: a lazy row max (attn-lower-to-wgmma "
                     "fp8-lazy-max)"),
      llvm::cl::init(true)};
  Option<int64_t> fp8LazyHeadroom{
      *this, "fp8-lazy-headroom",
      llvm::cl::desc("FP8 with fp8-lazy-max: log2 units the first and a "
                     "redone block set the running max above their row max "
                     "(0..8)"),
      llvm::cl::init(3)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("target SM"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (empty: the chip's oldest PTX ISA, at "
                     "least +ptx80)"),
      llvm::cl::init("")};
  /// An enum, so that an unknown format is a parse error (upstream
  /// gpu-module-to-binary only reports it and lets the run succeed).
  enum class Format { isa, bin, fatbin, none };
  Option<Format> format{
      *this, "format", llvm::cl::desc("What to stop at"),
      llvm::cl::init(Format::isa),
      llvm::cl::values(
          clEnumValN(Format::isa, "isa", "PTX (gpu-module-to-binary)"),
          clEnumValN(Format::bin, "bin", "cubin (runs ptxas)"),
          clEnumValN(Format::fatbin, "fatbin", "fatbinary"),
          clEnumValN(Format::none, "none", "the NVVM kernel, not serialized"))};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit path (ptxas)"),
                              llvm::cl::init("/usr/local/cuda")};
};

/// BLOCK_M of a split-KV kernel on the wgmma path unless one is given: a
/// split's CTA holds few query rows (decode), so one consumer warpgroup
/// (256 threads, no register spills with run-time strides).
constexpr int64_t kSplitKVBlockM = 64;

/// Rows per CTA of the split-KV combine on the GPU: attn-distribute-rows
/// gives each row up to a warp of lanes (four fp32 columns each), so 8 rows
/// are 256 threads at D = 128, and a decode call's one row keeps a warp
/// loading.
constexpr int64_t kGpuCombineBlockM = 8;

/// The path `automatic` resolves to for `chip`.
KernelPath resolvePath(KernelPath path, llvm::StringRef chip);

/// The BLOCK_M a pipeline asks attn-select-config (and the writer) for:
/// `given` where non-zero, else kSplitKVBlockM for a split-KV wgmma kernel
/// (`splits` != 1; 0 is split-KV with the count chosen), else 0 (the path's
/// default).
int64_t requestedBlockM(int64_t given, int64_t splits, KernelPath path);

/// attn-async-pipeline: the Hopper forward CTA passes in order, with the
/// options they used to share as one pass.
struct AsyncPipelineOptions : PassPipelineOptions<AsyncPipelineOptions> {
  Option<int64_t> stages{*this, "stages",
                         llvm::cl::desc("attn-tma-ring's stages"),
                         llvm::cl::init(0)};
  Option<int64_t> producerRegisters{
      *this, "producer-registers",
      llvm::cl::desc("attn-tma-ring's producer-registers"), llvm::cl::init(0)};
  Option<int64_t> consumerRegisters{
      *this, "consumer-registers",
      llvm::cl::desc("attn-tma-ring's consumer-registers"), llvm::cl::init(0)};
  Option<bool> pingPong{*this, "ping-pong",
                        llvm::cl::desc("attn-tma-ring's ping-pong"),
                        llvm::cl::init(false)};
  Option<bool> overlap{*this, "overlap",
                       llvm::cl::desc("attn-tma-ring's overlap"),
                       llvm::cl::init(false)};
  Option<int64_t> persistentCtas{
      *this, "persistent-ctas",
      llvm::cl::desc("attn-persistent-ctas's ctas (instead of "
                     "attn-cta-order); 0: one CTA per tile"),
      llvm::cl::init(0)};
  Option<bool> tmaStore{*this, "tma-store",
                        llvm::cl::desc("run attn-tma-store"),
                        llvm::cl::init(false)};
};

/// Adds to `pm` (function level) attn-cta-order (without persistent CTAs),
/// attn-tma-ring, attn-fp8-v-permute, attn-tma-store (with `tmaStore`) and
/// attn-persistent-ctas (with `persistentCtas` != 0).
void buildAsyncPipeline(OpPassManager &pm,
                        const AsyncPipelineOptions &options);

void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);
/// What buildCubinPipeline cannot check until its passes run: a `toolkit`
/// that is no CUDA toolkit (when serializing). Reports to `error`.
LogicalResult checkCubinPipelineOptions(const CubinPipelineOptions &options,
                                        llvm::raw_ostream &error);
void buildCubinPipeline(OpPassManager &pm, const CubinPipelineOptions &options);

/// Registers the attn passes and pipelines (and every upstream pass, which
/// the lowering pipelines are composed of).
void registerAttnPassesAndPipelines();

/// Dialects and interfaces attn-opt and the tests load.
void registerAttnDialects(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H

//===- CtaAttributes.h - the attn discardable attributes, named once -*- C++ -*-===//
//
// The discardable attributes by which one attn pass tells a later one (or
// the bundle writer) what it decided, so that no pass recomputes it: on a
// CTA loop (scf.forall), on a K/V loop (scf.for), on a kernel spec's
// func.func, and the config chosen per attention op. Each name is spelt
// here only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_CTAATTRIBUTES_H
#define ATTN_TRANSFORMS_CTAATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::attn {

//===----------------------------------------------------------------------===//
// On a forward attention op and the CTA loop attn-tile builds for it
//===----------------------------------------------------------------------===//

/// #attn.config set by attn-select-config on each forward attention op;
/// attn-tile reads it and copies it onto the tensor-core CTA loop, where
/// attn-tma-ring reads the stages and the schedule.
constexpr llvm::StringLiteral kConfigAttr = "attn.config";

//===----------------------------------------------------------------------===//
// On a CTA loop (scf.forall)
//===----------------------------------------------------------------------===//

/// Unit attribute set by attn-tile on the CTA loop of an
/// attn.varlen_attention (packed sequences): passes without a varlen
/// lowering refuse it; attn-tma-ring removes it once lowered.
constexpr llvm::StringLiteral kVarlenAttr = "attn.varlen";

/// Unit attribute set by attn-tile on a CTA loop whose softmax state starts
/// from attention sinks (attn.attention's `sinks`): the GPU passes refuse
/// it (host lowering only so far).
constexpr llvm::StringLiteral kSinksAttr = "attn.sinks";

/// Unit attribute set by attn-cta-order on a causal CTA loop whose (Q block,
/// head, batch) it rebound heaviest first. attn-persistent-ctas refuses such
/// a loop: persistent CTAs deal their tiles in an order of their own.
constexpr llvm::StringLiteral kCtaOrderAttr = "attn.heaviest_first";

/// Unit attribute set by attn-fp8-v-permute on the attn.warp_specialize of
/// an FP8 ring whose V^T tiles it permutes into the key order of P's e4m3
/// registers (what attn-lower-to-wgmma's FP8 P V assumes).
constexpr llvm::StringLiteral kVPermutedAttr = "attn.v_permuted";

/// i64 attribute set by attn-persistent-ctas: the CTA loop runs as this
/// many persistent CTAs, each looping over its tiles; attn-lower-to-nvvm
/// launches that many CTAs instead of one per tile.
constexpr llvm::StringLiteral kPersistentCtasAttr = "attn.persistent_ctas";

/// i64 attribute: the threads of one CTA, set by attn-lower-to-wgmma (the
/// warp-specialized CTA's) and read by attn-lower-to-nvvm's launch;
/// attn-distribute-rows leaves such a loop alone.
constexpr llvm::StringLiteral kThreadsAttr = "attn.threads";

//===----------------------------------------------------------------------===//
// On a K/V loop (scf.for)
//===----------------------------------------------------------------------===//

/// String attribute ("full" or "masked") set by attn-causal-split and
/// attn-causal-split-grad on the K/V loops they split: a loop already
/// split is not split again.
constexpr llvm::StringLiteral kStageAttr = "attn.stage";

//===----------------------------------------------------------------------===//
// What attn-lower-to-wgmma decides once per attn.warp_specialize, before
// its patterns run, on the ops they match
//===----------------------------------------------------------------------===//

/// Unit attribute on each attn.online_attention_mma: the row max and sum
/// are trees (f16/bf16, D > 64, at most two consumer warpgroups; the
/// measurements are in docs/perf-notes.md), not chains.
constexpr llvm::StringLiteral kTreeReductionsAttr = "attn.tree_reductions";
/// i64 attribute on each attn.online_attention_mma of a ping-pong consumer:
/// the warpgroups that take turns issuing their GEMMs.
constexpr llvm::StringLiteral kPingPongTurnsAttr = "attn.ping_pong_turns";
/// Unit attribute on each K/V loop (scf.for) of an overlapped consumer that
/// is software-pipelined by one block.
constexpr llvm::StringLiteral kPipelinedLoopAttr = "attn.pipelined";
/// Unit attribute on the first dK/dV attn.store_tile of a backward
/// consumer: it first waits for the consumer's bulk reductions of dQ to
/// complete (they read the CTA's shared memory).
constexpr llvm::StringLiteral kWaitDQReductionsAttr =
    "attn.wait_dq_reductions";

//===----------------------------------------------------------------------===//
// On a kernel spec's func.func (attn-compile, docs/bundle.md)
//===----------------------------------------------------------------------===//

/// i64 BLOCK_M and BLOCK_N the spec asks for (0 or absent: chosen).
constexpr llvm::StringLiteral kSpecBlockMAttr = "attn.block_m";
constexpr llvm::StringLiteral kSpecBlockNAttr = "attn.block_n";
/// String: the kernel path ("auto", "wgmma", "fma").
constexpr llvm::StringLiteral kSpecPathAttr = "attn.path";
/// i64: split-KV splits.
constexpr llvm::StringLiteral kSpecSplitsAttr = "attn.splits";
/// Bool: GQA packing.
constexpr llvm::StringLiteral kSpecPackGqaAttr = "attn.pack_gqa";
/// String: attn-quantize-fp8's options; the bf16 inputs are quantized to
/// e4m3 before the attention.
constexpr llvm::StringLiteral kSpecQuantizeFp8Attr = "attn.quantize_fp8";

/// The spec attributes above, all of them: a kernel function's, never an
/// op's.
constexpr llvm::StringLiteral kSpecAttrs[] = {
    kSpecBlockMAttr, kSpecBlockNAttr,  kSpecPathAttr,
    kSpecSplitsAttr, kSpecPackGqaAttr, kSpecQuantizeFp8Attr};

/// The attn.* attributes passes leave on attn ops (the others go on loops
/// and functions); the op verifiers refuse any other attn.* name, a
/// misspelt `attn.casual` or a spec attribute put on the op.
constexpr llvm::StringLiteral kAttnOpAttrs[] = {
    kConfigAttr, kVPermutedAttr, kTreeReductionsAttr, kPingPongTurnsAttr,
    kWaitDQReductionsAttr};

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_CTAATTRIBUTES_H

//===- CtaAttributes.h - decisions carried on the CTA loop ------*- C++ -*-===//
//
// The discardable attributes by which one pass of the Hopper forward chain
// (attn-cta-order, attn-tma-ring, attn-fp8-v-permute, attn-tma-store,
// attn-persistent-ctas) tells a later one, or attn-lower-to-nvvm, what it
// decided about a CTA loop (scf.forall), so that no pass recomputes it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_CTAATTRIBUTES_H
#define ATTN_TRANSFORMS_CTAATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::attn {

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

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_CTAATTRIBUTES_H

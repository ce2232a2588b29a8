//===- AttnToWGMMA.h - attn-lower-to-wgmma's patterns -----------*- C++ -*-===//
//
// The consumers of an attn.warp_specialize lowered by one conversion
// pattern per op: attn.to_wg_fragment, attn.online_attention_mma (serial),
// the overlapped K/V loop (scf.for), attn.epilogue and attn.warp_specialize
// (the forward), attn.grad_dkdv_mma and the dK/dV attn.store_tile (the
// backward), with !attn.wg_fragment converted to the per-thread registers
// of the wgmma accumulator layout (scf's structural type conversion carries
// it through loops and branches).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOWGMMA_H
#define ATTN_CONVERSION_ATTNTOWGMMA_H

#include "attn/Transforms/CtaAttributes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::attn {

/// attn-lower-to-wgmma's options, as the patterns take them (Passes.td).
struct WGMMAOptions {
  int64_t maxMmaN;         // widest P V wgmma, in columns
  int64_t fp8PScaleLog2;   // FP8: P quantized as P * 2^this
  int64_t fp8PolyExp2;     // FP8: one in this many exponentials by polynomial
  bool fp8LazyMax;         // FP8, pipelined unmasked loops: lazy row max
  int64_t fp8LazyHeadroom; // FP8 lazy max: log2 units of headroom
};

/// What the pass decides once per attn.warp_specialize, before the
/// patterns run, it leaves on the ops they match (kTreeReductionsAttr,
/// kPingPongTurnsAttr, kPipelinedLoopAttr,
/// kWaitDQReductionsAttr: CtaAttributes.h).

/// Adds the patterns; `converter` must map !attn.wg_fragment
/// (configureAttnToWGMMA does).
void populateAttnToWGMMAPatterns(RewritePatternSet &patterns,
                                 TypeConverter &converter,
                                 const WGMMAOptions &options);

/// Adds the backward's patterns (attn.grad_dkdv_mma, attn.store_tile of
/// fragments); the forward's add attn.to_wg_fragment, attn.warp_specialize
/// and scf's structural conversion, which its consumer needs as well.
void populateGradToWGMMAPatterns(RewritePatternSet &patterns,
                                 TypeConverter &converter);

/// The type conversion (!attn.wg_fragment -> the thread's vector, anything
/// else unchanged) and the target: the ops above illegal, scf legal once
/// its types are.
void configureAttnToWGMMA(TypeConverter &converter, ConversionTarget &target);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOWGMMA_H

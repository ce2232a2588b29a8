//===- RingCta.h - the CTA that attn-tma-ring leaves --------------*- C++ -*-===//
//
// What the passes after attn-tma-ring (attn-fp8-v-permute, attn-tma-store,
// attn-persistent-ctas) find in a forward CTA: the attn.warp_specialize,
// the barriers of its ring and the loops of its two roles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_RINGCTA_H
#define ATTN_LIB_TRANSFORMS_RINGCTA_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn::pipeline {

/// A forward CTA as attn-tma-ring builds it:
///   scf.forall { shared views, mbarrier groups q, full, empty (+ FP8's
///   loaded), inits, attn.warp_specialize producer { scf.if leader {
///   Q copy; scf.for K/V blocks } } consumer { try_wait q; K/V loops of
///   attn.online_attention_mma; attn.epilogue } }
struct RingCta {
  scf::ForallOp cta;
  WarpSpecializeOp ws;
  Value qBar;  // the consumer's first wait: Q landed
  Value full;  // the consumer steps' wait: K/V block ready
  Value empty; // the consumer steps' arrival: slot released
  SmallVector<scf::ForOp> consumerLoops;
  OnlineAttentionMmaOp step; // the first step
  EpilogueOp epilogue;
  scf::IfOp leader;        // the producer's TMA thread
  scf::ForOp producerLoop; // its K/V block loop
};

/// The forward warp_specialize ops of `root` (those whose consumer holds
/// an attn.online_attention_mma), outermost first.
SmallVector<WarpSpecializeOp> forwardRings(Operation *root);

/// Matches the CTA of `ws` (forwardRings); on a mismatch emits "`pass`:
/// ..." at the CTA loop and fails.
FailureOr<RingCta> matchRing(WarpSpecializeOp ws, StringRef pass);

/// The ring position that the slot and parity of `wait` (a try_wait on a
/// ring barrier, its slot remui(position, stages)) derive from, and the
/// remui and divui of slotAndParity that read it.
struct RingPosition {
  Value position;
  Operation *slot, *round;
};
FailureOr<RingPosition> ringPositionOf(nvgpu::MBarrierTryWaitParityOp wait);

} // namespace mlir::attn::pipeline

#endif // ATTN_LIB_TRANSFORMS_RINGCTA_H

//===- PhasedCta.h - CTAs of several thread loops -> gpu.launch -*- C++ -*-===//
//
// A grid whose CTA runs thread loops one after another (attn-quantize-fp8's
// per-block kernel: partial amax, a tree reduction, the quantization) and
// keeps values between them in workgroup buffers. On the host the nest runs
// as loops (attn-to-cpu hoists the buffers); upstream's
// convert-parallel-loops-to-gpu takes one thread loop per CTA only, so the
// GPU lowering builds the launch itself: one thread per iteration of the
// widest loop, a barrier between loops, the buffers in shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_PHASEDCTA_H
#define ATTN_LIB_CONVERSION_PHASEDCTA_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {

/// An scf.forall mapped to GPU blocks whose body holds more than one
/// scf.forall mapped to threads, or a workgroup buffer (memref.alloca in
/// #gpu.address_space<workgroup>).
bool isPhasedCta(scf::ForallOp cta);

/// Replaces `cta` by a gpu.launch over a 1-D grid of all its blocks (the
/// first mapped dimension fastest) and as many threads as its widest
/// thread loop: each thread loop runs on threads 0 .. n - 1, a
/// gpu.barrier between two of them; workgroup buffers become the launch's
/// workgroup attributions. Fails on other side effects outside the thread loops.
LogicalResult launchPhasedCta(scf::ForallOp cta);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_PHASEDCTA_H

//===- KeyInterval.h - the keys a query sees under a key mask ---*- C++ -*-===//
//
// The one definition of #attn.key_mask's interval as IR, shared by the block
// bounds of attn-causal-split, the host's element mask and the tensor-core
// lowering's: query position p (row i + Nk - Nq) sees the keys [lo(p),
// end(p)), before clamping to [0, Nk).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_KEYINTERVAL_H
#define ATTN_TRANSFORMS_KEYINTERVAL_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The keys [lo, end) that key position `p` (index, or a vector of index)
/// sees under `mask`, before clamping to [0, Nk). A null bound is
/// unbounded (no left window and no chunk: lo; no right side and no chunk:
/// end). Every op is created with createOrFold: constants fold.
struct KeyInterval {
  Value lo, end;
};
KeyInterval keyInterval(OpBuilder &b, Location loc, KeyMaskAttr mask, Value p);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_KEYINTERVAL_H

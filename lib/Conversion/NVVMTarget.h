//===- NVVMTarget.h - the SMs and PTX features attn can target --*- C++ -*-===//
//
// One table of chips and their oldest PTX ISA, read by the check at the head
// of attn-lower-to-nvvm (attn-check-nvvm-input) and by the pipeline that
// gives nvvm-attach-target its features.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_NVVMTARGET_H
#define ATTN_LIB_CONVERSION_NVVMTARGET_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::attn {

/// PTX features for `chip`: `features` if given (features the back end
/// knows, with a +ptxNN that reaches the chip's minimum), else
/// "+ptx<minimum>". Errors are emitted at `loc`.
FailureOr<std::string> resolveTarget(Location loc, StringRef chip,
                                     StringRef features);

/// The features nvvm-attach-target gets: `features`, or the chip's oldest
/// PTX ISA when empty (an unknown chip gets +ptx80; attn-check-nvvm-input
/// refuses it first).
std::string targetFeatures(StringRef chip, StringRef features);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_NVVMTARGET_H

//===- SpillAdvice.h - what avoids a kernel's register spills --*- C++ -*-===//
//
// attn-compile's listing warns when ptxas reports spills in a launch. The
// causes known on ptxas 13.0 (docs/perf-notes.md, "Register spills") each
// have an option that avoids them, at a cost the listing names.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_SPILLADVICE_H
#define ATTN_LIB_TARGET_SPILLADVICE_H

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <string>

namespace attn::bundle {
struct KernelEntry;
} // namespace attn::bundle

namespace mlir::attn {

/// Where launch `launch` of `entry` spills and what avoids it, or "" when
/// no cause is known.
std::string spillAdvice(const ::attn::bundle::KernelEntry &entry,
                        size_t launch);

/// One listing line per launch of `entry` that spills: "  warning: <kernel>
/// spills registers to local memory (S B stored, L B loaded): expect it to
/// be slow; <advice>".
void warnSpills(llvm::raw_ostream &log,
                const ::attn::bundle::KernelEntry &entry);

} // namespace mlir::attn

#endif // ATTN_LIB_TARGET_SPILLADVICE_H

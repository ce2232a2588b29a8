//===- KernelMatch.h - which kernels can take a call, and why not -*- C++ -*-=//
//
// Dispatch compares a call's key (FwdCall, BwdCall) field by field with
// each kernel's key. The same comparison decides a match and, when nothing
// matches, names the fields in which the closest kernel differs, so that
// ATTN_ERROR_NO_MATCHING_KERNEL says what to change.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELMATCH_H
#define ATTN_RUNTIME_KERNELMATCH_H

#include "Bundle.h"

#include <cstdint>
#include <string>

namespace attn::runtime {

/// A bit per key field in which a kernel cannot take a call (0: it can).
using Mismatch = uint32_t;

Mismatch mismatches(const bundle::KernelEntry &kernel, const FwdCall &call);
Mismatch mismatches(const bundle::KernelEntry &kernel, const BwdCall &call);

/// "; closest: kernel 'k' differs in: head_dim (call 96, kernel 128),
/// causal (call false, kernel true)" for the kernel of the call's kind
/// (forward or backward) with the fewest differing fields (the first in the
/// manifest among ties); empty when the bundle has no kernel of that kind.
std::string closestKernel(llvm::ArrayRef<bundle::KernelEntry> kernels,
                          const FwdCall &call);
std::string closestKernel(llvm::ArrayRef<bundle::KernelEntry> kernels,
                          const BwdCall &call);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_KERNELMATCH_H

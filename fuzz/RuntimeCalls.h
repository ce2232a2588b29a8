//===- RuntimeCalls.h - random runtime calls and what they may write -*- C++
//-*-//
//
// attn-fuzz-runtime --target=calls: forward and backward calls drawn for a
// kernel of a bundle (its key's dtype, head dim, flags and static lengths,
// small random dynamic ones, every tensor at an address of its own), most
// of them then mutated (strides set to 0 or small values, sizes changed,
// outputs aliased onto other operands). The oracle is written apart from
// the runtime's checks: it enumerates the elements of every output.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FUZZ_RUNTIMECALLS_H
#define ATTN_FUZZ_RUNTIMECALLS_H

#include "Mutator.h"
#include "attn/manifest/Manifest.h"
#include "attn/runtime.h"

#include <string>

namespace attn::fuzz {

/// A call of attn_fwd_select or attn_bwd_select.
struct RuntimeCall {
  bool backward = false;
  attn_fwd_args fwd = {};
  attn_bwd_args bwd = {};
};

/// A call drawn for `kernel`, mutated three times in four.
RuntimeCall drawCall(const bundle::KernelEntry &kernel, Mutator &m);

/// What is wrong with a call the runtime accepted: an output with two
/// elements at one address, or an output byte inside another operand's
/// bytes (from its first element to the end of its last). Empty when
/// nothing is.
std::string checkAccepted(const RuntimeCall &call);

/// Every tensor of the call, for the failure report.
std::string describe(const RuntimeCall &call);

} // namespace attn::fuzz

#endif // ATTN_FUZZ_RUNTIMECALLS_H

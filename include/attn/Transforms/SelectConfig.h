//===- SelectConfig.h - one forward kernel's tile and schedule --*- C++ -*-===//
//
// The choice attn-select-config records as #attn.config, as a function, so
// that the bundle writer (which keys each kernel by its tile) and
// attn-quantize-fp8 (which scales per tile) take the very choice the
// pipeline makes. The heuristics behind it are HopperConfig.h's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_SELECTCONFIG_H
#define ATTN_TRANSFORMS_SELECTCONFIG_H

#include "attn/Dialect/Attn/IR/Attn.h"

namespace mlir::attn {

/// What a kernel's config is asked for: attn-select-config's options.
struct ConfigRequest {
  bool fma = false;               // the CUDA-core path, else wgmma
  int64_t blockM = 0, blockN = 0; // 0: chosen
  int64_t stages = 0;             // 0: chosen (wgmma)
  bool pingPong = true, overlap = true;
  /// The element type the attention computes in where it is not Q's: e4m3
  /// for a bf16 op that attn-quantize-fp8 rewrites into an FP8 one.
  Type computeType;
};

/// The #attn.config of forward op `op` (attn.attention,
/// attn.partial_attention or attn.varlen_attention with a static head dim
/// D) for `request`. Fails, with an error at `op`, on a wgmma BLOCK_M that
/// is not 64, 128 or 192 and on Q with two K/V stages beyond 227 KiB of
/// shared memory.
FailureOr<ConfigAttr> selectConfig(Operation *op,
                                   const ConfigRequest &request);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_SELECTCONFIG_H

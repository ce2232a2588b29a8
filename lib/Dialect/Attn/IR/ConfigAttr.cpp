//===- ConfigAttr.cpp - #attn.config's verifier ---------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

using namespace mlir;
using namespace mlir::attn;

/// A tile every pass accepts and a schedule some lowering runs: the
/// CUDA-core path (no consumer warpgroup) has no ring; the tensor-core path
/// has 64 rows per consumer warpgroup, a ring of at least two stages,
/// ping-pong between two or more warpgroups and overlap with three or more
/// stages (attn-tma-ring).
LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t blockM, int64_t blockN,
                                 int64_t stages, int64_t consumerWarpgroups,
                                 BoolAttr pingPong, BoolAttr overlap) {
  if (!isValidBlockM(blockM) || !isValidBlockN(blockN))
    return emitError() << "block_m must be in [1, " << kMaxBlockM
                       << "] and block_n in [1, " << kMaxBlockN
                       << "], but got " << blockM << " and " << blockN;
  if (!pingPong || !overlap)
    return emitError() << "ping_pong and overlap must be true or false";
  if (consumerWarpgroups == 0) {
    if (stages != 0 || pingPong.getValue() || overlap.getValue())
      return emitError() << "the CUDA-core path (consumer_warpgroups = 0) "
                            "has no ring: stages must be 0 and ping_pong, "
                            "overlap false";
    return success();
  }
  if (consumerWarpgroups < 0 || consumerWarpgroups > kMaxConsumerWarpgroups ||
      blockM != consumerWarpgroups * kWarpgroupRows)
    return emitError() << "consumer_warpgroups must be 1 to "
                       << kMaxConsumerWarpgroups << " of " << kWarpgroupRows
                       << " rows each (block_m / " << kWarpgroupRows
                       << "), but got " << consumerWarpgroups
                       << " for block_m " << blockM;
  if (stages < 2)
    return emitError() << "a tensor-core ring needs at least 2 stages, but "
                          "got "
                       << stages;
  if (pingPong.getValue() && consumerWarpgroups < 2)
    return emitError() << "ping_pong needs two or more consumer warpgroups";
  if (overlap.getValue() && stages < 3)
    return emitError() << "overlap needs 3 or more stages (a block holds its "
                          "slot one iteration longer)";
  return success();
}

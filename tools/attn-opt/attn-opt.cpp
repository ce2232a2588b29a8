//===- attn-opt.cpp - mlir-opt for the attn dialect -----------------------===//
//
// Runs attn and upstream passes and pipelines on .mlir input, e.g.
//   attn-opt --attn-to-cubin --mlir-print-ir-after-all in.mlir
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  mlir::attn::registerAttnPassesAndPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn optimizer driver: FlashAttention as MLIR passes\n",
      registry));
}

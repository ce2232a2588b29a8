//===- QuantizeFP8.h - quantize step of quantized kernels -*- C++ -*-===//
//
// A bundle kernel with attn.quantize_fp8 runs attn-quantize-fp8 before
// attn-to-cubin; the writer then has to tell the buffers the pass allocated
// apart after lowering. These helpers run the pass and name the buffers
// (the attn.workspace attribute on their memref.alloc).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_QUANTIZEFP8_H
#define ATTN_LIB_TARGET_QUANTIZEFP8_H

#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::attn {

/// The attribute naming a quantized kernel's workspace buffer on its
/// memref.alloc ("q_fp8", "k_descale", ...).
inline constexpr llvm::StringLiteral kWorkspaceTag = "attn.workspace";

/// The buffer `view` is a memref.subview / memref.transpose chain of (V^T's
/// view of its storage), or `view` itself.
Value viewedBuffer(Value view);

/// The operand whose e4m3 copy the buffer tagged `name` holds (q_fp8: q,
/// k_fp8: k, v_fp8: v), or nullopt.
std::optional<::attn::bundle::Operand> quantizedCopyOf(StringRef name);

/// Runs attn-quantize-fp8 on `func` (the only function of `module`) with
/// the key's options, block sizes defaulting to the key's (the FP8 tiles),
/// tags the buffers the FP8 attention reads (kWorkspaceTag) and records
/// every option's value in `key.quantizeFp8`.
LogicalResult quantizeFunction(ModuleOp module, func::FuncOp func,
                               ::attn::bundle::FwdKey &key);

/// The quantization recipe of attn-quantize-fp8 `options` (a key's
/// normalized quantize_fp8): every option but the scale blocks' sizes,
/// which follow the tile. Kernels of one recipe agree up to rounding.
std::string quantizeRecipe(StringRef options);

} // namespace mlir::attn

#endif // ATTN_LIB_TARGET_QUANTIZEFP8_H

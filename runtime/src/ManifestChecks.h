//===- ManifestChecks.h - the manifest reader's checks ----------*- C++ -*-===//
//
// What parseManifest checks besides each field's own form (Manifest.cpp):
// the size of the text before it is parsed, the keys every object may have
// and the values of the free-form ones (ManifestSchema.cpp), and the
// operand types the writer recorded against the key (ManifestOperands.cpp).
// Internal to the reader.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFESTCHECKS_H
#define ATTN_RUNTIME_MANIFESTCHECKS_H

#include "Manifest.h"

#include "llvm/ADT/Twine.h"

namespace attn::bundle {

/// "`at`: `what`" as the reader's error.
llvm::Error corrupt(const llvm::Twine &at, const llvm::Twine &what);

/// Why a kernel of `kernel`'s kind and key has no operand `op` ("in a
/// kernel without LSE"), or nothing when it has it.
std::optional<std::string> whyAbsent(const KernelEntry &kernel, Operand op);

/// What a scan of JSON text sees outside its strings: the deepest nesting
/// and the number of objects.
struct JsonShape {
  size_t depth = 0, objects = 0;
};
JsonShape scanJSON(llvm::StringRef text);

/// Before parsing: at most kMaxManifestBytes and kMaxManifestObjects JSON
/// objects (each costs the parser kilobytes), nested at most 64 deep.
llvm::Error checkManifestText(llvm::StringRef text);

/// Every object of the parsed manifest has only the keys its place in the
/// schema allows, and there are at most kMaxManifestKernels kernels.
llvm::Error checkKnownKeys(const llvm::json::Value &manifest);

/// The manifest's free-form values: a known chip, kernel names given once.
llvm::Error checkManifestValues(const Manifest &manifest);

/// A quantized key's options, as attn-compile records them in full: each
/// of block-m, block-n (integers >= 0), hadamard (true, false),
/// qk-granularity (tensor, head, block) and v-granularity (head, channel)
/// once, as key=value separated by spaces.
llvm::Error checkQuantizeOptions(llvm::StringRef options,
                                 const llvm::Twine &at);

/// The operand types the writer recorded (KernelEntry::operands, when
/// present) are those of the key: one per tensor operand the kernel has,
/// of its rank and dtype, each dimension the key fixes equal to the key's
/// value (null where the key is dynamic) and the others dynamic.
llvm::Error checkOperandTypes(const KernelEntry &kernel, const llvm::Twine &at);

/// KernelEntry::operands as JSON ({"q": {"dtype": ..., "shape": [...]}})
/// and back.
llvm::json::Value operandsToJSON(const std::vector<OperandType> &operands);
bool operandsFromJSON(const llvm::json::Value &value,
                      std::vector<OperandType> &operands,
                      llvm::json::Path path);

} // namespace attn::bundle

#endif // ATTN_RUNTIME_MANIFESTCHECKS_H

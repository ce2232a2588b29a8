//===- ManifestChecks.h - the manifest reader's checks ----------*- C++ -*-===//
//
// What parseManifest (ManifestDecode.cpp) checks besides each field's own
// form: the key, launch shape and resources (ManifestKeyChecks.cpp), the
// parameters and tensor maps (ManifestParamChecks.cpp), wgmma, quantized and
// split kernels (ManifestKernelChecks.cpp),
// the size of the text before it is parsed, the keys every object may have
// and the values of the free-form ones (ManifestSchema.cpp), and the
// operand types the writer recorded against the key (ManifestOperands.cpp).
// Internal to the reader.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MANIFEST_MANIFESTCHECKS_H
#define ATTN_MANIFEST_MANIFESTCHECKS_H

#include "attn/manifest/Manifest.h"

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

/// The element type of operand `op` in a kernel of `key`: the key's dtype,
/// but a bf16 O for e4m3, f32 LSE and descales, i32 tables.
llvm::StringRef expectedDtype(Operand op, const FwdKey &key);
/// Bytes per element of an operand or workspace dtype (0: unknown).
int64_t dtypeBytes(llvm::StringRef dtype);
/// The sizes of rank-4 operand `op` ([B, H, N, D]) in a kernel of `key`,
/// when the key fixes all four.
std::optional<std::array<int64_t, 4>> staticDims(Operand op, const FwdKey &key);

/// The lengths of one call, for checks that evaluate a launch's grid; each
/// one the key fixes is the key's.
struct CallSample {
  int64_t batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK;
};
/// Size `dim` of operand `op` (the value of a scalar operand) in a call of
/// `sample` to a kernel of `key`: [B, Hq, Nq, D], varlen's total = B * N,
/// paged caches of ceil(Nk / page_size) pages per sequence.
int64_t sampleSize(Operand op, int64_t dim, const FwdKey &key,
                   const CallSample &sample);

/// KernelEntry::operands as JSON ({"q": {"dtype": ..., "shape": [...]}})
/// and back.
llvm::json::Value operandsToJSON(const std::vector<OperandType> &operands);
bool operandsFromJSON(const llvm::json::Value &value,
                      std::vector<OperandType> &operands,
                      llvm::json::Path path);

// The reader's checks of one kernel entry, in the order checkKernel runs
// them; `at` names the entry ("kernels[3]") in the error.

/// The key's fields and their combinations (ManifestKeyChecks.cpp).
llvm::Error checkKey(const FwdKey &key, const llvm::Twine &at);
/// What a backward ("bwd") kernel's key must be.
llvm::Error checkBwdKey(const FwdKey &key, const llvm::Twine &at);
/// The attention launch's grid covers the output, and every launch's shared
/// memory holds its largest TMA box (ManifestCoverage.cpp).
llvm::Error checkCoverage(const KernelEntry &kernel, const llvm::Twine &at);
/// A grid or workspace term names an operand and dimension the kernel has.
llvm::Error checkGridTerm(const KernelEntry &kernel, const GridTerm &t,
                          const llvm::Twine &at);
/// A launch's grid, threads, cluster and shared memory are in range.
llvm::Error checkLaunch(const KernelEntry &kernel, const llvm::Twine &at);
/// ptxas's resource counts are in range.
llvm::Error checkResources(const Resources &r, const llvm::Twine &at);
/// The parameter list: each memref descriptor whole and in order, tensor
/// maps of the kernel's operands (ManifestParamChecks.cpp).
llvm::Error checkParams(const KernelEntry &kernel, const llvm::Twine &at);
/// Every check of kernel entry `index` (ManifestKernelChecks.cpp).
llvm::Error checkKernel(const KernelEntry &kernel, size_t index);

} // namespace attn::bundle

#endif // ATTN_MANIFEST_MANIFESTCHECKS_H

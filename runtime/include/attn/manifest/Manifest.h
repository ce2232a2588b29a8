//===- Manifest.h - the kernel bundle manifest (manifest.json) --*- C++ -*-===//
//
// The schema of a bundle's manifest.json, shared by the writer (attn-compile)
// and the reader (the runtime). Everything needed to launch a kernel without
// MLIR is here: its kind, specialization key, launch shape as a function of
// the call's tensor sizes, and the ordered parameter list. docs/bundle.md
// describes the JSON form; toJSON/fromJSON below are its only encoder and
// decoder (llvm::json).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MANIFEST_MANIFEST_H
#define ATTN_MANIFEST_MANIFEST_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::bundle {

/// Version of the manifest schema this code writes and reads. 5: every
/// tensor map records its swizzle as the compiler built it, and the reader
/// holds what is recorded to CUDA's and TMA's limits, to the key and to the
/// call, without the compiler's tiling rules (thread counts, box rows) that
/// versions 2 to 4 were checked against; a manifest of another version is
/// refused (rebuild the bundle with attn-compile).
constexpr int64_t kManifestVersion = 5;

/// The operands of a forward kernel, in attn.attention order: the FP8
/// (e4m3) descales [B, Hkv], then a paged K/V cache's block table
/// [B, max_pages] and cache sequence lengths [B] (i32), then a varlen
/// kernel's (attn.varlen_attention) cu_seqlens_q / cu_seqlens_k [B + 1]
/// (i32) and the scalars max_seqlen_q / max_seqlen_k; last the operands a
/// backward kernel (attn.attention_grad) adds: the output gradient dO
/// ("dout") [B, Hq, Nq, D] and the gradients dQ [B, Hq, Nq, D], dK and dV
/// [B, Hkv, Nk, D] it writes.
enum class Operand {
  Q,
  K,
  V,
  O,
  LSE,
  QDescale,
  KDescale,
  VDescale,
  BlockTable,
  CacheSeqlens,
  CuSeqlensQ,
  CuSeqlensK,
  MaxSeqlenQ,
  MaxSeqlenK,
  DO,
  DQ,
  DK,
  DV
};
/// Number of Operand values (for arrays indexed by operand).
constexpr size_t kNumOperands = 18;
llvm::StringRef operandName(Operand operand);
std::optional<Operand> parseOperand(llvm::StringRef name);
/// The rank of each operand: 4, except 3 for LSE, 2 for the descales and
/// the block table, 1 for the cache sequence lengths and cu_seqlens, 0 for
/// the max_seqlen scalars. In a varlen kernel (`varlen`) q, k, v and o are
/// packed [total, H, D] (rank 3) and lse is [Hq, total_q] (rank 2), except
/// that k and v of a varlen paged kernel (`paged`) are the caches
/// [num_pages, page_size, Hkv, D] (rank 4), as in every paged kernel.
int64_t operandRank(Operand operand, bool varlen = false, bool paged = false);
/// True for q_descale, k_descale and v_descale.
bool isDescale(Operand operand);
/// True for block_table and cache_seqlens (paged K/V kernels only).
bool isPagedOperand(Operand operand);
/// True for cu_seqlens_q/k and max_seqlen_q/k (varlen kernels only).
bool isVarlenOperand(Operand operand);
/// True for max_seqlen_q and max_seqlen_k: scalars (rank 0), passed as one
/// 64-bit `value` parameter.
bool isScalarOperand(Operand operand);
/// True for dout (dO), dq, dk and dv (backward kernels only).
bool isGradOperand(Operand operand);

/// Specialization key of a forward kernel. A length that is nullopt is
/// dynamic: the kernel reads it from the call.
struct FwdKey {
  std::string dtype; // "f16", "bf16" or "e4m3" (FP8: bf16 O, descales)
  int64_t headDim = 0;
  bool causal = false;
  bool hasLse = false;
  double scale = 0; // the softmax scale baked into the kernel
  std::optional<int64_t> batch, numHeadsQ, numHeadsKV, seqLenQ, seqLenK;
  /// True when the kernel takes any strides (unit stride on D); false when
  /// it assumes contiguous row-major [B, H, N, D] tensors.
  bool strided = true;
  int64_t blockM = 0, blockN = 0;
  /// K/V splits of split-KV (flash-decoding): 1 = unsplit; S > 1: the
  /// kernel is a partial attention over S splits and a combine (two
  /// launches, a workspace).
  int64_t splits = 1;
  /// "wgmma" (Hopper: TMA + mbarrier pipeline, warpgroup MMA; needs tensor
  /// maps) or "fma" (CUDA-core kernel).
  std::string path = "fma";
  /// Paged K/V (attn.attention's `paged` clause): tokens per page of the
  /// [num_pages, page_size, Hkv, D] K/V caches; 0: contiguous [B, Hkv, Nk,
  /// D] K/V.
  int64_t pageSize = 0;
  /// A variable-length batch (attn.varlen_attention, FlashAttention-2's
  /// varlen layout): q, o [total_q, Hq, D], k, v [total_k, Hkv, D], lse
  /// [Hq, total_q], cu_seqlens_q/k [B + 1] and max_seqlen_q/k; batch,
  /// seqlen_q and seqlen_k are always null.
  bool varlen = false;
  /// A quantized kernel (attn-quantize-fp8): bf16 q, k, v quantized to e4m3
  /// workspace copies by its first launches, then the FP8 attention; the
  /// value is the pass's options ("qk-granularity=block ..."). nullopt: not
  /// quantized. dtype stays the operands' ("bf16"); calls select such a
  /// kernel only when they ask for it (attn_fwd_args::quantize).
  std::optional<std::string> quantizeFp8;

  /// Number of the five lengths that are static.
  int numStaticLengths() const;
};

/// operandRank in a kernel of `key` (its varlen and page_size).
int64_t operandRank(Operand operand, const FwdKey &key);

/// ceil((size(operand, dim) + offset) / divisor), or for a scalar operand
/// (max_seqlen_q) ceil((value + offset) / divisor); a negative sum counts
/// as 0. `offset` is 0 except in varlen grids (B = dim(cu_seqlens_q) - 1).
struct GridTerm {
  Operand operand = Operand::Q;
  int64_t dim = 0;
  int64_t divisor = 1;
  int64_t offset = 0;
};

/// One grid dimension: `constant` times the product of `terms` (a 1-D grid
/// folds Q blocks, heads and batch: ceil(Nq / BLOCK_M) * Hq * B).
struct GridDim {
  int64_t constant = 1;
  std::vector<GridTerm> terms;
};

/// The extent `dim` gives for the sizes `size(operand, d)` returns (for a
/// scalar operand, its value): constant * prod ceil(max(size + offset, 0) /
/// divisor), saturated at INT64_MAX.
int64_t evaluate(const GridDim &dim,
                 llvm::function_ref<int64_t(Operand, int64_t)> size);

/// One kernel parameter, in the expanded memref-descriptor ABI of MLIR's
/// GPU lowering: per memref operand, allocated pointer, aligned pointer,
/// offset, `rank` sizes, then `rank` strides (all 64-bit). A TensorMap is a
/// 128-byte CUtensorMap passed by value (__grid_constant__) that the
/// runtime encodes per call: the operand viewed as the rank-4 tensor
/// [B, H, N, D] (innermost first: D, N, H, B), copied in boxes of `box`
/// elements (innermost first), 128-byte swizzled, out-of-bounds elements
/// zero. A `transposed` map (FP8 V, stored V^T with unit stride along Nk)
/// views the operand as (Nk, D, H, B) instead, innermost first; a
/// `heads_inner` map (GQA packing: Q and O) as (D, H, N, B), so that a box
/// [span, G, rows / G, 1] holds the G query heads of a KV group
/// query-major; the same dimension order views a paged kernel's K or V
/// cache [num_pages, page_size, Hkv, D] as (D, page_size, Hkv, num_pages),
/// boxes [64, min(page_size, block_n), 1, 1]. A `packed` map (varlen
/// kernels) views a rank-3 [total, H, D] operand as (D, total, H, 1), or
/// with heads_inner (GQA packing of Q) as (D, H, total, 1). A Value is a
/// scalar operand (max_seqlen_q), one 64-bit integer. A TensorMap of a
/// workspace buffer (a quantized kernel's e4m3 copies) states its view
/// itself: `dims` (innermost first) and `strides` of dims 1 to 3, in
/// elements of the buffer, from its first element (`transposed`: the copy
/// of V stored V^T, dims (Nk, D, Hkv, B)). Every tensor map records the
/// `swizzle` span in bytes (0, 32, 64 or 128) of the compiler's
/// descriptor.
struct Param {
  enum class Field {
    AllocatedPtr,
    AlignedPtr,
    Offset,
    Size,
    Stride,
    TensorMap,
    Value
  };
  Operand operand = Operand::Q;
  Field field = Field::AlignedPtr;
  int64_t index = 0;                         // dimension, for Size and Stride
  std::array<int64_t, 4> box = {0, 0, 0, 0}; // for TensorMap
  bool transposed = false; // for TensorMap: dims (N, D, H, B)
  bool headsInner = false; // for TensorMap: dims (D, H, N, B)
  bool packed = false;     // for TensorMap: a rank-3 [total, H, D] operand
  /// >= 0: the parameter describes workspace buffer `workspace` of the
  /// kernel (a contiguous fp32 memref) instead of `operand`.
  int64_t workspace = -1;
  /// For a TensorMap of a workspace buffer: its view.
  std::array<int64_t, 4> dims = {0, 0, 0, 0};
  std::array<int64_t, 3> strides = {0, 0, 0};
  /// For every TensorMap: the swizzle span in bytes (0: none).
  int64_t swizzle = 128;
};
llvm::StringRef fieldName(Param::Field field);

/// Resource usage ptxas reported for the kernel (ptxas -v).
struct Resources {
  int64_t registers = 0;
  int64_t sharedBytes = 0; // static shared memory
  int64_t stackBytes = 0;
  int64_t spillStoreBytes = 0;
  int64_t spillLoadBytes = 0;
};

/// One kernel launch: the cubin and symbol, launch shape and parameters.
struct KernelLaunch {
  std::string name;  // the kernel symbol in the cubin
  std::string cubin; // file name, relative to the bundle directory
  std::string cubinSha256; // of the cubin's bytes, 64 lowercase hex digits
  std::string ptx;   // file name of its PTX (kept for reading; unused)
  std::array<GridDim, 3> grid;
  std::array<int64_t, 3> threads = {1, 1, 1};
  int64_t dynamicSharedBytes = 0;
  std::array<int64_t, 3> cluster = {1, 1, 1};
  std::vector<Param> params;
  Resources resources;
};

/// A device buffer the runtime provides for the duration of a call
/// (split-KV's O_partial [S, B, Hq, Nq, D] and LSE_partial [S, B, Hq, Nq];
/// a quantized kernel's e4m3 copies, descales and amax scratch):
/// contiguous `dtype` ("f32", "i32" or "e4m3") of `shape`, each extent a
/// function of the call's sizes like a grid dimension. `copyOf` names the
/// operand (q, k or v) whose e4m3 copy a quantized kernel keeps there.
struct Workspace {
  std::string name;
  std::vector<GridDim> shape;
  std::string dtype = "f32";
  std::optional<Operand> copyOf;
};
/// Bytes per element of a workspace dtype (0: unknown).
int64_t workspaceElementBytes(llvm::StringRef dtype);

/// The element type and shape of one operand as the kernel was compiled
/// for it (a dimension nullopt: dynamic), off the kernel function's
/// argument types. attn-compile records them so that the reader can hold
/// the key to the code: a key edited by hand (head_dim 128 -> 64) no
/// longer matches the shapes the kernel was built for.
struct OperandType {
  Operand operand = Operand::Q;
  std::string dtype; // "f16", "bf16", "e4m3", "f32" or "i32"
  std::vector<std::optional<int64_t>> shape;
};

/// A forward kernel: its first launch (the fields of KernelLaunch), then `then`
/// in order on the same stream, with the `workspace` buffers the launches
/// share.
struct KernelEntry : KernelLaunch {
  /// "fwd", or "bwd": the backward of attn.attention (attn.attention_grad),
  /// whose key has the forward's fields (lse always true, every length
  /// static) and whose launches (preprocess, dQ_acc = 0, dK/dV, dQ) share
  /// fp32 workspace buffers (Delta, LSE_log2, dQ_acc).
  std::string kind;
  FwdKey key;
  /// The attn-to-cubin options the kernel was compiled with beyond the
  /// bundle's ("block-n=192"); empty for the default. Kernels whose keys tie
  /// for a call are variants of one kernel: the runtime launches the first
  /// in the manifest unless a tuning choice names another (Bundle::tune).
  std::string variant;
  /// A persistent kernel (attn-async-pipeline persistent-ctas): the CTAs of
  /// its attention launch (persistentLaunch) loop over the tiles, so any
  /// grid x computes the same result; the runtime launches min(grid x, the
  /// device's SM count). 0: not persistent.
  int64_t persistentCtas = 0;
  std::vector<KernelLaunch> then;
  std::vector<Workspace> workspace;
  /// Each tensor operand's type as compiled (attn-compile writes them;
  /// manifests written before them have none, and then nothing is checked).
  std::vector<OperandType> operands;

  bool isBackward() const { return kind == "bwd"; }
  bool isQuantized() const { return key.quantizeFp8.has_value(); }
  /// The launches in order: this entry's own, then `then`.
  size_t numLaunches() const { return 1 + then.size(); }
  const KernelLaunch &launch(size_t i) const {
    return i == 0 ? static_cast<const KernelLaunch &>(*this) : then[i - 1];
  }
  /// The launch `persistentCtas` describes: the attention, which is the last
  /// launch of a quantized kernel (after its quantize launches) and the only
  /// launch of any other persistent one.
  size_t persistentLaunch() const { return isQuantized() ? then.size() : 0; }
};

struct Manifest {
  int64_t version = kManifestVersion;
  std::string generator; // e.g. "attn-compile"
  std::string chip;      // e.g. "sm_90a"
  std::vector<KernelEntry> kernels;
};

llvm::json::Value toJSON(const Manifest &manifest);
/// The operand types the writer recorded (KernelEntry::operands, when
/// present) are those of the key: one per tensor operand the kernel has,
/// of its rank and dtype, each dimension the key fixes equal to the key's
/// value (null where the key is dynamic) and the others dynamic. The
/// writer checks a kernel function with it before compiling.
llvm::Error checkOperandTypes(const KernelEntry &kernel, const llvm::Twine &at);

bool fromJSON(const llvm::json::Value &value, Manifest &manifest,
              llvm::json::Path path);

/// The most a manifest may hold: bytes, kernels, and JSON objects (each
/// costs llvm::json some 4 KiB while the manifest is parsed, so this bounds
/// the reader's memory; a kernel takes 50 to 300).
constexpr uint64_t kMaxManifestBytes = uint64_t(16) << 20;
constexpr size_t kMaxManifestKernels = 1024;
constexpr size_t kMaxManifestObjects = size_t(1) << 18;

/// The largest page_size of a paged K/V kernel.
constexpr int64_t kMaxPageSize = int64_t(1) << 20;

/// The most dynamic shared memory a kernel may ask for (sm_90: 227 KiB).
constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;

/// SHA-256 of `bytes` as 64 lowercase hex digits (KernelEntry::cubinSha256).
std::string sha256Hex(llvm::StringRef bytes);

/// llvm::json::parse behind a nesting-depth limit (64 levels): the parser
/// recurses per level, so unbounded input could overflow the stack. A key
/// given twice in one object is an error (the parser would keep the last).
llvm::Expected<llvm::json::Value> parseJSON(llvm::StringRef text);

/// Parses manifest.json text and checks the schema and its invariants
/// (size, version, known keys, kind, dtype, chip and operands, unique
/// kernel names, ranks, positive launch shape, parameters in range, the
/// recorded operand types against the key). The error message names the
/// offending field.
llvm::Expected<Manifest> parseManifest(llvm::StringRef text);

/// The kernel's symbol and dispatch key, in the order the runtime states a
/// call's key: "k: bf16 D=128 causal +lse B=1 Hq=32 Hkv=8 Nq=? Nk=?
/// scale=0.08838835 strided".
std::string describeKey(const KernelEntry &kernel);

/// describeKey with the kind, block sizes, threads and ptxas resources.
std::string describe(const KernelEntry &kernel);

} // namespace attn::bundle

#endif // ATTN_MANIFEST_MANIFEST_H

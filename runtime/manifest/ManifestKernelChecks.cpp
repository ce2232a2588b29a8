//===- ManifestKernelChecks.cpp - wgmma, quantized, split kernels ---------===//

#include "ManifestChecks.h"
#include "attn/manifest/Manifest.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"

#include <cmath>

using namespace attn::bundle;
namespace json = llvm::json;
using llvm::StringRef;

namespace attn::bundle {

/// Rows of O one consumer warpgroup writes with a TMA store.
constexpr int64_t kWarpgroupRows = 64;

/// What attn-lower-to-wgmma kernels are: one producer and one to three
/// consumer warpgroups of 64 rows each (BLOCK_M / 64), a dynamic
/// shared-memory ring, and exactly one tensor map each for q (box rows
/// BLOCK_M), k and v (box rows BLOCK_N; paged: min(page_size, BLOCK_N)),
/// and at most one for o (box rows 64, the TMA-store epilogue).
static llvm::Error checkWgmma(const KernelEntry &kernel,
                              const llvm::Twine &at) {
  const std::array<int64_t, 3> &t = kernel.threads;
  int64_t blockM = kernel.key.blockM;
  bool validM = blockM == 64 || blockM == 128 || blockM == 192;
  if (!validM || t[0] != 128 + 2 * blockM || t[1] != 1 || t[2] != 1)
    return corrupt(at + ".launch.threads",
                   "a wgmma kernel runs [128 * (1 + block_m / 64), 1, 1] "
                   "threads (a producer and 1 to 3 consumer warpgroups of 64 "
                   "rows), not [" +
                       llvm::Twine(t[0]) + ", " + llvm::Twine(t[1]) + ", " +
                       llvm::Twine(t[2]) + "] with block_m " +
                       llvm::Twine(blockM));
  if (kernel.dynamicSharedBytes <= 0)
    return corrupt(at + ".launch.dynamic_shared_bytes",
                   "a wgmma kernel keeps its tiles in dynamic shared memory "
                   "(must be > 0)");
  std::array<int, 4> maps = {};
  // GQA packing views Q and O alike: their maps are heads_inner together.
  std::optional<bool> packed;
  for (const Param &p : kernel.params) {
    if (p.field != Param::Field::TensorMap)
      continue;
    ++maps[static_cast<size_t>(p.operand)];
    if (p.operand == Operand::Q || p.operand == Operand::O) {
      if (packed && *packed != p.headsInner)
        return corrupt(at + ".params",
                       "the tensor maps of q and o must both be heads_inner "
                       "(GQA packing) or neither");
      packed = p.headsInner;
    }
    // Paged K/V boxes: checkPagedMap checked them.
    if (kernel.key.pageSize > 0 &&
        (p.operand == Operand::K || p.operand == Operand::V))
      continue;
    // V^T boxes: 128 keys of all D rows (checkTensorMap checked the keys).
    if (p.transposed) {
      if (p.box[1] != kernel.key.headDim)
        return corrupt(at + ".params",
                       llvm::formatv("the transposed tensor map of v must "
                                     "have head_dim = {0} rows, not {1}",
                                     kernel.key.headDim, p.box[1]));
      continue;
    }
    int64_t rows = p.operand == Operand::Q   ? kernel.key.blockM
                   : p.operand == Operand::O ? kWarpgroupRows
                                             : kernel.key.blockN;
    StringRef what = p.operand == Operand::Q   ? "block_m"
                     : p.operand == Operand::O ? "one warpgroup's rows"
                                               : "block_n";
    if (p.headsInner) {
      const FwdKey &key = kernel.key;
      if (!key.numHeadsQ || !key.numHeadsKV ||
          p.box[1] * *key.numHeadsKV != *key.numHeadsQ)
        return corrupt(at + ".params",
                       llvm::formatv("the heads_inner tensor map of {0} packs "
                                     "{1} heads; GQA packing needs static "
                                     "num_heads_q = {1} * num_heads_kv",
                                     operandName(p.operand), p.box[1]));
    }
    int64_t boxRows = p.headsInner ? p.box[1] * p.box[2] : p.box[1];
    if (boxRows != rows)
      return corrupt(at + ".params",
                     llvm::formatv("the tensor map of {0} must have {1} rows "
                                   "({2}), not {3}",
                                   operandName(p.operand), rows, what,
                                   boxRows));
  }
  if (maps[0] != 1 || maps[1] != 1 || maps[2] != 1 || maps[3] > 1)
    return corrupt(at + ".params", "a wgmma kernel takes exactly one tensor "
                                   "map each of q, k and v, and at most one "
                                   "of o");
  return llvm::Error::success();
}

/// Extents of a static workspace buffer (checked static before).
static std::vector<int64_t> staticShape(const Workspace &buffer) {
  std::vector<int64_t> shape;
  for (const GridDim &dim : buffer.shape)
    shape.push_back(dim.constant);
  return shape;
}

/// "[a, b, ..]".
static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t n) { return std::to_string(n); }),
                    ", ") +
         "]";
}

/// A tensor map of a quantized kernel's e4m3 copy views all of it in the
/// layout the attention reads: dims [D, N, H, B] of Q or K, [Nk, D, Hkv, B]
/// of V^T (its padding past Nk unread), strides of the copy's row-major
/// extents.
static llvm::Error checkCopyView(const KernelEntry &kernel, const Param &p,
                                 const llvm::Twine &at) {
  const Workspace &copy = kernel.workspace[p.workspace];
  std::vector<int64_t> s = staticShape(copy);
  int64_t inner = *copy.copyOf == Operand::V ? *kernel.key.seqLenK : s[3];
  std::array<int64_t, 4> dims = {inner, s[2], s[1], s[0]};
  std::array<int64_t, 3> strides = {s[3], s[2] * s[3], s[1] * s[2] * s[3]};
  if (p.dims != dims || p.strides != strides)
    return corrupt(
        at, llvm::formatv("the tensor map of the e4m3 copy of {0} views it "
                          "whole: dims {1}, strides {2}",
                          operandName(*copy.copyOf), shapeString(dims),
                          shapeString(strides)));
  return llvm::Error::success();
}

/// The last launch of a quantized kernel, the FP8 attention: a wgmma
/// kernel's threads and shared memory (checkWgmma) reading q, k and v
/// through exactly one tensor map each of their e4m3 copies: boxes of 128
/// bytes innermost by block_m rows (q), block_n rows (k), head_dim rows (v,
/// stored V^T); an operand map only for o (the TMA-store epilogue).
static llvm::Error checkQuantizedAttention(const KernelEntry &kernel,
                                           const llvm::Twine &at) {
  size_t last = kernel.numLaunches() - 1;
  std::string where = (at + ".then[" + llvm::Twine(last - 1) + "]").str();
  KernelEntry view = kernel; // the key with the attention's shape
  static_cast<KernelLaunch &>(view) = kernel.launch(last);
  const FwdKey &key = kernel.key;
  int64_t blockM = key.blockM;
  const std::array<int64_t, 3> &t = view.threads;
  if (!(blockM == 64 || blockM == 128 || blockM == 192) ||
      t != std::array<int64_t, 3>{128 + 2 * blockM, 1, 1} ||
      view.dynamicSharedBytes <= 0)
    return corrupt(where + ".launch",
                   "the attention of a quantized kernel runs [128 * (1 + "
                   "block_m / 64), 1, 1] threads (block_m 64, 128 or 192) "
                   "with dynamic shared memory");
  std::array<int, 3> maps = {};
  for (const Param &p : view.params) {
    if (p.field != Param::Field::TensorMap)
      continue;
    if (p.workspace < 0) {
      if (p.operand != Operand::O)
        return corrupt(where + ".params",
                       "the attention of a quantized kernel reads q, k and "
                       "v through their e4m3 copies (workspace maps)");
      continue;
    }
    Operand op = *kernel.workspace[p.workspace].copyOf;
    int64_t rows = op == Operand::Q   ? key.blockM
                   : op == Operand::K ? key.blockN
                                      : key.headDim;
    ++maps[static_cast<size_t>(op)];
    if (llvm::Error err = checkCopyView(kernel, p, where + ".params"))
      return err;
    if (p.box != std::array<int64_t, 4>{128, rows, 1, 1})
      return corrupt(where + ".params",
                     llvm::formatv("the tensor map of the e4m3 copy of {0} "
                                   "must have box [128, {1}, 1, 1], got [{2}, "
                                   "{3}, {4}, {5}]",
                                   operandName(op), rows, p.box[0], p.box[1],
                                   p.box[2], p.box[3]));
  }
  if (maps != std::array<int, 3>{1, 1, 1})
    return corrupt(where + ".params",
                   "the attention of a quantized kernel takes exactly one "
                   "tensor map each of the e4m3 copies of q, k and v");
  return llvm::Error::success();
}

/// Symbol and cubin of a launch.
static llvm::Error checkFiles(const KernelLaunch &kernel,
                              const std::string &at) {
  if (kernel.name.empty())
    return corrupt(at + ".name", "must not be empty");
  StringRef cubin = kernel.cubin;
  if (cubin.empty() || cubin.contains('/') || cubin.starts_with("."))
    return corrupt(at + ".cubin", "must be a file name inside the bundle");
  if (kernel.cubinSha256.size() != 64 ||
      !llvm::all_of(kernel.cubinSha256, [](char c) {
        return llvm::isDigit(c) || (c >= 'a' && c <= 'f');
      }))
    return corrupt(at + ".cubin_sha256", "must be 64 lowercase hex digits");
  return llvm::Error::success();
}

/// A workspace buffer's dtype, and copy_of (q, k or v, e4m3) only in a
/// quantized kernel.
static llvm::Error checkWorkspaceKind(const KernelEntry &kernel,
                                      const Workspace &buffer,
                                      const std::string &at) {
  if (workspaceElementBytes(buffer.dtype) == 0)
    return corrupt(at + ".dtype", "expected \"f32\", \"i32\" or \"e4m3\", "
                                  "got \"" +
                                      buffer.dtype + "\"");
  if (!buffer.copyOf)
    return llvm::Error::success();
  Operand op = *buffer.copyOf;
  if (!kernel.isQuantized() ||
      !(op == Operand::Q || op == Operand::K || op == Operand::V) ||
      buffer.dtype != "e4m3")
    return corrupt(at + ".copy_of", "only a quantized (quantize_fp8) kernel "
                                    "keeps copies, e4m3 ones of q, k or v");
  return llvm::Error::success();
}

/// What the key gives a quantized kernel's e4m3 copy of `op`: Q [B, Hq, Nq,
/// D], K [B, Hkv, Nk, D], V stored V^T [B, Hkv, D, Nk padded to 16 bytes].
static std::vector<int64_t> copyShape(const FwdKey &key, Operand op) {
  int64_t b = *key.batch, d = key.headDim;
  if (op == Operand::Q)
    return {b, *key.numHeadsQ, *key.seqLenQ, d};
  if (op == Operand::K)
    return {b, *key.numHeadsKV, *key.seqLenK, d};
  return {b, *key.numHeadsKV, d,
          static_cast<int64_t>(llvm::alignTo(*key.seqLenK, 16))};
}

static int64_t ceilDiv(int64_t n, int64_t d) { return (n + d - 1) / d; }

/// The descale shapes a quantized kernel may have, per granularity: [B,
/// Hkv] (per tensor or head) or per block of the tile (q: [B, Hq,
/// ceil(Nq / block_m)], k: [B, Hkv, ceil(Nk / block_n)]); v: [B, Hkv], or
/// [B, Hkv, D] per channel. Empty for other buffers.
static std::vector<std::vector<int64_t>> descaleShapes(const FwdKey &key,
                                                       StringRef name) {
  int64_t b = *key.batch, hq = *key.numHeadsQ, hkv = *key.numHeadsKV;
  std::vector<int64_t> perHead = {b, hkv};
  if (name == "q_descale")
    return {perHead, {b, hq, ceilDiv(*key.seqLenQ, key.blockM)}};
  if (name == "k_descale")
    return {perHead, {b, hkv, ceilDiv(*key.seqLenK, key.blockN)}};
  if (name == "v_descale")
    return {perHead, {b, hkv, key.headDim}};
  return {};
}

/// One buffer of a quantized kernel (static extents): an e4m3 copy of the
/// key's shape (copyShape), a descale of a shape its granularity gives
/// (descaleShapes), or f32 scratch (the quantize step's partial maxima,
/// whose extents are the compiler's choice).
static llvm::Error checkQuantizedBuffer(const FwdKey &key,
                                        const Workspace &buffer,
                                        const std::string &at) {
  std::vector<int64_t> shape = staticShape(buffer);
  if (buffer.copyOf) {
    std::vector<int64_t> want = copyShape(key, *buffer.copyOf);
    if (shape != want)
      return corrupt(at + ".shape",
                     llvm::formatv("the e4m3 copy of {0} has the key's shape "
                                   "{1}, got {2}",
                                   operandName(*buffer.copyOf),
                                   shapeString(want), shapeString(shape)));
    return llvm::Error::success();
  }
  if (buffer.dtype != "f32")
    return corrupt(at + ".dtype", "a quantized (quantize_fp8) kernel's "
                                  "descales and scratch are \"f32\"");
  std::vector<std::vector<int64_t>> legal = descaleShapes(key, buffer.name);
  if (!legal.empty() && !llvm::is_contained(legal, shape))
    return corrupt(at + ".shape",
                   llvm::formatv("{0} of this key is {1} or {2}, got {3}",
                                 buffer.name, shapeString(legal[0]),
                                 shapeString(legal[1]), shapeString(shape)));
  return llvm::Error::success();
}

/// A quantized kernel: quantize launches then the attention (at least two),
/// exactly one e4m3 copy each of q, k and v and one each of q_descale,
/// k_descale and v_descale, every buffer static (checkQuantizedBuffer).
static llvm::Error checkQuantizedWorkspace(const KernelEntry &kernel,
                                           const std::string &at) {
  if (!kernel.isQuantized())
    return llvm::Error::success();
  if (kernel.then.empty())
    return corrupt(at + ".then", "a quantized (quantize_fp8) kernel has "
                                 "quantize launches, then the attention");
  std::array<int, 3> copies = {};
  llvm::StringMap<int> descales;
  for (const auto &[i, buffer] : llvm::enumerate(kernel.workspace)) {
    for (const GridDim &dim : buffer.shape)
      if (!dim.terms.empty())
        return corrupt(at + ".workspace", "the buffers of a quantized "
                                          "(quantize_fp8) kernel have static "
                                          "extents");
    if (llvm::Error err = checkQuantizedBuffer(
            kernel.key, buffer,
            llvm::formatv("{0}.workspace[{1}]", at, i).str()))
      return err;
    if (buffer.copyOf)
      ++copies[static_cast<size_t>(*buffer.copyOf)];
    else
      ++descales[buffer.name];
  }
  if (copies != std::array<int, 3>{1, 1, 1})
    return corrupt(at + ".workspace", "a quantized (quantize_fp8) kernel "
                                      "keeps exactly one e4m3 copy each of "
                                      "q, k and v (copy_of)");
  for (StringRef name : {"q_descale", "k_descale", "v_descale"})
    if (descales.lookup(name) != 1)
      return corrupt(at + ".workspace",
                     "a quantized (quantize_fp8) kernel keeps exactly one "
                     "buffer each named q_descale, k_descale and v_descale");
  return llvm::Error::success();
}

/// A persistent kernel's attention grid is its CTA count (nothing scales
/// with the call); its other launches, if any, are a quantized kernel's
/// quantize launches (split-KV's combine reads what every tile wrote).
static llvm::Error checkPersistent(const KernelEntry &kernel,
                                   const std::string &at) {
  if (kernel.persistentCtas == 0)
    return llvm::Error::success();
  const GridDim &x = kernel.launch(kernel.persistentLaunch()).grid[0];
  if (kernel.persistentCtas < 0 || x.constant != kernel.persistentCtas ||
      !x.terms.empty() || kernel.key.path != "wgmma")
    return corrupt(at + ".persistent_ctas",
                   "must be absent, or the constant grid x of a wgmma "
                   "kernel's attention launch (a quantized kernel's last)");
  if (!kernel.then.empty() && !kernel.isQuantized())
    return corrupt(at + ".persistent_ctas",
                   "a kernel of several launches is not persistent, unless "
                   "they are a quantized kernel's quantize launches");
  return llvm::Error::success();
}

/// Split-KV's shape: `splits` > 1 exactly when the kernel has later
/// launches and a workspace; each buffer a shape of 1 to 8 extents that are
/// functions of the operands' sizes; each later launch a valid launch.
static llvm::Error checkLaunches(const KernelEntry &kernel,
                                 const std::string &at) {
  const FwdKey &key = kernel.key;
  // A backward kernel has several launches and a workspace but no splits
  // (checkBwdKey).
  bool split = !kernel.isBackward() && !kernel.isQuantized() &&
               !kernel.then.empty() && !kernel.workspace.empty();
  if (key.splits < 1 || key.splits > 256 || (key.splits > 1) != split)
    return corrupt(at + ".key.splits",
                   "must be in [1, 256], and above 1 exactly when the kernel "
                   "has later launches (then) and a workspace");
  if (llvm::Error err = checkPersistent(kernel, at))
    return err;
  for (const auto &[i, buffer] : llvm::enumerate(kernel.workspace)) {
    std::string where = llvm::formatv("{0}.workspace[{1}]", at, i).str();
    if (buffer.name.empty() || buffer.shape.empty() || buffer.shape.size() > 8)
      return corrupt(where, "needs a name and 1 to 8 extents");
    if (llvm::Error err = checkWorkspaceKind(kernel, buffer, where))
      return err;
    for (const GridDim &dim : buffer.shape) {
      if (dim.constant < 1 || dim.terms.size() > 4)
        return corrupt(where + ".shape", "constants must be >= 1, with at "
                                         "most 4 terms per extent");
      for (const GridTerm &t : dim.terms)
        if (llvm::Error err = checkGridTerm(kernel, t, where + ".shape"))
          return err;
    }
  }
  if (llvm::Error err = checkQuantizedWorkspace(kernel, at))
    return err;
  for (const auto &[i, launch] : llvm::enumerate(kernel.then)) {
    std::string where = llvm::formatv("{0}.then[{1}]", at, i).str();
    KernelEntry view = kernel; // the key with this launch's shape
    static_cast<KernelLaunch &>(view) = launch;
    if (llvm::Error err = checkFiles(launch, where))
      return err;
    if (llvm::Error err = checkLaunch(view, where))
      return err;
    if (llvm::Error err = checkResources(launch.resources, where))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error checkKernel(const KernelEntry &kernel, size_t index) {
  std::string at = llvm::formatv("kernels[{0}]", index).str();
  if (kernel.kind != "fwd" && kernel.kind != "bwd")
    return corrupt(at + ".kind", "unknown kernel kind \"" + kernel.kind +
                                     "\" (expected \"fwd\" or \"bwd\")");
  if (llvm::Error err = checkFiles(kernel, at))
    return err;
  if (llvm::Error err = checkKey(kernel.key, at))
    return err;
  if (kernel.isBackward())
    if (llvm::Error err = checkBwdKey(kernel.key, at))
      return err;
  if (llvm::Error err = checkLaunches(kernel, at))
    return err;
  if (llvm::Error err = checkLaunch(kernel, at))
    return err;
  if (llvm::Error err = checkResources(kernel.resources, at))
    return err;
  if (llvm::Error err = checkParams(kernel, at))
    return err;
  if (llvm::Error err = checkOperandTypes(kernel, at))
    return err;
  if (kernel.isQuantized())
    return checkQuantizedAttention(kernel, at);
  if (kernel.key.path == "wgmma" && !kernel.isBackward())
    return checkWgmma(kernel, at);
  return llvm::Error::success();
}

} // namespace attn::bundle

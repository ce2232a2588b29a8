//===- ManifestKernelChecks.cpp - launches, workspaces, quantized copies --===//

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

/// "[a, b, ..]".
static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t n) { return std::to_string(n); }),
                    ", ") +
         "]";
}

/// A tensor map of a quantized kernel's e4m3 copy views the operand the
/// key gives it: dims (D, N, H, B) innermost first, or (N, D, H, B) when
/// `transposed` (V stored V^T). checkWorkspaceMap holds the view inside
/// the buffer.
static llvm::Error checkCopyView(const KernelEntry &kernel, const Param &p,
                                 const std::string &at) {
  Operand op = *kernel.workspace[p.workspace].copyOf;
  std::array<int64_t, 4> sizes = *staticDims(op, kernel.key); // [B, H, N, D]
  std::array<int64_t, 4> dims = {sizes[3], sizes[2], sizes[1], sizes[0]};
  if (p.transposed)
    std::swap(dims[0], dims[1]);
  if (p.dims != dims)
    return corrupt(at + ".dims",
                   llvm::formatv("the tensor map of the e4m3 copy of {0} "
                                 "views {1} ({2}innermost first: the key's "
                                 "shape), got {3}",
                                 operandName(op), shapeString(dims),
                                 p.transposed ? "transposed, " : "",
                                 shapeString(p.dims)));
  return llvm::Error::success();
}

/// Every tensor map of a quantized kernel's e4m3 copies (checkCopyView).
static llvm::Error checkCopyViews(const KernelEntry &kernel,
                                  const llvm::Twine &at) {
  for (size_t l = 0; l < kernel.numLaunches(); ++l)
    for (const auto &[i, p] : llvm::enumerate(kernel.launch(l).params)) {
      if (p.workspace < 0 || p.field != Param::Field::TensorMap)
        continue;
      std::string where =
          (l == 0 ? at.str()
                  : llvm::formatv("{0}.then[{1}]", at, l - 1).str()) +
          llvm::formatv(".params[{0}]", i).str();
      if (llvm::Error err = checkCopyView(kernel, p, where))
        return err;
    }
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

/// One buffer of a quantized kernel: an e4m3 copy, or f32 descales and
/// scratch (their extents are the compiler's, recorded).
static llvm::Error checkQuantizedBuffer(const Workspace &buffer,
                                        const std::string &at) {
  if (!buffer.copyOf && buffer.dtype != "f32")
    return corrupt(at + ".dtype", "a quantized (quantize_fp8) kernel's "
                                  "descales and scratch are \"f32\"");
  return llvm::Error::success();
}

/// A quantized kernel: quantize launches then the attention (at least two),
/// exactly one e4m3 copy each of q, k and v and one each of q_descale,
/// k_descale and v_descale, every buffer static (checkQuantizedBuffer);
/// the sizes are the recorded ones (the runtime allocates them).
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
            buffer, llvm::formatv("{0}.workspace[{1}]", at, i).str()))
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
    if (llvm::Error err = checkCopyViews(kernel, at))
      return err;
  return checkCoverage(kernel, at);
}

} // namespace attn::bundle

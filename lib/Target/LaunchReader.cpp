//===- LaunchReader.cpp - a lowered launch -> manifest launch -------------===//
//
// Reads the launch shape, parameter order (MLIR's expanded
// memref-descriptor ABI, tensor maps) and workspace buffers off the
// gpu.launch_func attn-to-cubin left in the host function.
//
//===----------------------------------------------------------------------===//

#include "KernelSource.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Target/Bundle.h"

#include "QuantizeFP8.h"

#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::writer {

FailureOr<bundle::Param> workspaceMapParam(nvgpu::TmaCreateDescriptorOp desc,
                                           Value view, int64_t buffer,
                                           const bundle::Workspace &copy,
                                           gpu::LaunchFuncOp launch);
void nameQuantizeBuffer(memref::AllocOp alloc, size_t index,
                        bundle::Workspace &buffer);

/// Adds to `dim` the factors of grid extent `v`: constants, and
/// ceil(size(operand, dim) / divisor) terms, multiplied together.
LogicalResult addGridFactors(Value v, const KernelSource &src,
                             gpu::LaunchFuncOp launch, bundle::GridDim &dim) {
  if (std::optional<int64_t> c = getConstantIntValue(v)) {
    dim.constant *= *c;
    return success();
  }
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return success(succeeded(addGridFactors(mul.getLhs(), src, launch, dim)) &&
                   succeeded(addGridFactors(mul.getRhs(), src, launch, dim)));
  bundle::GridTerm term;
  if (auto div = v.getDefiningOp<arith::CeilDivUIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(div.getRhs());
    if (!c)
      return emitError(
          launch.getLoc(),
          "the lowered kernel's launch: grid divisor is not a constant");
    term.divisor = *c;
    v = div.getLhs();
  }
  // A scalar operand (a varlen kernel's max_seqlen_q): its value.
  if (auto scalar = dyn_cast<BlockArgument>(v);
      scalar && src.roles.count(scalar.getArgNumber()) &&
      bundle::isScalarOperand(src.roles.lookup(scalar.getArgNumber()))) {
    term.operand = src.roles.lookup(scalar.getArgNumber());
    dim.terms.push_back(term);
    return success();
  }
  // size - 1 (a varlen kernel's B = dim(cu_seqlens_q, 0) - 1).
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    std::optional<int64_t> c = getConstantIntValue(sub.getRhs());
    if (c != 1)
      return emitError(launch.getLoc(), "the lowered kernel's launch: grid "
                                        "size subtracts something other than "
                                        "1 from an operand size");
    term.offset = -1;
    v = sub.getLhs();
  }
  auto size = v.getDefiningOp<memref::DimOp>();
  auto arg = size ? dyn_cast<BlockArgument>(size.getSource()) : nullptr;
  std::optional<int64_t> index = size ? size.getConstantIndex() : std::nullopt;
  if (!arg || !index || !src.roles.count(arg.getArgNumber()))
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: grid size is not a product of constants, "
        "ceil(operand size / constant) and (varlen) "
        "ceil(max_seqlen_q / constant) and operand "
        "size - 1");
  term.operand = src.roles.lookup(arg.getArgNumber());
  term.dim = *index;
  dim.terms.push_back(term);
  return success();
}

FailureOr<bundle::GridDim> gridDim(Value v, const KernelSource &src,
                                   gpu::LaunchFuncOp launch) {
  bundle::GridDim dim;
  if (failed(addGridFactors(v, src, launch, dim)))
    return failure();
  return dim;
}

/// The swizzle span of a TMA descriptor in bytes (0: none), as the
/// manifest records it.
int64_t swizzleBytes(nvgpu::TensorMapDescriptorType map) {
  switch (map.getSwizzle()) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
    return 0;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
    return 32;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
    return 64;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
    return 128;
  }
  return 0;
}

/// True for memref.transpose of a rank-4 operand with permutation `perm`.
bool isTranspose(memref::TransposeOp transpose, ArrayRef<unsigned> perm) {
  AffineMap map = transpose.getPermutation();
  return map == AffineMap::getPermutationMap(perm, map.getContext());
}

/// The operand a tensor-map kernel argument describes, and its box
/// (innermost first): the argument is
/// unrealized_conversion_cast(nvgpu.tma.create.descriptor(cast(operand))),
/// or the same of memref.transpose(operand): (d0, d1, d3, d2) for an FP8
/// V^T operand, recorded as a transposed map (dims N, D, H, B innermost
/// first), or (d0, d2, d1, d3) for a GQA-packed Q or O, or a paged K/V
/// cache [num_pages, page_size, Hkv, D], recorded as a heads_inner map
/// (dims D, H, N, B of [B, H, N, D]; a cache's D, page_size, Hkv, pages).
FailureOr<bundle::Param> tensorMapParam(Value arg, const KernelSource &src,
                                        const WorkspaceMap &workspace,
                                        gpu::LaunchFuncOp launch) {
  auto cast = arg.getDefiningOp<UnrealizedConversionCastOp>();
  auto desc =
      cast ? cast.getInputs()[0].getDefiningOp<nvgpu::TmaCreateDescriptorOp>()
           : nullptr;
  auto ranked =
      desc ? desc.getTensor().getDefiningOp<memref::CastOp>() : nullptr;
  Value source = ranked ? ranked.getSource() : Value();
  // A quantized kernel's e4m3 copy: the view is stated in the manifest.
  if (auto buffer =
          source ? workspace.find(viewedBuffer(source)) : workspace.end();
      buffer != workspace.end())
    return workspaceMapParam(desc, source, buffer - workspace.begin(),
                             buffer->second, launch);
  auto transpose =
      source ? source.getDefiningOp<memref::TransposeOp>() : nullptr;
  if (transpose)
    source = transpose.getIn();
  // Varlen: the packed [total, H, D] operand expanded to [1, total, H, D]
  // (attn-tile), viewed as [1, H, total, D] by a (d0, d2, d1, d3)
  // transpose, or left heads-inner (GQA packing of Q).
  auto expand =
      source ? source.getDefiningOp<memref::ExpandShapeOp>() : nullptr;
  if (expand)
    source = expand.getSrc();
  auto operand = dyn_cast_or_null<BlockArgument>(source);
  if (!operand || !src.roles.count(operand.getArgNumber()))
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: kernel argument is neither an operand of "
        "attn.attention nor its TMA descriptor");
  bundle::Param param;
  param.operand = src.roles.lookup(operand.getArgNumber());
  param.field = bundle::Param::Field::TensorMap;
  StringRef name = bundle::operandName(param.operand);
  if (expand) {
    if (!src.key.varlen || expand.getSrcType().getRank() != 3 ||
        expand.getResultType().getShape()[0] != 1 ||
        (transpose && !isTranspose(transpose, {0, 2, 1, 3})))
      return emitError(
                 launch.getLoc(),
                 "the lowered kernel's launch: the TMA descriptor of operand '")
             << name
             << "' is built from a memref.expand_shape; only a "
                "varlen kernel's [total, H, D] operands expanded to "
                "[1, total, H, D] (then transposed to [1, H, total, "
                "D], or not: GQA packing) have a manifest form";
    param.packed = true;
    param.headsInner = !transpose;
    if (param.headsInner && param.operand != Operand::Q &&
        param.operand != Operand::O)
      return emitError(
                 launch.getLoc(),
                 "the lowered kernel's launch: the TMA descriptor of operand '")
             << name
             << "' is built from a heads-inner view; only q and o "
                "(GQA packing) may be";
    ArrayRef<int64_t> box =
        desc.getTensorMap().getType().getTensor().getShape();
    if (box.size() != 4)
      return emitError(launch.getLoc(),
                       "the lowered kernel's launch: TMA boxes are rank 4");
    std::copy(box.rbegin(), box.rend(), param.box.begin());
    param.swizzle = swizzleBytes(desc.getTensorMap().getType());
    return param;
  }
  bool pagedKV = src.key.pageSize > 0 &&
                 (param.operand == Operand::K || param.operand == Operand::V);
  if (src.key.varlen && !pagedKV)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' in a varlen kernel is not built from the packed "
              "operand's [1, H, total, D] view";
  param.transposed = transpose && isTranspose(transpose, {0, 1, 3, 2});
  param.headsInner = transpose && isTranspose(transpose, {0, 2, 1, 3});
  if (transpose && !param.transposed && !param.headsInner)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name << "' is built from memref.transpose "
           << AffineMapAttr::get(transpose.getPermutation())
           << "; only (d0, d1, d3, d2) (V^T storage) and (d0, d2, d1, d3) "
              "(GQA packing) have a manifest form";
  if (param.transposed && param.operand != Operand::V)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' is built from a transposed view; only v (V^T "
              "storage) may be";
  if (param.headsInner && param.operand != Operand::Q &&
      param.operand != Operand::O && !pagedKV)
    return emitError(
               launch.getLoc(),
               "the lowered kernel's launch: the TMA descriptor of operand '")
           << name
           << "' is built from a heads-inner view; only q and o (GQA "
              "packing) and paged k and v may be";
  ArrayRef<int64_t> box = desc.getTensorMap().getType().getTensor().getShape();
  if (box.size() != 4)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: TMA boxes are rank 4 [B, H, N, D]");
  std::copy(box.rbegin(), box.rend(), param.box.begin());
  param.swizzle = swizzleBytes(desc.getTensorMap().getType());
  return param;
}

constexpr int64_t kMaxGridYZ = 65535;

/// The manifest dtype of a workspace of element type `t` in a kernel of
/// `key` ("" when it cannot be one): f32; in a quantized kernel also i32
/// and e4m3.
StringRef workspaceDtype(Type t, const bundle::FwdKey &key) {
  if (t.isF32())
    return "f32";
  if (!key.quantizeFp8)
    return "";
  return t.isInteger(32) ? "i32" : isa<Float8E4M3FNType>(t) ? "e4m3" : "";
}

/// Each memref.alloc of `func`: contiguous f32 (quantized kernels: also i32
/// and e4m3), its extents constants or functions of the operands' sizes.
/// memref.dealloc is the runtime's (each buffer lives for one call).
FailureOr<WorkspaceMap> readWorkspace(func::FuncOp func,
                                      const KernelSource &src,
                                      gpu::LaunchFuncOp launch) {
  WorkspaceMap buffers;
  WalkResult res = func.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    StringRef dtype = workspaceDtype(type.getElementType(), src.key);
    if (dtype.empty() || !type.getLayout().isIdentity())
      return WalkResult(emitError(
          alloc.getLoc(), src.key.quantizeFp8
                              ? "a quantized kernel's workspace must be "
                                "contiguous f32, i32 or f8E4M3FN"
                              : "a kernel workspace must be contiguous f32"));
    bundle::Workspace buffer;
    buffer.dtype = dtype.str();
    // Split-KV's two buffers; the backward's by position (scratch<i>); a
    // quantized kernel's as quantizeFunction tagged them.
    buffer.name = src.backward      ? "scratch" + std::to_string(buffers.size())
                  : buffers.empty() ? "o_partial"
                                    : "lse_partial";
    if (src.key.quantizeFp8)
      nameQuantizeBuffer(alloc, buffers.size(), buffer);
    unsigned next = 0;
    for (int64_t d : type.getShape()) {
      FailureOr<bundle::GridDim> extent =
          ShapedType::isDynamic(d)
              ? gridDim(alloc.getDynamicSizes()[next++], src, launch)
              : FailureOr<bundle::GridDim>(bundle::GridDim{d, {}});
      if (failed(extent))
        return WalkResult::interrupt();
      buffer.shape.push_back(*extent);
    }
    buffers.insert({alloc.getResult(), buffer});
    return WalkResult::advance();
  });
  if (res.wasInterrupted())
    return failure();
  return buffers;
}

/// The tensor map of a quantized kernel's e4m3 copy (`buffer` of
/// `workspace`) through `desc`: the view's static sizes and strides
/// (innermost first; the innermost stride 1, offset 0) as TMA dims and
/// strides, the descriptor's box and swizzle. Its out-of-bounds fill must
/// be zero and it must not interleave: what the runtime encodes.
FailureOr<bundle::Param> workspaceMapParam(nvgpu::TmaCreateDescriptorOp desc,
                                           Value view, int64_t buffer,
                                           const bundle::Workspace &copy,
                                           gpu::LaunchFuncOp launch) {
  auto type = cast<MemRefType>(view.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  nvgpu::TensorMapDescriptorType map = desc.getTensorMap().getType();
  ArrayRef<int64_t> box = map.getTensor().getShape();
  if (type.getRank() != 4 || box.size() != 4 || !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || offset != 0 ||
      strides[3] != 1 || llvm::any_of(strides, ShapedType::isDynamic))
    return emitError(launch.getLoc(),
                     "the lowered kernel's launch: the TMA descriptor of a "
                     "workspace buffer "
                     "needs a rank-4 view of static sizes and "
                     "strides, offset 0 and unit innermost stride, "
                     "but got ")
           << type;
  if (map.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO ||
      map.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return emitError(
        launch.getLoc(),
        "the lowered kernel's launch: the TMA descriptor of a workspace buffer "
        "must fill out-of-bounds elements with zero "
        "and not interleave (what the runtime "
        "encodes)");
  bundle::Param param;
  param.field = bundle::Param::Field::TensorMap;
  param.workspace = buffer;
  for (int i = 0; i < 4; ++i) {
    param.dims[i] = type.getDimSize(3 - i);
    param.box[i] = box[3 - i];
  }
  for (int i = 0; i < 3; ++i)
    param.strides[i] = strides[2 - i];
  param.swizzle = swizzleBytes(map);
  // The copy of V is stored V^T ([B, Hkv, D, Nk]): the view says so.
  param.transposed = copy.copyOf == Operand::V;
  return param;
}

/// Fills launch shape and parameters of `entry` from the launch_func.
LogicalResult readLaunch(gpu::LaunchFuncOp launch, const KernelSource &src,
                         const WorkspaceMap &workspace,
                         bundle::KernelLaunch &entry) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value gridValues[] = {grid.x, grid.y, grid.z};
  Value blockValues[] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i) {
    FailureOr<bundle::GridDim> dim = gridDim(gridValues[i], src, launch);
    std::optional<int64_t> threads = getConstantIntValue(blockValues[i]);
    if (failed(dim) || !threads)
      return emitError(launch.getLoc(), "the lowered kernel's launch: needs a "
                                        "static CTA size and a grid that is "
                                        "a function of the operand sizes");
    // CUDA caps grid x at 2^31-1 and y, z at 65535; with size terms the
    // grid is 0 or at least its constant factor.
    int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (dim->constant > limit)
      return emitError(launch.getLoc(), "the lowered kernel's launch: grid ")
             << "xyz"[i] << " is at least " << dim->constant
             << " CTAs, over CUDA's limit of " << limit
             << "; the shapes are too large for one launch";
    entry.grid[i] = *dim;
    entry.threads[i] = *threads;
  }
  if (Value smem = launch.getDynamicSharedMemorySize()) {
    std::optional<int64_t> bytes = getConstantIntValue(smem);
    if (!bytes)
      return emitError(launch.getLoc(), "the lowered kernel's launch: dynamic "
                                        "shared memory must be a constant");
    entry.dynamicSharedBytes = *bytes;
  }
  if (launch.hasClusterSize())
    return emitError(launch.getLoc(),
                     "the lowered kernel's launch: thread-block clusters are "
                     "not supported yet");

  using Field = bundle::Param::Field;
  for (Value arg : launch.getKernelOperands()) {
    if (isa<LLVM::LLVMPointerType>(arg.getType())) {
      FailureOr<bundle::Param> map =
          tensorMapParam(arg, src, workspace, launch);
      if (failed(map))
        return failure();
      entry.params.push_back(*map);
      continue;
    }
    auto blockArg = dyn_cast<BlockArgument>(arg);
    auto buffer = workspace.find(arg);
    if (buffer == workspace.end() &&
        (!blockArg || !src.roles.count(blockArg.getArgNumber())))
      return emitError(
          launch.getLoc(),
          "the lowered kernel's launch: kernel argument is not an operand of "
          "attn.attention or a workspace buffer");
    Operand role = buffer == workspace.end()
                       ? src.roles.lookup(blockArg.getArgNumber())
                       : Operand::Q;
    // A scalar operand (max_seqlen_q): one 64-bit value.
    if (buffer == workspace.end() && bundle::isScalarOperand(role)) {
      entry.params.push_back({role, Field::Value, 0});
      continue;
    }
    int64_t rank = buffer == workspace.end()
                       ? bundle::operandRank(role, src.key)
                       : int64_t(buffer->second.shape.size());
    size_t first = entry.params.size();
    entry.params.push_back({role, Field::AllocatedPtr, 0});
    entry.params.push_back({role, Field::AlignedPtr, 0});
    entry.params.push_back({role, Field::Offset, 0});
    for (int64_t i = 0; i < rank; ++i)
      entry.params.push_back({role, Field::Size, i});
    for (int64_t i = 0; i < rank; ++i)
      entry.params.push_back({role, Field::Stride, i});
    if (buffer != workspace.end())
      for (size_t i = first; i < entry.params.size(); ++i)
        entry.params[i].workspace = buffer - workspace.begin();
  }
  return success();
}

/// The name (and e4m3 copy role) of workspace buffer `index` of a quantized
/// kernel: its attn.workspace tag, else scratch<index> (amax).
void nameQuantizeBuffer(memref::AllocOp alloc, size_t index,
                        bundle::Workspace &buffer) {
  buffer.name = "scratch" + std::to_string(index);
  auto tag = alloc->getAttrOfType<StringAttr>(kWorkspaceTag);
  if (!tag)
    return;
  buffer.name = tag.getValue().str();
  if (buffer.dtype == "e4m3")
    buffer.copyOf = quantizedCopyOf(tag.getValue());
}

} // namespace mlir::attn::writer

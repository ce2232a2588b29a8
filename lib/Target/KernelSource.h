//===- KernelSource.h - the bundle writer's view of a kernel ----*- C++ -*-===//
//
// Shared by the bundle writer's parts: what it knows of a kernel before
// lowering (KernelInspect.cpp), the reading of a lowered launch
// (LaunchReader.cpp), ptxas (Ptxas.cpp) and manifest emission
// (BundleWriter.cpp). Internal to lib/Target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_KERNELSOURCE_H
#define ATTN_LIB_TARGET_KERNELSOURCE_H

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Bundle.h"
#include "attn/manifest/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::attn::writer {

namespace bundle = ::attn::bundle;
using bundle::Operand;

//===----------------------------------------------------------------------===//
// KernelInspect.cpp
//===----------------------------------------------------------------------===//


/// The workspace buffers of a lowered function (memref.allocs: split-KV's,
/// the backward's, a quantized kernel's), by value, in order.
using WorkspaceMap = llvm::MapVector<Value, bundle::Workspace>;

/// What the writer knows about a kernel before lowering.
struct KernelSource {
  func::FuncOp func;
  Operation *root = nullptr; // the kernel's attention op (isKernelRoot)
  DenseMap<unsigned, Operand> roles; // function argument -> operand
  bundle::FwdKey key;
  // Block sizes asked for (attribute or option; 0: the default), which a
  // variant starts from: its defaults follow its own path and BLOCK_N.
  int64_t requestedBlockM = 0, requestedBlockN = 0;
  bool packGqa = false;    // GQA packing (attribute or option)
  bool backward = false;   // attn.attention_grad: kind "bwd"
  int64_t askedSplits = 1; // key.splits before fitSplits
};

/// The split count compiled for `splits` asked: at most the K/V blocks of
/// a static seqlen_k. More would be splits without keys, which
/// FlashAttention-2 runs (to no effect, for CTAs and workspace); here the
/// count is cut and the listing says so. An empty O (a static batch, Hq or
/// seqlen_q of 0) is not split.
int64_t fitSplits(int64_t splits, const bundle::FwdKey &key, int64_t blockN);
/// The kernel's tile (BLOCK_M, BLOCK_N): the #attn.config
/// attn-select-config chooses for its forward op (as an FP8 one for a
/// quantized kernel) on `path`, for `blockM` / `blockN` asked (0: chosen)
/// and `splits` (split-KV asks for kSplitKVBlockM rows). Fails with the
/// pass's error at the op.
FailureOr<std::pair<int64_t, int64_t>>
selectTile(const KernelSource &src, KernelPath path, int64_t blockM,
           int64_t blockN, int64_t splits);
/// fitSplits for src.key's splits and the tile they select; sets
/// src.key's block sizes to that tile and returns the splits.
FailureOr<int64_t> fitSplitsToTile(KernelSource &src, KernelPath path,
                                   int64_t blockM, int64_t blockN);
/// The FP8 tensor-core attention runs the kernel: e4m3 operands, or bf16
/// ones quantized by attn-quantize-fp8 first.
bool isFp8Attention(const bundle::FwdKey &key);
/// True for the ops a bundle kernel function is made of.
bool isKernelRoot(Operation *op);
/// The kernel's roles and key, or an error on `func`.
FailureOr<KernelSource> inspect(func::FuncOp func, const BundleOptions &opts);
/// Variants differ only in schedule: two quantized kernels that take the
/// same calls must quantize alike.
LogicalResult checkQuantizeRecipes(ModuleOp module,
                                   ArrayRef<KernelSource> kernels);

//===----------------------------------------------------------------------===//
// LaunchReader.cpp
//===----------------------------------------------------------------------===//

/// Each memref.alloc of `func`: the kernel's workspace buffers.
FailureOr<WorkspaceMap> readWorkspace(func::FuncOp func,
                                      const KernelSource &src,
                                      gpu::LaunchFuncOp launch);
/// Grid, threads, shared memory, cluster and parameters of `launch`.
LogicalResult readLaunch(gpu::LaunchFuncOp launch, const KernelSource &src,
                         const WorkspaceMap &workspace,
                         bundle::KernelLaunch &entry);

//===----------------------------------------------------------------------===//
// Ptxas.cpp
//===----------------------------------------------------------------------===//

LogicalResult writeFile(Location loc, StringRef path, StringRef contents);
/// Assembles `ptxPath` into `cubinPath` with `ptxas -v` and records the
/// resource usage it reports.
LogicalResult assemble(Location loc, StringRef ptxas, StringRef chip,
                       StringRef ptxPath, StringRef cubinPath,
                       bundle::Resources &res);
FailureOr<std::string> findPtxas(const BundleOptions &opts, Location loc);
FailureOr<std::string> hashCubin(Location loc, StringRef cubinPath);

} // namespace mlir::attn::writer

#endif // ATTN_LIB_TARGET_KERNELSOURCE_H

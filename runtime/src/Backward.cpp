//===- Backward.cpp - attn_bwd: checks, dispatch and launch ---------------===//
//
// A backward call (attn_bwd_args: q, k, v, o, dO, lse in; dQ, dK, dV out)
// is checked like a forward one, matched against the bundle's "bwd" kernels
// (static shapes) and launched through the forward's launch path: the
// kernel's launches in order with their fp32 workspace (Delta, LSE_log2,
// dQ_acc) allocated and freed on the call's stream.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "CallChecks.h"
#include "KernelMatch.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using attn::bundle::KernelEntry;
using attn::bundle::Operand;
using llvm::formatv;
using llvm::StringRef;

namespace attn::runtime {

namespace {

/// A tensor of a backward call with its name, operand and dimension names.
struct BwdTensor {
  StringRef name;
  Operand op;
  const attn_tensor *t;
};

/// The eight f16/bf16 tensors: q's form first, then k's.
std::array<BwdTensor, 8> bwdTensors(const attn_bwd_args &a) {
  return {{{"q", Operand::Q, &a.q},
           {"o", Operand::O, &a.o},
           {"dout", Operand::DO, &a.dout},
           {"dq", Operand::DQ, &a.dq},
           {"k", Operand::K, &a.k},
           {"v", Operand::V, &a.v},
           {"dk", Operand::DK, &a.dk},
           {"dv", Operand::DV, &a.dv}}};
}

bool isQForm(Operand op) {
  return op == Operand::Q || op == Operand::O || op == Operand::DO ||
         op == Operand::DQ;
}

/// One dtype (f16 or bf16), rank 4, q, o, dO, dQ of q's sizes and k, v,
/// dK, dV of k's, k with q's B and D, Hq a multiple of Hkv, D a multiple of
/// 8 in [8, 256], attn_fwd's strides and alignment.
Status checkTensors(const attn_bwd_args &args) {
  int dtype = dtypeOf(args.q);
  if (dtype != ATTN_DTYPE_F16 && dtype != ATTN_DTYPE_BF16)
    return invalid("q: dtype must be f16 or bf16 (there is no FP8 or f32 "
                   "backward), got " +
                   dtypeText(dtype));
  for (const BwdTensor &b : bwdTensors(args)) {
    bool qForm = isQForm(b.op);
    if (Status s = checkShape(*b.t, b.name, 4,
                              qForm ? "[B, Hq, Nq, D]" : "[B, Hkv, Nk, D]");
        !s.ok())
      return s;
    if (dtypeOf(*b.t) != dtype)
      return invalid(formatv("{0}: dtype {1} does not match q's {2}", b.name,
                             dtypeText(dtypeOf(*b.t)), dtypeText(dtype)));
    const attn_tensor &ref = qForm ? args.q : args.k;
    if (!sameSizes(*b.t, ref))
      return invalid(formatv("{0}: sizes {1} must equal {2}'s {3}", b.name,
                             sizesText(*b.t), qForm ? "q" : "k",
                             sizesText(ref)));
  }
  const attn_tensor &q = args.q, &k = args.k;
  if (k.sizes[0] != q.sizes[0] || k.sizes[3] != q.sizes[3])
    return invalid(formatv("k: sizes {0} must have q's B = {1} and D = {2}",
                           sizesText(k), q.sizes[0], q.sizes[3]));
  int64_t hq = q.sizes[1], hkv = k.sizes[1], d = q.sizes[3];
  if (Status s = checkHeads(hq, hkv, d); !s.ok())
    return s;
  for (const BwdTensor &b : bwdTensors(args))
    if (Status s = checkLayout(*b.t, b.name); !s.ok())
      return s;
  return checkLse(args.lse, {q.sizes[0], q.sizes[1], q.sizes[2]},
                  "[B, Hq, Nq]");
}

/// dQ, dK and dV: an address per element, and no byte of any other
/// operand (nor of each other): the kernels read the inputs while other
/// CTAs write the outputs.
Status checkOutputsDoNotAlias(const CallOperands &ops, const BwdCall &call) {
  const Operand all[] = {Operand::Q,  Operand::K,  Operand::V,
                         Operand::O,  Operand::DO, Operand::LSE,
                         Operand::DQ, Operand::DK, Operand::DV};
  return checkOutputs(ops, {Operand::DQ, Operand::DK, Operand::DV}, all,
                      call.extentBytes);
}

/// The operands of a backward call, for the device checks.
constexpr Operand kBwdOperands[] = {Operand::Q,  Operand::K,  Operand::V,
                                    Operand::O,  Operand::DO, Operand::LSE,
                                    Operand::DQ, Operand::DK, Operand::DV};

bool matches(const KernelEntry &kernel, const BwdCall &call) {
  return mismatches(kernel, call) == 0;
}

} // namespace

CallOperands::CallOperands(const attn_bwd_args &args) {
  for (const BwdTensor &b : bwdTensors(args))
    tensors[static_cast<size_t>(b.op)] = b.t;
  tensors[static_cast<size_t>(Operand::LSE)] = &args.lse;
}

bool BwdCall::empty() const {
  // dQ is empty when B, Hq or Nq is 0 (D >= 8); dK and dV when B, Hkv or Nk
  // is (Hkv = 0 forces Hq = 0).
  bool noDQ = batch == 0 || numHeadsQ == 0 || seqLenQ == 0;
  bool noDKV = batch == 0 || numHeadsKV == 0 || seqLenK == 0;
  return noDQ && noDKV;
}

std::string BwdCall::describe() const {
  return formatv("bwd {0} D={1}{2} B={3} Hq={4} Hkv={5} Nq={6} Nk={7} "
                 "scale={8} {9}",
                 dtype, headDim, causal ? " causal" : "", batch, numHeadsQ,
                 numHeadsKV, seqLenQ, seqLenK, scaleText(scale),
                 contiguous ? "contiguous" : "strided")
      .str();
}

Status validateBwd(const attn_bwd_args &args, BwdCall &call) {
  if (Status s = checkTensors(args); !s.ok())
    return s;
  if (Status s = checkScale(args.softmax_scale); !s.ok())
    return s;
  CallOperands ops(args);
  call.contiguous = true;
  for (Operand op : kBwdOperands) {
    const attn_tensor &t = ops.tensor(op);
    if (!viewBytes(t, call.extentBytes[static_cast<size_t>(op)]))
      return invalid(bundle::operandName(op) +
                     ": the view spans more than 2^63 bytes");
    call.contiguous &= isContiguous(t);
  }
  if (Status s = checkOutputsDoNotAlias(ops, call); !s.ok())
    return s;
  call.dtype = dtypeName(dtypeOf(args.q));
  call.causal = args.causal != 0;
  call.batch = args.q.sizes[0];
  call.numHeadsQ = args.q.sizes[1];
  call.seqLenQ = args.q.sizes[2];
  call.headDim = args.q.sizes[3];
  call.numHeadsKV = args.k.sizes[1];
  call.seqLenK = args.k.sizes[2];
  float scale = args.softmax_scale;
  call.scale = scale != 0 ? scale : 1.0 / std::sqrt(double(call.headDim));
  return Status::success();
}

Status Bundle::pickBwdKernel(const BwdCall &call, const attn_bwd_args &args,
                             int64_t &index) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < numKernels(); ++i)
    if (matches(kernel(i), call) &&
        (!best || (!kernel(i).key.strided && kernel(*best).key.strided)))
      best = i;
  if (!best) {
    std::string message =
        formatv("no backward kernel in bundle {0} matches the call ({1}); ",
                dir, call.describe())
            .str();
    size_t shown = 0;
    for (size_t i = 0; i < numKernels(); ++i)
      if (kernel(i).isBackward() && shown++ < 4)
        message += (shown > 1 ? "; " : "its backward kernels: ") +
                   bundle::describeKey(kernel(i));
    if (shown == 0)
      message += "it has no backward (bwd) kernel: compile the "
                 "attn.attention_grad of this shape into it";
    else if (shown > 4)
      message += formatv("; and {0} more", shown - 4).str();
    message += closestKernel(manifest.kernels, call);
    return makeError(ATTN_ERROR_NO_MATCHING_KERNEL, message);
  }
  CallOperands ops(args);
  for (size_t i = 0; i < kernel(*best).numLaunches(); ++i)
    if (Status s = checkGrid(kernel(*best).launch(i), ops); !s.ok())
      return s;
  index = static_cast<int64_t>(*best);
  return Status::success();
}

Status Bundle::selectBwd(const attn_bwd_args &args, int64_t &index) const {
  BwdCall call;
  if (Status s = validateBwd(args, call); !s.ok())
    return s;
  return pickBwdKernel(call, args, index);
}

Status Bundle::launchBwd(const attn_bwd_args &args, CUstream stream) {
  BwdCall call;
  if (Status s = validateBwd(args, call); !s.ok() || call.empty())
    return s; // nothing to compute: no kernel, no GPU needed
  int64_t index = 0;
  if (Status s = pickBwdKernel(call, args, index); !s.ok())
    return s;
  const DriverApi *driver = nullptr;
  CUdevice device = 0;
  if (Status s = currentDevice(driver, device); !s.ok())
    return s;
  CallOperands ops(args);
  for (Operand op : kBwdOperands) {
    uint64_t bytes = call.extentBytes[static_cast<size_t>(op)];
    if (bytes == 0) // empty view
      continue;
    if (Status s = checkPointer(*driver, ops.tensor(op),
                                bundle::operandName(op), bytes, device);
        !s.ok())
      return s;
  }
  return launchIndex(*driver, device, index, ops, stream);
}

} // namespace attn::runtime

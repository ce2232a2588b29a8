//===- OutputChecks.cpp - outputs a kernel may write without a race -------===//
//
// Every call form (forward in all its forms, backward) checks the tensors
// it writes here: each element at an address of its own, and no byte shared
// with another operand. CTAs write their tiles concurrently, so an output
// element that two index tuples reach, or an input byte an output also
// covers, is a race on the GPU.
//
//===----------------------------------------------------------------------===//

#include "CallChecks.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using attn::bundle::Operand;
using llvm::formatv;

namespace attn::runtime {

Status checkDistinctElements(const attn_tensor &t, llvm::StringRef name) {
  if (isEmpty(t))
    return Status::success();
  // The dimensions that step (size > 1), by stride: each must step past
  // every element the smaller-strided ones reach (their span), so that the
  // view is nested and no two index tuples meet.
  llvm::SmallVector<int32_t, 4> dims;
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.sizes[i] > 1)
      dims.push_back(i);
  llvm::stable_sort(
      dims, [&](int32_t a, int32_t b) { return t.strides[a] < t.strides[b]; });
  uint64_t span = 0; // largest offset the dimensions so far reach
  for (int32_t i : dims) {
    auto stride = static_cast<uint64_t>(t.strides[i]);
    if (stride <= span || stride == 0)
      return invalid(
          formatv("{0}: dim {1} (size {2}) has stride {3}{4}: elements share "
                  "addresses, but an output needs one address per element "
                  "(sizes {5}, strides {6})",
                  name, i, t.sizes[i], stride,
                  stride == 0 ? std::string()
                              : formatv(", inside the {0} elements the dims "
                                        "of smaller stride span",
                                        span + 1)
                                    .str(),
                  sizesText(t), listText(t.strides, t.rank)));
    // No overflow: viewBytes bounded the whole view first.
    span += static_cast<uint64_t>(t.sizes[i] - 1) * stride;
  }
  return Status::success();
}

Status checkOutputs(const CallOperands &ops, llvm::ArrayRef<Operand> outputs,
                    llvm::ArrayRef<Operand> operands,
                    llvm::ArrayRef<uint64_t> extentBytes) {
  auto range = [&](Operand op) {
    auto start = reinterpret_cast<uintptr_t>(ops.tensor(op).data);
    return std::make_pair(uint64_t(start),
                          start + extentBytes[static_cast<size_t>(op)]);
  };
  for (Operand out : outputs) {
    auto [a0, a1] = range(out);
    if (a0 == a1) // absent or empty
      continue;
    if (Status s =
            checkDistinctElements(ops.tensor(out), bundle::operandName(out));
        !s.ok())
      return s;
    for (Operand in : operands) {
      auto [b0, b1] = range(in);
      if (in == out || b0 == b1 || a1 <= b0 || b1 <= a0)
        continue;
      return invalid(formatv("{0} overlaps {1} (bytes [{2}, {3}) and [{4}, "
                             "{5})): outputs need memory of their own",
                             bundle::operandName(out), bundle::operandName(in),
                             pointerText(reinterpret_cast<void *>(a0)),
                             pointerText(reinterpret_cast<void *>(a1)),
                             pointerText(reinterpret_cast<void *>(b0)),
                             pointerText(reinterpret_cast<void *>(b1))));
    }
  }
  return Status::success();
}

} // namespace attn::runtime

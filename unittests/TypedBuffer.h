//===- TypedBuffer.h - f32/f16/bf16 buffers for the CPU tests ---*- C++ -*-===//
//
// A buffer of f32, f16 or bf16 seen through a memref descriptor, written and
// read as doubles: what the CPU numerics pass to the JIT-compiled kernels.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_TYPEDBUFFER_H
#define ATTN_UNITTESTS_TYPEDBUFFER_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace mlir::attn::test {

/// A row-major buffer of raw `T` (element bits or f32) seen as a
/// StridedMemRefType, every element `fill`.
template <typename T, int N> struct RowMajorBuffer {
  std::vector<T> data;
  StridedMemRefType<T, N> desc;
  RowMajorBuffer(std::array<int64_t, N> shape, T fill) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    data.assign(std::max<int64_t>(n, 1), fill);
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    int64_t stride = 1;
    for (int i = N - 1; i >= 0; --i) {
      desc.sizes[i] = shape[i];
      desc.strides[i] = stride;
      stride *= shape[i];
    }
  }
};

enum class Elt { f32, f16, bf16 };

inline const char *eltName(Elt e) {
  return e == Elt::f32 ? "f32" : e == Elt::f16 ? "f16" : "bf16";
}

/// A buffer of `elt` seen through a memref descriptor: row-major, or for a
/// rank-4 [B, H, N, D] view with `bnhd`, stored in [B, N, H, D] order.
/// Values are indexed in row-major order of the view and written and read
/// as doubles (rounded to nearest even on write).
template <int N> struct Buffer {
  Elt elt;
  std::array<int64_t, N> shape;
  std::vector<uint8_t> bytes;
  int64_t numElements = 1;
  StridedMemRefType<uint8_t, N> desc;

  Buffer(Elt elt, std::array<int64_t, N> shape, bool bnhd = false)
      : elt(elt), shape(shape) {
    for (int64_t s : shape)
      numElements *= s;
    bytes.assign(std::max<int64_t>(numElements, 1) * size(), 0);
    desc.basePtr = desc.data = bytes.data();
    desc.offset = 0;
    std::array<int, N> order; // dimensions from innermost in memory
    for (int i = 0; i < N; ++i)
      order[i] = N - 1 - i;
    if (bnhd && N == 4) { // D, then H, then N, then B
      order[0] = 3;
      order[1] = 1;
      order[2] = 2;
      order[N - 1] = 0;
    }
    int64_t stride = 1;
    for (int i : order) {
      desc.sizes[i] = shape[i];
      desc.strides[i] = stride;
      stride *= shape[i];
    }
  }
  /// Element offset in memory of row-major index `i` of the view.
  int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int d = N - 1; d >= 0; --d) {
      off += (i % shape[d]) * desc.strides[d];
      i /= shape[d];
    }
    return off;
  }
  /// strided<[...]> of the memref type.
  std::string layout() const {
    std::string s = ", strided<[";
    for (int d = 0; d < N; ++d)
      s += std::to_string(desc.strides[d]) + (d + 1 < N ? ", " : "]>");
    return s;
  }
  size_t size() const { return elt == Elt::f32 ? 4 : 2; }

  const llvm::fltSemantics &semantics() const {
    return elt == Elt::f32   ? llvm::APFloat::IEEEsingle()
           : elt == Elt::f16 ? llvm::APFloat::IEEEhalf()
                             : llvm::APFloat::BFloat();
  }
  void set(int64_t i, double x) {
    llvm::APFloat f(x);
    bool lost;
    f.convert(semantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    uint64_t bits = f.bitcastToAPInt().getZExtValue();
    std::memcpy(&bytes[offset(i) * size()], &bits, size()); // little endian
  }
  double get(int64_t i) const {
    uint64_t bits = 0;
    std::memcpy(&bits, &bytes[offset(i) * size()], size());
    llvm::APFloat f(semantics(), llvm::APInt(size() * 8, bits));
    return f.convertToDouble();
  }
  void fill(double x) {
    for (int64_t i = 0; i < numElements; ++i)
      set(i, x);
  }
};

/// Fills `buf` with N(0, 1) samples rounded to its type and returns them
/// (as stored) in row-major order of the view.
template <int N>
std::vector<double> fillNormal(Buffer<N> &buf, std::mt19937 &rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(buf.numElements);
  for (int64_t i = 0; i < buf.numElements; ++i) {
    buf.set(i, normal(rng));
    values[i] = buf.get(i);
  }
  return values;
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_TYPEDBUFFER_H

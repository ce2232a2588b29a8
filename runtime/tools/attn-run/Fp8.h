//===- Fp8.h - host FP8 (e4m3) inputs for attn-run's check ------*- C++ -*-===//
//
// attn-run checks an FP8 kernel the way a caller would feed it: values
// quantized per (batch, KV head) to float8 e4m3fn with a scale of
// amax / 448 (FlashAttention-3's per-head scaling), V laid out as V^T, and
// the descales that undo the quantization. The reference then runs in fp32
// on the dequantized values, so the check measures the kernel's error, not
// the quantization's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_FP8_H
#define ATTN_RUN_FP8_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace attn::run {

/// The largest finite e4m3fn value.
constexpr float kE4M3Max = 448.0f;

/// The e4m3fn byte nearest to `x` (ties to even), saturated to +-448 (also
/// for +-inf); NaN gives 0x7F.
uint8_t toE4M3(float x);

/// The value of an e4m3fn byte (0x7F and 0xFF are NaN).
float fromE4M3(uint8_t bits);

/// A contiguous [B, H, N, D] tensor quantized with one scale per (batch, KV
/// head): heads h and h' share a scale iff h / (H / Hkv) == h' / (H / Hkv).
struct Quantized {
  std::vector<uint8_t> bytes;      // [B, H, N, D] e4m3fn
  std::vector<float> descale;      // [B, Hkv]: amax / 448 (1 if all zero)
  std::vector<float> dequantized;  // [B, H, N, D]: value(bytes) * descale
};
Quantized quantizePerKVHead(llvm::ArrayRef<float> x, int64_t batch,
                            int64_t heads, int64_t headsKV, int64_t n,
                            int64_t d);

/// [B, H, N, D] bytes as V^T storage: a [B, H, D, nPadded] buffer (zeros
/// past N), which the runtime views as [B, H, N, D] with strides
/// (H * D * nPadded, D * nPadded, 1, nPadded).
std::vector<uint8_t> toVt(llvm::ArrayRef<uint8_t> v, int64_t batch,
                          int64_t heads, int64_t n, int64_t d,
                          int64_t nPadded);

} // namespace attn::run

#endif // ATTN_RUN_FP8_H

//===- Variants.h - attention variants for the CPU references ---*- C++ -*-===//
//
// What the float64 references need of the attention variants, written out
// from the op definitions element by element (never from the compiler's
// interval reasoning): which keys a query sees under `causal` and
// #attn.key_mask, the softcapped score, and a row's softmax with a sink.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_VARIANTS_H
#define ATTN_UNITTESTS_VARIANTS_H

#include "TypedBuffer.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::test {

inline int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/// An #attn.key_mask (all defaults: none): the window sides (-1:
/// unbounded), the chunk (0: none) and the prefix (-1: none).
struct KeyMask {
  int64_t left = -1, right = -1, chunk = 0, prefix = -1;

  bool empty() const {
    return left < 0 && right < 0 && chunk == 0 && prefix < 0;
  }

  /// `key_mask = #attn.key_mask<...>`.
  std::string attr() const {
    std::vector<std::string> params;
    if (left >= 0)
      params.push_back("left = " + std::to_string(left));
    if (right >= 0)
      params.push_back("right = " + std::to_string(right));
    if (chunk > 0)
      params.push_back("chunk = " + std::to_string(chunk));
    if (prefix >= 0)
      params.push_back("prefix = " + std::to_string(prefix));
    return "key_mask = #attn.key_mask<" + llvm::join(params, ", ") + ">";
  }

  /// Whether query i sees key j (0 <= j < Nk) under this mask and, if
  /// `causal`, the causal one: p = i + Nk - Nq.
  bool sees(bool causal, int64_t i, int64_t j, int64_t nq, int64_t nk) const {
    int64_t p = i + nk - nq;
    bool in = !causal || j <= p;
    if (left >= 0)
      in = in && j >= p - left;
    if (right >= 0)
      in = in && j <= p + right;
    if (chunk > 0)
      in = in && floorDiv(p, chunk) == floorDiv(j, chunk);
    return in || j < prefix;
  }
};

/// The variants of one test configuration: a key mask, softcapping (absent
/// if none; 0 is off), sinks and ALiBi slopes (one per query head; empty:
/// none).
struct Variants {
  KeyMask mask = {};
  std::optional<double> softcap = std::nullopt;
  std::vector<float> sinks = {};
  std::vector<float> alibi = {};

  /// Query head h's sink logit (-inf: none).
  double sink(int64_t h) const { return sinks.empty() ? -INFINITY : sinks[h]; }

  /// The softcapped score c * tanh(s / c).
  double cap(double s) const {
    return softcap && *softcap != 0 ? *softcap * std::tanh(s / *softcap) : s;
  }

  /// ALiBi's bias of query i (head h) for key j: -slope_h * |p - j|.
  double bias(int64_t h, int64_t i, int64_t j, int64_t nq, int64_t nk) const {
    return alibi.empty() ? 0.0 : -alibi[h] * std::fabs(double(i + nk - nq - j));
  }

  /// The function arguments every test module takes for the per-head
  /// operands (used or not), and the op's clauses for those given.
  static std::string arguments(int64_t hq) {
    std::string type = "memref<" + std::to_string(hq) + "xf32>";
    return ", %alibi: " + type + ", %sinks: " + type;
  }
  std::string clauses(int64_t hq) const {
    std::string type = "memref<" + std::to_string(hq) + "xf32>";
    std::string text;
    if (!alibi.empty())
      text += " alibi(%alibi : " + type + ")";
    if (!sinks.empty())
      text += " sinks(%sinks : " + type + ")";
    return text;
  }

  /// The op's attributes for them (key_mask, softcap), comma-separated.
  std::vector<std::string> attributes() const {
    std::vector<std::string> attrs;
    if (!mask.empty())
      attrs.push_back(mask.attr());
    if (softcap)
      attrs.push_back("softcap = " + std::to_string(*softcap) + " : f32");
    return attrs;
  }
};

/// An f32 [Hq] operand holding `values` (zeros if empty: an unused one).
inline Buffer<1> perHeadBuffer(const std::vector<float> &values, int64_t hq) {
  Buffer<1> buf(Elt::f32, {hq});
  for (int64_t h = 0; h < hq; ++h)
    buf.set(h, values.empty() ? 0.0 : values[h]);
  return buf;
}

/// `c` (a test configuration with `name` and `variants`) with `variants`,
/// named `name`.
template <typename Config>
Config withVariants(const char *name, Config c, Variants variants) {
  c.name = name;
  c.variants = std::move(variants);
  return c;
}

/// Softmax weights of one row of scores (-inf: masked) whose denominator
/// also holds e^sink (sink -inf: none), and the row's LSE. A row with no
/// visible key: all weights 0 and LSE = sink.
struct RowSoftmax {
  std::vector<double> p;
  double lse;
};

inline RowSoftmax rowSoftmax(const std::vector<double> &s, double sink) {
  RowSoftmax r{std::vector<double>(s.size(), 0.0), sink};
  double mx = sink;
  for (double x : s)
    mx = std::max(mx, x);
  if (mx == -INFINITY)
    return r;
  double sum = std::exp(sink - mx);
  for (size_t j = 0; j < s.size(); ++j)
    if (s[j] != -INFINITY)
      sum += r.p[j] = std::exp(s[j] - mx);
  for (double &x : r.p)
    x /= sum;
  r.lse = mx + std::log(sum);
  return r;
}

} // namespace mlir::attn::test

#endif // ATTN_UNITTESTS_VARIANTS_H

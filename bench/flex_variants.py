"""FlexAttention's forward on the attention variants of open models.

The side of the variants benchmark that PyTorch provides: for each model's
attention (sliding windows, softcapping, chunked, ALiBi, packed documents,
and dense causal for scale) times `torch.compile(flex_attention)` with its
block mask built before timing (the build's time reported apart), counts
TFLOP/s on the (query, key) pairs the mask keeps, and measures its error
against a float64 reference on a shorter sequence of the same variant.

    python3 bench/flex_variants.py [--cases mistral_window,alibi] [--iters 20]

Prints one line per case and a table last. attn's variants lower to the
host only so far, so this script times FlexAttention alone (the baseline
for the tensor-core variants).
"""
import argparse
import math
import time

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from harness import timed

torch._dynamo.config.cache_size_limit = 64
FLEX = torch.compile(flex_attention)


def causal_window(left, chunk=None):
    """mask_mod: causal, a window of `left` keys back (None: unbounded),
    and keys in the query's chunk of `chunk` positions (None: any)."""

    def mask(b, h, q, kv):
        keep = kv <= q
        if left is not None:
            keep = keep & (q - kv <= left)
        if chunk is not None:
            keep = keep & (q // chunk == kv // chunk)
        return keep

    return mask


def softcap_mod(cap):
    def score(s, b, h, q, kv):
        return cap * torch.tanh(s / cap)

    return score


def alibi_mod(slopes):
    def score(s, b, h, q, kv):
        return s - slopes[h] * (q - kv).abs()

    return score


def alibi_slopes(heads):
    """ALiBi's geometric slopes (Press et al. 2022), heads a power of two."""
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)],
                        device="cuda")


def document_mask(n, docs):
    """Causal within each of `docs` documents of uneven lengths packed into
    n tokens, their boundaries off the 128-token blocks."""
    cuts = sorted(set(int(n * (i / docs) ** 1.3) + 37 * i for i in range(1, docs)))
    ids = torch.zeros(n, dtype=torch.int32, device="cuda")
    for c in cuts:
        ids[min(c, n - 1):] += 1

    def mask(b, h, q, kv):
        return (ids[q] == ids[kv]) & (kv <= q)

    return mask


# name, B, Hq, Hkv, N, D, mask_mod maker (given N), score_mod (or None)
def cases():
    return [
        ("llama3_8b_causal", 1, 32, 8, 8192, 128,
         lambda n: causal_window(None), None),
        ("mistral_window4096", 1, 32, 8, 32768, 128,
         lambda n: causal_window(4095), None),
        ("gemma2_local_softcap", 1, 16, 8, 8192, 256,
         lambda n: causal_window(4095), softcap_mod(50.0)),
        ("gemma2_global_softcap", 1, 16, 8, 8192, 256,
         lambda n: causal_window(None), softcap_mod(50.0)),
        ("gpt_oss_window128", 1, 64, 8, 8192, 64,
         lambda n: causal_window(127), None),
        ("llama4_chunked8192", 1, 40, 8, 32768, 128,
         lambda n: causal_window(None, 8192), None),
        ("alibi_causal", 2, 32, 32, 4096, 128,
         lambda n: causal_window(None), alibi_mod(alibi_slopes(32))),
        ("documents16", 1, 32, 8, 16384, 128,
         lambda n: document_mask(n, 16), None),
    ]


def visible_pairs(mask, n):
    """(query, key) pairs the mask keeps, counted in row blocks."""
    total, rows = 0, 1024
    kv = torch.arange(n, device="cuda")[None, :]
    for start in range(0, n, rows):
        q = torch.arange(start, min(start + rows, n), device="cuda")[:, None]
        total += int(mask(0, 0, q, kv).sum())
    return total


def reference(q, k, v, mask, score, heads_kv):
    """float64 attention with the same mask and score modification."""
    g = q.shape[1] // heads_kv
    k, v = k.repeat_interleave(g, 1).double(), v.repeat_interleave(g, 1).double()
    q = q.double()
    n = q.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    idx = torch.arange(n, device="cuda")
    qi, ki = idx[:, None], idx[None, :]
    if score is not None:
        h = torch.arange(q.shape[1], device="cuda")[:, None, None]
        s = score(s, 0, h, qi, ki)
    s = s.masked_fill(~mask(0, 0, qi, ki), float("-inf"))
    return torch.softmax(s, -1).nan_to_num(0.0) @ v


def error(case, n):
    """Flex's relative error against float64 at sequence length n."""
    name, _, hq, hkv, _, d, make_mask, score = case
    hq, hkv = min(hq, 8), min(hkv, 8)
    hkv = hq if case[2] == case[3] else max(1, hkv // 2)
    mask = make_mask(n)
    q, k, v = (torch.randn(1, h, n, d, device="cuda", dtype=torch.bfloat16)
               for h in (hq, hkv, hkv))
    bm = create_block_mask(mask, None, None, n, n)
    o = FLEX(q, k, v, score_mod=score, block_mask=bm, enable_gqa=hq != hkv)
    ref = reference(q, k, v, mask, score, hkv)
    return float((o.double() - ref).norm() / ref.norm())


def run(case, iters):
    name, b, hq, hkv, n, d, make_mask, score = case
    mask = make_mask(n)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
               for h in (hq, hkv, hkv))
    create_block_mask(mask, None, None, n, n)  # compile the builder
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    bm = create_block_mask(mask, None, None, n, n)
    torch.cuda.synchronize()
    build_ms = (time.perf_counter() - t0) * 1e3
    fn = lambda: FLEX(q, k, v, score_mod=score, block_mask=bm,
                      enable_gqa=hq != hkv)
    ms = timed(fn, iters)
    pairs = visible_pairs(mask, n)
    tflops = 4.0 * d * pairs * b * hq / (ms * 1e-3) / 1e12
    err = error(case, min(n, 8192))
    row = dict(case=name, ms=ms, tflops=tflops, build_ms=build_ms,
               kept=pairs / (n * n), err=err)
    print(row, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    wanted = set(filter(None, args.cases.split(",")))
    rows = [run(c, args.iters) for c in cases()
            if not wanted or c[0] in wanted]
    print(f"\n{torch.cuda.get_device_name()} torch {torch.__version__}")
    print(f"{'case':24} {'ms':>8} {'TFLOP/s':>8} {'kept':>6} "
          f"{'mask build ms':>13} {'err vs f64':>10}")
    for r in rows:
        print(f"{r['case']:24} {r['ms']:8.3f} {r['tflops']:8.1f} "
              f"{r['kept']:6.3f} {r['build_ms']:13.2f} {r['err']:10.2e}")


if __name__ == "__main__":
    main()

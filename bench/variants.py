"""Times bundles built with different code-generation options side by side.

GPU-machine A/B bench for the forward pass: the same kernels compiled into
several bundles (one per variant: --overlap, --ping-pong, --stages, ...)
are checked against an fp32 reference and timed in alternating rounds
together with PyTorch's FLASH (FlashAttention-2) and CUDNN backends (each
round times every variant, then FA2, then cuDNN; medians over rounds), so
a transformation's effect is measured on one GPU state.

    python3 bench/variants.py --lib build/lib/libattn_runtime.so \\
        --variant base=bundles/base --variant overlap=bundles/overlap

Cases are the timed shapes of harness.py plus short-sequence D = 256
prefill (bench/specs_perf.json has the matching static kernels).
"""
import argparse
import os
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import attn_runtime as rt
from harness import DT, compare, make, poison, randn, reference, timed

IDLE_S = 0.3  # seconds of idle GPU before each timing

# name, B, Hq, Hkv, Nq = Nk, D, dtype, causal
CASES = [
    ("llama3_8b_prefill", 1, 32, 8, 8192, 128, "bf16", 1),
    ("mistral_7b", 2, 32, 8, 4096, 128, "bf16", 1),
    ("noncausal_d128_n16k", 1, 16, 16, 16384, 128, "bf16", 0),
    ("gpt2", 8, 12, 12, 1024, 64, "f16", 1),
    ("d64_n8k", 4, 32, 32, 8192, 64, "bf16", 0),
    ("d64_n8k_causal", 4, 32, 32, 8192, 64, "bf16", 1),
    ("d256_n512", 16, 16, 16, 512, 256, "bf16", 1),
    ("d256_n1024", 8, 16, 16, 1024, 256, "bf16", 1),
    ("d256_n2048", 4, 16, 16, 2048, 256, "bf16", 1),
]


def sdpa_ms(q, k, v, causal, backend):
    g = q.shape[1] // k.shape[1]
    kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    try:
        with sdpa_kernel(backend):
            return timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                q, kk, vv, is_causal=bool(causal)))
    except RuntimeError:
        return float("nan")


def run(case, variants, rounds, stream, tune=False):
    name, B, Hq, Hkv, N, D, dts, causal = case
    dt = DT[dts]
    q, k, v = (randn((B, h, N, D), dt) for h in (Hq, Hkv, Hkv))
    ref_o, ref_lse = reference(q, k, v, causal)
    row = {"case": name, "checks": {}, "ms": {}}
    args = {}
    for label, bundle in variants:
        o, lse = poison((B, Hq, N, D), dt), poison((B, Hq, N), torch.float32)
        a = rt.fwd_args(q, k, v, o, lse, causal)
        if tune:  # bundles with variants: the fastest for this shape
            status, _, msg = bundle.tune(a, stream)
            o.fill_(float("nan"))
            lse.fill_(float("nan"))
        status, msg = bundle.fwd(a, stream)
        torch.cuda.synchronize()
        res = compare(o, lse, ref_o, ref_lse) if status == 0 else {
            "pass": False, "rel_o": float("nan")}
        row["checks"][label] = (res["pass"], res["rel_o"], msg if status else "")
        args[label] = a
        row["ms"][label] = []
    # FA2 and cuDNN take their turns in every round too, and every timing
    # starts after the same idle gap: at about 690 W the H200 is at its
    # power cap, and a kernel timed right after a light one (FA2) runs at
    # higher clocks than one timed right after a heavy one.
    fa2, cudnn = [], []
    for _ in range(rounds):
        for label, bundle in variants:
            if row["checks"][label][0]:
                time.sleep(IDLE_S)
                row["ms"][label].append(timed(lambda: bundle.fwd(args[label], stream)))
        time.sleep(IDLE_S)
        fa2.append(sdpa_ms(q, k, v, causal, SDPBackend.FLASH_ATTENTION))
        time.sleep(IDLE_S)
        cudnn.append(sdpa_ms(q, k, v, causal, SDPBackend.CUDNN_ATTENTION))
    row["fa2"] = sorted(fa2)[len(fa2) // 2]
    row["cudnn"] = sorted(cudnn)[len(cudnn) // 2]
    row["flops"] = 4 * B * Hq * N * N * D / (2 if causal else 1)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libattn_runtime.so")
    ap.add_argument("--variant", action="append", required=True,
                    help="label=bundle directory (repeatable)")
    ap.add_argument("--cases", default="", help="comma-separated subset")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tune", action="store_true",
                    help="attn_tune each call first (bundles built with --variant)")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = rt.load_library(a.lib)
    variants = []
    for spec in a.variant:
        label, path = spec.split("=", 1)
        bundle = rt.Bundle(lib, path)
        assert bundle.status == 0, bundle.message
        variants.append((label, bundle))
    stream = torch.cuda.current_stream().cuda_stream
    wanted = set(filter(None, a.cases.split(",")))
    rows, ok = [], True
    for case in CASES:
        if wanted and case[0] not in wanted:
            continue
        torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
        rows.append(run(case, variants, a.rounds, stream, a.tune))
        torch.cuda.empty_cache()
        for label, (passed, rel, msg) in rows[-1]["checks"].items():
            ok &= passed
            if not passed:
                print("FAIL %s %s: rel err %.2e %s" % (case[0], label, rel, msg))

    labels = [label for label, _ in variants]
    print("\n== %s; TFLOP/s (median of %d rounds of a median of 10)" % (
        torch.cuda.get_device_name(), a.rounds))
    print("%-20s" % "case" + "".join("%10s" % l[:10] for l in labels) +
          "%8s%8s %s" % ("FA2", "cuDNN", "best: vs FA2, vs cuDNN"))
    for r in rows:
        tf = {}
        for l in labels:
            ms = sorted(r["ms"][l])
            tf[l] = r["flops"] / ms[len(ms) // 2] / 1e9 if ms else float("nan")
        best = max(labels, key=lambda l: tf[l] if tf[l] == tf[l] else -1)
        fa2, cudnn = r["flops"] / r["fa2"] / 1e9, r["flops"] / r["cudnn"] / 1e9
        print("%-20s" % r["case"] + "".join("%10.1f" % tf[l] for l in labels) +
              "%8.1f%8.1f %s: %.2fx, %.2fx" % (fa2, cudnn, best, tf[best] / fa2,
                                              tf[best] / cudnn))
    print("errors (rel O): " + "; ".join(
        "%s %s" % (r["case"], " ".join("%.1e" % r["checks"][l][1] for l in labels))
        for r in rows))
    print("ALL CORRECT" if ok else "SOME FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

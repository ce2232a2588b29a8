"""Sustained throughput at the power cap: attn beside cuDNN, with clocks.

A median of 10 launches (harness.py, variants.py) times a kernel from an
idle GPU. Back to back, an H200 reaches its power cap (about 690 W) within
a second and lowers the SM clock; this runs each kernel for --seconds
without a pause, in the order attn, cuDNN, attn, cuDNN (the first pair
warms the GPU), and reports TFLOP/s over chunks of 20 launches together
with the SM clock and the power that nvidia-smi sampled meanwhile.

    python3 bench/sustained.py --lib build/lib/libattn_runtime.so \\
        --bundle build/bundles/ab/base
"""
import argparse
import datetime
import subprocess
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import attn_runtime as rt
from harness import poison, randn

# name, B, Hq, Hkv, N, D, causal (bf16; static kernels of specs_perf.json)
CASES = [
    ("noncausal_d128_n16k", 1, 16, 16, 16384, 128, 0),
    ("llama3_8b_prefill", 1, 32, 8, 8192, 128, 1),
    ("d64_n8k", 4, 32, 32, 8192, 64, 0),
]


def run_for(fn, flops, seconds):
    """TFLOP/s of each chunk of 20 launches during `seconds`."""
    t0, chunks = time.time(), []
    while time.time() - t0 < seconds:
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        for _ in range(20):
            fn()
        b.record()
        torch.cuda.synchronize()
        chunks.append(flops * 20 / a.elapsed_time(b) / 1e9)
    return t0, time.time(), chunks


def smi_samples(text):
    """(unix time, SM MHz, W) from nvidia-smi's CSV lines."""
    out = []
    for line in text.strip().splitlines():
        f = [x.strip() for x in line.split(",")]
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f")
            out.append((t.timestamp(), float(f[1]), float(f[2])))
        except (ValueError, IndexError):
            pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libattn_runtime.so")
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--seconds", type=float, default=2.5)
    a = ap.parse_args()
    bundle = rt.Bundle(rt.load_library(a.lib), a.bundle)
    assert bundle.status == 0, bundle.message
    stream = torch.cuda.current_stream().cuda_stream
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
         "--format=csv,noheader,nounits", "-lms", "50"],
        stdout=subprocess.PIPE, text=True)
    runs = []
    for name, B, Hq, Hkv, N, D, causal in CASES:
        dt = torch.bfloat16
        q, k, v = (randn((B, h, N, D), dt) for h in (Hq, Hkv, Hkv))
        o, lse = poison((B, Hq, N, D), dt), poison((B, Hq, N), torch.float32)
        args = rt.fwd_args(q, k, v, o, lse, causal)
        kk, vv = (t.repeat_interleave(Hq // Hkv, 1) for t in (k, v))

        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                torch.nn.functional.scaled_dot_product_attention(
                    q, kk, vv, is_causal=bool(causal))

        fns = {"attn": lambda: bundle.fwd(args, stream), "cuDNN": cudnn}
        flops = 4 * B * Hq * N * N * D / (2 if causal else 1)
        for label in ("attn", "cuDNN", "attn", "cuDNN"):
            time.sleep(1.0)
            runs.append((name, label) + run_for(fns[label], flops, a.seconds))
    smi.terminate()
    samples = smi_samples(smi.stdout.read())
    print("%-20s %-6s %8s %8s %8s %6s %6s" % (
        "case", "kernel", "first", "last", "min", "MHz", "W"))
    for name, label, t0, t1, chunks in runs:
        s = [x for x in samples if t0 + 1.0 <= x[0] <= t1]  # after 1 s
        mhz = sum(x[1] for x in s) / len(s) if s else float("nan")
        watts = sum(x[2] for x in s) / len(s) if s else float("nan")
        print("%-20s %-6s %8.0f %8.0f %8.0f %6.0f %6.0f" % (
            name, label, chunks[0], chunks[-1], min(chunks), mhz, watts))


if __name__ == "__main__":
    main()

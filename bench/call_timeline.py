"""Per-launch kernel times of back-to-back attn_fwd calls at the GPU's own
clocks (CUPTI through torch.profiler), with the idle gap before each launch.

ncu times each kernel at locked clocks with the caches flushed, so it
overstates launches that read what the previous launch left in L2 (a
quantized call's V^T copy after the amax launch) and says nothing of the
gaps between launches. This script times what a caller sees: `--iters`
calls in a row, each launch's median duration and the median idle time
before it, and the call's period (first start to last end over the calls).

GPU machine, with the fp8_quantized bundle of bench/build_bundle.sh:

    python3 bench/call_timeline.py --lib build/lib/libattn_runtime.so \\
        --bundle build/bundles/fp8_quantized

Each shape of fp8_quantized_check.py is called quantized and plain (bf16).
"""
import argparse
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

import attn_runtime as rt
from fp8_quantized_check import SHAPES


def timeline(fn, iters):
    """[(name, median us, median gap us before it)] per launch of one call,
    and the call's period in us."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                 key=lambda e: e.time_range.start)
    per = len(evs) // iters
    launches = []
    for slot in range(per):
        mine = [(i, e) for i, e in enumerate(evs) if i % per == slot]
        gaps = [e.time_range.start - evs[i - 1].time_range.end
                for i, e in mine if i > 0]
        launches.append((mine[0][1].name,
                         statistics.median(e.time_range.elapsed_us()
                                           for _, e in mine),
                         statistics.median(gaps) if gaps else float("nan")))
    period = (evs[-1].time_range.end - evs[0].time_range.start) / iters
    return launches, period


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args()
    bundle = rt.Bundle(rt.load_library(a.lib), a.bundle)
    assert bundle.status == 0, bundle.message
    stream = torch.cuda.current_stream().cuda_stream
    for shape in SHAPES:
        name, B, Hq, Hkv, N, D, causal = shape[:7]
        q = torch.randn(B, Hq, N, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, N, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        o, lse = torch.empty_like(q), torch.empty(B, Hq, N, device="cuda")
        flops = 4 * B * Hq * N * N * D * (0.5 if causal else 1)
        for mode, args in (("quantized", rt.quantized_fwd_args),
                           ("bf16", rt.fwd_args)):
            call = args(q, k, v, o, lse, causal)
            status, msg = bundle.fwd(call, stream)
            assert status == 0, "%s %s: %s" % (name, mode, msg)
            launches, period = timeline(lambda: bundle.fwd(call, stream),
                                        a.iters)
            print("%s, %s: %d launches, period %.1f us = %.1f TFLOP/s" % (
                name, mode, len(launches), period, flops / period / 1e6))
            for i, (kernel, us, gap) in enumerate(launches):
                print("  launch %d %-40s %8.1f us, idle before %5.2f us" % (
                    i, kernel[:40], us, gap))


if __name__ == "__main__":
    main()

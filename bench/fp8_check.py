"""FP8 (e4m3) forward on the H200 through the C API.

GPU-machine checks of the pre-quantized FP8 entry point (FlashAttention-3's:
e4m3 Q, K, V with fp32 [B, Hkv] descales, V stored as V^T, bf16 O, fp32
LSE): every output is poisoned with NaN, inputs are quantized per (batch, KV
head) with scale amax / 448, and O and LSE are compared with a float64
reference on the dequantized inputs. Then: descale value checks, the SASS
of a kernel (QGMMA, not HGMMA: an FP8 call computed in bf16 would be a
failure) and the speed beside the project's bf16 kernels, FlashAttention-2
and cuDNN in the same run. Every launch runs under a watchdog.

    python3 bench/fp8_check.py --lib build/lib/libattn_runtime.so \
        --fp8 build/bundles/fp8 --bf16 build/bundles/bench
"""
import argparse
import os
import statistics
import subprocess
import sys

import torch

import attn_runtime as rt
from harness import sdpa_baselines, timed_back_to_back
from tma_cases import reference, wait_or_die

E4M3 = torch.float8_e4m3fn
# FP8 tolerance: P is quantized to e4m3 in the kernel (3 mantissa bits), so
# O is off by about 2% (relative Frobenius) against the dequantized inputs.
REL_TOL = 4e-2
LSE_TOL = 1e-2


def quantize(x, heads_kv):
    """x [B, H, N, D] -> (e4m3, fp32 descale [B, Hkv]): one scale per
    (batch, KV head), amax / 448 (a GQA group's query heads share it)."""
    B, H = x.shape[:2]
    amax = x.abs().reshape(B, heads_kv, -1).amax(-1).clamp(min=1e-12)
    scale = (amax / 448.0).float()
    per_head = scale.repeat_interleave(H // heads_kv, dim=1)
    return (x / per_head[:, :, None, None]).to(E4M3), scale


def transposed(v8):
    """V [B, Hkv, Nk, D] e4m3 -> V^T storage [B, Hkv, D, Nk] with rows
    padded to 16 bytes (TMA strides), returned as the sliced view."""
    B, H, N, D = v8.shape
    pad = (N + 15) // 16 * 16
    vt = torch.zeros(B, H, D, pad, device="cuda", dtype=E4M3)[..., :N]
    vt.copy_(v8.transpose(2, 3))
    return vt


def dequantize(x8, scale):
    g = x8.shape[1] // scale.shape[1]
    return x8.double() * scale.repeat_interleave(g, 1)[:, :, None, None].double()


def inputs(B, Hq, Hkv, Nq, Nk, D, kind, seed):
    torch.manual_seed(seed)
    q = torch.randn(B, Hq, Nq, D, device="cuda")
    k = torch.randn(B, Hkv, Nk, D, device="cuda")
    v = torch.randn(B, Hkv, Nk, D, device="cuda")
    if kind == "outliers":  # 0.1% of Q/K entries scaled by 10-100 (FA3)
        for t in (q, k):
            mask = torch.rand_like(t) < 1e-3
            t[mask] *= torch.empty_like(t[mask]).uniform_(10, 100)
    elif kind == "sink":
        # The first 4 keys score about 10 above the rest for every query
        # (trained LLMs' attention sinks): the others' probabilities, about
        # e^-10 of the sink's, flush to zero in e4m3 unless P is scaled.
        u = torch.nn.functional.normalize(torch.randn(D, device="cuda"), dim=0)
        q += 3.0 * u
        k[:, :, :4] = 38.0 * u + 0.1 * k[:, :, :4]
    elif kind == "head_scales":  # magnitudes differ per (batch, KV head)
        f = torch.logspace(-2, 2, B * Hkv, base=2.0, device="cuda")
        f = f[torch.randperm(B * Hkv, device="cuda")].reshape(B, Hkv)
        k = k * f[:, :, None, None]
        v = v * f.flip(-1)[:, :, None, None]
    return q, k, v


def run_case(bundle, name, B, Hq, Hkv, Nq, Nk, D, causal, kind="normal",
             seed=0):
    q, k, v = inputs(B, Hq, Hkv, Nq, Nk, D, kind, seed)
    q8, qd = quantize(q, Hkv)
    k8, kd = quantize(k, Hkv)
    v8, vd = quantize(v, Hkv)
    o = torch.full((B, Hq, Nq, D), float("nan"), device="cuda",
                   dtype=torch.bfloat16)
    lse = torch.full((B, Hq, Nq), float("nan"), device="cuda")
    args = rt.fp8_fwd_args(q8, k8, transposed(v8), o, lse, qd, kd, vd, causal)
    status, msg = bundle.fwd(args, 0)
    if status != 0:
        print("%-34s FAIL status %d: %s" % (name, status, msg))
        return False
    wait_or_die(name)
    ro, rl = reference(dequantize(q8, qd), dequantize(k8, kd),
                       dequantize(v8, vd), causal, torch.float64)
    err = o.double() - ro
    rel = (err.norm() / ro.norm().clamp(min=1e-30)).item()
    rmse = err.pow(2).mean().sqrt().item()
    head_rel = (err.flatten(2).norm(dim=-1) /
                ro.flatten(2).norm(dim=-1).clamp(min=1e-30)).max().item()
    finite = torch.isfinite(rl)
    lse_err = ((lse.double() - rl)[finite].abs().max().item()
               if finite.any() else 0.0)
    empty_ok = bool((o[~finite] == 0).all() and
                    torch.isneginf(lse[~finite]).all())
    nan = int(torch.isnan(o).sum() + torch.isnan(lse[finite]).sum())
    ok = (nan == 0 and empty_ok and lse_err <= LSE_TOL * max(
        1.0, rl[finite].abs().max().item() if finite.any() else 1.0) and
        (kind not in ("normal", "head_scales") or head_rel <= REL_TOL))
    print("%-34s %s rel_fro %.2e worst_head %.2e rmse %.2e lse %.1e "
          "nan %d empty_rows %d" % (name, "ok  " if ok else "FAIL", rel,
                                    head_rel, rmse, lse_err, nan,
                                    int((~finite).sum())), flush=True)
    return ok


def check_values(bundle):
    """A non-finite or non-positive descale is a clear error (on by
    default), and turning the check off skips it."""
    q8 = torch.zeros(1, 2, 64, 128, device="cuda", dtype=E4M3)
    k8 = torch.zeros(1, 1, 64, 128, device="cuda", dtype=E4M3)
    vt = transposed(k8)
    o = torch.empty(1, 2, 64, 128, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(1, 2, 64, device="cuda")
    ok = True
    for bad in (float("nan"), 0.0, -1.0, float("inf")):
        d = torch.tensor([[bad]], device="cuda")
        one = torch.ones(1, 1, device="cuda")
        args = rt.fp8_fwd_args(q8, k8, vt, o, lse, one, d, one, False)
        status, msg = bundle.fwd(args, 0)
        good = status == 1 and "k_descale" in msg
        ok &= good
        print("descale %-5s -> status %d %s: %s" % (bad, status,
                                                   "ok" if good else "FAIL",
                                                   msg))
    return ok


def sass_check(bundle_dir):
    cubins = sorted(f for f in os.listdir(bundle_dir) if f.endswith(".cubin"))
    ok = True
    for f in cubins:
        out = subprocess.run(["cuobjdump", "-sass", os.path.join(bundle_dir, f)],
                             capture_output=True, text=True).stdout
        q, h = out.count("QGMMA"), out.count("HGMMA")
        good = q > 0 and h == 0
        ok &= good
        print("SASS %-40s QGMMA %3d HGMMA %d %s" % (f, q, h,
                                                   "ok" if good else "FAIL"))
    return ok


def speed(fp8, bf16, shape, rounds, iters, exact=None):
    name, B, Hq, Hkv, N, D, causal = shape
    q8, qd = quantize(torch.randn(B, Hq, N, D, device="cuda"), Hkv)
    k8, kd = quantize(torch.randn(B, Hkv, N, D, device="cuda"), Hkv)
    v8, vd = quantize(torch.randn(B, Hkv, N, D, device="cuda"), Hkv)
    vt = transposed(v8)
    o8 = torch.empty(B, Hq, N, D, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B, Hq, N, device="cuda")
    a8 = rt.fp8_fwd_args(q8, k8, vt, o8, lse, qd, kd, vd, causal)
    qb = torch.randn(B, Hq, N, D, device="cuda", dtype=torch.bfloat16)
    kb = torch.randn(B, Hkv, N, D, device="cuda", dtype=torch.bfloat16)
    vb = torch.randn_like(kb)
    ob = torch.empty_like(qb)
    ab = rt.fwd_args(qb, kb, vb, ob, lse, causal)
    stream = torch.cuda.current_stream().cuda_stream
    calls = {
        "attn fp8": lambda: fp8.fwd(a8, stream),
        "attn bf16": lambda: bf16.fwd(ab, stream),
        **sdpa_baselines(qb, kb, vb, causal),
    }
    if exact:
        calls["attn fp8 exact"] = lambda: exact.fwd(a8, stream)
    flops = 4 * B * Hq * N * N * D * (0.5 if causal else 1)
    times = {k: [] for k in calls}
    for _ in range(rounds):
        for k, fn in calls.items():
            times[k].append(timed_back_to_back(fn, iters))
    tf = {k: flops / (statistics.median(v) * 1e-3) / 1e12
          for k, v in times.items()}
    print("| %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx | %s |" % (
        name, tf["attn fp8"], tf["attn bf16"], tf["attn fp8"] / tf["attn bf16"],
        tf["FA2"], tf["cuDNN"], tf["attn fp8"] / tf["cuDNN"],
        "%.1f" % tf["attn fp8 exact"] if exact else "-"), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--fp8", required=True)
    ap.add_argument("--bf16", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--exact", default=None,
                    help="a bundle of bench/specs_fp8.json compiled with "
                         "--fp8-lazy-max=false: the normal, outlier and sink "
                         "cases, causal or not, on it and on --fp8 (the "
                         "lazy row max), and its speed beside --fp8's")
    ap.add_argument("--fp8-unscaled", default=None,
                    help="a bundle compiled with --fp8-p-scale-log2=0: the "
                         "sink and outlier cases again without P's 2^8")
    a = ap.parse_args()
    lib = rt.load_library(a.lib)
    fp8 = rt.Bundle(lib, a.fp8)
    bf16 = rt.Bundle(lib, a.bf16)
    assert fp8.status == 0 and bf16.status == 0, (fp8.message, bf16.message)
    ok = True
    cases = [
        ("d128 causal N1000", 1, 4, 2, 1000, 1000, 128, True),
        ("d128 N1000", 1, 4, 2, 1000, 1000, 128, False),
        ("d128 causal Nq200 Nk1000", 1, 4, 2, 200, 1000, 128, True),
        ("d128 Nq1 Nk4097", 2, 8, 2, 1, 4097, 128, False),
        ("d128 causal Nq1 Nk4097", 2, 8, 2, 1, 4097, 128, True),
        ("d128 Nk1", 1, 2, 1, 130, 1, 128, False),
        ("d128 causal Nq300 Nk100 (empty)", 1, 2, 1, 300, 100, 128, True),
        ("d128 MHA B2 H4 N777", 2, 4, 4, 777, 777, 128, True),
        ("d64 causal N777", 1, 6, 2, 777, 777, 64, True),
        ("d64 N300 Nk900", 2, 4, 1, 300, 900, 64, False),
        ("d256 causal N777", 1, 4, 2, 777, 777, 256, True),
        ("d256 N513", 1, 2, 2, 513, 513, 256, False),
        ("llama B1 H32/8 N8192", 1, 32, 8, 8192, 8192, 128, True),
    ]
    for c in cases:
        ok &= run_case(fp8, *c)
    ok &= run_case(fp8, "head scales B2 H8/4 N1024", 2, 8, 4, 1024, 1024,
                   128, True, kind="head_scales")
    # Outliers and sinks: reported (their error is the inputs'), and held
    # to no NaN, written rows and finite LSE.
    for kind in ("normal", "outliers"):
        ok &= run_case(fp8, "B2 H16 N2048 %s" % kind, 2, 16, 16, 2048, 2048,
                       128, False, kind=kind)
    if a.fp8_unscaled:
        unscaled = rt.Bundle(lib, a.fp8_unscaled)
        assert unscaled.status == 0, unscaled.message
        for kind in ("sink", "normal", "outliers"):
            for name, bundle in (("P unscaled", unscaled), ("P * 2^8", fp8)):
                ok &= run_case(bundle, "%-10s: %s B1 H8 N2048" % (name, kind),
                               1, 8, 8, 2048, 2048, 128, True, kind=kind)
    else:
        ok &= run_case(fp8, "sink B1 H8 N2048", 1, 8, 8, 2048, 2048, 128,
                       True, kind="sink")
    exact = None
    if a.exact:
        exact = rt.Bundle(lib, a.exact)
        assert exact.status == 0, exact.message
        for kind, shape in (("normal", (2, 16, 16)), ("outliers", (2, 16, 16)),
                            ("sink", (1, 8, 8))):
            for causal in (False, True):
                for name, bundle in (("exact max", exact), ("lazy max", fp8)):
                    ok &= run_case(bundle, "%-9s: %s%s B%d H%d N2048" % (
                        name, kind, " causal" if causal else "", shape[0],
                        shape[1]), *shape, 2048, 2048, 128, causal, kind=kind)
    ok &= check_values(fp8)
    ok &= sass_check(a.fp8)
    if not a.skip_speed:
        fp8.set_check_values(False)
        if exact:
            exact.set_check_values(False)
        print("| shape | attn fp8 | attn bf16 | fp8/bf16 | FA2 | cuDNN | "
              "fp8/cuDNN | fp8 exact max |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- |")
        for shape in (("Llama-3-8B prefill", 1, 32, 8, 8192, 128, True),
                      ("non-causal D128 N16384", 1, 16, 16, 16384, 128, False)):
            speed(fp8, bf16, shape, a.rounds, a.iters, exact)
    print("FP8 CHECKS", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Checks an attn kernel bundle on the GPU against PyTorch, through the C API.

GPU-machine harness: the kernels are launched by libattn_runtime.so (no
Python in it) through ctypes; PyTorch only makes inputs, computes the fp32
reference and times FlashAttention-2 / cuDNN for comparison. Every run:
fresh random normal inputs, outputs poisoned with NaN, reference in fp32
with an explicit bottom-right causal mask, relative error of O, max error
of LSE, rows that see no key (O = 0, LSE = -inf). Then every documented
misuse must come back as its status without killing the process.

    python3 bench/harness.py --bundle bundles/bench --lib build/lib/libattn_runtime.so
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import tempfile
import threading
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import attn_runtime as rt

DT = {"bf16": torch.bfloat16, "f16": torch.float16}
# name, B, Hq, Hkv, Nq, Nk, D, dtype, causal, layout, lse, expected kernel
CASES = [
    ("llama3_8b_prefill", 1, 32, 8, 8192, 8192, 128, "bf16", 1, "bhnd", 1, "llama3_8b_prefill"),
    ("gpt2", 8, 12, 12, 1024, 1024, 64, "f16", 1, "bhnd", 1, "gpt2"),
    ("mistral_7b", 2, 32, 8, 4096, 4096, 128, "bf16", 1, "bhnd", 1, "mistral_7b"),
    ("n113", 2, 4, 4, 113, 113, 64, "bf16", 0, "bhnd", 1, "n113"),
    ("n1023", 1, 8, 2, 1023, 1023, 128, "f16", 1, "bhnd", 1, "n1023"),
    ("n2049", 1, 4, 4, 2049, 2049, 64, "bf16", 1, "bhnd", 1, "n2049"),
    ("d80", 1, 4, 2, 512, 512, 80, "bf16", 1, "bhnd", 1, "d80"),
    ("d96", 1, 4, 4, 500, 700, 96, "f16", 0, "bhnd", 1, "d96"),
    ("d256", 1, 4, 2, 300, 300, 256, "bf16", 1, "bhnd", 1, "d256"),
    ("decode_nq1", 4, 32, 8, 1, 4096, 128, "bf16", 1, "bhnd", 1, "decode_nq1"),
    ("causal_nq_lt_nk", 1, 4, 4, 300, 1000, 64, "f16", 1, "bhnd", 1, "causal_nq_lt_nk"),
    ("causal_nq_gt_nk", 1, 4, 4, 1000, 300, 64, "bf16", 1, "bhnd", 1, "causal_nq_gt_nk"),
    # No exact kernel: the dynamic-length kernels take these.
    ("dyn_gqa_777x1500", 3, 16, 4, 777, 1500, 128, "bf16", 1, "bhnd", 1, "dyn_bf16_d128_causal"),
    ("dyn_mqa_decode", 2, 8, 1, 1, 3000, 128, "bf16", 1, "bhnd", 1, "dyn_bf16_d128_causal"),
    ("dyn_no_key_rows", 1, 2, 2, 200, 50, 128, "bf16", 1, "bhnd", 1, "dyn_bf16_d128_causal"),
    ("dyn_bnhd_layout", 2, 6, 3, 333, 2000, 64, "f16", 0, "bnhd", 1, "dyn_f16_d64"),
    ("dyn_no_lse", 1, 2, 1, 64, 64, 64, "f16", 0, "bhnd", 0, "dyn_f16_d64_nolse"),
    # Same shape as the contiguous static kernel, but a [B, N, H, D] view:
    # the contiguous kernel must not be picked.
    ("llama3_8b_bnhd", 1, 32, 8, 8192, 8192, 128, "bf16", 1, "bnhd", 1, "dyn_bf16_d128_causal"),
    ("noncausal_d128_n16k", 1, 16, 16, 16384, 16384, 128, "bf16", 0, "bhnd", 1, "noncausal_d128_n16k"),
    ("d64_n8k", 4, 32, 32, 8192, 8192, 64, "bf16", 0, "bhnd", 1, "d64_n8k"),
    ("d64_n8k_causal", 4, 32, 32, 8192, 8192, 64, "bf16", 1, "bhnd", 1, "d64_n8k_causal"),
]
TIMED = ("llama3_8b_prefill", "gpt2", "mistral_7b", "noncausal_d128_n16k",
         "d64_n8k", "d64_n8k_causal")


def make(shape, dt, layout, fill):
    """A [B, H, N, D] (or [B, H, N]) tensor, stored as [B, N, H, D] for bnhd."""
    if layout == "bnhd" and len(shape) == 4:
        b, h, n, d = shape
        t = fill((b, n, h, d), dt)
        return t.transpose(1, 2)
    return fill(shape, dt)


def randn(shape, dt):
    return torch.randn(shape, device="cuda", dtype=torch.float32).to(dt)


def poison(shape, dt):
    return torch.full(shape, float("nan"), device="cuda", dtype=dt)


def reference(q, k, v, causal):
    """fp32 attention with an explicit bottom-right mask, one head at a time."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    o = torch.empty(B, Hq, Nq, D, dtype=torch.float32, device="cuda")
    lse = torch.empty(B, Hq, Nq, dtype=torch.float32, device="cuda")
    i = torch.arange(Nq, device="cuda")[:, None]
    j = torch.arange(Nk, device="cuda")[None, :]
    visible = (j <= i + Nk - Nq) if causal else torch.ones(
        Nq, Nk, dtype=torch.bool, device="cuda")
    for b in range(B):
        for h in range(Hq):
            s = (q[b, h].float() @ k[b, h // g].float().T) / math.sqrt(D)
            s = s.masked_fill(~visible, float("-inf"))
            l = torch.logsumexp(s, dim=-1)
            p = torch.exp(s - l[:, None]).nan_to_num(0.0)
            o[b, h] = p @ v[b, h // g].float()
            lse[b, h] = l
    return o, lse


def compare(o, lse, ro, rl):
    nan_o = int((~torch.isfinite(o)).sum())
    rel = float((o.float() - ro).norm() / ro.norm().clamp_min(1e-30))
    res = {"rel_o": rel, "nonfinite_o": nan_o, "lse_err": 0.0,
           "nan_lse": 0, "no_key_rows": 0, "no_key_ok": True}
    if lse is not None:
        fin = torch.isfinite(rl)
        res["nan_lse"] = int(torch.isnan(lse).sum())
        if fin.any():
            res["lse_err"] = float((lse[fin] - rl[fin]).abs().max())
        empty = ~fin
        res["no_key_rows"] = int(empty.sum())
        if empty.any():
            res["no_key_ok"] = bool((lse[empty] == float("-inf")).all()
                                    and (o[empty] == 0).all())
    res["pass"] = (rel < 1e-2 and nan_o == 0 and res["nan_lse"] == 0
                   and res["lse_err"] < 1e-3 and res["no_key_ok"])
    return res


def timed_back_to_back(fn, iters, idle_s=0.3):
    """Mean ms of `iters` back-to-back calls after a warm-up and `idle_s`
    seconds of idle GPU (every kernel timed from the same state)."""
    fn()
    torch.cuda.synchronize()
    time.sleep(idle_s)
    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
    e0.record()
    for _ in range(iters):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / iters


def timed(fn, iters=10):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def run_case(bundle, kernels, case, stream):
    name, B, Hq, Hkv, Nq, Nk, D, dts, causal, layout, want_lse, expect = case
    dt = DT[dts]
    q = make((B, Hq, Nq, D), dt, layout, randn)
    k = make((B, Hkv, Nk, D), dt, layout, randn)
    v = make((B, Hkv, Nk, D), dt, layout, randn)
    o = make((B, Hq, Nq, D), dt, layout, poison)
    lse = poison((B, Hq, Nq), torch.float32) if want_lse else None
    args = rt.fwd_args(q, k, v, o, lse, causal)
    status, index, msg = bundle.select(args)
    picked = kernels[index].split(":")[0] if status == 0 else msg
    status, msg = bundle.fwd(args, stream)
    torch.cuda.synchronize()
    row = {"case": name, "shape": "B%d Hq%d Hkv%d Nq%d Nk%d D%d %s%s %s" % (
        B, Hq, Hkv, Nq, Nk, D, dts, " causal" if causal else "", layout),
        "kernel": picked, "status": status}
    if status != 0:
        row.update(pass_=False, error=msg)
        return row, None
    ro, rl = reference(q, k, v, causal)
    row.update(compare(o, lse, ro, rl))
    row["right_kernel"] = picked == expect + "_kernel"
    row["pass"] = row["pass"] and row["right_kernel"]
    return row, (q, k, v, o, lse, args)


def time_case(bundle, case, tensors, stream):
    name, B, Hq, Hkv, Nq, Nk, D, dts, causal = case[:9]
    q, k, v, o, lse, args = tensors
    flops = 4 * B * Hq * Nq * Nk * D / (2 if causal else 1)
    ours = timed(lambda: bundle.fwd(args, stream))
    kk = k.repeat_interleave(Hq // Hkv, 1)
    vv = v.repeat_interleave(Hq // Hkv, 1)
    out = {"ours_ms": ours, "ours_tflops": flops / ours / 1e9}
    for backend, tag in ((SDPBackend.FLASH_ATTENTION, "fa2"),
                         (SDPBackend.CUDNN_ATTENTION, "cudnn")):
        try:
            with sdpa_kernel(backend):
                ms = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                    q, kk, vv, is_causal=bool(causal)))
        except RuntimeError:
            ms = float("nan")
        out[tag + "_ms"], out[tag + "_tflops"] = ms, flops / ms / 1e9
    return out


def sdpa_baselines(q, k, v, causal):
    """FA2 and cuDNN (PyTorch SDPA backends) on the same inputs as calls to
    time: {"FA2": fn, "cuDNN": fn}; GQA K/V are repeated to Hq heads
    outside the timed calls."""
    rep = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)

    def call(backend):
        def run():
            with sdpa_kernel(backend):
                torch.nn.functional.scaled_dot_product_attention(
                    q, kr, vr, is_causal=bool(causal))
        return run

    return {"FA2": call(SDPBackend.FLASH_ATTENTION),
            "cuDNN": call(SDPBackend.CUDNN_ATTENTION)}


def concurrent_launches(bundle, threads=4):
    """The same problem from several host threads on their own streams."""
    torch.manual_seed(1234)
    q, k, v = (randn((1, 8, 1000, 64), torch.float16) for _ in range(3))
    ref_o, _ = reference(q, k, v, False)
    outs, statuses = [], []

    def work():
        torch.cuda.set_device(0)
        stream = torch.cuda.Stream()
        o = poison((1, 8, 1000, 64), torch.float16)
        lse = poison((1, 8, 1000), torch.float32)
        args = rt.fwd_args(q, k, v, o, lse, False)
        for _ in range(20):
            st, _ = bundle.fwd(args, stream.cuda_stream)
            statuses.append(st)
        stream.synchronize()
        outs.append(o)

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    errs = [float((o.float() - ref_o).norm() / ref_o.norm()) for o in outs]
    ok = all(s == 0 for s in statuses) and len(outs) == threads and max(errs) < 1e-2
    return ok, "%d threads x 20 launches, statuses %s, max rel err %.2e" % (
        threads, sorted(set(statuses)), max(errs))


def misuse_cases(lib, bundle, bundle_dir, stream):
    """(name, expected status, actual status, message) per documented misuse."""
    good = lambda: [randn((1, 4, 128, 64), torch.float16) for _ in range(3)]
    out = []

    def check(name, expect, q, k, v, o, lse, causal=0):
        args = rt.fwd_args(q, k, v, o, lse, causal)
        st, msg = bundle.fwd(args, stream)
        out.append((name, expect, st, msg))

    q, k, v = good()
    o, lse = poison((1, 4, 128, 64), torch.float16), poison((1, 4, 128), torch.float32)
    check("k dtype differs from q", 1, q, k.to(torch.bfloat16), v, o, lse)
    qm = torch.empty(1 * 4 * 128 * 64 + 1, device="cuda", dtype=torch.float16)
    check("q pointer not 16-byte aligned", 1,
          qm[1:].view(1, 4, 128, 64), k, v, o, lse)
    wide = randn((1, 4, 128, 128), torch.float16)
    check("q stride on D != 1", 1, wide[..., ::2], k, v, o, lse)
    padded = randn((1, 4, 128, 68), torch.float16)
    check("q row stride not a multiple of 8", 1, padded[..., :64], k, v, o, lse)
    check("q on the host", 1, q.cpu(), k, v, o, lse)
    check("lse of the wrong shape", 1, q, k, v, o, poison((1, 4, 127), torch.float32))
    check("lse not f32", 1, q, k, v, o, poison((1, 4, 128), torch.float16))
    check("o shape differs from q", 1, q, k, v, poison((1, 4, 100, 64), torch.float16), lse)
    check("Hq not a multiple of Hkv", 1, randn((1, 5, 128, 64), torch.float16), k, v,
          poison((1, 5, 128, 64), torch.float16), poison((1, 5, 128), torch.float32))
    check("q rank 3", 1, q[0], k, v, o, lse)
    d72 = [randn((1, 4, 128, 72), torch.float16) for _ in range(3)]
    check("no kernel for D=72", 2, *d72, poison((1, 4, 128, 72), torch.float16), lse)
    args = rt.fwd_args(q, k, v, o, lse, 0)
    args.q.data = None
    st, msg = bundle.fwd(args, stream)
    out.append(("q data pointer null", 1, st, msg))

    missing = rt.Bundle(lib, "/nonexistent/attn-bundle")
    out.append(("bundle directory missing", 3, missing.status, missing.message))
    tmp = tempfile.mkdtemp()
    try:
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            f.write("{ not json")
        broken = rt.Bundle(lib, tmp)
        out.append(("manifest not JSON", 4, broken.status, broken.message))
        # A valid manifest whose cubin is an ELF header followed by garbage:
        # loads, then the driver refuses it at the first launch. A cubin that
        # does not match its manifest hash is BUNDLE_CORRUPT at load.
        manifest = json.load(open(os.path.join(bundle_dir, "manifest.json")))
        kern = next(k for k in manifest["kernels"] if k["name"] == "dyn_f16_d64_kernel")
        manifest["kernels"] = [kern]
        # Its hash is the garbage's: the bundle loads, the driver decides.
        garbage = b"\x7fELF" + os.urandom(4096)
        kern["cubin_sha256"] = hashlib.sha256(garbage).hexdigest()
        json.dump(manifest, open(os.path.join(tmp, "manifest.json"), "w"))
        with open(os.path.join(tmp, kern["cubin"]), "wb") as f:
            f.write(garbage)
        bad = rt.Bundle(lib, tmp)
        st, msg = bad.fwd(rt.fwd_args(q, k, v, o, lse, 0), stream)
        out.append(("cubin rejected by the driver", 5, st, msg))
        del bad
        kern["cubin_sha256"] = "0" * 64
        json.dump(manifest, open(os.path.join(tmp, "manifest.json"), "w"))
        wrong = rt.Bundle(lib, tmp)
        out.append(("cubin differs from its hash", 4, wrong.status, wrong.message))
    finally:
        shutil.rmtree(tmp)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--lib", required=True, help="libattn_runtime.so")
    ap.add_argument("--out", default=None, help="write results JSON here")
    ap.add_argument("--cases", default="", help="comma-separated subset")
    ap.add_argument("--no-timing", action="store_true")
    a = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.init()
    lib = rt.load_library(a.lib)
    bundle = rt.Bundle(lib, a.bundle)
    assert bundle.status == 0, bundle.message
    kernels = bundle.kernels()
    print("bundle %s: %d kernels" % (a.bundle, len(kernels)))
    for k in kernels:
        print("  " + k)
    stream = torch.cuda.current_stream().cuda_stream
    wanted = set(filter(None, a.cases.split(",")))
    rows, all_ok = [], True
    for case in CASES:
        if wanted and case[0] not in wanted:
            continue
        torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
        row, tensors = run_case(bundle, kernels, case, stream)
        if tensors and case[0] in TIMED and not a.no_timing:
            row.update(time_case(bundle, case, tensors, stream))
        del tensors
        torch.cuda.empty_cache()
        all_ok &= bool(row.get("pass"))
        rows.append(row)
        print(json.dumps(row), flush=True)

    conc_ok, conc = concurrent_launches(bundle)
    all_ok &= conc_ok
    misuse = misuse_cases(lib, bundle, a.bundle, stream)
    misuse_ok = all(e == s for _, e, s, _ in misuse)
    all_ok &= misuse_ok

    print("\n== %s, torch %s" % (torch.cuda.get_device_name(), torch.__version__))
    print("%-20s %-42s %-26s %9s %8s %4s %6s %s" % (
        "case", "shape", "kernel", "rel err O", "LSE err", "NaN", "noKey", "result"))
    for r in rows:
        if r["status"] != 0:
            print("%-20s %-42s FAILED status %d: %s" % (r["case"], r["shape"], r["status"], r["error"]))
            continue
        print("%-20s %-42s %-26s %9.2e %8.1e %4d %6s %s" % (
            r["case"], r["shape"], r["kernel"][:26], r["rel_o"], r["lse_err"],
            r["nonfinite_o"] + r["nan_lse"], "%d ok" % r["no_key_rows"] if r["no_key_ok"] else "BAD",
            "PASS" if r["pass"] else "FAIL"))
    print("\ntiming (median of 10; FLOPs 4*B*Hq*Nq*Nk*D, /2 causal):")
    for r in rows:
        if "ours_ms" in r:
            print("  %-18s ours %8.3f ms %6.1f TFLOP/s | FA2 %7.3f ms %6.1f | cuDNN %7.3f ms %6.1f | ours/FA2 %.3f" % (
                r["case"], r["ours_ms"], r["ours_tflops"], r["fa2_ms"], r["fa2_tflops"],
                r["cudnn_ms"], r["cudnn_tflops"], r["fa2_ms"] / r["ours_ms"]))
    print("\nconcurrent launches: %s (%s)" % ("PASS" if conc_ok else "FAIL", conc))
    print("misuse (expected status -> got):")
    for name, e, s, msg in misuse:
        print("  %-34s %d -> %d %s  %s" % (name, e, s, "ok" if e == s else "WRONG", msg[:110]))
    print("\nprocess alive after all misuse cases; %s" % ("ALL PASS" if all_ok else "SOME FAILED"))
    if a.out:
        json.dump({"rows": rows, "misuse": misuse, "concurrent": conc}, open(a.out, "w"), indent=1)
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

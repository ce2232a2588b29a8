"""Cases that break TMA/WGMMA attention kernels, run through the C API.

GPU-machine checks for the tensor-core (wgmma) path, each a known failure
mode of attention compilers (issue: Hopper forward on tensor cores):
every D in both dtypes, tails of Nq and Nk below and across the tiles,
K/V views cut from NaN-filled buffers, two consumer warpgroups with
K = Q, causal Q tiles that visit no K block after a kernel that leaves junk
in shared memory, grids beyond 65535 in y/z, and the error against a
float64 reference next to FlashAttention-2's on the same inputs.

Every launch runs under a watchdog: a kernel that does not finish in
WATCHDOG_S seconds (an mbarrier waiting for bytes that never come) is
reported as HANG and the process exits with status 3.
"""
import math
import os
import sys
import time

import torch

import attn_runtime as rt

WATCHDOG_S = 30.0
DT = {"bf16": torch.bfloat16, "f16": torch.float16}


def wait_or_die(what):
    ev = torch.cuda.Event()
    ev.record()
    deadline = time.time() + WATCHDOG_S
    while not ev.query():
        if time.time() > deadline:
            print("HANG: %s did not finish in %.0f s" % (what, WATCHDOG_S),
                  flush=True)
            os._exit(3)
        time.sleep(0.001)


def reference(q, k, v, causal, dtype=torch.float32):
    """Batched attention in `dtype` with a bottom-right causal mask."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    kk = k.to(dtype).repeat_interleave(g, 1)
    vv = v.to(dtype).repeat_interleave(g, 1)
    s = (q.to(dtype) @ kk.transpose(-1, -2)) / math.sqrt(D)
    if causal:
        i = torch.arange(Nq, device="cuda")[:, None]
        j = torch.arange(Nk, device="cuda")[None, :]
        s = s.masked_fill(j > i + Nk - Nq, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return p @ vv, lse


def launch(bundle, q, k, v, causal, lse=True, what=""):
    o = torch.full(q.shape, float("nan"), device="cuda", dtype=q.dtype)
    l = (torch.full(q.shape[:3], float("nan"), device="cuda",
                    dtype=torch.float32) if lse else None)
    args = rt.fwd_args(q, k, v, o, l, causal)
    st, msg = bundle.fwd(args, torch.cuda.current_stream().cuda_stream)
    if st != 0:
        return None, None, "status %d: %s" % (st, msg)
    wait_or_die(what)
    return o, l, None


def verdict(o, l, ro, rl, tol=1e-2):
    bad = int((~torch.isfinite(o)).sum())
    rel = float((o.float() - ro.float()).norm() / ro.float().norm().clamp_min(1e-30))
    ok = bad == 0 and rel < tol
    lse_err, nokey = 0.0, "-"
    if l is not None:
        fin = torch.isfinite(rl)
        if fin.any():
            lse_err = float((l[fin] - rl[fin].float()).abs().max())
        empty = ~fin
        if empty.any():
            good = bool((l[empty] == float("-inf")).all()
                        and (o[empty] == 0).all())
            nokey = "%d %s" % (int(empty.sum()), "ok" if good else "BAD")
            ok &= good
        ok &= lse_err < 1e-3 and not bool(torch.isnan(l).any())
    return ok, rel, lse_err, bad, nokey


def rnd(shape, dt, scale=1.0):
    return (torch.randn(shape, device="cuda") * scale).to(dt)


def run(bundle, name, q, k, v, causal, rows, lse=True):
    o, l, err = launch(bundle, q, k, v, causal, lse, name)
    if err:
        rows.append((name, False, err))
        return
    ro, rl = reference(q, k, v, causal)
    ok, rel, lerr, bad, nokey = verdict(o, l, ro, rl)
    rows.append((name, ok, "rel %.2e lse %.1e nonfinite %d noKey %s" % (
        rel, lerr, bad, nokey)))


def d_matrix(bundle, rows, dims):
    for d in dims:
        for dts in ("bf16", "f16"):
            for causal in (0, 1):
                dt = DT[dts]
                q, k, v = rnd((1, 4, 300, d), dt), rnd((1, 2, 333, d), dt), rnd((1, 2, 333, d), dt)
                run(bundle, "D%d %s%s Nq300 Nk333 GQA2" % (d, dts, " causal" if causal else ""),
                    q, k, v, causal, rows)


def tails(bundle, rows):
    for d, dts in ((128, "bf16"), (64, "f16")):
        dt = DT[dts]
        for nq in (1, 3, 65):
            for nk in (1, 8, 65, 129):
                for causal in (0, 1):
                    q, k, v = rnd((2, 2, nq, d), dt), rnd((2, 1, nk, d), dt), rnd((2, 1, nk, d), dt)
                    run(bundle, "tail D%d Nq%d Nk%d%s" % (d, nq, nk, " causal" if causal else ""),
                        q, k, v, causal, rows)


def nan_views(bundle, rows):
    """K/V = the first Nk rows of a buffer whose other rows are NaN."""
    for d, dts in ((64, "bf16"), (128, "f16")):
        dt = DT[dts]
        for nk in (1, 48, 100):
            for causal in (0, 1):
                kb = torch.full((1, 2, 256, d), float("nan"), device="cuda", dtype=dt)
                vb = torch.full((1, 2, 256, d), float("nan"), device="cuda", dtype=dt)
                kb[:, :, :nk] = rnd((1, 2, nk, d), dt)
                vb[:, :, :nk] = rnd((1, 2, nk, d), dt)
                q = rnd((1, 2, 70, d), dt)
                run(bundle, "NaN-backed view D%d Nk%d%s" % (d, nk, " causal" if causal else ""),
                    q, kb[:, :, :nk], vb[:, :, :nk], causal, rows)


def two_warpgroups(bundle, rows):
    """K = Q (attention close to the identity), V_j = j: a swapped 64-row
    block of either warpgroup changes which j comes out."""
    for d, dts in ((128, "bf16"), (64, "f16")):
        dt = DT[dts]
        n = 512
        q = rnd((1, 2, n, d), dt, 3.0)
        v = torch.arange(n, device="cuda", dtype=torch.float32)[None, None, :, None]
        v = (v.expand(1, 2, n, d) / 8).to(dt).contiguous()
        run(bundle, "K=Q, V_j=j/8 D%d N%d" % (d, n), q, q.clone(), v, 0, rows)


def causal_no_key(bundle, rows):
    """Nq = 512, Nk = 64 causal: the first 448 rows see no key; whole Q
    tiles visit no K block. Run right after a kernel that fills shared
    memory with other data, three times."""
    for dts in ("bf16", "f16"):
        dt = DT[dts]
        for rep in range(3):
            j = rnd((4, 8, 1024, 128), DT["bf16"])
            launch(bundle, j, j, j, 0, True, "junk")
            q, k, v = rnd((1, 4, 512, 128), dt), rnd((1, 4, 64, 128), dt), rnd((1, 4, 64, 128), dt)
            run(bundle, "causal Nq512 Nk64 %s run %d" % (dts, rep), q, k, v, 1, rows)


def large_grids(bundle, rows):
    for b, hq, hkv in ((65536, 8, 8), (1, 65536, 1)):
        q = rnd((b, hq, 4, 64), DT["f16"])
        k = rnd((b, hkv, 4, 64), DT["f16"])
        v = rnd((b, hkv, 4, 64), DT["f16"])
        run(bundle, "grid B%d Hq%d Hkv%d N4 D64" % (b, hq, hkv), q, k, v, 0, rows)


def error_vs_fa2(bundle, rows):
    """rel err of O vs float64 on B2 H16 N2048 D128, ours and FA2's."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    out = []
    for dts in ("bf16", "f16"):
        dt = DT[dts]
        q, k, v = (rnd((2, 16, 2048, 128), dt) for _ in range(3))
        ro, _ = reference(q, k, v, 0, torch.float64)
        o, _, err = launch(bundle, q, k, v, 0, True, "error " + dts)
        if err:
            rows.append(("error vs FA2 " + dts, False, err))
            continue
        ours = float((o.double() - ro).norm() / ro.norm())
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            fa = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        fa2 = float((fa.double() - ro).norm() / ro.norm())
        ok = ours <= 1.2 * fa2
        rows.append(("error vs FA2 %s B2 H16 N2048 D128" % dts, ok,
                     "ours %.3e FA2 %.3e ratio %.2f" % (ours, fa2, ours / fa2)))
        out.append((dts, ours, fa2))
    return out


def sanity(bundle, rows):
    """Two small launches, for compute-sanitizer's race and memory checks."""
    for d, causal in ((64, 1), (128, 0), (256, 1)):
        q, k, v = (rnd((1, 2, 200, d), DT["bf16"]) for _ in range(3))
        run(bundle, "sanity D%d%s" % (d, " causal" if causal else ""), q, k, v,
            causal, rows)


GROUPS = {
    "sanity": sanity,
    "dmatrix": lambda b, r: d_matrix(b, r, (16, 40, 64, 72, 80, 96, 128, 136, 192, 256)),
    "tails": tails,
    "nanviews": nan_views,
    "twowg": two_warpgroups,
    "nokey": causal_no_key,
    "grids": large_grids,
    "error": error_vs_fa2,
}


def run_all(bundle, groups):
    rows = []
    for g in groups:
        torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
        n0 = len(rows)
        GROUPS[g](bundle, rows)
        fails = [r for r in rows[n0:] if not r[1]]
        print("[%s] %d cases, %d failed" % (g, len(rows) - n0, len(fails)), flush=True)
        for r in fails[:12]:
            print("   FAIL %-44s %s" % (r[0], r[2]), flush=True)
    return rows


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--groups", default=",".join(g for g in GROUPS if g != "sanity"))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    lib = rt.load_library(a.lib)
    bundle = rt.Bundle(lib, a.bundle)
    assert bundle.status == 0, bundle.message
    rows = run_all(bundle, a.groups.split(","))
    if a.verbose:
        for r in rows:
            print("%-5s %-44s %s" % ("PASS" if r[1] else "FAIL", r[0], r[2]))
    bad = sum(1 for r in rows if not r[1])
    print("tma cases: %d run, %d failed" % (len(rows), bad))
    sys.exit(1 if bad else 0)

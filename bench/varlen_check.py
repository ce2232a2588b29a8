"""Variable-length batches on the GPU, through the C API.

The sequences of a batch are packed without padding, as FlashAttention-2's
flash_attn_varlen_func: q, o [total_q, Hq, D], k, v [total_k, Hkv, D],
int32 prefix sums cu_seqlens_q / cu_seqlens_k [B + 1], max_seqlen_q/k, lse
[Hq, total_q]. bench/build_bundle.sh builds the bundles from
bench/specs_varlen.json: varlen (Hq32 Hkv8 D128 and Hq4 Hkv4 D64, causal
and not) and varlen_pack (the same with GQA packing).

Checks (every bundle): O and LSE poisoned with NaN, K/V rows past
cu_seqlens_k[B] (padding the kernel may read and mask) hold NaN, as
torch.empty's memory may (no row outside a sequence may reach P V: P = 0
times NaN is NaN; attn-run checks every sequence with NaN in all rows it
does not own), rows of Q/O past cu_seqlens_q[B] must stay NaN; O and LSE
against a float64 reference per sequence (rel 2e-2, LSE 1e-3, O = 0 and
LSE = -inf for rows that see no key). Cases: the lengths of the speed bar
(1, 17, 512, 3000, 8192; Hq32 Hkv8 D128 causal), empty sequences first, in the
middle and last, Nq != Nk per sequence (causal bottom-right), B = 1, and
max_seqlen_q above every length; on the varlen_extra bundle
(bench/specs_varlen_extra.json) a GQA group of 7 (Hq28 Hkv4 D128 causal,
lengths 0, 1, 17, 300, 0, 1025, 64, 2, 4097) and f16 D64 non-causal.

Speed: the issue's bar, lengths 1, 17, 512, 3000, 8192, Hq32 Hkv8 D128
bf16 causal: attn's varlen call beside FlashAttention-2 (torch SDPA FLASH
backend) on the batch padded to the longest sequence, and beside a
varlen attention of torch (torch.nn.attention.varlen.varlen_attn) or
flash_attn.flash_attn_varlen_func where one is installed. FLOPs counted as
FlashAttention does on the real lengths (causal halves).

Varlen paged split check (NEEDS bundles varlen_paged_s1 and
varlen_paged_s2: bench/specs_varlen_paged.json built with --splits=1 and
--splits=2, see bench/build_bundle.sh; skipped with a note when they are
missing): the issue's paged decode case as a varlen paged call
(flash_attn_varlen_func with block_table: cu_seqlens_k gives each
sequence's keys, no cache_seqlens), B2, pages of 256, 4 pages per
sequence, H4 D64 bf16, one query per sequence, pages randomly placed and
unused cache rows 1e4 (bench/paged_check.py's inputs and reference); O
and LSE poisoned with NaN; with 2 splits every row is written, near the
float64 reference and equal to the 1-split result head by head, and the
padding rows stay NaN.

Every launch runs under a watchdog (HANG, exit status 3). Exit status 0 iff
every check passed. First run: docs/perf-notes.md (2026-11-30).

    python3 bench/varlen_check.py --lib build/lib/libattn_runtime.so \
        --bundles build/bundles
"""
import argparse
import itertools
import math
import os
import statistics
import sys

import torch

import attn_runtime as rt
from harness import timed_back_to_back
from tma_cases import wait_or_die

GARBAGE = float("nan")


def packed_inputs(Hq, Hkv, D, seqs, pad_q=5, pad_k=7, dtype=torch.bfloat16):
    """q, k, v packed with `pad_q` / `pad_k` rows of padding after the
    sequences (k, v padding: GARBAGE), and the prefix sums."""
    cu_q, cu_k = [0], [0]
    for nq, nk in seqs:
        cu_q.append(cu_q[-1] + nq)
        cu_k.append(cu_k[-1] + nk)
    tq, tk = cu_q[-1] + pad_q, cu_k[-1] + pad_k
    q = torch.randn(tq, Hq, D, device="cuda").to(dtype)
    k = torch.randn(tk, Hkv, D, device="cuda").to(dtype)
    v = torch.randn(tk, Hkv, D, device="cuda").to(dtype)
    k[cu_k[-1]:] = GARBAGE
    v[cu_k[-1]:] = GARBAGE
    cq = torch.tensor(cu_q, dtype=torch.int32, device="cuda")
    ck = torch.tensor(cu_k, dtype=torch.int32, device="cuda")
    return q, k, v, cq, ck, cu_q, cu_k


def reference(q, k, v, cu_q, cu_k, causal):
    """float64 attention per sequence; O 0 and LSE -inf for rows that see
    no key and for padding rows."""
    Hq, D = q.shape[1], q.shape[2]
    o = torch.zeros(q.shape, dtype=torch.float64, device="cuda")
    lse = torch.full((Hq, q.shape[0]), float("-inf"), dtype=torch.float64,
                     device="cuda")
    for b in range(len(cu_q) - 1):
        q0, q1, k0, k1 = cu_q[b], cu_q[b + 1], cu_k[b], cu_k[b + 1]
        nq, nk = q1 - q0, k1 - k0
        if nq == 0 or nk == 0:
            continue
        qb = q[q0:q1].double().transpose(0, 1)          # [Hq, nq, D]
        kb = k[k0:k1].double().transpose(0, 1)          # [Hkv, nk, D]
        vb = v[k0:k1].double().transpose(0, 1)
        g = Hq // kb.shape[0]
        kb, vb = kb.repeat_interleave(g, 0), vb.repeat_interleave(g, 0)
        # A few heads at a time: [heads, nq, nk] float64 scores.
        step = max(1, int(2**28 // max(1, nq * nk)))
        for h0 in range(0, Hq, step):
            h1 = min(Hq, h0 + step)
            s = (qb[h0:h1] @ kb[h0:h1].transpose(-1, -2)) / math.sqrt(D)
            if causal:
                i = torch.arange(nq, device="cuda")[:, None]
                j = torch.arange(nk, device="cuda")[None, :]
                s = s.masked_fill(j > i + nk - nq, float("-inf"))
            l = torch.logsumexp(s, dim=-1)              # [heads, nq]
            p = torch.exp(s - l[..., None]).nan_to_num(0.0)
            o[q0:q1, h0:h1] = (p @ vb[h0:h1]).transpose(0, 1)
            lse[h0:h1, q0:q1] = l
    return o, lse


def launch(bundle, q, k, v, cq, ck, max_q, max_k, causal, what, table=None):
    """O and LSE NaN-poisoned, then the varlen call (paged: `table`, k and
    v the caches)."""
    o = torch.full(q.shape, float("nan"), device="cuda", dtype=q.dtype)
    lse = torch.full((q.shape[1], q.shape[0]), float("nan"), device="cuda")
    args = rt.varlen_fwd_args(q, k, v, o, lse, cq, ck, max_q, max_k, causal,
                              block_table=table)
    st, msg = bundle.fwd(args, torch.cuda.current_stream().cuda_stream)
    if st != 0:
        return None, None, "status %d: %s" % (st, msg)
    wait_or_die(what)
    return o, lse, None


def compare(o, lse, ro, rl, used_q):
    """(ok, text) on the rows of the sequences; padding rows stay NaN."""
    ou, lu, rou, rlu = o[:used_q], lse[:, :used_q], ro[:used_q], rl[:, :used_q]
    bad = int((~torch.isfinite(ou)).sum()) + int(torch.isnan(lu).sum())
    rel = float((ou.double() - rou).norm() / rou.norm().clamp_min(1e-30))
    fin = torch.isfinite(rlu)
    lse_err = float((lu.double()[fin] - rlu[fin]).abs().max()) if fin.any() else 0.0
    no_key = ~fin                                       # [Hq, rows]
    empty_ok = bool((lu[no_key] == float("-inf")).all() and
                    (ou.transpose(0, 1)[no_key] == 0).all())
    untouched = bool(torch.isnan(o[used_q:]).all() and
                     torch.isnan(lse[:, used_q:]).all())
    ok = bad == 0 and rel < 2e-2 and lse_err < 1e-3 and empty_ok and untouched
    return ok, "rel %.2e lse %.1e nonfinite %d no-key %d%s%s" % (
        rel, lse_err, bad, int(no_key.sum()), "" if empty_ok else " BAD",
        "" if untouched else " PADDING WRITTEN")


CASES = [
    # name, Hq, Hkv, D, [(Nq, Nk) per sequence], causal, extra max_seqlen_q
    # [, dtype]
    ("bar lengths causal", 32, 8, 128,
     [(n, n) for n in (1, 17, 512, 3000, 8192)], True, 0),
    ("empty first/middle/last", 32, 8, 128,
     [(0, 0), (100, 100), (0, 7), (257, 257), (5, 0), (0, 0)], True, 0),
    ("Nq != Nk causal", 32, 8, 128,
     [(1, 1000), (300, 129), (129, 300), (64, 64)], True, 0),
    ("Nq != Nk non-causal", 32, 8, 128,
     [(1, 1000), (300, 129), (17, 0)], False, 0),
    ("B1 max above length", 32, 8, 128, [(333, 444)], True, 500),
    # Every sequence empty, max_seqlen_q 64 so the kernel still launches.
    ("all empty", 32, 8, 128, [(0, 0), (0, 5), (0, 0)], True, 64),
    ("D64 MHA causal", 4, 4, 64, [(1, 1), (200, 200), (0, 3), (191, 500)],
     True, 0),
    ("D64 MHA non-causal", 4, 4, 64, [(192, 193), (1, 5)], False, 0),
]


# The varlen_extra bundle's (bench/specs_varlen_extra.json): a GQA group of
# 7, which GQA packing does not take, and f16.
EXTRA_CASES = [
    ("GQA group 7 causal", 28, 4, 128,
     [(n, n) for n in (0, 1, 17, 300, 0, 1025, 64, 2, 4097)], True, 0),
    ("f16 D64 non-causal", 4, 4, 64,
     [(5, 300), (129, 1), (64, 65)], False, 0, torch.float16),
]


def checks(bundles):
    ok = True
    for label, bundle in bundles.items():
        cases = EXTRA_CASES if label == "varlen_extra" else CASES
        for name, Hq, Hkv, D, seqs, causal, extra, *dtype in cases:
            q, k, v, cq, ck, cu_q, cu_k = packed_inputs(Hq, Hkv, D, seqs,
                                                        dtype=(dtype or [torch.bfloat16])[0])
            max_q = max([nq for nq, _ in seqs] + [0]) + extra
            max_k = max([nk for _, nk in seqs] + [0])
            ro, rl = reference(q, k, v, cu_q, cu_k, causal)
            o, lse, err = launch(bundle, q, k, v, cq, ck, max_q, max_k,
                                 causal, "%s %s" % (label, name))
            if err:
                good, text = False, err
            else:
                good, text = compare(o, lse, ro, rl, cu_q[-1])
            ok &= good
            print("%-4s %-12s %-28s %s" % ("PASS" if good else "FAIL", label,
                                           name, text), flush=True)
    return ok


# Lengths per sequence of the varlen paged split check: the (4 full
# pages each), then a ragged and a three-key sequence.
VARLEN_PAGED_CASES = [[1024, 1024], [1000, 3]]


def varlen_paged_split_check(lib, s1_path, s2_path):
    """The varlen paged split check (module docstring). s1_path, s2_path:
    the bundles varlen_paged_s1 and varlen_paged_s2."""
    import paged_check
    bundles = [rt.Bundle(lib, p) for p in (s1_path, s2_path)]
    for b, p in zip(bundles, (s1_path, s2_path)):
        if b.status != 0:
            print("FAIL varlen paged: cannot load %s: %s" % (p, b.message))
            return False
    Hq, Hkv, D, ps, max_pages, pad_q = 4, 4, 64, 256, 4, 5
    ok = True
    for lens in VARLEN_PAGED_CASES:
        B = len(lens)
        k, v, table, _ = paged_check.paged_inputs(B, Hkv, D, ps, max_pages,
                                                  lens)
        q = torch.randn(B + pad_q, Hq, D, device="cuda").to(torch.bfloat16)
        cq = torch.arange(B + 1, dtype=torch.int32, device="cuda")
        ck = torch.tensor([0] + list(itertools.accumulate(lens)),
                          dtype=torch.int32, device="cuda")
        # paged_check's reference takes [B, Hq, Nq, D] queries.
        ro, rl = paged_check.reference(q[:B, :, None], k, v, table, lens,
                                       False)
        ro, rl = ro[:, :, 0], rl[:, :, 0]                # [B, Hq, D], [B, Hq]
        base = None
        for splits, bundle in zip((1, 2), bundles):
            what = "varlen paged %s S=%d" % (lens, splits)
            o, lse, err = launch(bundle, q, k, v, cq, ck, 1, max(lens), False,
                                 what, table)
            if err:
                good, text = False, err
            else:
                # Padding untouched (varlen), then the reference and the
                # 1-split result head by head (paged).
                good, text = compare(o, lse, ro, rl.T, B)
                if base is not None:
                    same, same_text = paged_check.compare(
                        o[:B], lse[:, :B].T, ro, rl, base)
                    good, text = good and same, text + " | " + same_text
                base = base or (o[:B], lse[:, :B].T)
            ok &= good
            print("%-4s %-28s %s" % ("PASS" if good else "FAIL", what, text),
                  flush=True)
    return ok


def torch_varlen():
    """A varlen attention of torch or flash_attn: (name, fn(q, k, v, cq,
    ck, max_q, max_k)) or None."""
    try:
        from torch.nn.attention.varlen import varlen_attn

        def call(q, k, v, cq, ck, mq, mk):
            # Causal is window_size (-1, 0) (bottom-right) since torch 2.10;
            # is_causal before. GQA: enable_gqa where torch has it, else
            # K/V expanded per query head.
            g = q.shape[1] // k.shape[1]
            for kw in ({"window_size": (-1, 0), "enable_gqa": True},
                       {"window_size": (-1, 0)}, {"is_causal": True}):
                try:
                    kk, vv = k, v
                    if g > 1 and "enable_gqa" not in kw:
                        kk, vv = (k.repeat_interleave(g, 1),
                                  v.repeat_interleave(g, 1))
                    return varlen_attn(q, kk, vv, cq, ck, mq, mk, **kw)
                except TypeError:
                    continue
            raise TypeError("no varlen_attn signature fits")
        return "torch varlen_attn", call
    except (ImportError, AttributeError):
        pass
    try:
        from flash_attn import flash_attn_varlen_func

        def call(q, k, v, cq, ck, mq, mk):
            return flash_attn_varlen_func(q, k, v, cq, ck, mq, mk, causal=True)
        return "flash_attn_varlen_func", call
    except ImportError:
        return None


def speed(bundle, rounds, iters):
    """The issue's bar. Value checks off for timing (they ran in checks())."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    stream = torch.cuda.current_stream().cuda_stream
    bundle.set_check_values(False)
    Hq, Hkv, D, lens = 32, 8, 128, (1, 17, 512, 3000, 8192)
    q, k, v, cq, ck, cu_q, _ = packed_inputs(Hq, Hkv, D,
                                             [(n, n) for n in lens], 0, 0)
    o = torch.empty_like(q)
    lse = torch.empty(Hq, q.shape[0], device="cuda")
    flops = sum(4 * Hq * n * n * D / 2 for n in lens)
    args = rt.varlen_fwd_args(q, k, v, o, lse, cq, ck, max(lens), max(lens),
                              True)
    rows = []
    ms = statistics.median(
        timed_back_to_back(lambda: bundle.fwd(args, stream), iters)
        for _ in range(rounds))
    rows.append(("attn varlen", ms))
    # FA2 on the batch padded to the longest sequence (what a caller without
    # varlen runs): [B, H, Nmax, D], causal.
    B, N = len(lens), max(lens)
    qp = torch.randn(B, Hq, N, D, device="cuda").to(torch.bfloat16)
    kp = torch.randn(B, Hkv, N, D, device="cuda").to(torch.bfloat16)
    vp = torch.randn(B, Hkv, N, D, device="cuda").to(torch.bfloat16)
    f = torch.nn.functional.scaled_dot_product_attention
    try:
        kr, vr = kp.repeat_interleave(Hq // Hkv, 1), vp.repeat_interleave(Hq // Hkv, 1)

        def fa2():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                f(qp, kr, vr, is_causal=True)
        rows.append(("FA2 padded (SDPA)", statistics.median(
            timed_back_to_back(fa2, iters) for _ in range(rounds))))
    except RuntimeError as e:
        print("  FA2 unavailable: %s" % str(e).splitlines()[0])
    other = torch_varlen()
    if other:
        name, fn = other
        try:
            rows.append((name, statistics.median(
                timed_back_to_back(lambda: fn(q, k, v, cq, ck, max(lens),
                                              max(lens)), iters)
                for _ in range(rounds))))
        except (RuntimeError, TypeError) as e:
            print("  %s failed: %s" % (name, str(e).splitlines()[0]))
    else:
        print("  no torch or flash_attn varlen attention installed")
    print("\n| lengths 1, 17, 512, 3000, 8192; Hq32 Hkv8 D128 bf16 causal "
          "| ms | TFLOP/s (real lengths) | attn speedup |\n|---|---|---|---|")
    for name, t in rows:
        print("| %s | %.3f | %.1f | %.2fx |" % (name, t, flops / t / 1e9,
                                               t / rows[0][1]), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bundles", required=True,
                    help="directory holding varlen and varlen_pack")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--skip-speed", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    lib = rt.load_library(a.lib)

    def load(name):
        b = rt.Bundle(lib, os.path.join(a.bundles, name))
        assert b.status == 0, b.message
        return b
    bundles = {"varlen": load("varlen"), "varlen_pack": load("varlen_pack")}
    if os.path.isdir(os.path.join(a.bundles, "varlen_extra")):
        bundles["varlen_extra"] = load("varlen_extra")
    else:
        print("FAIL varlen_extra: bundle missing (bench/specs_varlen_extra.json, "
              "bench/build_bundle.sh)")
    for line in bundles["varlen"].kernels():
        print("  " + line)
    ok = checks(bundles) and "varlen_extra" in bundles
    paged = [os.path.join(a.bundles, "varlen_paged_s%d" % s) for s in (1, 2)]
    if all(os.path.isdir(p) for p in paged):
        ok &= varlen_paged_split_check(lib, *paged)
    else:
        print("FAIL varlen paged split check: needs bundles varlen_paged_s1 "
              "and varlen_paged_s2 (bench/specs_varlen_paged.json, "
              "bench/build_bundle.sh)")
        ok = False
    if not a.skip_speed:
        speed(bundles["varlen"], a.rounds, a.iters)
    print("VARLEN CHECKS", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

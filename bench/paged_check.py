"""Paged K/V decode on the GPU, through the C API.

K and V live in caches of pages, [num_pages, page_size, Hkv, D], each
sequence's pages listed in a block table [B, max_pages] (int32) and its
length in cache_seqlens [B] (int32), as FlashAttention-2's
flash_attn_with_kvcache. bench/build_bundle.sh builds the bundles from
bench/specs_paged.json (dynamic B and Nq; pages of 16 and 256 tokens,
GQA-packed where the head counts are static): paged_s1, paged_s2 and
paged_s16 (one split count each), and paged_auto (static B64 / B1 decode
kernels with split counts 1, 4, 16, 32 as variants, the runtime choosing).

Checks: every case's pages are a random permutation of the cache (the
table is never the identity), cache rows that no sequence owns or that lie
past a sequence's length hold NaN (none may reach P V), O and LSE are
poisoned with NaN; O and LSE are compared with a float64 reference that
gathers each sequence's keys through the table, and each split count's
output head by head with the unsplit one's. Cases: the issue's B2 page
256 4 pages per sequence H4 D64 Nq1 with 2 splits; lengths that are not
multiples of the page or split size; Nk = 1 and Nk = 0; GQA; causal with a
few query rows.

Speed: B64 Hq32 Hkv8 Nq1 Nk32768 D128 bf16 and B1 Nk131072, paged (pages
16 and 256, randomly permuted) beside the project's contiguous decode
(decode_pack_auto) on the same lengths and beside FlashAttention-2 and
cuDNN (contiguous; torch SDPA backends), in ms and TB/s of K/V read; and
the same decode as a varlen paged call (varlen_paged_decode: one query per
sequence, cu_seqlens_k giving the lengths, the page-256 caches and table),
as vLLM-style servers issue it.

Every launch runs under a watchdog (HANG, exit status 3). Exit status 0 iff
every check passed.

    python3 bench/paged_check.py --lib build/lib/libattn_runtime.so \
        --bundles build/bundles
"""
import argparse
import math
import os
import statistics
import sys

import torch

import attn_runtime as rt
from decode_check import sdpa_call
from harness import timed_back_to_back
from tma_cases import wait_or_die

SPLITS = (1, 2, 16)
GARBAGE = float("nan")


def paged_inputs(B, Hkv, D, page_size, max_pages, lens, dtype=torch.bfloat16):
    """Caches with the sequences' pages at random places, a block table
    (-1 past each sequence's pages) and the lengths."""
    used = [math.ceil(n / page_size) for n in lens]
    num_pages = sum(used) + 3
    perm = torch.randperm(num_pages).tolist()
    table = torch.full((B, max_pages), -1, dtype=torch.int32)
    k = torch.full((num_pages, page_size, Hkv, D), GARBAGE, dtype=dtype)
    v = torch.full((num_pages, page_size, Hkv, D), GARBAGE, dtype=dtype)
    at = 0
    for b, n in enumerate(lens):
        for p in range(used[b]):
            page, rows = perm[at], min(page_size, n - p * page_size)
            at += 1
            table[b, p] = page
            k[page, :rows] = torch.randn(rows, Hkv, D).to(dtype)
            v[page, :rows] = torch.randn(rows, Hkv, D).to(dtype)
    seqlens = torch.tensor(lens, dtype=torch.int32)
    return k.cuda(), v.cuda(), table.cuda(), seqlens.cuda()


def gather(cache, table, b, n):
    """Sequence b's n keys, [Hkv, n, D]."""
    pages = table[b, :math.ceil(n / cache.shape[1])].long()
    return cache[pages].flatten(0, 1)[:n].transpose(0, 1)


def reference(q, k, v, table, lens, causal):
    """float64 attention per sequence over its gathered keys."""
    B, Hq, Nq, D = q.shape
    o = torch.zeros(q.shape, dtype=torch.float64, device="cuda")
    lse = torch.full((B, Hq, Nq), float("-inf"), dtype=torch.float64,
                     device="cuda")
    for b, n in enumerate(lens):
        if n == 0:
            continue
        kb = gather(k, table, b, n).double()
        vb = gather(v, table, b, n).double()
        g = Hq // kb.shape[0]
        kb, vb = kb.repeat_interleave(g, 0), vb.repeat_interleave(g, 0)
        s = (q[b].double() @ kb.transpose(-1, -2)) / math.sqrt(D)
        if causal:
            i = torch.arange(Nq, device="cuda")[:, None]
            j = torch.arange(n, device="cuda")[None, :]
            s = s.masked_fill(j > i + n - Nq, float("-inf"))
        lse[b] = torch.logsumexp(s, dim=-1)
        p = torch.exp(s - lse[b][..., None]).nan_to_num(0.0)
        o[b] = p @ vb
    return o, lse


def launch(bundle, q, k, v, table, seqlens, causal, what):
    o = torch.full(q.shape, float("nan"), device="cuda", dtype=q.dtype)
    lse = torch.full(q.shape[:3], float("nan"), device="cuda")
    args = rt.paged_fwd_args(q, k, v, o, lse, table, seqlens, causal)
    st, msg = bundle.fwd(args, torch.cuda.current_stream().cuda_stream)
    if st != 0:
        return None, None, "status %d: %s" % (st, msg)
    wait_or_die(what)
    return o, lse, None


def compare(o, lse, ro, rl, base):
    """(ok, text): every element written and finite, O near float64 (rel
    2e-2), LSE within 1e-3 (-inf exactly where the reference has it, with
    O = 0 there), and each head equal to the unsplit result within a few
    bf16 ulps."""
    bad = int((~torch.isfinite(o)).sum()) + int(torch.isnan(lse).sum())
    rel = float((o.double() - ro).norm() / ro.norm().clamp_min(1e-30))
    fin = torch.isfinite(rl)
    lse_err = float((lse.double()[fin] - rl[fin]).abs().max()) if fin.any() else 0.0
    empty_ok = bool((lse[~fin] == float("-inf")).all() and (o[~fin] == 0).all())
    ok = bad == 0 and rel < 2e-2 and lse_err < 1e-3 and empty_ok
    text = "rel %.2e lse %.1e nonfinite %d no-key %d%s" % (
        rel, lse_err, bad, int((~fin).sum()), "" if empty_ok else " BAD")
    if base is not None:
        bo, bl = base
        head_o = float((o.float() - bo.float()).abs().amax())
        same_l = torch.where(fin, (lse - bl).abs(), torch.zeros_like(lse))
        ok &= (head_o <= 1e-2 * float(bo.float().abs().amax()) + 1e-3
               and float(same_l.amax()) <= 1e-4)
        text += " vs S=1: O %.1e LSE %.1e" % (head_o, float(same_l.amax()))
    return ok, text


CASES = [
    # name, Hq, Hkv, Nq, D, page_size, max_pages, lengths, causal
    ("issue B2 page256 4 pages H4 D64", 4, 4, 1, 64, 256, 4, [1024, 1024],
     False),
    ("issue shape, tails", 4, 4, 1, 64, 256, 4, [1000, 3], False),
    ("page16 GQA tails Nk1 Nk0", 32, 8, 1, 128, 16, 300, [4097, 1, 0, 130],
     False),
    ("page256 GQA tails", 32, 8, 1, 128, 256, 20, [5000, 255, 257, 4096],
     False),
    ("page16 MHA", 8, 8, 1, 128, 16, 64, [1000, 17], False),
    ("page16 causal Nq4", 16, 8, 4, 128, 16, 64, [1000, 3, 4, 0], True),
    ("page16 B8 Nk8192", 32, 8, 1, 128, 16, 512, [8192] * 8, False),
]


def checks(bundles):
    ok = True
    for name, Hq, Hkv, Nq, D, ps, maxp, lens, causal in CASES:
        B = len(lens)
        q = torch.randn(B, Hq, Nq, D, device="cuda").to(torch.bfloat16)
        k, v, table, seqlens = paged_inputs(B, Hkv, D, ps, maxp, lens)
        ro, rl = reference(q, k, v, table, lens, causal)
        base = None
        for s in SPLITS:
            o, lse, err = launch(bundles[s], q, k, v, table, seqlens, causal,
                                 "%s S=%d" % (name, s))
            if err:
                good, text = False, err
            else:
                good, text = compare(o, lse, ro, rl, base)
                base = base or (o, lse)
            ok &= good
            print("%-4s %-34s S=%-3d %s" % ("PASS" if good else "FAIL", name,
                                           s, text), flush=True)
    return ok


def varlen_decode_row(q, k, v, table, Nk):
    """The varlen paged form of the same decode (one query per sequence,
    FlashAttention-2's flash_attn_varlen_func with block_table): its args
    and the tensors they point to."""
    B = q.shape[0]
    qv = q[:, :, 0]                                     # [total_q = B, Hq, D]
    ov = torch.empty_like(qv)
    lse = torch.empty(qv.shape[1], B, device="cuda")   # [Hq, total_q]
    cq = torch.arange(B + 1, dtype=torch.int32, device="cuda")
    ck = cq * Nk
    args = rt.varlen_fwd_args(qv, k, v, ov, lse, cq, ck, 1, Nk, False,
                              block_table=table)
    return args, (qv, ov, lse, cq, ck)


def speed(paged, contiguous, varlen, rounds, iters):
    """Timed with the table value checks off (each checked call
    synchronizes the stream; the checks ran in checks()). `varlen`: the
    varlen paged decode bundle, timed on the page-256 caches."""
    from torch.nn.attention import SDPBackend
    stream = torch.cuda.current_stream().cuda_stream
    paged.set_check_values(False)
    varlen.set_check_values(False)
    print("\n| shape | K/V | attn ms | attn TB/s | vs contiguous | FA2 ms "
          "| cuDNN ms | attn/cuDNN |\n|---|---|---|---|---|---|---|---|")
    for name, B, Nk in (("B64 Hq32 Hkv8 Nk32768", 64, 32768),
                        ("B1 Hq32 Hkv8 Nk131072", 1, 131072)):
        Hq, Hkv, D = 32, 8, 128
        q = torch.randn(B, Hq, 1, D, device="cuda").to(torch.bfloat16)
        kc = torch.randn(B, Hkv, Nk, D, device="cuda").to(torch.bfloat16)
        vc = torch.randn(B, Hkv, Nk, D, device="cuda").to(torch.bfloat16)
        o = torch.empty_like(q)
        lse = torch.empty(B, Hq, 1, device="cuda")
        kv_bytes = 2 * B * Hkv * Nk * D * 2
        ref = {}
        for backend, label in ((SDPBackend.FLASH_ATTENTION, "FA2"),
                               (SDPBackend.CUDNN_ATTENTION, "cuDNN")):
            try:
                call, _ = sdpa_call(backend, q, kc, vc)
                ref[label] = statistics.median(
                    timed_back_to_back(call, iters) for _ in range(rounds))
            except RuntimeError as e:
                print("  %s unavailable: %s" % (label, str(e).splitlines()[0]))
        args = rt.fwd_args(q, kc, vc, o, lse, False)
        rows = [("contiguous", contiguous, args, ())]
        for ps in (16, 256):
            # The same keys, moved into randomly placed pages.
            pages = Nk // ps
            perm = torch.randperm(B * pages, device="cuda")
            table = perm.view(B, pages).to(torch.int32)
            k = torch.empty(B * pages, ps, Hkv, D, device="cuda",
                            dtype=torch.bfloat16)
            v = torch.empty_like(k)
            k[perm] = kc.transpose(1, 2).reshape(B * pages, ps, Hkv, D)
            v[perm] = vc.transpose(1, 2).reshape(B * pages, ps, Hkv, D)
            seqlens = torch.full((B,), Nk, dtype=torch.int32, device="cuda")
            # The args hold raw pointers: keep the tensors alive with them.
            rows.append(("page %d" % ps, paged,
                         rt.paged_fwd_args(q, k, v, o, lse, table, seqlens,
                                           False), (k, v, table, seqlens)))
            if ps == 256:
                a, keep = varlen_decode_row(q, k, v, table, Nk)
                rows.append(("varlen page 256", varlen, a, keep + (k, v, table)))
        base = contiguous_o = None
        for label, bundle, a, keep in rows:
            # A varlen row writes its own [B, Hq, D] output.
            out = keep[1].view(o.shape) if bundle is varlen else o
            out.fill_(float("nan"))
            st, msg = bundle.fwd(a, stream)
            if st != 0:
                print("| %s | %s | status %d: %s |" % (name, label, st, msg))
                continue
            wait_or_die("%s %s" % (name, label))
            # The paged result equals the contiguous one (the same keys).
            if contiguous_o is None:
                contiguous_o, same = out.clone(), ""
            else:
                same = " (O max diff %.1e)" % float(
                    (out.float() - contiguous_o.float()).abs().amax())
            ms = statistics.median(
                timed_back_to_back(lambda: bundle.fwd(a, stream), iters)
                for _ in range(rounds))
            base = base or ms
            vs = "%.2fx" % (ref["cuDNN"] / ms) if "cuDNN" in ref else "-"
            print("| %s | %s | %.3f | %.2f | %.3f%s | %s | %s | %s |" % (
                name, label, ms, kv_bytes / ms / 1e9, base / ms, same,
                "%.3f" % ref["FA2"] if "FA2" in ref else "-",
                "%.3f" % ref["cuDNN"] if "cuDNN" in ref else "-", vs),
                flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bundles", required=True,
                    help="directory holding paged_s1, paged_s2, paged_s16, "
                    "paged_auto, decode_pack_auto and varlen_paged_decode")
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
    bundles = {s: load("paged_s%d" % s) for s in SPLITS}
    for line in bundles[2].kernels():
        print("  " + line)
    ok = checks(bundles)
    if not a.skip_speed:
        speed(load("paged_auto"), load("decode_pack_auto"),
              load("varlen_paged_decode"), a.rounds, a.iters)
    print("PAGED CHECKS", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

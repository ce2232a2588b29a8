"""Split-KV decode (flash-decoding) on the GPU, through the C API.

Issue 13 items 1 and 2 on the device: every split count S in {1, 4, 16,
32, 128} (bench/build_bundle.sh builds one bundle per count from
bench/specs_decode.json: decode_s1, decode_s4, ..., decode_s128),
and the same with GQA packing (one K/V read per KV group: decode_pack_s<S>
from bench/specs_decode_pack.json, static head counts), each case with O and
LSE poisoned with NaN first and compared with a float64 reference (torch),
and head by head with the unsplit, unpacked (S = 1) kernel's result; and
through decode_pack_auto, whose split counts 1, 4, 16, 32 are variants the
runtime chooses among per call:

- B1 Nq1 Nk4096 Hq16 Hkv8 D128 bf16 (the issue's case; 128 splits are more
  than its 32 K/V blocks of 128 keys: 96 empty splits),
- Nk not a multiple of the split size (4000, 4097, 1000, 129), Nk = 1
  (every split but the first empty), Nk < S blocks,
- batches with GQA, a few query rows (Nq 4, causal: speculative decoding),
- then the speed of B64 Hq32 Hkv8 Nq1 Nk32768 D128 and B1 Hq32 Hkv8 Nq1
  Nk131072 for each S beside FlashAttention-2 and cuDNN (torch SDPA
  backends), in ms and TB/s of K/V read (2 * B * Hkv * Nk * D * 2 bytes).

Every launch runs under a watchdog (a hung mbarrier is reported as HANG,
exit status 3). Exit status 0 iff every check passed.

    python3 bench/decode_check.py --lib build/lib/libattn_runtime.so \
        --bundles build/bundles
"""
import argparse
import os
import statistics
import sys

import torch

import attn_runtime as rt
from harness import timed_back_to_back
from tma_cases import launch, reference, wait_or_die

SPLITS = (1, 4, 16, 32, 128)
# (label, bundle directory prefix): unpacked, and GQA-packed where the
# bundle has a kernel for the case's head counts (else its dynamic one).
KINDS = (("", "decode_s"), ("pack", "decode_pack_s"))
# decode_pack_auto: the packed kernels with splits 1, 4, 16 and 32 as
# variants; the runtime picks the split count per call (chooseSplits).
RUNS = [(kind, s) for kind, _ in KINDS for s in SPLITS] + [("pack", "auto")]


def run_name(kind, s):
    return "%-4s S=%-4s" % (kind, s)


def rnd(shape):
    return torch.randn(shape, device="cuda").to(torch.bfloat16)


def compare(o, lse, ro, rl, base):
    """(ok, text): every element written and finite, O near float64 (rel
    2e-2, as the forward's checks), LSE within 1e-3, and each head equal
    to the unsplit kernel's within rounding (max |O - O_1| at most 1% of
    max |O_1| plus 1e-3: a few bf16 ulps; LSE 1e-4)."""
    bad = int((~torch.isfinite(o)).sum()) + int(torch.isnan(lse).sum())
    rel = float((o.double() - ro).norm() / ro.norm().clamp_min(1e-30))
    lse_err = float((lse.double() - rl).abs().max())
    ok = bad == 0 and rel < 2e-2 and lse_err < 1e-3
    text = "rel %.2e lse %.1e nonfinite %d" % (rel, lse_err, bad)
    if base is not None:
        bo, bl = base
        head_o = float((o.float() - bo.float()).abs().amax())
        head_l = float((lse - bl).abs().amax())
        ok &= (head_o <= 1e-2 * float(bo.float().abs().amax()) + 1e-3
               and head_l <= 1e-4)
        text += " vs S=1: O %.1e LSE %.1e" % (head_o, head_l)
    return ok, text


CASES = [
    # name, B, Hq, Hkv, Nq, Nk, causal
    ("issue B1 Nq1 Nk4096 Hq16 Hkv8", 1, 16, 8, 1, 4096, False),
    ("Nk4000 (tail block)", 1, 16, 8, 1, 4000, False),
    ("Nk4097 (one key past a block)", 1, 16, 8, 1, 4097, False),
    ("Nk1000", 2, 16, 8, 1, 1000, False),
    ("Nk129", 1, 8, 2, 1, 129, False),
    ("Nk1 (one key: every split but one empty)", 2, 16, 8, 1, 1, False),
    ("Nk64 (fewer keys than a block)", 1, 32, 8, 1, 64, False),
    ("B8 Hq32 Hkv8 Nk8192", 8, 32, 8, 1, 8192, False),
    ("MHA B2 Hq8 Hkv8 Nk3000", 2, 8, 8, 1, 3000, False),
    ("Nq4 causal Nk5000 (speculative)", 2, 16, 8, 4, 5000, True),
    ("Nq1 causal Nk4097", 1, 16, 8, 1, 4097, True),
]


def checks(bundles):
    ok = True
    for name, B, Hq, Hkv, Nq, Nk, causal in CASES:
        q, k, v = rnd((B, Hq, Nq, 128)), rnd((B, Hkv, Nk, 128)), rnd(
            (B, Hkv, Nk, 128))
        ro, rl = reference(q, k, v, causal, torch.float64)
        base = None
        for kind, s in RUNS:
            o, lse, err = launch(bundles[kind, s], q, k, v, causal,
                                 what="%s %s" % (name, run_name(kind, s)))
            if err:
                good, text = False, err
            else:
                good, text = compare(o, lse, ro, rl, base)
                if base is None:
                    base = (o, lse)
            ok &= good
            print("%-4s %-44s %s %s" % ("PASS" if good else "FAIL", name,
                                        run_name(kind, s), text), flush=True)
    return ok


def sdpa_call(backend, q, k, v):
    """SDPA on one backend; GQA through enable_gqa where torch has it (the
    K/V read once per KV head), else K/V expanded per query head."""
    from torch.nn.attention import sdpa_kernel
    f = torch.nn.functional.scaled_dot_product_attention
    g = q.shape[1] // k.shape[1]
    try:
        with sdpa_kernel(backend):
            f(q, k, v, enable_gqa=True)
        gqa = True
    except (TypeError, RuntimeError):
        gqa = False
        k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)

    def call():
        with sdpa_kernel(backend):
            if gqa:
                f(q, k, v, enable_gqa=True)
            else:
                f(q, k, v)
    return call, gqa


def speed(bundles, rounds, iters):
    from torch.nn.attention import SDPBackend
    stream = torch.cuda.current_stream().cuda_stream
    print("\n| shape | GQA | S | attn ms | attn TB/s | FA2 ms | FA2 TB/s | cuDNN ms "
          "| cuDNN TB/s | attn/cuDNN |\n|---|---|---|---|---|---|---|---|---|"
          "---|")
    for name, B, Hq, Hkv, Nk in (("B64 Hq32 Hkv8 Nk32768", 64, 32, 8, 32768),
                                 ("B1 Hq32 Hkv8 Nk131072", 1, 32, 8, 131072)):
        q, k, v = rnd((B, Hq, 1, 128)), rnd((B, Hkv, Nk, 128)), rnd(
            (B, Hkv, Nk, 128))
        o = torch.empty_like(q)
        lse = torch.empty(B, Hq, 1, device="cuda")
        args = rt.fwd_args(q, k, v, o, lse, False)
        kv_bytes = 2 * B * Hkv * Nk * 128 * 2
        calls = {}
        for backend, label in ((SDPBackend.FLASH_ATTENTION, "FA2"),
                               (SDPBackend.CUDNN_ATTENTION, "cuDNN")):
            try:
                calls[label], gqa = sdpa_call(backend, q, k, v)
                calls[label]()
                if not gqa:
                    print("  %s: no enable_gqa, K/V expanded per query head "
                          "(TB/s still counts the unexpanded K/V)" % label)
            except RuntimeError as e:
                print("  %s unavailable: %s" % (label, str(e).splitlines()[0]))
                calls.pop(label, None)
        ref = {}
        for label, fn in calls.items():
            ref[label] = statistics.median(timed_back_to_back(fn, iters)
                                           for _ in range(rounds))
        for kind, s in RUNS:
            bundle = bundles[kind, s]
            label = kind or "-"
            st, msg = bundle.fwd(args, stream)
            if st != 0:
                print("| %s | %s | %s | status %d: %s |" % (name, label, s, st,
                                                            msg))
                continue
            wait_or_die("%s %s" % (name, run_name(kind, s)))
            ms = statistics.median(
                timed_back_to_back(lambda: bundle.fwd(args, stream), iters)
                for _ in range(rounds))

            def cell(label):
                if label not in ref:
                    return "- | -"
                return "%.3f | %.2f" % (ref[label], kv_bytes / ref[label] / 1e9)
            vs = ("%.2fx" % (ref["cuDNN"] / ms)) if "cuDNN" in ref else "-"
            print("| %s | %s | %s | %.3f | %.2f | %s | %s | %s |" % (
                name, label, s, ms, kv_bytes / ms / 1e9, cell("FA2"),
                cell("cuDNN"), vs), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bundles", required=True,
                    help="directory holding decode_s1, decode_s16, ..., "
                    "decode_pack_s1, ...")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--skip-speed", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    lib = rt.load_library(a.lib)
    bundles = {}
    for kind, prefix in KINDS:
        for s in SPLITS:
            b = rt.Bundle(lib, os.path.join(a.bundles, "%s%d" % (prefix, s)))
            assert b.status == 0, b.message
            bundles[kind, s] = b
    bundles["pack", "auto"] = rt.Bundle(
        lib, os.path.join(a.bundles, "decode_pack_auto"))
    assert bundles["pack", "auto"].status == 0, bundles["pack", "auto"].message
    for kind, _ in KINDS:
        for line in bundles[kind, 16].kernels():
            print("  " + line)
    ok = checks(bundles)
    if not a.skip_speed:
        speed(bundles, a.rounds, a.iters)
    print("DECODE CHECKS", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

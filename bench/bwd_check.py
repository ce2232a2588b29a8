"""The backward through the runtime on the GPU: attn_bwd.

For each "bwd" kernel of a bundle (bench/specs_bwd.json, built by
bench/build_bundle.sh into build/bundles/bwd): random q, k, v, dO of its
key's shape and dtype, O and LSE from bench/grad_check.py's float64
reference, dq, dk, dv poisoned with NaN, one attn_bwd call on PyTorch's
current stream, then dQ, dK, dV of KV group 0 against float64 autograd
(grad_check.reference; relative error below 2e-2 and every element
finite), and attn_bwd_select's index. With --time, the milliseconds of
attn_bwd (workspace allocation and four launches) back to back.
Exit status 0 iff every kernel passed.

    python3 bench/bwd_check.py --lib build/lib/libattn_runtime.so \\
        --bundle build/bundles/bwd [--time]
"""
import argparse
import json
import os
import sys

import torch

import attn_runtime as rt
from grad_check import reference, rel
from harness import timed_back_to_back

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def check(bundle, key, time_it):
    b, hq, hkv = key["batch"], key["num_heads_q"], key["num_heads_kv"]
    nq, nk, d = key["seqlen_q"], key["seqlen_k"], key["head_dim"]
    dtype, causal, scale = DTYPES[key["dtype"]], key["causal"], key["scale"]
    q = torch.randn(b, hq, nq, d, device="cuda").to(dtype)
    k = torch.randn(b, hkv, nk, d, device="cuda").to(dtype)
    v = torch.randn(b, hkv, nk, d, device="cuda").to(dtype)
    do = torch.randn(b, hq, nq, d, device="cuda").to(dtype)
    o64, lse64, grads, g = reference(q, k, v, do, causal, scale)
    o, lse = o64.to(dtype), lse64.float()
    dq, dk, dv = (torch.full_like(x, float("nan")) for x in (q, k, v))
    args = rt.bwd_args(q, k, v, o, do, lse, dq, dk, dv, causal, scale)
    status, index, message = bundle.bwd_select(args)
    if status != rt.SUCCESS:
        return False, "attn_bwd_select: " + message
    stream = torch.cuda.current_stream().cuda_stream
    status, message = bundle.bwd(args, stream)
    torch.cuda.synchronize()
    if status != rt.SUCCESS:
        return False, "attn_bwd: " + message
    finite = all(torch.isfinite(x).all().item() for x in (dq, dk, dv))
    err = [rel(x, r) for x, r in zip((dq[:, :g], dk[:, :1], dv[:, :1]),
                                     grads)]
    ok = finite and max(err) < 2e-2
    note = "kernel %d, rel dQ %.2e dK %.2e dV %.2e%s" % (
        index, err[0], err[1], err[2], "" if finite else ", NON-FINITE")
    if time_it:
        ms = timed_back_to_back(lambda: bundle.bwd(args, stream), 10)
        note += ", %.3f ms" % ms
    return ok, note


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.empty(1, device="cuda")  # PyTorch's primary context, current
    bundle = rt.Bundle(rt.load_library(a.lib), a.bundle)
    if bundle.status != rt.SUCCESS:
        sys.exit("attn_bundle_load: " + bundle.message)
    manifest = json.load(open(os.path.join(a.bundle, "manifest.json")))
    failed = 0
    for kernel in manifest["kernels"]:
        if kernel["kind"] != "bwd":
            continue
        ok, note = check(bundle, kernel["key"], a.time)
        failed += not ok
        print("%-4s %s: %s" % ("ok" if ok else "FAIL", kernel["name"], note))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

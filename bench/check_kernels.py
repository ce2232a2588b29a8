"""Checks attn kernels (bench/kernels/*.cubin) on the GPU against PyTorch.

GPU-machine harness only: PyTorch is the reference and test driver, CuPy
loads the cubin and launches it with the memref-descriptor parameters the
kernel takes (per memref: allocated ptr, aligned ptr, offset, sizes,
strides). Outputs are poisoned with NaN before each run; inputs are fresh
random normals. Reference: fp32 on upcast inputs with an explicit
bottom-right causal mask. Prints one table row per shape.
"""
import glob, math, os, re, sys
import numpy as np
import cupy as cp
import torch
from torch.nn.attention import sdpa_kernel, SDPBackend

KDIR = sys.argv[1] if len(sys.argv) > 1 else "bench/kernels"
TIMED = {"llama3_8b_prefill", "gpt2", "mistral_7b"}
DT = {"bf16": torch.bfloat16, "f16": torch.float16}


def memref_args(t):
    args = [np.uint64(t.data_ptr()), np.uint64(t.data_ptr()), np.int64(0)]
    args += [np.int64(s) for s in t.shape] + [np.int64(s) for s in t.stride()]
    return args


def reference(q, k, v, causal):
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    o = torch.empty(B, Hq, Nq, D, dtype=torch.float32, device=q.device)
    lse = torch.empty(B, Hq, Nq, dtype=torch.float32, device=q.device)
    i = torch.arange(Nq, device=q.device)[:, None]
    j = torch.arange(Nk, device=q.device)[None, :]
    mask = (j <= i + Nk - Nq) if causal else torch.ones(Nq, Nk, dtype=torch.bool, device=q.device)
    for b in range(B):
        for h in range(Hq):
            s = (q[b, h].float() @ k[b, h // g].float().T) / math.sqrt(D)
            s = s.masked_fill(~mask, float("-inf"))
            l = torch.logsumexp(s, dim=-1)
            p = torch.exp(s - l[:, None]).nan_to_num(0.0)
            o[b, h] = p @ v[b, h // g].float()
            lse[b, h] = l
    return o, lse


def bench(fn, iters=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


rows, ok = [], True
for mlir in sorted(glob.glob(os.path.join(KDIR, "*.mlir"))):
    name = os.path.basename(mlir)[:-5]
    hdr = open(mlir).readline()
    f = dict(re.findall(r"(\w+)=(\w+)", hdr))
    B, Hq, Hkv, Nq, Nk, D = (int(f[x]) for x in ("B", "Hq", "Hkv", "Nq", "Nk", "D"))
    causal = f["causal"] == "1"
    dt = DT[hdr.split()[-2]]
    ptx = open(os.path.join(KDIR, name + "_kernel.ptx")).read()
    threads = int(re.search(r"\.maxntid (\d+)", ptx).group(1))
    mod = cp.RawModule(path=os.path.join(KDIR, name + "_kernel.cubin"))
    fn = mod.get_function(name + "_kernel")
    dev = "cuda"
    q = torch.randn(B, Hq, Nq, D, device=dev).to(dt)
    k = torch.randn(B, Hkv, Nk, D, device=dev).to(dt)
    v = torch.randn(B, Hkv, Nk, D, device=dev).to(dt)
    o = torch.full((B, Hq, Nq, D), float("nan"), device=dev, dtype=dt)
    lse = torch.full((B, Hq, Nq), float("nan"), device=dev)
    # Grid: (Q blocks, Hq, B); BLOCK_M = threads / lanes, lanes from the IR.
    lanes = {64: 2, 128: 4, 80: 2, 96: 4, 256: 8}.get(D, 1)
    bm = threads // lanes
    grid = ((Nq + bm - 1) // bm, Hq, B)
    args = memref_args(q) + memref_args(k) + memref_args(v) + memref_args(o) + memref_args(lse)
    launch = lambda: fn(grid, (threads, 1, 1), tuple(args))
    torch.cuda.synchronize()
    launch(); cp.cuda.Device().synchronize()
    ro, rl = reference(q, k, v, causal)
    nan_o = int(torch.isnan(o).sum()); nan_l = int(torch.isnan(lse).sum())
    rel = float((o.float() - ro).norm() / ro.norm().clamp_min(1e-30))
    fin = torch.isfinite(rl)
    lse_err = float((lse[fin] - rl[fin]).abs().max()) if fin.any() else 0.0
    noinf = bool(((lse[~fin] == float("-inf")).all()) and (o[~fin.unsqueeze(-1).expand_as(o)] == 0).all()) if (~fin).any() else True
    good = nan_o == 0 and nan_l == 0 and rel < 1e-2 and lse_err < 1e-3 and noinf
    ok &= good
    flops = 4 * B * Hq * Nq * Nk * D / (2 if causal else 1)
    tf = ""
    if name in TIMED:
        t = bench(launch)
        kk = k.repeat_interleave(Hq // Hkv, 1); vv = v.repeat_interleave(Hq // Hkv, 1)
        res = {}
        for be, tag in ((SDPBackend.FLASH_ATTENTION, "fa2"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
            try:
                with sdpa_kernel(be):
                    res[tag] = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, kk, vv, is_causal=causal))
            except Exception as e:
                res[tag] = float("nan")
        tf = "ours %.3f ms %.1f TF/s | fa2 %.3f ms %.1f | cudnn %.3f ms %.1f" % (
            t, flops / t / 1e9, res["fa2"], flops / res["fa2"] / 1e9, res["cudnn"], flops / res["cudnn"] / 1e9)
    rows.append("%-22s %s rel=%.2e lse_err=%.1e nan=%d/%d empty_rows_ok=%s threads=%d %s" % (
        name, "PASS" if good else "FAIL", rel, lse_err, nan_o, nan_l, noinf, threads, tf))
    print(rows[-1], flush=True)

print("\n== summary (%s)" % torch.cuda.get_device_name())
for r in rows:
    print(r)
print("ALL PASS" if ok else "SOME FAILED")

"""The tensor-core key-mask kernels (sliding window, chunked) on the GPU:
O and LSE against float32 on sampled rows, timed beside the dense causal
kernel and FlexAttention in the same run.

The manifest records no key mask yet, so the bundles come from an
attn-compile whose KernelInspect accepts `key_mask` (keying the kernel as
plain causal or not), one bundle per kernel of bench/key_mask/: .dev/win
(mistral_window.mlir, window 4096), .dev/dense (mistral_dense.mlir, the
same shape, causal), .dev/chunk (llama4_chunk.mlir, chunk 8192), .dev/odd
(odd_window.mlir: window (300, 50), Nq 1000, Nk 3000).

    python3 bench/key_mask_check.py
"""
import sys, math, time
sys.path.insert(0, "bench")
import torch
import attn_runtime as rt
from harness import timed
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

lib = rt.load_library("build/lib/libattn_runtime.so")
B, HQ, HKV, N, D, W = 1, 32, 8, 32768, 128, 4095
torch.manual_seed(0)
q, k, v = (torch.randn(B, h, N, D, device="cuda", dtype=torch.bfloat16) for h in (HQ, HKV, HKV))
stream = torch.cuda.current_stream().cuda_stream
res = {}
for name in ("win", "dense"):
    b = rt.Bundle(lib, f".dev/{name}")
    assert b.status == 0, b.message
    o = torch.full_like(q, float("nan"))
    lse = torch.full((B, HQ, N), float("nan"), device="cuda")
    args = rt.fwd_args(q, k, v, o, lse, True)
    st, msg = b.fwd(args, stream)
    assert st == 0, msg
    torch.cuda.synchronize()
    ms = timed(lambda: b.fwd(args, stream), 20)
    res[name] = (o.clone(), lse.clone(), ms, b)

# reference on sampled query rows (all heads), float32
g = HQ // HKV
rows = torch.cat([torch.arange(0, 300), torch.arange(4000, 4300), torch.arange(N - 300, N),
                  torch.randint(0, N, (300,))]).cuda()
kk = k.repeat_interleave(g, 1).float(); vv = v.repeat_interleave(g, 1).float()
qs = q[:, :, rows].float()
s = qs @ kk.transpose(-1, -2) / math.sqrt(D)
j = torch.arange(N, device="cuda")[None, :]
i = rows[:, None]
s = s.masked_fill(~((j <= i) & (i - j <= W)), float("-inf"))
ref_lse = torch.logsumexp(s, -1)
ref = torch.softmax(s, -1) @ vv
o_win, lse_win, ms_win, _ = res["win"]
got = o_win[:, :, rows].float()
err = float((got - ref).norm() / ref.norm())
lse_err = float((lse_win[:, :, rows] - ref_lse).abs().max())
nan = int(torch.isnan(o_win).sum()) + int(torch.isnan(lse_win).sum())
# flex on the same inputs
def mask(b, h, qi, kv):
    return (kv <= qi) & (qi - kv <= W)
bm = create_block_mask(mask, None, None, N, N)
flex = torch.compile(flex_attention)
fo = flex(q, k, v, block_mask=bm, enable_gqa=True)
flex_err = float((fo[:, :, rows].float() - ref).norm() / ref.norm())
ms_flex = timed(lambda: flex(q, k, v, block_mask=bm, enable_gqa=True), 20)
kept = sum(min(i, W) + 1 for i in range(N))
dense_pairs = N * (N + 1) // 2
tf = lambda pairs, ms: 4.0 * D * pairs * B * HQ / (ms * 1e-3) / 1e12
ms_dense = res["dense"][2]
print(torch.cuda.get_device_name())
print(f"window kernel: {ms_win:.3f} ms, {tf(kept, ms_win):.1f} TFLOP/s on kept pairs; err vs f32 {err:.2e}, max |dLSE| {lse_err:.2e}, NaN {nan}")
print(f"dense causal:  {ms_dense:.3f} ms, {tf(dense_pairs, ms_dense):.1f} TFLOP/s")
print(f"flex window:   {ms_flex:.3f} ms, {tf(kept, ms_flex):.1f} TFLOP/s; err {flex_err:.2e}")
print(f"window/dense TFLOP/s ratio {tf(kept, ms_win)/tf(dense_pairs, ms_dense):.3f}; speedup vs flex {ms_flex/ms_win:.2f}x")


# --- chunked and an odd window ---
flex = torch.compile(flex_attention)
torch.manual_seed(1)

def run(bundle, B, HQ, HKV, NQ, NK, D, causal):
    q = torch.randn(B, HQ, NQ, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(B, HKV, NK, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    b = rt.Bundle(lib, bundle); assert b.status == 0, b.message
    o = torch.full_like(q, float("nan")); lse = torch.full((B, HQ, NQ), float("nan"), device="cuda")
    args = rt.fwd_args(q, k, v, o, lse, causal)
    st, msg = b.fwd(args, stream); assert st == 0, msg
    torch.cuda.synchronize()
    ms = timed(lambda: b.fwd(args, stream), 20)
    return q, k, v, o, lse, ms

def ref_rows(q, k, v, rows, vis):
    g = q.shape[1] // k.shape[1]
    kk = k.repeat_interleave(g, 1).float(); vv = v.repeat_interleave(g, 1).float()
    s = q[:, :, rows].float() @ kk.transpose(-1, -2) / math.sqrt(q.shape[-1])
    j = torch.arange(k.shape[2], device="cuda")[None, :]
    s = s.masked_fill(~vis(rows[:, None], j), float("-inf"))
    return torch.softmax(s, -1).nan_to_num(0.0) @ vv, torch.logsumexp(s, -1)

def check(name, q, k, v, o, lse, rows, vis):
    ref, rl = ref_rows(q, k, v, rows, vis)
    err = float((o[:, :, rows].float() - ref).norm() / ref.norm())
    fin = torch.isfinite(rl)
    dl = float((lse[:, :, rows] - rl)[fin].abs().max())
    nan = int(torch.isnan(o).sum()) + int(torch.isnan(lse).sum())
    print(f"{name}: err vs f32 {err:.2e}, max |dLSE| {dl:.2e}, NaN {nan}")
    return ref

# Llama-4 chunked: causal within chunks of 8192
C, N = 8192, 32768
vis = lambda i, j: (j <= i) & (i // C == j // C)
q, k, v, o, lse, ms = run(".dev/chunk", 1, 40, 8, N, N, 128, True)
rows = torch.cat([torch.arange(8180, 8200), torch.arange(N - 100, N), torch.randint(0, N, (200,))]).cuda()
ref = check("llama4 chunked", q, k, v, o, lse, rows, vis)
bm = create_block_mask(lambda b, h, i, j: vis(i, j), None, None, N, N)
fo = flex(q, k, v, block_mask=bm, enable_gqa=True)
ferr = float((fo[:, :, rows].float() - ref).norm() / ref.norm())
fms = timed(lambda: flex(q, k, v, block_mask=bm, enable_gqa=True), 20)
kept = 4 * C * (C + 1) // 2
tf = lambda ms: 4.0 * 128 * kept * 40 / (ms * 1e-3) / 1e12
print(f"llama4 chunked: attn {ms:.3f} ms {tf(ms):.1f} TFLOP/s; flex {fms:.3f} ms {tf(fms):.1f} (err {ferr:.2e}); {fms/ms:.2f}x")

# window (300, 50), Nq 1000 < Nk 3000, GQA 4, not causal: every row
off = 3000 - 1000
vis2 = lambda i, j: (j >= i + off - 300) & (j <= i + off + 50)
q, k, v, o, lse, ms = run(".dev/odd", 2, 8, 2, 1000, 3000, 64, False)
check("window (300, 50) Nq1000 Nk3000", q, k, v, o, lse, torch.arange(1000).cuda(), vis2)
print(torch.cuda.get_device_name())

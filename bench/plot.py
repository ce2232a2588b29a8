"""TFLOP/s against sequence length: attn beside FlashAttention-2 and cuDNN.

Two steps, so the GPU machine needs no plotting library:

    # GPU machine: time every shape of bench/specs_plot.json, write a CSV
    python3 bench/plot.py measure --lib build/lib/libattn_runtime.so \\
        --bundle build/bundles/plot --csv plot.csv
    # anywhere with matplotlib: one panel per (D, causal)
    python3 bench/plot.py render --csv plot.csv --png docs/fwd-tflops.png

Shapes follow the FlashAttention papers: 16k tokens per batch (B = 16384 /
N), H = 2048 / D heads, bf16, N from 512 to 16384, D 64 and 128, causal
and not. Each point is the median of 10 launches, after a check of O
against an fp32 reference on one head.
"""
import argparse
import csv

NS = (512, 1024, 2048, 4096, 8192, 16384)
PANELS = [(d, c) for d in (64, 128) for c in (0, 1)]


def shapes():
    for d, causal in PANELS:
        for n in NS:
            yield "plot_d%d_n%d%s" % (d, n, "_causal" if causal else ""), \
                16384 // n, 2048 // d, n, d, causal


def measure(a):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import attn_runtime as rt
    from harness import poison, randn, timed

    lib = rt.load_library(a.lib)
    bundle = rt.Bundle(lib, a.bundle)
    assert bundle.status == 0, bundle.message
    stream = torch.cuda.current_stream().cuda_stream
    rows = []
    for name, b, h, n, d, causal in shapes():
        q, k, v = (randn((b, h, n, d), torch.bfloat16) for _ in range(3))
        o = poison((b, h, n, d), torch.bfloat16)
        lse = poison((b, h, n), torch.float32)
        args = rt.fwd_args(q, k, v, o, lse, causal)
        if a.tune:  # the fastest variant (attn-compile --variant) for this shape
            status, _, msg = bundle.tune(args, stream)
            assert status in (0, rt.BUNDLE_NOT_FOUND), msg
            o.fill_(float("nan"))
        status, msg = bundle.fwd(args, stream)
        torch.cuda.synchronize()
        if status == rt.NO_MATCHING_KERNEL:  # a bundle of some panels only
            continue
        assert status == 0, msg
        ref = torch.nn.functional.scaled_dot_product_attention(
            q[:1, :1].float(), k[:1, :1].float(), v[:1, :1].float(),
            is_causal=bool(causal))
        err = float((o[:1, :1].float() - ref).norm() / ref.norm())
        assert err < 1e-2, "%s: rel err %.2e" % (name, err)
        flops = 4 * b * h * n * n * d / (2 if causal else 1)
        row = {"D": d, "causal": causal, "N": n, "B": b, "H": h,
               "attn": flops / timed(lambda: bundle.fwd(args, stream)) / 1e9}
        for backend, tag in ((SDPBackend.FLASH_ATTENTION, "FA2"),
                             (SDPBackend.CUDNN_ATTENTION, "cuDNN")):
            with sdpa_kernel(backend):
                ms = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=bool(causal)))
            row[tag] = flops / ms / 1e9
        rows.append(row)
        print("D%-4d %-9s N %-6d attn %6.1f  FA2 %6.1f  cuDNN %6.1f TFLOP/s" % (
            d, "causal" if causal else "", n, row["attn"], row["FA2"], row["cuDNN"]),
            flush=True)
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def render(a):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(open(a.csv)))
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharey=True)
    for ax, (d, causal) in zip(axes.flat, PANELS):
        pts = [r for r in rows if int(r["D"]) == d and int(r["causal"]) == causal]
        ns = [int(r["N"]) for r in pts]
        for tag, style in (("attn", "o-"), ("cuDNN", "s--"), ("FA2", "^:")):
            ax.plot(ns, [float(r[tag]) for r in pts], style, label=tag)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_title("D = %d, %s, bf16, 16k tokens" % (d, "causal" if causal else "non-causal"))
        ax.set_xlabel("sequence length N")
        ax.set_ylabel("TFLOP/s")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


def specs(a):
    import json
    out = [{"name": name, "batch": b, "num_heads_q": h, "num_heads_kv": h,
            "seqlen_q": n, "seqlen_k": n, "head_dim": d, "dtype": "bf16",
            "causal": bool(c), "layout": "contiguous"}
           for name, b, h, n, d, c in shapes()]
    with open(a.out, "w") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(s) for s in out) + "\n]\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="time the shapes (GPU machine)")
    m.add_argument("--lib", required=True)
    m.add_argument("--bundle", required=True)
    m.add_argument("--csv", required=True)
    m.add_argument("--tune", action="store_true",
                   help="attn_tune each shape first (bundles with variants)")
    r = sub.add_parser("render", help="CSV -> PNG (needs matplotlib)")
    r.add_argument("--csv", required=True)
    r.add_argument("--png", required=True)
    r.add_argument("--title", default="attn forward on an H200")
    s = sub.add_parser("specs", help="write the attn-compile spec file")
    s.add_argument("--out", default="bench/specs_plot.json")
    a = ap.parse_args()
    {"measure": measure, "render": render, "specs": specs}[a.cmd](a)


if __name__ == "__main__":
    main()

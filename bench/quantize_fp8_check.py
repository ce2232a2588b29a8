"""attn-quantize-fp8's GPU quantize kernels on the H200.

Runs the quantize launches of `attn-quantize-fp8` + `attn-to-cubin` (the
host function's gpu.launch_func list, read from the format=none output)
through the CUDA driver on bf16 Q, K, V, checks what they wrote against
PyTorch (descales exactly amax / 448 per (batch, KV head) or per block of
rows of one head, e4m3 copies exactly (x / descale).to(e4m3), V in its
V^T storage), times them, then (per-head descales only: the bundle takes
[B, Hkv] descales) runs the FP8 attention of an e4m3 bundle on their
output (V^T view) and compares O with bf16 SDPA. The attention kernel of
that module itself takes TMA descriptors and is run here through the
bundle instead.

Launches: one amax kernel for Q, K and V (per-block Q and K, the
default `qk-granularity=block`, finish there: a CTA per scale block takes
its amax, descale and e4m3 copy; other groups store their CTAs' maxima),
then one copy kernel per operand whose groups are not blocks (the descale
from those maxima, then the e4m3 copy; V^T for V): 2 launches per block,
4 per head.

Build machine (qk-granularity=head, no rotation: the exact checks assume
unrotated Q and K):

    P='--attn-quantize-fp8=qk-granularity=head'
    mkdir -p build/bundles/quantize
    build/bin/attn-opt bench/quantize_fp8.mlir $P --attn-to-cubin=format=none \
        > build/bundles/quantize/host.mlir
    build/bin/attn-opt bench/quantize_fp8.mlir $P --attn-to-cubin | \
        python3 test/Pipelines/Inputs/gpu-binary-ptx.py build/bundles/quantize
    for f in build/bundles/quantize/*.ptx; do
      /usr/local/cuda/bin/ptxas -arch=sm_90a "$f" -o "${f%.ptx}.cubin"; done
    build/bin/attn-compile --spec-file=bench/specs_fp8.json -o build/bundles/fp8

Per-block descales (the same with P='--attn-quantize-fp8' and
build/bundles/quantize-block; no attn-compile bundle).

GPU machine:

    python3 bench/quantize_fp8_check.py --kernels build/bundles/quantize \
        --lib build/lib/libattn_runtime.so --fp8 build/bundles/fp8
    python3 bench/quantize_fp8_check.py --kernels build/bundles/quantize-block
"""
import argparse
import ctypes
import math
import os
import re

import torch

E4M3 = torch.float8_e4m3fn
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32,
          "f8E4M3FN": E4M3}
LAUNCH = re.compile(r"gpu\.launch_func\s+@(\w+)::@(\w+) blocks in \(%c(\d+)\w*,"
                    r" %c1\w*, %c1\w*\) threads in \(%c(\d+)\w*, %c1\w*, "
                    r"%c1\w*\)\s+(?:dynamic_shared_memory_size \S+ )?"
                    r"args\((.*)\)")
ALLOC = re.compile(r"(%\w+) = memref\.alloc\(\) : memref<[0-9x]+x(\w+)>")
ARG = re.compile(r"(%\w+) : (memref<([0-9x]+)x(\w+)(?:, strided<[^>]*>)?>"
                 r"|!llvm\.ptr)")


def launches(host):
    """[(module, kernel, grid, block, [(ssa, shape, dtype) or ptr])] in
    order, up to the attention (the first launch with an !llvm.ptr)."""
    out = []
    for m in LAUNCH.finditer(open(host).read()):
        args = [(a.group(1), a.group(3), a.group(4))
                for a in ARG.finditer(m.group(5))]
        if any(a[1] is None for a in args):
            break
        out.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4)),
                    [(n, [int(d) for d in s.split("x")], DTYPES[t])
                     for n, s, t in args]))
    return out


class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mods = {}

    def check(self, status, what):
        if status != 0:
            raise RuntimeError("%s failed: CUresult %d" % (what, status))

    def function(self, path, name):
        mod = ctypes.c_void_p()
        self.check(self.cu.cuModuleLoad(ctypes.byref(mod), path.encode()),
                   "cuModuleLoad " + path)
        fn = ctypes.c_void_p()
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), mod,
                                               name.encode()), "GetFunction")
        self.mods[path] = mod
        return fn

    def launch(self, fn, grid, block, tensors, stream):
        """Each memref is passed expanded: allocated and aligned pointers,
        offset, sizes, strides (MLIR's memref calling convention)."""
        vals = []
        for t in tensors:
            vals += [ctypes.c_void_p(t.data_ptr())] * 2
            vals += [ctypes.c_int64(t.storage_offset())]
            vals += [ctypes.c_int64(s) for s in t.shape]
            vals += [ctypes.c_int64(s) for s in t.stride()]
        params = (ctypes.c_void_p * len(vals))(
            *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        self.check(self.cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0,
                                          ctypes.c_void_p(stream), params,
                                          None), "cuLaunchKernel")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--lib")
    ap.add_argument("--fp8")
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    host = os.path.join(a.kernels, "host.mlir")
    plan = launches(host)
    assert len(plan) in (2, 4), \
        "expected 4 (per head) or 2 (per block) quantize launches, got %d" \
        % len(plan)
    # The pass allocates each operand's e4m3 copy, then its descales.
    allocs = ALLOC.findall(open(host).read())
    copies = [i for i, (_, t) in enumerate(allocs) if t == "f8E4M3FN"]
    assert len(copies) == 3, "expected an e4m3 copy per operand"
    buffers = [(allocs[i][0], allocs[i + 1][0]) for i in copies]
    torch.manual_seed(0)
    args = {}
    for _, _, _, _, ts in plan:
        for n, shape, dt in ts:
            if n.startswith("%arg"):
                args.setdefault(n, (torch.randn(shape, device="cuda") *
                                    (1 + int(n[4:]))).to(dt))
            else:
                args.setdefault(n, torch.full(shape, 0, device="cuda",
                                              dtype=torch.float32).to(dt))
    drv = Driver()
    stream = torch.cuda.current_stream().cuda_stream
    fns = []
    for mod, name, grid, block, ts in plan:
        path = os.path.join(a.kernels, mod + ".cubin")
        if not os.path.exists(path):
            path = os.path.join(a.kernels, mod + ".ptx")
        fns.append((drv.function(path, name), grid, block,
                    [args[n] for n, _, _ in ts], [n for n, _, _ in ts]))

    def run():
        for fn, grid, block, ts, _ in fns:
            drv.launch(fn, grid, block, ts, stream)

    run()
    torch.cuda.synchronize()
    # Descale and FP8 copy are the quantize launch's f32 and f8 arguments.
    q, k, v = args["%arg0"], args["%arg1"], args["%arg2"]
    ok = True
    outs = []
    for i, x in enumerate((q, k, v)):
        x8, d = (args[n] for n in buffers[i])
        B, H, N, D = x.shape
        hkv, stored = d.shape[1], x8
        if d.dim() == 3:  # per block of `rows` rows of one head
            nb = d.shape[2]
            rows = -(-N // nb)
            padded = torch.nn.functional.pad(x.float().abs(),
                                             (0, 0, 0, nb * rows - N))
            amax = padded.reshape(B, H, nb, -1).amax(-1)
        else:
            amax = x.float().abs().reshape(B, hkv, -1).amax(-1)
        # amax / 448 correctly rounded (the kernel's div.rn.f32): in double,
        # then to float. torch's division by a Python scalar multiplies by
        # its reciprocal on the GPU, which is 1 ulp off at times.
        want = torch.where(amax > 0, (amax.double() / 448.0).float(),
                           torch.ones_like(amax))
        if i == 2:  # V^T storage [B, Hkv, D, Nk]
            assert list(x8.shape) == [B, H, D, N], x8.shape
            x8 = x8.transpose(2, 3)
        if d.dim() == 3:
            per = want.repeat_interleave(rows, 2)[:, :, :N, None]
        else:
            per = want.repeat_interleave(H // hkv, 1)[:, :, None, None]
        ref8 = (x.float() / per).to(E4M3)
        same_d = torch.equal(d, want)
        same_8 = torch.equal(x8.view(torch.uint8), ref8.view(torch.uint8))
        ok &= same_d and same_8
        print("%s: descale %s, e4m3 copy %s" % (
            "QKV"[i], "exact" if same_d else "DIFFERS (max %.3g)" %
            (d - want).abs().max().item(),
            "exact" if same_8 else "DIFFERS (%d bytes)" %
            int((x8.view(torch.uint8) != ref8.view(torch.uint8)).sum())))
        outs.append((stored, d))  # V: the [B, Hkv, D, Nk] V^T storage
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    for _ in range(a.iters):
        run()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / a.iters
    # bf16 read by the amax and the quantize kernels, e4m3 written: 5 B.
    nbytes = 5 * sum(t.numel() for t in (q, k, v))
    print("quantize (%d launches): %.3f ms, %.0f GB/s" % (
        len(fns), ms, nbytes / ms / 1e6))
    # Per launch: the amax kernel, then each copy kernel (named by the
    # operand whose e4m3 copy it writes).
    for i, (fn, grid, block, ts, names) in enumerate(fns):
        name = "amax" if i == 0 else next(
            "QKV"[j] + " copy" for j, (x8, _) in enumerate(buffers)
            if x8 in names)
        start.record()
        for _ in range(a.iters):
            drv.launch(fn, grid, block, ts, stream)
        end.record()
        torch.cuda.synchronize()
        print("  %-8s grid %7d x %3d: %.4f ms" % (
            name, grid, block, start.elapsed_time(end) / a.iters))
    if a.lib and a.fp8 and outs[0][1].dim() == 2:
        import sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import attn_runtime as rt
        from tma_cases import reference
        lib = rt.load_library(a.lib)
        bundle = rt.Bundle(lib, a.fp8)
        assert bundle.status == 0, bundle.message
        (q8, qd), (k8, kd), (vt, vd) = outs
        o = torch.full(q.shape, float("nan"), device="cuda",
                       dtype=torch.bfloat16)
        lse = torch.full(q.shape[:3], float("nan"), device="cuda")
        status, msg = bundle.fwd(rt.fp8_fwd_args(q8, k8, vt, o, lse, qd, kd,
                                                 vd, True), stream)
        assert status == 0, msg
        torch.cuda.synchronize()

        def heads(x8, d):  # dequantized, per (batch, KV head) factor
            return x8.float() * d[:, :, None, None].repeat_interleave(
                x8.shape[1] // d.shape[1], 1)
        # The kernel chain against attention of the dequantized inputs
        # (fp8_check.py's bound: P is e4m3 in the kernel), then the whole
        # FP8 error against the bf16 inputs, reported.
        rd, _ = reference(heads(q8, qd), heads(k8, kd),
                          heads(vt, vd).transpose(2, 3), True)
        rel = ((o.float() - rd).norm() / rd.norm()).item()
        ok &= math.isfinite(rel) and rel < 4e-2
        ro, _ = reference(q.float(), k.float(), v.float(), True)
        rel_in = ((o.float() - ro).norm() / ro.norm()).item()
        print("FP8 attention on the quantized Q, K, V^T: rel_fro %.2e "
              "against attention of the dequantized inputs (bound 4e-2), "
              "%.2e against the bf16 inputs" % (rel, rel_in))
    elif a.fp8:
        print("per-block descales: the e4m3 bundle takes [B, Hkv] descales; "
              "attention not run")
    print("QUANTIZE CHECKS", "PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()

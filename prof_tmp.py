import sys, torch
sys.path.insert(0, "bench")
import attn_runtime as rt
lib = rt.load_library("build/lib/libattn_runtime.so")
which = sys.argv[1]
B, Nk, d = (1, 131072, "build/decb/decode_pack_s16") if which == "b1" else (64, 32768, "build/decb/decode_pack_s1")
b = rt.Bundle(lib, d)
q = torch.randn(B, 32, 1, 128, device="cuda").bfloat16()
k = torch.randn(B, 8, Nk, 128, device="cuda").bfloat16()
v = torch.randn(B, 8, Nk, 128, device="cuda").bfloat16()
o = torch.empty_like(q); lse = torch.empty(B, 32, 1, device="cuda")
args = rt.fwd_args(q, k, v, o, lse, False)
s = torch.cuda.current_stream().cuda_stream
for _ in range(3):
    b.fwd(args, s)
torch.cuda.synchronize()

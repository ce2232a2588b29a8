"""ctypes binding of the attn runtime's C API (runtime/include/attn/runtime.h).

Test-driver glue for the GPU machine only: the runtime itself has no Python
in it. Tensors are torch tensors; nothing else is needed from torch.
"""
import ctypes
import os

SUCCESS, INVALID_ARGUMENT, NO_MATCHING_KERNEL = 0, 1, 2
BUNDLE_NOT_FOUND, BUNDLE_CORRUPT, CUDA_ERROR = 3, 4, 5
QUANTIZE_NONE, QUANTIZE_FP8 = 0, 1
DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "e4m3": 3, "i32": 4}
TORCH_DTYPES = {"torch.float16": 0, "torch.bfloat16": 1, "torch.float32": 2,
                "torch.float8_e4m3fn": 3, "torch.int32": 4}


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32), ("sizes", ctypes.c_int64 * 4),
                ("strides", ctypes.c_int64 * 4)]


class FwdArgs(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("o", Tensor),
                ("lse", Tensor), ("causal", ctypes.c_int32),
                ("softmax_scale", ctypes.c_float),
                # FP8 (e4m3) calls only; zero (rank 0, NULL) otherwise.
                ("q_descale", Tensor), ("k_descale", Tensor),
                ("v_descale", Tensor),
                # Paged K/V calls only; zero (rank 0, NULL) otherwise.
                ("block_table", Tensor), ("cache_seqlens", Tensor),
                # Varlen calls only; zero otherwise.
                ("cu_seqlens_q", Tensor), ("cu_seqlens_k", Tensor),
                ("max_seqlen_q", ctypes.c_int64),
                ("max_seqlen_k", ctypes.c_int64),
                # attn_quantize: QUANTIZE_NONE (0) or QUANTIZE_FP8.
                ("quantize", ctypes.c_int32)]


class BwdArgs(ctypes.Structure):
    """attn_bwd_args: q, k, v, o, dout (dO), lse in; dq, dk, dv out."""
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("o", Tensor),
                ("dout", Tensor), ("lse", Tensor), ("dq", Tensor),
                ("dk", Tensor), ("dv", Tensor), ("causal", ctypes.c_int32),
                ("softmax_scale", ctypes.c_float)]


def load_library(path):
    lib = ctypes.CDLL(path)
    lib.attn_bundle_load.argtypes = [ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_void_p)]
    lib.attn_bundle_destroy.argtypes = [ctypes.c_void_p]
    lib.attn_bundle_destroy.restype = None
    lib.attn_bundle_num_kernels.argtypes = [ctypes.c_void_p]
    lib.attn_bundle_num_kernels.restype = ctypes.c_int64
    lib.attn_bundle_kernel_info.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    lib.attn_bundle_kernel_info.restype = ctypes.c_char_p
    lib.attn_fwd_select.argtypes = [ctypes.c_void_p, ctypes.POINTER(FwdArgs),
                                    ctypes.POINTER(ctypes.c_int64)]
    lib.attn_fwd.argtypes = [ctypes.c_void_p, ctypes.POINTER(FwdArgs),
                             ctypes.c_void_p]
    lib.attn_tune.argtypes = [ctypes.c_void_p, ctypes.POINTER(FwdArgs),
                              ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
    lib.attn_bundle_set_check_values.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_int]
    lib.attn_bwd_select.argtypes = [ctypes.c_void_p, ctypes.POINTER(BwdArgs),
                                    ctypes.POINTER(ctypes.c_int64)]
    lib.attn_bwd.argtypes = [ctypes.c_void_p, ctypes.POINTER(BwdArgs),
                             ctypes.c_void_p]
    lib.attn_last_error.restype = ctypes.c_char_p
    lib.attn_status_name.argtypes = [ctypes.c_int]
    lib.attn_status_name.restype = ctypes.c_char_p
    return lib


def tensor(t, dtype=None):
    """An attn_tensor viewing torch tensor `t` (None: an empty tensor)."""
    out = Tensor()
    if t is None:
        return out
    out.data = t.data_ptr()
    out.dtype = DTYPES[dtype] if dtype else TORCH_DTYPES[str(t.dtype)]
    out.rank = t.dim()
    for i in range(t.dim()):
        out.sizes[i] = t.shape[i]
        out.strides[i] = t.stride(i)
    return out


class Bundle:
    def __init__(self, lib, path):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        self.status = lib.attn_bundle_load(os.fsencode(path),
                                           ctypes.byref(self.handle))
        self.message = lib.attn_last_error().decode()

    def __del__(self):
        if self.handle:
            self.lib.attn_bundle_destroy(self.handle)

    def kernels(self):
        n = self.lib.attn_bundle_num_kernels(self.handle)
        return [self.lib.attn_bundle_kernel_info(self.handle, i).decode()
                for i in range(n)]

    def select(self, args):
        index = ctypes.c_int64(-1)
        status = self.lib.attn_fwd_select(self.handle, ctypes.byref(args),
                                          ctypes.byref(index))
        return status, index.value, self.lib.attn_last_error().decode()

    def tune(self, args, stream):
        """attn_tune: the fastest variant for this call's shape, kept."""
        index = ctypes.c_int64(-1)
        status = self.lib.attn_tune(self.handle, ctypes.byref(args), stream,
                                    ctypes.byref(index))
        return status, index.value, self.lib.attn_last_error().decode()

    def set_check_values(self, enabled):
        """attn_bundle_set_check_values: FP8 descale and paged table value
        checks (one stream synchronization per such call; on by
        default)."""
        status = self.lib.attn_bundle_set_check_values(self.handle,
                                                       int(enabled))
        return status, self.lib.attn_last_error().decode()

    def bwd_select(self, args):
        index = ctypes.c_int64(-1)
        status = self.lib.attn_bwd_select(self.handle, ctypes.byref(args),
                                          ctypes.byref(index))
        return status, index.value, self.lib.attn_last_error().decode()

    def bwd(self, args, stream):
        status = self.lib.attn_bwd(self.handle, ctypes.byref(args), stream)
        return status, self.lib.attn_last_error().decode()

    def fwd(self, args, stream):
        status = self.lib.attn_fwd(self.handle, ctypes.byref(args), stream)
        return status, self.lib.attn_last_error().decode()


def bwd_args(q, k, v, o, dout, lse, dq, dk, dv, causal, scale=0.0):
    """A backward call (attn_bwd): torch tensors of the forward's shapes."""
    args = BwdArgs()
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("dout", dout),
                    ("lse", lse), ("dq", dq), ("dk", dk), ("dv", dv)):
        setattr(args, name, tensor(t))
    args.causal = int(causal)
    args.softmax_scale = scale
    return args


def fwd_args(q, k, v, o, lse, causal, scale=0.0):
    args = FwdArgs()
    args.q, args.k, args.v, args.o = tensor(q), tensor(k), tensor(v), tensor(o)
    args.lse = tensor(lse)
    args.causal = int(causal)
    args.softmax_scale = scale
    return args


def quantized_fwd_args(q, k, v, o, lse, causal, scale=0.0):
    """A quantized FP8 call (attn_fwd_args.quantize = ATTN_QUANTIZE_FP8):
    bf16 q, k, v, o, lse as fwd_args; only a kernel compiled with
    attn-compile --quantize-fp8 (a spec's "quantize_fp8") takes it, and it
    quantizes Q, K, V to e4m3 itself."""
    args = fwd_args(q, k, v, o, lse, causal, scale)
    args.quantize = QUANTIZE_FP8
    return args


def fp8_fwd_args(q, k, vt, o, lse, q_descale, k_descale, v_descale, causal,
                 scale=0.0):
    """An FP8 (e4m3) call. q [B, Hq, Nq, D] and k [B, Hkv, Nk, D] are
    torch.float8_e4m3fn with unit stride on D; `vt` is V stored transposed,
    a float8_e4m3fn [B, Hkv, D, Nk] tensor with unit stride on Nk (pad Nk to
    a multiple of 16 in memory and slice: strides must be 16-byte
    multiples); o is bf16 [B, Hq, Nq, D]; the descales are float32 [B, Hkv]
    (any strides), the factors that undo the quantization of each (batch,
    KV head)."""
    args = fwd_args(q, k, None, o, lse, causal, scale)
    args.v = tensor(vt.transpose(2, 3))  # the [B, Hkv, Nk, D] view of V^T
    args.q_descale = tensor(q_descale)
    args.k_descale = tensor(k_descale)
    args.v_descale = tensor(v_descale)
    return args


def paged_fwd_args(q, k_cache, v_cache, o, lse, block_table, cache_seqlens,
                   causal, scale=0.0):
    """A paged K/V call, as FlashAttention-2's flash_attn_with_kvcache(
    block_table=..., cache_seqlens=...). q and o [B, Hq, Nq, D] (f16 or
    bf16); k_cache and v_cache [num_pages, page_size, Hkv, D], q's dtype,
    unit stride on D; block_table torch.int32 [B, max_pages] and
    cache_seqlens torch.int32 [B], any strides. Sequence b has
    cache_seqlens[b] keys, key j in row j % page_size of page
    block_table[b, j // page_size]; causal is bottom-right per sequence."""
    args = fwd_args(q, k_cache, v_cache, o, lse, causal, scale)
    args.block_table = tensor(block_table)
    args.cache_seqlens = tensor(cache_seqlens)
    return args


def varlen_fwd_args(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k,
                    max_seqlen_q, max_seqlen_k, causal, scale=0.0,
                    block_table=None):
    """A varlen call, as FlashAttention-2's flash_attn_varlen_func: q and o
    [total_q, Hq, D], k and v [total_k, Hkv, D] (f16 or bf16, unit stride
    on D), lse float32 [Hq, total_q] or None, cu_seqlens_q / cu_seqlens_k
    torch.int32 [B + 1] prefix sums, max_seqlen_q / max_seqlen_k ints >=
    every sequence's length. Causal is bottom-right per sequence. Needs a
    bundle kernel compiled with attn-compile --varlen.

    With `block_table` (torch.int32 [B, max_pages]) the call is varlen
    paged (flash_attn_varlen_func with block_table): k and v are caches
    [num_pages, page_size, Hkv, D], sequence b's keys cu_seqlens_k[b + 1]
    - cu_seqlens_k[b] of them, key j in row j % page_size of page
    block_table[b, j // page_size]; no cache_seqlens. Needs a varlen
    kernel with a page size."""
    args = fwd_args(q, k, v, o, lse, causal, scale)
    args.cu_seqlens_q = tensor(cu_seqlens_q)
    args.cu_seqlens_k = tensor(cu_seqlens_k)
    args.max_seqlen_q = int(max_seqlen_q)
    args.max_seqlen_k = int(max_seqlen_k)
    args.block_table = tensor(block_table)
    return args

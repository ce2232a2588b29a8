#!/usr/bin/env bash
# Builds (on the build machine) one kernel per validation shape into
# bench/kernels/: <name>.mlir, <name>_kernel.ptx, <name>_kernel.cubin.
# Run bench/check_kernels.py on the GPU machine afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/kernels
rm -rf "$OUT" && mkdir -p "$OUT"
BUILD=${ATTN_BUILD_DIR:-build}
# name B Hq Hkv Nq Nk D dtype causal
SHAPES="
llama3_8b_prefill 1 32 8 8192 8192 128 bf16 1
gpt2 8 12 12 1024 1024 64 f16 1
mistral_7b 2 32 8 4096 4096 128 bf16 1
n113 2 4 4 113 113 64 bf16 0
n1023 1 8 2 1023 1023 128 f16 1
n2049 1 4 4 2049 2049 64 bf16 1
d80 1 4 2 512 512 80 bf16 1
d96 1 4 4 500 700 96 f16 0
decode_nq1 4 32 8 1 4096 128 bf16 1
causal_nq_lt_nk 1 4 4 300 1000 64 f16 1
causal_nq_gt_nk 1 4 4 1000 300 64 bf16 1
"
echo "$SHAPES" | while read -r name b hq hkv nq nk d dt causal; do
  [ -z "$name" ] && continue
  attr=""; [ "$causal" = 1 ] && attr="{causal}"
  q="memref<${b}x${hq}x${nq}x${d}x${dt}>"; kv="memref<${b}x${hkv}x${nk}x${d}x${dt}>"
  lse="memref<${b}x${hq}x${nq}xf32>"
  cat > "$OUT/$name.mlir" <<MLIR
// shape: $name B=$b Hq=$hq Hkv=$hkv Nq=$nq Nk=$nk D=$d $dt causal=$causal
func.func @$name(%q: $q, %k: $kv, %v: $kv, %o: $q, %lse: $lse) {
  attn.attention ins(%q, %k, %v : $q, $kv, $kv) outs(%o : $q) lse(%lse : $lse) $attr
  return
}
MLIR
  "$BUILD/bin/attn-compile" "$OUT/$name.mlir" -o "$OUT" >/dev/null
  /usr/local/cuda/bin/ptxas -arch=sm_90a "$OUT/${name}_kernel.ptx" -o "$OUT/${name}_kernel.cubin"
done
ls "$OUT" | wc -l

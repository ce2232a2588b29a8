#!/usr/bin/env bash
# The main job: build attn, then compile the default example (Llama-3-8B
# prefill: B=1, Hq=32, Hkv=8, N=8192, D=128, causal, bf16) from attn.attention
# to a sm_90a kernel and report it. Pass another .mlir file to use it instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
BUILD=${ATTN_BUILD_DIR:-build}
INPUT=${1:-examples/llama3-8b-prefill.mlir}
OUT=${ATTN_OUT_DIR:-$BUILD/main}
mkdir -p "$OUT"

echo "== 1. parse and verify $INPUT"
"$BUILD/bin/attn-opt" "$INPUT"

echo "== 2. lower to PTX (attn-to-cubin) and assemble for sm_90a"
"$BUILD/bin/attn-compile" "$INPUT" -o "$OUT"
for ptx in "$OUT"/*.ptx; do
  if [ -x /usr/local/cuda/bin/ptxas ]; then
    /usr/local/cuda/bin/ptxas -arch=sm_90a -v "$ptx" -o "${ptx%.ptx}.cubin" \
      2>&1 | sed 's/^ptxas info    : //'
    echo "cubin: ${ptx%.ptx}.cubin"
  else
    echo "ptxas not found: PTX left at $ptx"
  fi
done

#!/usr/bin/env bash
# The main job: build attn, compile the default example (Llama-3-8B prefill:
# B=1, Hq=32, Hkv=8, N=8192, D=128, causal, bf16) into a kernel bundle and
# list its kernels with registers and shared memory. Where a GPU is present,
# also run the bundle through the runtime (attn-run): check O and LSE against
# an fp32 reference on the GPU and report TFLOP/s.
#
#   ./scripts/main.sh [input.mlir]
#
# A GPU machine without LLVM/MLIR cannot build the compiler. There the script
# uses what the build machine made: build/bin/attn-run,
# build/lib/libattn_runtime.so and the bundle in build/bundles/main.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ATTN_BUILD_DIR:-build}
INPUT=${1:-examples/llama3-8b-prefill.mlir}
BUNDLE=${ATTN_BUNDLE_DIR:-$BUILD/bundles/main}

if [ -d /usr/lib/llvm-22/lib/cmake/mlir ] || [ ! -x "$BUILD/bin/attn-run" ]; then
  ./scripts/setup.sh >/dev/null
  echo "== compile $INPUT into the bundle $BUNDLE"
  rm -rf "$BUNDLE"
  "$BUILD/bin/attn-compile" "$INPUT" -o "$BUNDLE"
else
  echo "== no LLVM/MLIR here: using the bundle built on the build machine ($BUNDLE)"
  [ -f "$BUNDLE/manifest.json" ] || { echo "missing $BUNDLE/manifest.json"; exit 1; }
fi

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== run it on $(nvidia-smi -L | head -1)"
  "$BUILD/bin/attn-run" "$BUNDLE"
else
  echo "== no GPU here: the bundle is ready for attn-run on a GPU machine"
fi

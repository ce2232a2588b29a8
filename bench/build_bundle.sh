#!/usr/bin/env bash
# Builds (on the build machine) the harness bundle from bench/specs.json:
# one static kernel per harness shape plus dynamic-length fallbacks.
# Then, on the GPU machine:
#   python3 bench/harness.py --bundle build/bundles/bench --lib build/lib/libattn_runtime.so
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ATTN_BUILD_DIR:-build}
OUT=${1:-$BUILD/bundles/bench}
rm -rf "$OUT"
"$BUILD/bin/attn-compile" --spec-file=bench/specs.json -o "$OUT"

#!/usr/bin/env bash
# The full test suite: lit/FileCheck tests of every pass and the GoogleTest
# suite (CPU-executed numerics, dialect API). Builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD=${ATTN_BUILD_DIR:-build}
cd "$BUILD"
# lit, three GoogleTest shards and the runtime GoogleTest, two at a time;
# each entry's time is printed ("Test #N: ... sec").
ctest -j2 --timeout 1500 --output-on-failure -V 2>&1 | tee ctest.log | grep -E \
  "^[0-9]+: (Total Discovered|  Passed|  Failed|  Unsupported|\[  PASSED  \]|\[  FAILED  \])|Test +#[0-9]+: |Total Test time|tests passed|tests failed|FAIL:|\[  FAILED  \]" || true
grep -q "100% tests passed" ctest.log

#!/usr/bin/env bash
# On the GPU machine, after bench/build_bundle.sh on the build machine:
# the tensor-core cases (watchdog per launch), then the harness (model
# shapes, odd cases, misuse statuses, timing beside FA2 and cuDNN).
# Logs go to $OUT (the device tool's output folder) when it is set.
set -uo pipefail
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
LIB=../build/lib/libattn_runtime.so
LOG=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
rc=0
timeout 400 python3 tma_cases.py --bundle ../build/bundles/tma --lib $LIB \
  --groups "${TMA_GROUPS:-dmatrix,twowg,tails,nanviews,nokey,grids,error}" \
  > "$LOG/tma.log" 2>&1 || rc=1
grep -v "^   FAIL" "$LOG/tma.log" | tail -12; grep "^   FAIL" "$LOG/tma.log" | head -20
if [ -d ../build/bundles/tma64 ]; then
  timeout 120 python3 tma_cases.py --bundle ../build/bundles/tma64 --lib $LIB \
    --groups dmatrix > "$LOG/tma64.log" 2>&1 || rc=1
  echo "== max-mma-n=64:"; tail -3 "$LOG/tma64.log"
fi
timeout 400 python3 harness.py --bundle ../build/bundles/bench --lib $LIB \
  --out "$LOG/harness.json" ${HARNESS_ARGS:-} > "$LOG/harness.log" 2>&1 || rc=1
sed -n '/^== /,$p' "$LOG/harness.log" | cut -c1-150
exit $rc

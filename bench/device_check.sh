#!/usr/bin/env bash
# On the GPU machine, after bench/build_bundle.sh (and scripts/main.sh) on
# the build machine: the tensor-core cases (a hang watchdog per launch) on
# both paths, the harness (model shapes, odd cases, misuse statuses, timing
# beside FA2 and cuDNN), attn-run (the varlen and backward bundles too),
# attn-reference-check, the README's main job, and compute-sanitizer's race
# and memory checks on small launches. Logs go to $OUT (the device tool's
# output folder) when it is set.
set -uo pipefail
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
LIB=../build/lib/libattn_runtime.so
LOG=${OUT:-/tmp}
B=../build/bundles
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
rc=0
step() { echo "== $1"; shift; "$@" || { rc=1; echo "FAILED: $*"; }; }
step "tma cases, wgmma" timeout 400 python3 tma_cases.py --bundle $B/tma --lib $LIB \
  --groups "${TMA_GROUPS:-dmatrix,twowg,tails,nanviews,nokey,grids,error}" --verbose \
  > "$LOG/tma.log" 2>&1
grep -E "^\[|^tma cases|HANG" "$LOG/tma.log"; grep "^   FAIL" "$LOG/tma.log" | head -20
grep "error vs FA2" "$LOG/tma.log"
if [ -d $B/tma_fma ]; then
  step "tma cases, fma" timeout 300 python3 tma_cases.py --bundle $B/tma_fma --lib $LIB \
    --groups tails,grids,nokey > "$LOG/tma_fma.log" 2>&1
  grep -E "^\[|^tma cases|HANG" "$LOG/tma_fma.log"
fi
step "harness" timeout 400 python3 harness.py --bundle $B/bench --lib $LIB \
  --out "$LOG/harness.json" ${HARNESS_ARGS:-} > "$LOG/harness.log" 2>&1
sed -n '/^== /,$p' "$LOG/harness.log" | cut -c1-160
step "attn-run" timeout 300 ../build/bin/attn-run $B/bench --seqlen-q=1000 --seqlen-k=1500 \
  --batch=2 --heads-q=8 --heads-kv=2 > "$LOG/attn-run.log" 2>&1
tail -4 "$LOG/attn-run.log"
# Varlen kernels, split, paged and both: B8 with empty sequences and
# padding rows, max lengths 1000 and 1500; each sequence again with NaN in
# every row it does not own (attn-run's isolation check).
for v in varlen varlen_pack varlen_extra varlen_s3 varlen_paged_s1 varlen_paged_s2 \
         varlen_paged_decode; do
  [ -d $B/$v ] || continue
  step "attn-run $v" timeout 300 ../build/bin/attn-run $B/$v --batch=8 \
    --seqlen-q=1000 --seqlen-k=1500 > "$LOG/attn-run-$v.log" 2>&1
  grep -E "^ +[0-9]+ |kernels passed" "$LOG/attn-run-$v.log"
done
# Paged K/V kernels (cache_seqlens): B8, capacity 1500 (a page-16 and a
# page-256 size), the same isolation check; the static decode kernels at
# their own shapes.
for v in paged_s1 paged_s16 paged_auto; do
  [ -d $B/$v ] || continue
  step "attn-run $v" timeout 300 ../build/bin/attn-run $B/$v --batch=8 \
    --seqlen-q=300 --seqlen-k=1536 > "$LOG/attn-run-$v.log" 2>&1
  grep -E "^ +[0-9]+ |kernels passed" "$LOG/attn-run-$v.log"
done
# FP8 kernels with BLOCK_N other than 128 (V^T rows partly used, tails).
if [ -d $B/fp8_tiles ]; then
  for shape in "--batch=2 --heads-q=4 --heads-kv=2 --seqlen-q=1000 --seqlen-k=1111" \
               "--batch=1 --heads-q=2 --heads-kv=1 --seqlen-q=300 --seqlen-k=1000"; do
    step "attn-run fp8_tiles $shape" timeout 300 ../build/bin/attn-run $B/fp8_tiles \
      $shape > "$LOG/attn-run-fp8-tiles.log" 2>&1
    grep -E "^ +[0-9]+ |kernels passed" "$LOG/attn-run-fp8-tiles.log"
  done
fi
# Persistent kernels (132 CTAs): tiles dealt back and forth in rounds, so
# the 192-row kernels' grids of 216 tiles (one full round and a partial odd
# one), 4 (fewer tiles than CTAs) and 2816 (21 full rounds and a partial
# odd one) must each compute every tile once.
if [ -d $B/persistent ]; then
  for shape in "--batch=3 --heads-q=12 --heads-kv=4 --seqlen-q=1000 --seqlen-k=3001" \
               "--batch=1 --heads-q=2 --heads-kv=1 --seqlen-q=300 --seqlen-k=300" \
               "--batch=2 --heads-q=64 --heads-kv=8 --seqlen-q=4097 --seqlen-k=4097"; do
    step "attn-run persistent $shape" timeout 300 ../build/bin/attn-run $B/persistent \
      $shape > "$LOG/attn-run-persistent.log" 2>&1
    grep -E "^ +[0-9]+ |kernels passed" "$LOG/attn-run-persistent.log"
  done
fi
# attn-run's reference kernels against fp64 (forward and backward), then
# the backward kernels through attn_bwd against the reference backward.
step "attn-reference-check" timeout 120 ../build/bin/attn-reference-check \
  > "$LOG/reference-check.log" 2>&1
grep -E "FAIL|all cases PASS" "$LOG/reference-check.log" | head -20
if [ -d $B/bwd ]; then
  step "attn-run bwd" timeout 300 ../build/bin/attn-run $B/bwd \
    > "$LOG/attn-run-bwd.log" 2>&1
  grep -E "^ +[0-9]+ |kernels passed" "$LOG/attn-run-bwd.log"
fi
step "main job" timeout 200 ../scripts/main.sh > "$LOG/main.log" 2>&1
tail -4 "$LOG/main.log"
if command -v compute-sanitizer >/dev/null; then
  for tool in racecheck memcheck synccheck; do
    step "compute-sanitizer $tool" timeout 240 compute-sanitizer --tool $tool \
      --error-exitcode 9 python3 tma_cases.py --bundle $B/tma --lib $LIB \
      --groups sanity > "$LOG/sanitizer-$tool.log" 2>&1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tma cases" "$LOG/sanitizer-$tool.log" | tail -2
  done
fi
echo "device_check rc=$rc"
exit $rc

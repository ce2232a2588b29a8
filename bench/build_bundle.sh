#!/usr/bin/env bash
# Builds (on the build machine) the GPU bundles the harnesses use:
#   bench: one static kernel per harness shape plus dynamic-length fallbacks
#          (bench/specs.json), for bench/harness.py;
#   tma:   dynamic-length kernels for every D in both dtypes, causal or not
#          (bench/specs_tma.json), for bench/tma_cases.py;
#   tma_fma: the same kernels on the CUDA-core path;
#   fp8:   e4m3 kernels (bench/specs_fp8.json), for bench/fp8_check.py;
#   fp8_tiles: e4m3 kernels with other BLOCK_N (96, 160, 192; one kernel per
#          key, bench/specs_fp8_tiles.json), for attn-run in device_check.sh;
#   fp8_exact: the fp8 kernels without the lazy row max (--fp8-lazy-max=false),
#          for fp8_check.py --exact;
#   persistent: dynamic-length FP8 and bf16 kernels as persistent kernels of
#          132 CTAs (bench/specs_persistent.json), for attn-run on grids whose
#          tile counts leave odd and partial rounds (device_check.sh);
#   decode_s<S>: split-KV decode kernels with S K/V splits (S = 1: unsplit)
#          (bench/specs_decode.json), for bench/decode_check.py;
#   decode_pack_s<S>: the same with GQA packing where the head counts are
#          static (bench/specs_decode_pack.json);
#   decode_pack_auto: those with splits 1, 4, 16 and 32 as variants, the
#          runtime choosing per call;
#   paged_s<S>: paged K/V kernels (pages of 16 and 256 tokens) with S splits
#          (bench/specs_paged.json), for bench/paged_check.py;
#   paged_auto: static paged decode kernels (bench/specs_paged_decode.json)
#          with splits 1, 4, 16 and 32 as variants.
#   varlen, varlen_pack: varlen kernels (bench/specs_varlen.json), the second
#          with GQA packing, for bench/varlen_check.py.
#   varlen_extra: a GQA group of 7 (not packable) and f16 varlen kernels
#          (bench/specs_varlen_extra.json), for varlen_check.py and attn-run;
#   varlen_s3: the varlen kernels with 3 K/V splits (for attn-run);
#   varlen_paged_s<S>: varlen paged K/V kernels (bench/specs_varlen_paged.json)
#          with S = 1, 2 splits, for varlen_check.py's split check and attn-run.
#   varlen_paged_decode: a GQA-packed varlen paged decode kernel
#          (bench/specs_varlen_paged_decode.json) with splits 1, 4, 16 and 32
#          as variants, timed by paged_check.py beside the batched paged one.
#   bwd:   backward kernels (bench/specs_bwd.json), for bench/bwd_check.py
#          (the extra arguments are not passed: they are forward options).
#   fp8_quantized: bf16 kernels and their quantized FP8 twins
#          (bench/specs_fp8_quantized.json), for bench/fp8_quantized_check.py;
#   fp8q_tensor, fp8q_head, fp8q_block_hadamard: the outlier shape quantized with
#          other attn-quantize-fp8 options (its --outliers --config).
# Extra arguments go to attn-compile (e.g. --path=fma, --max-mma-n=64).
# Then, on the GPU machine:
#   python3 bench/harness.py --bundle build/bundles/bench --lib build/lib/libattn_runtime.so
#   python3 bench/tma_cases.py --bundle build/bundles/tma --lib build/lib/libattn_runtime.so
#   python3 bench/fp8_check.py --lib build/lib/libattn_runtime.so --fp8 build/bundles/fp8 --bf16 build/bundles/bench \
#     --exact build/bundles/fp8_exact
#   python3 bench/decode_check.py --lib build/lib/libattn_runtime.so --bundles build/bundles
#   python3 bench/paged_check.py --lib build/lib/libattn_runtime.so --bundles build/bundles
#   python3 bench/varlen_check.py --lib build/lib/libattn_runtime.so --bundles build/bundles
#   python3 bench/bwd_check.py --lib build/lib/libattn_runtime.so --bundle build/bundles/bwd
#   python3 bench/fp8_quantized_check.py --lib build/lib/libattn_runtime.so \
#     --bundle build/bundles/fp8_quantized --outliers \
#     --config tensor=build/bundles/fp8q_tensor --config head=build/bundles/fp8q_head \
#     --config block+hadamard=build/bundles/fp8q_block_hadamard
#   python3 bench/call_timeline.py --lib build/lib/libattn_runtime.so \
#     --bundle build/bundles/fp8_quantized
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ATTN_BUILD_DIR:-build}
OUT=${ATTN_BUNDLE_ROOT:-$BUILD/bundles}
rm -rf "$OUT/bench" "$OUT/tma" "$OUT/tma_fma" "$OUT/fp8" "$OUT/fp8_tiles" "$OUT/fp8_exact" "$OUT/persistent" "$OUT"/fp8_quantized "$OUT"/fp8q_* "$OUT"/decode_s* "$OUT"/decode_pack_* "$OUT"/paged_* "$OUT"/varlen* "$OUT/bwd"
"$BUILD/bin/attn-compile" --spec-file=bench/specs.json -o "$OUT/bench" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_tma.json -o "$OUT/tma" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_tma.json -o "$OUT/tma_fma" --path=fma "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_fp8.json -o "$OUT/fp8" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_fp8_tiles.json -o "$OUT/fp8_tiles" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_fp8.json --fp8-lazy-max=false -o "$OUT/fp8_exact" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_persistent.json --persistent-ctas=132 \
  -o "$OUT/persistent" "$@"
for s in 1 4 16 32 128; do
  "$BUILD/bin/attn-compile" --spec-file=bench/specs_decode.json --splits=$s -o "$OUT/decode_s$s" "$@"
  "$BUILD/bin/attn-compile" --spec-file=bench/specs_decode_pack.json --splits=$s -o "$OUT/decode_pack_s$s" "$@"
done
"$BUILD/bin/attn-compile" --spec-file=bench/specs_decode_pack.json --splits=1 \
  --variant="splits=4" --variant="splits=16" --variant="splits=32" \
  -o "$OUT/decode_pack_auto" "$@"
for s in 1 2 16; do
  "$BUILD/bin/attn-compile" --spec-file=bench/specs_paged.json --splits=$s -o "$OUT/paged_s$s" "$@"
done
"$BUILD/bin/attn-compile" --spec-file=bench/specs_paged_decode.json --splits=1 \
  --variant="splits=4" --variant="splits=16" --variant="splits=32" \
  -o "$OUT/paged_auto" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen.json -o "$OUT/varlen" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen.json --pack-gqa \
  -o "$OUT/varlen_pack" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen_extra.json \
  -o "$OUT/varlen_extra" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen.json --splits=3 \
  -o "$OUT/varlen_s3" "$@"
for s in 1 2; do
  "$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen_paged.json --splits=$s \
    -o "$OUT/varlen_paged_s$s" "$@"
done
"$BUILD/bin/attn-compile" --spec-file=bench/specs_varlen_paged_decode.json --splits=1 \
  --variant="splits=4" --variant="splits=16" --variant="splits=32" \
  -o "$OUT/varlen_paged_decode" "$@"
"$BUILD/bin/attn-compile" --spec-file=bench/specs_bwd.json -o "$OUT/bwd"
# Quantized FP8 (about 10 s); the extra arguments are not passed (e.g.
# --path=fma has no quantized form).
"$BUILD/bin/attn-compile" --spec-file=bench/specs_fp8_quantized.json -o "$OUT/fp8_quantized"
OUTLIER_SHAPE=(--batch=2 --heads-q=16 --seqlen-q=2048 --head-dim=128)
"$BUILD/bin/attn-compile" --quantize-fp8="qk-granularity=tensor" "${OUTLIER_SHAPE[@]}" \
  -o "$OUT/fp8q_tensor"
"$BUILD/bin/attn-compile" --quantize-fp8="qk-granularity=head" "${OUTLIER_SHAPE[@]}" \
  -o "$OUT/fp8q_head"
"$BUILD/bin/attn-compile" --quantize-fp8="qk-granularity=block hadamard=true" \
  "${OUTLIER_SHAPE[@]}" -o "$OUT/fp8q_block_hadamard"

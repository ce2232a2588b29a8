#!/usr/bin/env bash
# Builds every bench bundle (bench/build_bundle.sh) into a scratch folder and
# prints one line per kernel: "<bundle>/<file>.ptx <sha256>". A refactor that
# claims no behaviour change compares this listing before and after:
#   scripts/ptx_digest.sh > before.txt   (on the old commit)
#   scripts/ptx_digest.sh > after.txt && diff before.txt after.txt
# Extra arguments go to bench/build_bundle.sh (and so to attn-compile).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(mktemp -d "${TMPDIR:-/tmp}/attn-ptx.XXXXXX")
trap 'rm -rf "$root"' EXIT
ATTN_BUNDLE_ROOT="$root" bash bench/build_bundle.sh "$@" >"$root.log" 2>&1 ||
  { cat "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
(cd "$root" && find . -name '*.ptx' -print0 | sort -z | xargs -0 sha256sum |
  awk '{ sub("^\\./", "", $2); print $2, $1 }')

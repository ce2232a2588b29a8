#!/usr/bin/env bash
# Installs what attn needs on Debian 12 (apt packages only) and builds it.
# Safe to re-run: installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# g++ brings libasan8 and libubsan1 (via gcc-12's libgcc-12-dev): the
# runtime's sanitizer test (ctest runtime-asan) needs nothing more.
PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libgtest-dev cmake ninja-build ccache g++ python3)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -x /usr/local/cuda/bin/ptxas ] ||
  echo "note: /usr/local/cuda/bin/ptxas not found; PTX assembly checks are skipped"

BUILD=${ATTN_BUILD_DIR:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ >/dev/null
fi
ninja -C "$BUILD" -j"$(nproc)"

#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run every test.
#   scripts/test.sh            the normal build (build/)
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

dir=build
opts=(-DNPUKIT_WERROR=ON)
case "${1:-}" in
  --asan) dir=build-asan; opts+=(-DNPUKIT_ASAN=ON -DNPUKIT_BENCH=OFF) ;;
  --tsan) dir=build-tsan; opts+=(-DNPUKIT_TSAN=ON -DNPUKIT_BENCH=OFF) ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--asan|--tsan]" >&2; exit 2 ;;
esac

scripts/build.sh "$dir" "${opts[@]}"
cd "$dir"
ctest --output-on-failure -j "${NPUKIT_JOBS:-$(nproc)}" --timeout 600

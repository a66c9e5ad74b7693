#!/usr/bin/env bash
# Install what is missing, build everything (reusing the demo's build/), run every test.
#   scripts/test.sh            the normal build (build/)
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
set -euo pipefail
trap 'echo "scripts/test.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
scripts/install-deps.sh

dir=build
opts=()
case "${1:-}" in
  --asan) dir=build-asan; opts+=(-DNPUKIT_ASAN=ON -DNPUKIT_BENCH=OFF) ;;
  --tsan) dir=build-tsan; opts+=(-DNPUKIT_TSAN=ON -DNPUKIT_BENCH=OFF) ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--asan|--tsan]" >&2; exit 4 ;;
esac

echo "== building $dir (incremental)"
scripts/build.sh "$dir" "${opts[@]}"
echo "== running every test in $dir (ctest; one line per test)"
cd "$dir"
ctest --output-on-failure -j "${NPUKIT_JOBS:-$(nproc)}" --timeout 600

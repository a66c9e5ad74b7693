#!/usr/bin/env bash
# Configures (once) and builds npukit incrementally.
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
# BUILD_DIR defaults to build/. NPUKIT_JOBS sets the parallelism (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$dir/CMakeCache.txt" || $# -gt 0 ]]; then
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$dir" -j "${NPUKIT_JOBS:-$(nproc)}"

#!/usr/bin/env bash
# Configures and builds npukit incrementally, with warnings as errors: the one configuration of
# build/ that the demo and the test command share, so neither rebuilds what the other built.
#   scripts/build.sh [BUILD_DIR] [-DOPTION=VALUE...] [TARGET...]
# BUILD_DIR defaults to build/; TARGETs (default: everything) are CMake targets such as npu-smi.
# NPUKIT_JOBS sets the parallelism (default: number of cores). Progress: a line per tenth of the
# steps; the compiler's messages in full.
set -euo pipefail
trap 'echo "scripts/build.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
dir=build
if [[ $# -gt 0 && $1 != -* ]]; then dir=$1; shift; fi
options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUKIT_WERROR=ON)
targets=()
names=()
for arg in "$@"; do
  if [[ $arg == -D* ]]; then options+=("$arg"); else targets+=(--target "$arg"); names+=("$arg"); fi
done
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$dir" -G Ninja "${options[@]}" >/dev/null
else
  cmake -S . -B "$dir" "${options[@]}" >/dev/null
fi
start=$SECONDS
NINJA_STATUS="[%f/%t] " cmake --build "$dir" -j "${NPUKIT_JOBS:-$(nproc)}" "${targets[@]}" 2>&1 |
  awk -v dir="$dir" '
    /^\[[0-9]+\/[0-9]+\] / {
      split(substr($1, 2, length($1) - 2), n, "/")
      tenth = int(10 * n[1] / n[2])
      if (tenth > shown) { printf "  building %s: %d of %d steps\n", dir, n[1], n[2]; shown = tenth; fflush() }
      next
    }
    { print; fflush() }'
echo "  built ${names[*]:-everything} in $dir/ in $((SECONDS - start)) s"

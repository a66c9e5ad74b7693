#!/usr/bin/env bash
# The main job: install what is missing, build, then
#   start an emulated 8x Ascend910B2 node (npu-emud),
#   run ERNIE-3.0 pretraining on it (npu-run, paced: tens of seconds) under the profiler,
#   show `npu-smi info` while it runs, print the run's summary and the profile report,
#   stop the node.
# Options: --steps N (default 60), --spec NODE_SPEC (default 8x910B2).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=60
spec=8x910B2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --spec) spec=$2; shift 2 ;;
    *) echo "usage: scripts/demo.sh [--steps N] [--spec NODE_SPEC]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
echo "== building (incremental; the first build takes a few minutes)"
scripts/build.sh build >/dev/null

B=build
export NPU_NODE="demo-$$"
out="out/demo"
rm -rf "$out" && mkdir -p "$out"
"$B/emulator/npu-emud" start --node-name "$NPU_NODE" --spec "$spec"
trap '"$B/emulator/npu-emud" stop --node-name "$NPU_NODE" >/dev/null 2>&1 || true' EXIT

echo "== npu-run ernie3-train --steps $steps (paced: virtual time follows wall time)"
if [[ -x "$B/profiler/npu-prof" ]]; then
  "$B/profiler/npu-prof" record -o "$out/profile" -- "$B/workloads/npu-run" ernie3-train --steps "$steps" \
    > "$out/run.log" 2>&1 &
else
  "$B/workloads/npu-run" ernie3-train --steps "$steps" > "$out/run.log" 2>&1 &
fi
run=$!
sleep 6
echo "== npu-smi info (while it trains)"
"$B/smi/npu-smi" info
wait "$run"
echo "== the run (every step is in $out/run.log)"
grep -v '^step' "$out/run.log"
if [[ -x "$B/profiler/npu-prof" ]]; then
  echo "== npu-prof report (details: npu-prof report $out/profile --full)"
  "$B/profiler/npu-prof" report "$out/profile"
fi

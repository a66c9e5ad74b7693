#!/usr/bin/env bash
# The main job: install what is missing, build what the demo runs, then
#   start an emulated 8x Ascend910B2 node (npu-emud),
#   run ERNIE-3.0 pretraining on it (npu-run, paced: tens of seconds) under the profiler,
#   show `npu-smi info` while it runs, print the run's summary and the profile report,
#   stop the node.
# Options: --steps N (default 60), --spec NODE_SPEC (default 8x910B2), --workload W (default
# ernie3-train; npu-run --list names the others), --out DIR (default out/demo), --built DIR (use
# the programs already built in DIR: no install, no build; the tests use it).
set -euo pipefail
trap 'echo "scripts/demo.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
steps=60
spec=8x910B2
workload=ernie3-train
out=out/demo
built=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --spec) spec=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --built) built=$2; shift 2 ;;
    *) echo "usage: scripts/demo.sh [--steps N] [--spec NODE_SPEC] [--workload W] [--out DIR] [--built DIR]" >&2; exit 4 ;;
  esac
done

B=${built:-build}
if [[ -z $built ]]; then
  scripts/install-deps.sh
  echo "== building what the demo runs (the first build takes a few minutes; scripts/test.sh reuses it)"
  scripts/build.sh build npu-emud npu-run npu-smi npu-prof
fi

export NPU_NODE="demo-$$"
rm -rf "$out" && mkdir -p "$out"
"$B/emulator/npu-emud" start --node-name "$NPU_NODE" --spec "$spec"
trap '"$B/emulator/npu-emud" stop --node-name "$NPU_NODE" >/dev/null 2>&1 || true' EXIT

echo "== npu-run $workload --steps $steps on $spec (paced: virtual time follows wall time)"
"$B/profiler/npu-prof" record -o "$out/profile" -- "$B/workloads/npu-run" "$workload" --steps "$steps" \
  > "$out/run.log" 2>&1 &
run=$!
for _ in $(seq 60); do  # until the job is a few steps in (or has ended)
  kill -0 "$run" 2>/dev/null || break
  [[ $(grep -c '^step' "$out/run.log" || true) -ge 3 ]] && break
  sleep 0.2
done
if kill -0 "$run" 2>/dev/null; then
  echo "== npu-smi info (while it trains)"
  "$B/smi/npu-smi" info
fi
status=0
wait "$run" || status=$?
if [[ $status -ne 0 ]]; then
  # The job failed: say why (the runtime's own line) and what to try, never exit silently.
  echo "scripts/demo.sh: npu-run $workload on $spec failed (npu-prof exit $status); from $out/run.log:" >&2
  grep -E '^npu-(run|prof):' "$out/run.log" | grep -v 'recorded ' | head -5 >&2 || tail -5 "$out/run.log" >&2
  if grep -q 'acl_rt_malloc failed' "$out/run.log"; then
    echo "hint: $workload does not fit in the HBM of each $spec device; try --spec 8x910B2 (64 GiB per device)" \
         "or a smaller job: scripts/demo.sh --spec $spec --workload resnet50-train" >&2
  else
    echo "hint: run it alone to see every line: $B/workloads/npu-run $workload --standalone --spec $spec --steps 2" >&2
  fi
  exit 1
fi
echo "== the run (every step is in $out/run.log)"
grep -v '^step' "$out/run.log"
echo "== npu-prof report (details: npu-prof report $out/profile --full)"
"$B/profiler/npu-prof" report "$out/profile"

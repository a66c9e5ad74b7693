#!/usr/bin/env bash
# What-if at scale: a data-parallel training workload in fast mode on 8, 64 and 1,024 NPUs
# (1, 8 and 128 hosts of 8x910B2 joined by RoCE), each run a fresh in-process cluster
# (`npu-run W --standalone --fast --spec Hx8x910B2 --devices 0..N-1`). Prints per size the
# emulated step time, the throughput per NPU, the scaling efficiency against 8 NPUs (per-NPU
# throughput over the 8-NPU run's), the wall time of the whole run and the peak memory per NPU,
# with the budgets of issue 22 beside them: 1,024 NPUs in < 10 s of wall time.
#   bench/cluster_scale.sh [--build DIR] [--workload W] [--steps N]
# Exit 0 when every run completed (budgets are printed, not judged: the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build workload=resnet50-train steps=3
while (( $# )); do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "usage: bench/cluster_scale.sh [--build DIR] [--workload W] [--steps N]" >&2; exit 2 ;;
  esac
done
RUN=$BUILD/workloads/npu-run
[[ -x $RUN ]] || { echo "cluster_scale.sh: $RUN is not built (cmake --build $BUILD --target npu-run)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "cluster_scale.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }

echo "# $workload, $steps fast steps per run; load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-7s %-12s %10s %13s %11s %9s %13s  %s\n' npus spec step_ms per_npu/s efficiency wall_s MiB/npu budget
base=""
for hosts in 1 8 128; do
  npus=$((hosts * 8))
  out=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$out.time" "$RUN" "$workload" --standalone --fast --spec "${hosts}x8x910B2" \
    --devices "$(seq -s, 0 $((npus - 1)))" --steps "$steps" > "$out" 2>&1 || { cat "$out" >&2; exit 1; }
  step_ms=$(sed -n 's/^  step time *\([0-9.]*\) ms.*/\1/p' "$out")
  per_npu=$(sed -n 's/.*(\([0-9.]*\) [^ ]* per device).*/\1/p' "$out")
  read -r wall kb < "$out.time"
  base=${base:-$per_npu}
  efficiency=$(awk -v a="$per_npu" -v b="$base" 'BEGIN { printf "%.1f%%", 100 * a / b }')
  mib=$(awk -v k="$kb" -v n="$npus" 'BEGIN { printf "%.2f", k / 1024 / n }')
  budget=""
  (( npus == 1024 )) && budget=$(awk -v w="$wall" 'BEGIN { print (w < 10 ? "wall < 10 s: OK" : "wall < 10 s: OVER BUDGET") }')
  printf '%-7s %-12s %10s %13s %11s %9s %13s  %s\n' "$npus" "${hosts}x8x910B2" "$step_ms" "$per_npu" "$efficiency" "$wall" "$mib" "$budget"
  rm -f "$out" "$out.time"
done

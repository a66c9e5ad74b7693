#!/usr/bin/env bash
# Prints the calibration table (workload, emulated, published, ratio) from one run of the
# built-in workloads in fast standalone mode. The published figures and their sources are in
# bench/RESULTS.md (calibration). Usage: scripts/calibration.sh [BUILD_DIR]
set -euo pipefail
trap 'echo "scripts/calibration.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
R=${1:-build}/workloads/npu-run

# throughput of one run: npu-run ... | "  throughput  X unit"
tp() { "$R" "$@" --standalone --fast --steps 6 | awk '/^  throughput/ {print $2; exit}'; }
step() { "$R" "$@" --standalone --fast --steps 6 | awk '/^  step time/ {print $3; exit}'; }

row() {  # label emulated published unit
  awk -v l="$1" -v e="$2" -v p="$3" -v u="$4" 'BEGIN {
    if (p == "-") printf "| %s | %.1f %s | - | - |\n", l, e, u;
    else printf "| %s | %.1f %s | %.1f %s | %.2f |\n", l, e, u, p, u, e / p }'
}

r1=$(tp resnet50-train --spec 8x910 --devices 0)
r8=$(tp resnet50-train --spec 8x910)
b1=$(tp bert-large-train --spec 8x910 --devices 0)
b8=$(tp bert-large-train --spec 8x910)
rb=$(tp resnet50-train --spec 8x910B2)
e=$(step ernie3-train --spec 8x910B2)
echo "| workload | emulated | published | ratio |"
echo "|---|---|---|---|"
row "ResNet-50 train, bs 256, 1x Ascend910" "$r1" 2115 "img/s"
row "ResNet-50 train, bs 256, 8x Ascend910" "$r8" 16600 "img/s"
row "BERT-Large seq 128, bs 96, 1x Ascend910" "$b1" 269 "seq/s"
row "BERT-Large seq 128, bs 96, 8x Ascend910" "$b8" 2069 "seq/s"
awk -v a="$r8" -v b="$r1" 'BEGIN { printf "| ResNet-50 scaling 1 -> 8 (efficiency) | %.3f | 0.98 | %.2f |\n", a / (8 * b), a / (8 * b) / 0.98 }'
awk -v a="$b8" -v b="$b1" 'BEGIN { printf "| BERT-Large scaling 1 -> 8 (efficiency) | %.3f | 0.96 | %.2f |\n", a / (8 * b), a / (8 * b) / 0.96 }'
row "ResNet-50 train, bs 256, 8x Ascend910B2" "$rb" - "img/s"
awk -v a="$rb" -v b="$r8" 'BEGIN { printf "| ResNet-50 8x910B2 / 8x910 | %.2f | - | - |\n", a / b }'
row "ERNIE-3.0 (24 x 1024, seq 512) step, 8x910B2 dp4 x tp2" "$e" 2100 "ms"

#!/usr/bin/env bash
# The emulator's validation table (docs/validation.md): every calibration point run on the
# emulator beside its published figure, the error of each, and the mean and max |error| per chip,
# per role and overall. Builds what it runs. Usage: scripts/validate.sh [BUILD_DIR]
set -euo pipefail
trap 'echo "scripts/validate.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
dir=${1:-build}
scripts/build.sh "$dir" npu-run allreduce_sweep >&2
python3 scripts/validate.py "$dir"

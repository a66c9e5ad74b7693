#!/usr/bin/env bash
# The main job: install what is missing, build, run the demo on an emulated 8x Ascend910B2 node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build >/dev/null
exec build/emulator/npu-emu-demo "$@"

#!/usr/bin/env bash
# The engine's cost per simulated task in instructions, a figure the machine's load does not move
# (emulator_bench's tasks/s does: this machine is shared). Runs build/bench/emulator_bench under
# callgrind for a fixed number of iterations and counts the instructions of the simulated work
# only (the host's kernel launches and the scheduler's run; not the node's creation), then divides
# by the tasks the engine completed.
#   bench/engine_instructions.sh [--build DIR] [--bench PATH]
# FILTER=<benchmark regex> picks the run (default the 8-NPU node; the 1,024-NPU cluster:
# FILTER='BM_FastShapeOnlyTasks/cluster_1024/10').
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build bench=""
while (( $# )); do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    *) echo "usage: bench/engine_instructions.sh [--build DIR] [--bench PATH]" >&2; exit 2 ;;
  esac
done
bench=${bench:-$BUILD/bench/emulator_bench}
[[ -x $bench ]] || { echo "engine_instructions.sh: $bench is not built (cmake --build $BUILD --target emulator_bench)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "engine_instructions.sh: needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
  --toggle-collect='npukit::emu::Scheduler::run_while(std::function<bool ()> const&)' \
  --toggle-collect='npukit::emu::Scheduler::run_until_idle()' \
  --toggle-collect='npukit::emu::Context::enqueue(unsigned int, npukit::emu::PreparedKernel const&)' \
  --toggle-collect='npukit::emu::Context::record_event(unsigned int, unsigned int)' \
  --toggle-collect='npukit::emu::Context::wait_event(unsigned int, unsigned int)' \
  "$bench" --benchmark_filter="${FILTER:-BM_FastShapeOnlyTasks(/node_8)?/200}" --benchmark_min_time=1 >/dev/null 2>"$out/log"
instructions=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/log")
# Tasks: the calls of Engine::on_complete (one per finished kernel, copy or collective) that
# callgrind saw while collecting; the bench's own count misses its unreported warm-up iteration.
tasks=$(python3 - "$out/cg" <<'PY'
import re, sys
names, target, calls = {}, None, 0
for line in open(sys.argv[1]):
    m = re.match(r'(c?)fn=\((\d+)\)(?: (.*))?', line)  # a name is given once, then its id
    if m:
        if m.group(3): names[m.group(2)] = m.group(3).strip()
        if m.group(1): target = names.get(m.group(2), '')
        continue
    m = re.match(r'calls=(\d+)', line)
    if m and target.startswith('npukit::emu::Engine::on_complete('):
        calls += int(m.group(1))
print(calls)
PY
)
[[ -n $instructions && $tasks -gt 0 ]] || { echo "engine_instructions.sh: no figure (see valgrind's log above)" >&2; cat "$out/log" >&2; exit 1; }
echo "engine: $instructions instructions for $tasks simulated tasks: $((instructions / tasks)) instructions per task"

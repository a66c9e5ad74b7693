#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz) for SECONDS each, or the targets named.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      default 60 s; targets: workload program control
#                                              segment profile top_recording cli_args
#   FUZZ_JOBS=2 scripts/fuzz.sh 600            two targets at a time
# Installs clang and its fuzzer runtime when missing (as root), builds build-fuzz/ (clang,
# ASan+UBSan, -DNPUKIT_FUZZ=ON), then runs each target from its checked-in seeds
# (tests/fuzz/corpus/<target>) plus a working corpus kept in build-fuzz/corpus/<target>.
# A crash, hang (-timeout, 25 s), leak or out-of-memory input lands in
# build-fuzz/findings/<target>/; copy it into tests/fuzz/corpus/<target>/ with the fix, and the
# normal suite's FuzzCorpus.<target> test replays it for ever after.
# Prints one line per target (executions, execs/s, corpus size, findings); exit 1 when any
# target found something, 2 on bad usage.
set -euo pipefail
trap 'echo "scripts/fuzz.sh: failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]  (SECONDS: a whole number >= 1, got '$seconds')" >&2
  exit 4
fi
shift || true
all_targets=(workload program control segment profile top_recording cli_args)
targets=("${@:-${all_targets[@]}}")
for t in "${targets[@]}"; do
  if [[ ! " ${all_targets[*]} " =~ " $t " ]]; then
    echo "scripts/fuzz.sh: no fuzz target '$t' (targets: ${all_targets[*]})" >&2
    exit 4
  fi
done

install_clang() {
  local missing=()
  command -v clang++ >/dev/null || missing+=(clang)
  compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || missing+=(libclang-rt-dev)
  (( ${#missing[@]} == 0 )) && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "scripts/fuzz.sh: missing Debian packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

scripts/install-deps.sh
install_clang
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNPUKIT_FUZZ=ON -DNPUKIT_TESTS=OFF -DNPUKIT_BENCH=OFF >/dev/null
cmake --build build-fuzz --target fuzz_all -j "${NPUKIT_JOBS:-$(nproc)}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One target: its own log, its findings directory; prints its summary line.
fuzz_one() {
  local t=$1 work=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1 log=build-fuzz/fuzz-$1.log
  mkdir -p "$work" "$findings"
  local since=build-fuzz/.fuzz-$1-start
  touch "$since"  # findings of this run only: older ones stay in the directory
  local rc=0
  build-fuzz/fuzz/fuzz_"$t" "$work" "tests/fuzz/corpus/$t" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=4096 -max_len=65536 -close_fd_mask=1 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || rc=$?
  local execs speed found
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  found=$(find "$findings" -type f -newer "$since" | wc -l)
  printf '%-14s %10s execs %7s/s  corpus %5s  findings %s%s\n' "$t" "${execs:-0}" "${speed:-0}" \
    "$(find "$work" -type f | wc -l)" "$found" "$( ((rc != 0)) && echo "  (exit $rc, see $log)")"
  (( rc == 0 && found == 0 ))
}

status=0
jobs=${FUZZ_JOBS:-1}
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status

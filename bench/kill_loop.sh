#!/usr/bin/env bash
# Kill loop: SIGKILL each kind of npukit process at a random moment, --rounds times each, and
# check after every round that nothing the kill reached is left broken.
#
# Scenarios, each round in turn:
#   a  the daemon, while `npu-prof record -- npu-run ernie3-train` runs on it;
#   b  the recorder (`npu-prof record`), while its npu-run runs;
#   c  the readers, mid-read: an `npu-smi info watch -d 0.01`, a one-shot `npu-smi info`,
#      npu-top (curses in tmux, 20 Hz) and an npu-exporter being scraped back to back.
# Checks (docs/reliability.md is the contract):
#   profile      every rank's database passes `PRAGMA integrity_check` (a, b);
#   report       `npu-prof report` exits 0 and reports: b says `Recording: INCOMPLETE`; a (the
#                recorder saw the node go) says INCOMPLETE whenever the kill interrupted the job
#                (its command's exit is non-zero); a job that had ended before the kill may read
#                complete;
#   restart      `npu-emud start` on the same name takes over the stale segment, and
#                `npu-smi info` then exits 0 without a stale warning (a);
#   publishing   the daemon's heartbeat advances 3 times within 1 s right after the kill: the
#                writer never waits on a dead reader (b, c);
#   no orphans   no npu-run of the round is left (the daemon's death ends it; a recorder's death
#                reaches it through PR_SET_PDEATHSIG) and no job stays running (b);
#   readers      after the kill a fresh `npu-smi info` answers live data (c);
#   leftovers    at the end, after `npu-emud stop`: no segment, socket or process of ours.
# Prints a table of checks x failures; exit 0 when no check failed, 1 otherwise, 2 on bad usage.
#
#   bench/kill_loop.sh [--rounds N] [--build DIR]
set -eEuo pipefail
trap 'echo "kill_loop.sh: stopped by a failing command at line $LINENO: $BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
BUILD=$here/../build
rounds=100
usage() { echo "usage: bench/kill_loop.sh [--rounds N] [--build DIR]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=${2:-}; shift 2 || usage ;;
    --build) BUILD=${2:-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || usage

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_tools
work=$(mktemp -d /tmp/kill-loop-XXXXXX)
BENCH_TMPDIRS+=("$work")
node=kl-$$
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

declare -A runs=() fails=()
order=()
failures_log=$work/failures

# check KEY OK [DETAIL]: counts one run of check KEY ("scenario: check"); OK is 0 for a pass,
# anything else a failure, logged with the round and DETAIL (default: OK itself, so helpers can
# echo 0 or what went wrong).
check() {
  local key=$1 ok=$2 detail=${3:-$2}
  [[ -v "runs[$key]" ]] || { order+=("$key"); runs[$key]=0; fails[$key]=0; }
  runs[$key]=$((runs[$key] + 1))
  if [[ $ok != 0 ]]; then
    fails[$key]=$((fails[$key] + 1))
    echo "round $round, $key: $detail" >>"$failures_log"
  fi
}

# Echoes 0 when every database under $1 passes integrity_check, else the first bad one.
profiles_intact() {
  local db out bad=0
  while IFS= read -r db; do
    out=$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1) || true
    [[ $out == ok ]] || { echo "$db: $out"; bad=1; }
  done < <(find "$1" -name 'msprof_*.db')
  ((bad == 0)) && echo 0
  return 0
}

# Why the node is not up: `npu-emud status` and the tail of the daemon's log.
daemon_gone() {
  echo "npu-emud status: $("$EMUD" status --node-name "$node" 2>&1 | head -2 | tr '\n' ' ')"
  echo "daemon log: $(tail -5 "${XDG_RUNTIME_DIR:-/tmp}/npukit-$node.log" 2>/dev/null | tr '\n' ' ')"
}

# Echoes the number of rank databases under $1.
profile_count() { { find "$1" -name 'msprof_*.db' 2>/dev/null || true; } | wc -l; }

# Writes `npu-prof report $1` to $work/report and echoes its exit code.
report_of() {
  local rc=0
  "$PROF" report "$1" >"$work/report" 2>&1 || rc=$?
  echo "$rc"
}

# Echoes 0 when the heartbeat of $node advances 3 times within 1 s, else the probe's line.
publishing() {
  local out rc=0
  out=$("$PROBE" --node "$node" --advances 3 --within 1000 2>&1) || rc=$?
  if ((rc == 0)); then echo 0; else echo "not publishing: $out"; fi
}

# Echoes 0 when a one-shot npu-smi info answers live data (exit 0, no stale warning).
smi_live() {
  local out rc=0
  out=$("$SMI" info --node-name "$node" 2>&1) || rc=$?
  if ((rc == 0)) && [[ $out != *stale* && $out == *910B2* ]]; then echo 0; else echo "npu-smi info exit $rc: $(echo "$out" | grep -i -m1 -E 'stale|error|npu-smi:')"; fi
}

# Waits up to $1 seconds for no npu-run of $node to be left; echoes 0 or the survivors.
no_npu_run_within() {
  local t left
  for ((t = 0; t < $1 * 10; t++)); do
    left=$(pgrep -f -- "npu-run .*--node-name $node( |\$)" || true)
    [[ -z $left ]] && { echo 0; return; }
    sleep 0.1
  done
  echo "npu-run still alive: $left"
}

# Waits up to $1 seconds for the node to have no running job; echoes 0 or its status line.
no_running_job_within() {
  local t st
  for ((t = 0; t < $1 * 10; t++)); do
    st=$("$EMUD" status --node-name "$node" 2>&1 | head -1 || true)
    [[ $st == *" 0 job(s) running"* ]] && { echo 0; return; }
    sleep 0.1
  done
  echo "still running: $st"
}

# Starts `npu-prof record -- npu-run ernie3-train` (6 steps, about 2.5 s) on $node in the
# background; sets RECORDER.
start_recording() {
  rm -rf "$work/prof"
  "$PROF" record -o "$work/prof" --node-name "$node" -- "$RUN" ernie3-train --steps 6 --node-name "$node" \
    >"$work/record.log" 2>&1 &
  RECORDER=$!
}

# (a) SIGKILL the daemon mid-recording, then restart the node on the same name.
round_daemon() {
  local daemon rc
  daemon=$(node_pid "$node")
  check "a daemon: node up at round start" "$([[ -n $daemon ]] && echo 0 || daemon_gone)"
  if [[ -z $daemon ]]; then
    "$EMUD" start --node-name "$node" --seed 7 >/dev/null 2>&1 || true
    return
  fi
  start_recording
  sleep_ms_between 300 1800
  kill -KILL "$daemon"
  rc=0
  timeout 30 tail --pid="$RECORDER" -f /dev/null || rc=$?
  check "a daemon: recorder ends" "$rc" "npu-prof record still running 30 s after the daemon died"
  wait "$RECORDER" 2>/dev/null || true
  check "a daemon: no npu-run left" "$(no_npu_run_within 5)"
  if (($(profile_count "$work/prof") > 0)); then
    check "a daemon: profile integrity ok" "$(profiles_intact "$work/prof")"
    rc=$(report_of "$work/prof")
    # A job the kill interrupted (its command exited non-zero) must read INCOMPLETE (the recorder
    # saw the node go away); a job that had ended before the kill may read complete.
    local flagged=0
    if grep -qE '^Job: .*\(exit [1-9][0-9]*\)' "$work/report"; then
      grep -qE 'Recording: +INCOMPLETE' "$work/report" || flagged=1
    fi
    check "a daemon: report exit 0" "$rc" "npu-prof report exit $rc: $(head -2 "$work/report")"
    check "a daemon: report flags interruption" "$flagged" "$(grep -m2 -E '^(Recording|Job):' "$work/report")"
  else
    check "a daemon: killed before a profile" 0
  fi
  rc=0
  "$EMUD" start --node-name "$node" --seed 7 >"$work/start.log" 2>&1 || rc=$?
  check "a daemon: restart on same name" "$rc" "npu-emud start exit $rc: $(cat "$work/start.log")"
  check "a daemon: npu-smi live after restart" "$(smi_live)"
}

# (b) SIGKILL the recorder mid-run.
round_recorder() {
  start_recording
  sleep_ms_between 300 1800
  kill_hard "$RECORDER"
  check "b recorder: daemon keeps publishing" "$(publishing)"
  check "b recorder: no npu-run left" "$(no_npu_run_within 5)"
  check "b recorder: no job left running" "$(no_running_job_within 10)"
  if (($(profile_count "$work/prof") > 0)); then
    check "b recorder: profile integrity ok" "$(profiles_intact "$work/prof")"
    local rc; rc=$(report_of "$work/prof")
    check "b recorder: report exit 0" "$rc" "npu-prof report exit $rc: $(head -2 "$work/report")"
    local incomplete=0
    grep -qE 'Recording: +INCOMPLETE' "$work/report" || incomplete=1
    check "b recorder: report says INCOMPLETE" "$incomplete" "$(grep -m1 'Recording' "$work/report")"
  else
    check "b recorder: killed before a profile" 0
  fi
}

# (c) SIGKILL every kind of reader mid-read, with a workload running.
round_readers() {
  "$RUN" ernie3-train --steps 4 --node-name "$node" >/dev/null 2>&1 &
  local run=$! watch smi top_server top_pid scraper
  "$SMI" info watch -d 0.01 --node-name "$node" >/dev/null 2>&1 &
  watch=$!
  top_server=$(top_start "$node" 0.05)
  exporter_start "$node" || check "c readers: exporter starts" 1 "npu-exporter did not start"
  (while :; do curl -s --max-time 2 "$EXPORTER_URL" >/dev/null || true; done) &
  scraper=$!
  (while :; do "$SMI" info --node-name "$node" >/dev/null 2>&1 || true; done) &
  smi=$!
  sleep_ms_between 200 1200
  top_pid=$(tmux_pane_pid "$top_server")
  # Mid-read: the one-shot npu-smi of the moment (if one is running), then the long-lived ones.
  local one_shot; one_shot=$(pgrep -P "$smi" || true)
  kill -STOP "$smi" 2>/dev/null || true
  for p in $one_shot "$watch" "$top_pid" "$EXPORTER_PID"; do [[ -n $p ]] && kill -KILL "$p" 2>/dev/null || true; done
  kill_hard "$smi"
  kill_hard "$scraper"
  check "c readers: daemon keeps publishing" "$(publishing)"
  check "c readers: npu-smi live after" "$(smi_live)"
  wait "$watch" "$EXPORTER_PID" 2>/dev/null || true
  tmux_stop "$top_server"
  local rc=0
  wait "$run" || rc=$?
  check "c readers: workload unaffected" "$rc" "npu-run exit $rc"
}

# After `npu-emud stop`: nothing of ours in /dev/shm, no socket, no process, no tmux socket.
final_leftovers() {
  "$EMUD" stop --node-name "$node" >/dev/null 2>&1 || true
  sleep 0.5
  local segs socket procs
  segs=$(find /dev/shm -maxdepth 1 -name "npukit-$node*" | wc -l)
  socket=$([[ -e $(node_socket "$node") ]] && echo 1 || echo 0)
  procs=$(node_processes "$node" | wc -l)
  round=end
  check "end: no segment left" "$segs" "$segs segment(s) in /dev/shm"
  check "end: no socket left" "$socket" "$(node_socket "$node") exists"
  check "end: no process left" "$procs" "$(node_processes "$node" | xargs -r ps -o pid=,args= -p)"
  local sockets; sockets=$(find "$(dirname "$(tmux_socket x)")" -maxdepth 1 -name "bench-top-$node-*" 2>/dev/null | wc -l)
  check "end: no tmux socket left" "$sockets" "$sockets tmux socket(s) of npu-top servers left"
}

print_summary() {
  printf '\n%-44s %7s %9s\n' "check" "rounds" "failures"
  local key total=0
  for key in "${order[@]}"; do
    printf '%-44s %7d %9d\n' "$key" "${runs[$key]}" "${fails[$key]}"
    total=$((total + fails[$key]))
  done
  if ((total > 0)); then
    echo
    echo "first failures:"
    head -20 "$failures_log"
  fi
  echo "kill loop: $rounds round(s) of a, b, c; $total failure(s): $( ((total == 0)) && echo PASS || echo FAIL)"
  return $((total > 0))
}

main() {
  echo "kill loop: node $node, $rounds round(s), binaries in $BUILD"
  node_start "$node"
  local start=$SECONDS
  for ((round = 1; round <= rounds; round++)); do
    round_daemon
    round_recorder
    round_readers
    if ((round % 10 == 0)); then echo "round $round/$rounds ($((SECONDS - start)) s)"; fi
  done
  final_leftovers
  print_summary
}

main

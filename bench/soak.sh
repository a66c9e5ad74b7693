#!/usr/bin/env bash
# Soak: a node under steady, varied use for --duration seconds, watching its long-lived processes
# for leaks.
#
# Load: workloads back to back on the node (npu-run ...; every other run under
# `npu-prof record`, a lossless reader that registers and leaves), a fault injected on a random
# NPU or link and cleared again every ~15 s, an npu-exporter scraped every second, npu-top
# (curses, 200x60 tmux pane, 1 Hz).
# Samples, every --interval seconds, of each long-lived process (the daemon, the exporter,
# npu-top): VmRSS, open fds, threads, /dev/shm mappings; and the node's segments in /dev/shm.
# Verdict, after a warm-up (--warmup, default 20% of the run): per process,
#   VmRSS: mean of the last window vs mean of the first post-warm-up window (each 10% of the run,
#          at least 3 samples) may grow by at most 1% or 512 kB, whichever is more (a heap grows
#          in steps of the allocator's top pad, 128 kB and more: a 12 MB npu-top crossed 1% with
#          one such step in a 2-minute soak, 11580 -> 11900 kB, which a leak would keep repeating);
#   fds, threads, shm maps, node segments (small integers): the last window's median may not
#          exceed the warm-up maximum (a leak lifts the whole window; a connection open at the
#          moment of one sample does not), and the post-warm-up maximum is printed beside it;
#   every process alive with the same pid to the end; every scrape answered; no workload ended
#   by a crash or a lost node (exit codes other than 0 ok, 1 job failed (a fault), 7 npu-prof
#   record: the recorded command failed).
# Exit 0 when all hold, 1 otherwise, 2 on bad usage.
#
# The daemon keeps its last 64 finished jobs (with their programs: ~10 MB each for ernie3-train),
# so its VmRSS climbs until 64 jobs have finished; the warm-up must cover that (about 100 s at
# --speed 1, 20 s at --speed 5; --speed is the node's, virtual seconds per wall second).
#
#   bench/soak.sh --duration SECONDS [--interval S] [--warmup S] [--speed X] [--csv FILE] [--build DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BUILD=$here/../build
duration=
interval=5
warmup=
csv=
speed=1
usage() { echo "usage: bench/soak.sh --duration SECONDS [--interval S] [--warmup S] [--speed X] [--csv FILE] [--build DIR]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration=${2:-}; shift 2 || usage ;;
    --interval) interval=${2:-}; shift 2 || usage ;;
    --warmup) warmup=${2:-}; shift 2 || usage ;;
    --csv) csv=${2:-}; shift 2 || usage ;;
    --speed) speed=${2:-}; shift 2 || usage ;;
    --build) BUILD=${2:-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
[[ $duration =~ ^[0-9]+$ && $duration -ge 30 && $interval =~ ^[0-9]+$ && $interval -ge 1 ]] || usage
[[ -z $warmup ]] && warmup=$((duration / 5))
[[ $warmup =~ ^[0-9]+$ && $warmup -lt $duration && $speed =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_tools
work=$(mktemp -d /tmp/soak-XXXXXX)
BENCH_TMPDIRS+=("$work")
[[ -z $csv ]] && csv=$work/samples.csv  # removed at exit: pass --csv to keep the samples
node=soak-$$
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# Runs workloads back to back until $1 (epoch seconds); appends each run's exit code to
# $work/runs. Every other run is recorded; the profile is deleted after its report is checked.
workload_loop() {
  local until=$1 i=0 rc
  local workloads=("ernie3-train --steps 4" "resnet50-train --steps 6" "bert-large-train --steps 6")
  while (($(date +%s) < until)); do
    local w=${workloads[$((i % ${#workloads[@]}))]}
    rc=0
    if ((i % 2 == 0)); then
      # shellcheck disable=SC2086
      "$PROF" record -o "$work/prof" --node-name "$node" -- "$RUN" $w --node-name "$node" \
        >"$work/last-run.log" 2>&1 || rc=$?
      if [[ $rc == 0 || $rc == 7 ]] && ! "$PROF" report "$work/prof" >/dev/null 2>&1; then rc=report-failed; fi
      rm -rf "$work/prof"
    else
      # shellcheck disable=SC2086
      "$RUN" $w --node-name "$node" >"$work/last-run.log" 2>&1 || rc=$?
    fi
    echo "$rc" >>"$work/runs"
    [[ $rc =~ ^(0|1|7)$ ]] || cp "$work/last-run.log" "$work/failed-run-$i.log"
    i=$((i + 1))
  done
}

# Injects a random fault every ~15 s and clears it ~7 s later, until $1. Appends failed control
# calls to $work/fault-errors.
fault_loop() {
  local until=$1 faults=(over-temperature ecc-storm aicore-degraded link-degraded)
  while (($(date +%s) + 15 < until)); do
    sleep 8
    local target
    if ((RANDOM % 4 == 0)); then
      local a=$((RANDOM % 4))
      target=(--link "$a-$((a + 4))")
      "$EMUD" inject --node-name "$node" "${target[@]}" --fault link-flapping >/dev/null 2>>"$work/fault-errors" ||
        echo "inject ${target[*]} failed" >>"$work/fault-errors"
    else
      target=(-i "$((RANDOM % 8))")
      "$EMUD" inject --node-name "$node" "${target[@]}" --fault "${faults[$((RANDOM % ${#faults[@]}))]}" >/dev/null \
        2>>"$work/fault-errors" || echo "inject ${target[*]} failed" >>"$work/fault-errors"
    fi
    sleep 7
    "$EMUD" clear --node-name "$node" "${target[@]}" >/dev/null 2>>"$work/fault-errors" ||
      echo "clear ${target[*]} failed" >>"$work/fault-errors"
  done
}

# Scrapes the exporter once a second until $1; appends a line per failed scrape to $work/scrape-errors.
scrape_loop() {
  local until=$1 n=0
  while (($(date +%s) < until)); do
    scrape "$EXPORTER_URL" || echo "scrape $n failed" >>"$work/scrape-errors"
    n=$((n + 1))
    sleep 1
  done
  echo "$n" >"$work/scrapes"
}

# Appends one CSV row per long-lived process: t_s,role,pid,rss_kb,fds,threads,shm_maps,node_segments.
sample() {
  local t=$1 role pid usage maps segs
  segs=$(find /dev/shm -maxdepth 1 -name "npukit-$node*" | wc -l)
  for role in daemon exporter top; do
    pid=${pids[$role]}
    usage=$(proc_usage "$pid")
    if [[ -z $usage ]]; then
      echo "$t,$role,$pid,,,,,$segs" >>"$csv"
      continue
    fi
    maps=$(grep -o '/dev/shm/[^ ]*' "/proc/$pid/maps" 2>/dev/null | sort -u | wc -l)
    echo "$t,$role,$pid,${usage// /,},$maps,$segs" >>"$csv"
  done
}

# Prints the verdict table from the CSV; exit status 0 when every row is OK.
judge() {
  awk -F, -v warm="$warmup" -v dur="$duration" -v iv="$interval" '
    NR == 1 { next }
    $4 == "" { dead[$2] = 1; next }
    {
      role = $2; t = $1 + 0; roles[role] = 1
      if (!(role in pid0)) pid0[role] = $3; else if ($3 != pid0[role]) dead[role] = 1
      for (m = 4; m <= 8; m++) {
        v = $m + 0
        if (t < warm) { if (!((role, m) in wmax) || v > wmax[role, m]) wmax[role, m] = v; continue }
        if (!((role, m) in pmax) || v > pmax[role, m]) pmax[role, m] = v
        n_post[role, m]++
        post_t[role, m, n_post[role, m]] = t; post_v[role, m, n_post[role, m]] = v
      }
    }
    END {
      win = dur / 10; if (win < 3 * iv) win = 3 * iv
      name[4] = "VmRSS kB"; name[5] = "open fds"; name[6] = "threads"; name[7] = "shm maps"; name[8] = "node segments"
      printf "%-9s %-14s %12s %12s %10s  %-28s %s\n", "process", "figure", "first", "last", "growth", "budget", "verdict"
      printf "(VmRSS: first/last window means; counts: warm-up max, last window median, post-warm-up max)\n"
      bad = 0
      for (role in roles) {
        if (role in dead) { printf "%-9s %-14s %12s %12s %10s  %-28s %s\n", role, "alive", "", "", "", "same pid to the end", "FAIL (died)"; bad = 1 }
        for (m = 4; m <= 8; m++) {
          n = n_post[role, m]
          if (n == 0) { printf "%-9s %-14s no samples after the warm-up\n", role, name[m]; bad = 1; continue }
          t0 = post_t[role, m, 1]; tn = post_t[role, m, n]
          s1 = c1 = s2 = c2 = 0
          for (i = 1; i <= n; i++) {
            if (post_t[role, m, i] <= t0 + win) { s1 += post_v[role, m, i]; c1++ }
            if (post_t[role, m, i] >= tn - win) { s2 += post_v[role, m, i]; c2++ }
          }
          if (m == 4) {
            first = s1 / c1; last = s2 / c2; g = first > 0 ? 100 * (last - first) / first : 0
            ok = g <= 1.0 || last - first <= 512
            printf "%-9s %-14s %12.0f %12.0f %9.2f%%  %-28s %s\n", role, name[m], first, last, g, "<= 1% or 512 kB (last/first)", ok ? "OK" : "FAIL"
          } else {
            c2 = 0
            for (i = 1; i <= n; i++) if (post_t[role, m, i] >= tn - win) last_v[++c2] = post_v[role, m, i]
            for (i = 2; i <= c2; i++) { v = last_v[i]; for (j = i - 1; j >= 1 && last_v[j] > v; j--) last_v[j + 1] = last_v[j]; last_v[j + 1] = v }
            med = last_v[int((c2 + 1) / 2)]
            delete last_v
            ok = med <= wmax[role, m]
            printf "%-9s %-14s %12d %12d %10s  %-28s %s\n", role, name[m], wmax[role, m], med, "max " pmax[role, m], "last median <= warm-up max", ok ? "OK" : "FAIL"
          }
          if (!ok) bad = 1
        }
      }
      exit bad
    }' "$csv"
}

main() {
  echo "soak: node $node (speed $speed), ${duration}s, samples every ${interval}s, warm-up ${warmup}s, CSV $csv"
  node_start "$node" --speed "$speed"
  exporter_start "$node" || { echo "soak: npu-exporter did not start" >&2; exit 1; }
  local top; top=$(top_start "$node" 1)
  sleep 1
  declare -gA pids=([daemon]=$(node_pid "$node") [exporter]=$EXPORTER_PID [top]=$(tmux_pane_pid "$top"))
  echo "soak: daemon pid ${pids[daemon]}, exporter pid ${pids[exporter]}, npu-top pid ${pids[top]}"
  local start end
  start=$(date +%s)
  end=$((start + duration))
  workload_loop "$end" & BENCH_PIDS+=($!)
  fault_loop "$end" & BENCH_PIDS+=($!)
  scrape_loop "$end" & BENCH_PIDS+=($!)
  local loops=("${BENCH_PIDS[@]: -3}")
  echo "t_s,role,pid,rss_kb,fds,threads,shm_maps,node_segments" >"$csv"
  local next=$start
  while (($(date +%s) < end)); do
    sample $(($(date +%s) - start))
    next=$((next + interval))
    local now; now=$(date +%s)
    if ((next > now)); then sleep $((next - now)); fi
  done
  wait "${loops[@]}" 2>/dev/null || true
  sample $(($(date +%s) - start))

  local runs=0 bad_runs=0 scrapes=0 scrape_errors=0 fault_errors=0
  if [[ -f $work/runs ]]; then runs=$(wc -l <"$work/runs"); bad_runs=$(grep -cvE '^(0|1|7)$' "$work/runs" || true); fi
  if [[ -f $work/scrapes ]]; then scrapes=$(cat "$work/scrapes"); fi
  if [[ -f $work/scrape-errors ]]; then scrape_errors=$(wc -l <"$work/scrape-errors"); fi
  if [[ -f $work/fault-errors ]]; then fault_errors=$(grep -c . "$work/fault-errors" || true); fi
  echo
  local failed=0
  judge || failed=1
  printf '%-24s %8s %8s  %s\n' "activity" "count" "errors" "verdict"
  printf '%-24s %8s %8s  %s\n' "workload runs" "$runs" "$bad_runs" "$( ((runs > 0 && bad_runs == 0)) && echo OK || echo FAIL)"
  printf '%-24s %8s %8s  %s\n' "exporter scrapes" "$scrapes" "$scrape_errors" "$( ((scrapes > 0 && scrape_errors == 0)) && echo OK || echo FAIL)"
  printf '%-24s %8s %8s  %s\n' "fault inject/clear" "-" "$fault_errors" "$( ((fault_errors == 0)) && echo OK || echo FAIL)"
  echo "run exit codes: $(sort "$work/runs" 2>/dev/null | uniq -c | awk '{printf "%s x%s  ", $2, $1}')"
  ((runs > 0 && bad_runs == 0 && scrapes > 0 && scrape_errors == 0 && fault_errors == 0)) || failed=1
  if ((bad_runs > 0)); then
    for f in "$work"/failed-run-*.log; do [[ -f $f ]] && { echo "--- $f"; tail -5 "$f"; }; done
  fi
  if ((fault_errors > 0)); then head -5 "$work/fault-errors"; fi
  bench_cleanup
  local left; left=$(find /dev/shm -maxdepth 1 -name "npukit-$node*" | wc -l)
  ((left == 0)) || { echo "soak: $left segment(s) of $node left in /dev/shm"; failed=1; }
  echo "soak: $( ((failed == 0)) && echo PASS || echo FAIL)"
  return $failed
}

main

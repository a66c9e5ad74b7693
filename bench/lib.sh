# shellcheck shell=bash
# Shared helpers of the robustness benches (kill_loop.sh, soak.sh); sourced, not run.
#
# Contract: the caller sets BUILD (the build directory holding emulator/, workloads/, profiler/,
# smi/ and bench/) before calling bench_tools. Every helper that starts something records its pid
# in BENCH_PIDS or its node in BENCH_NODES, and bench_cleanup (install it with
# `trap bench_cleanup EXIT`) stops exactly those: our nodes, our tmux servers, our pids.

BENCH_PIDS=()
BENCH_NODES=()
BENCH_TMUX=()
BENCH_TMPDIRS=()

# Resolves the tool paths under $BUILD; one line and exit 2 when one is missing.
bench_tools() {
  EMUD=$BUILD/emulator/npu-emud
  RUN=$BUILD/workloads/npu-run
  PROF=$BUILD/profiler/npu-prof
  SMI=$BUILD/smi/npu-smi
  TOP=$BUILD/smi/npu-top
  EXPORTER=$BUILD/smi/npu-exporter
  PROBE=$BUILD/bench/bus_probe
  local t
  for t in "$EMUD" "$RUN" "$PROF" "$SMI" "$TOP" "$EXPORTER" "$PROBE"; do
    [[ -x $t ]] || { echo "$(basename "$0"): $t is not built (cmake --build $BUILD --target $(basename "$t"))" >&2; exit 2; }
  done
  for t in tmux curl sqlite3; do
    command -v "$t" >/dev/null || { echo "$(basename "$0"): needs $t (apt-get install -y $t)" >&2; exit 2; }
  done
}

# The control socket's path for a node (npu-emud puts it in $XDG_RUNTIME_DIR, else /tmp).
node_socket() { echo "${XDG_RUNTIME_DIR:-/tmp}/npukit-$1.sock"; }

# Starts node $1 (extra npu-emud options after it) and remembers it for cleanup.
node_start() {
  local node=$1; shift
  BENCH_NODES+=("$node")
  "$EMUD" start --node-name "$node" --seed 7 "$@" >/dev/null
}

# The daemon's pid of node $1, from `npu-emud status` ("", when the node is not up).
node_pid() {
  { "$EMUD" status --node-name "$1" 2>/dev/null || true; } | sed -n 's/.*, pid \([0-9]*\),.*/\1/p' | head -1
}

# Stops node $1 and removes what a SIGKILLed daemon may have left: its segment, socket and log.
node_stop() {
  local node=$1
  "$EMUD" stop --node-name "$node" >/dev/null 2>&1 || true
  rm -f "/dev/shm/npukit-$node" "$(node_socket "$node")" "${XDG_RUNTIME_DIR:-/tmp}/npukit-$node.log"
}

# Processes of ours still alive that name node $1 on their command line (we always pass
# --node-name/--node explicitly, so this finds every process we started for it).
node_processes() {
  pgrep -f -- "--node(-name)? $1( |\$)" || true
}

# A uniform random integer in [$1, $2].
rand_between() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }

# Sleeps a random time between $1 and $2 milliseconds.
sleep_ms_between() {
  local ms; ms=$(rand_between "$1" "$2")
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

# Starts npu-top for node $1 in a detached tmux server of its own (a 200x60 terminal); prints the
# tmux server name. npu-top's pid is then `tmux_pane_pid <server>`.
top_start() {
  local node=$1 interval=${2:-1} server="bench-top-$1-$RANDOM"
  BENCH_TMUX+=("$server")
  tmux -L "$server" new-session -d -s top -x 200 -y 60 \
    "exec '$TOP' --node '$node' --interval $interval --window 30" >/dev/null
  echo "$server"
}
tmux_pane_pid() { tmux -L "$1" display -p -t top '#{pane_pid}' 2>/dev/null || true; }
# tmux's socket for server $1 (removed by tmux_stop: a server whose last pane was killed exits
# and leaves it behind).
tmux_socket() { echo "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$1"; }
tmux_stop() {
  tmux -L "$1" kill-server >/dev/null 2>&1 || true
  rm -f "$(tmux_socket "$1")"
}

# Starts npu-exporter for node $1 on a free port; sets EXPORTER_PID and EXPORTER_URL.
exporter_start() {
  local node=$1 log
  log=$(mktemp)
  "$EXPORTER" --node-name "$node" --listen 127.0.0.1:0 >"$log" 2>&1 &
  EXPORTER_PID=$!
  disown "$EXPORTER_PID" 2>/dev/null || true  # no "Killed" job notice when a bench kills it
  BENCH_PIDS+=("$EXPORTER_PID")
  EXPORTER_URL=
  local _
  for _ in $(seq 100); do
    EXPORTER_URL=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$log")
    [[ -n $EXPORTER_URL ]] && break
    sleep 0.05
  done
  rm -f "$log"
  [[ -n $EXPORTER_URL ]]
}

# One scrape of $1; true when it answers 200 with the chips' series. (The body is read whole
# first: grep -q closing the pipe early would fail curl with a write error under pipefail.)
scrape() {
  local body
  body=$(curl -sf --max-time 5 "$1") || return 1
  [[ $body == *$'\n'npu_chip_info_utilization\{* ]]
}

# VmRSS (kB), open fds and threads of pid $1, as "rss fds threads" ("" when it is gone).
proc_usage() {
  local pid=$1 rss threads fds
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || return 0
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || return 0
  fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  [[ -n $rss ]] && echo "$rss $fds $threads"
}

# Kills pid $1 (SIGKILL) if it is still alive and reaps it when it is our child.
kill_hard() {
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Stops everything this run started. Safe to call twice.
bench_cleanup() {
  local p n s d
  for p in "${BENCH_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for s in "${BENCH_TMUX[@]}"; do tmux_stop "$s"; done
  for n in "${BENCH_NODES[@]}"; do
    node_stop "$n"
    for p in $(node_processes "$n"); do kill -KILL "$p" 2>/dev/null || true; done
    rm -f "/dev/shm/npukit-$n" "$(node_socket "$n")"
  done
  for p in "${BENCH_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for d in "${BENCH_TMPDIRS[@]}"; do rm -rf "$d"; done
  BENCH_PIDS=() BENCH_NODES=() BENCH_TMUX=() BENCH_TMPDIRS=()
}

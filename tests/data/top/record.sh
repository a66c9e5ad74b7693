#!/bin/sh
# Regenerates the npu-top recordings the golden tests replay (rec-8x910B2.json, rec-16x910B2.json)
# from the emulator: a node, a training-like workload on every device, a few injected faults,
# and `npu-top --record`. Then regenerate the goldens: NPUKIT_UPDATE_GOLDEN=1 top_tests.
#   usage: tests/data/top/record.sh BUILD_DIR
set -eu
build=$(cd "${1:?usage: record.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
emud="$build/emulator/npu-emud"
top="$build/smi/npu-top"

# submit NODE RANKS NAME: a program with one rank per device (matmuls and a host delay per step,
# a different size and HBM footprint per device) that runs for minutes.
submit() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, os, socket, sys
node, ranks, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rank_list = []
for r in range(ranks):
    n = 4096 + 1024 * (r % 4)
    mm = {"op": "kernel", "stream": 0, "name": "aten::mm",
          "inputs": [{"shape": [n, n], "dtype": "float16"}, {"shape": [n, n], "dtype": "float16"}]}
    rank_list.append({"device": r, "streams": 1,
                      "setup": [{"op": "alloc", "buf": "w", "bytes": (4 + 2 * (r % 8)) << 30}],
                      "step": [mm, mm, mm, {"op": "host_delay", "ns": 5000000 * (1 + r % 3)}]})
program = {"name": name, "repeat": 1000000, "process": {"pid": 0, "name": name}, "ranks": rank_list}
sock = socket.socket(socket.AF_UNIX)
sock.connect((os.environ.get("XDG_RUNTIME_DIR") or "/tmp") + "/npukit-" + node + ".sock")
sock.sendall((json.dumps({"op": "submit", "program": program}) + "\n").encode())
reply = json.loads(sock.recv(65536))
assert reply.get("ok"), reply
EOF
}

# record NODE SPEC RANKS OUT FAULTS...: FAULTS are "delay:device:fault" injected while recording.
record() {
  node=$1 spec=$2 ranks=$3 out=$4
  shift 4
  "$emud" start --node-name "$node" --spec "$spec" --seed 7
  trap '"$emud" stop --node-name "$node" >/dev/null 2>&1 || true' EXIT
  submit "$node" "$ranks" train.py
  sleep 3
  for f in "$@"; do
    (IFS=:; set -- $f; sleep "$1"; "$emud" inject --node-name "$node" --device "$2" --fault "$3" >/dev/null) &
  done
  "$top" --node "$node" --frames 24 --interval 0.5 --record "$here/$out" >/dev/null
  wait
  "$emud" stop --node-name "$node"
  trap - EXIT
}

record lab-a01 8x910B2 8 rec-8x910B2.json 3:2:hbm-double-bit 5:3:over-temperature 7:5:ecc-storm
# 15 ranks: device 15 idles, so losing it does not fail the job
record lab-b16 "$here/16x910B2.json" 15 rec-16x910B2.json 4:15:device-lost 6:14:hbm-double-bit

#!/usr/bin/env bash
# The diagnosis matrix's single-cause scenarios on the other chips: workloads/diagnosis/matrix.json's
# scenarios that need no second host, each run with its baseline on 8xA100, 4x310P3, 8x910 and
# 8x910B3 instead of the 8x910B2 they were sized for (npu-prof selftest --dir on a derived matrix).
# A scenario that cannot run on a chip (a power limit above its TDP, more HBM than it has) is left
# out with its reason; a miss is printed as the selftest prints it (WRONG), with its true cost.
#   bench/diagnosis_other_chips.sh [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
[[ ${1:-} == --build ]] && BUILD=$2
prof=$BUILD/profiler/npu-prof
[[ -x $prof ]] || { echo "diagnosis_other_chips.sh: $prof is not built" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import json, sys, pathlib
src, out = pathlib.Path("workloads/diagnosis"), pathlib.Path(sys.argv[1])
single = ["straggler", "power-cap", "loader", "host-gap", "allocator", "aicpu", "unfused", "launch-bound",
          "fragmentation", "recompile"]
# (spec, short tag for node names, scenarios that cannot run there and why)
chips = [("8xA100", "A", {}),
         ("4x310P3", "P", {"power-cap": "250 W is above the 310P3's 72 W", "fragmentation": "it holds 59 GiB, the 310P3 has 24"}),
         ("8x910", "N", {"fragmentation": "it holds 59 GiB, the 910 has 32"}),
         ("8x910B3", "B", {})]
matrix = json.loads((src / "matrix.json").read_text())
rows = []
for spec, tag, skip in chips:
    for s in matrix["scenarios"]:
        if s["name"] not in single:
            continue
        if s["name"] in skip:
            print(f"skipped {s['name']} on {spec}: {skip[s['name']]}")
            continue
        row = dict(s, spec=spec, name=f"{s['name']}-{tag}", baseline=f"{s['baseline']}-{tag}")
        for n in (s["name"], s["baseline"]):
            (out / f"{n}-{tag}.json").write_text((src / f"{n}.json").read_text())
        rows.append(row)
matrix["scenarios"] = rows
(out / "matrix.json").write_text(json.dumps(matrix, indent=1))
PY
"$prof" selftest --dir "$dir" 2>/dev/null || true

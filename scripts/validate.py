#!/usr/bin/env python3
"""Prints the emulator's validation table: every point of workloads/validation/points.json run on
the emulator (fast standalone runs of the built-in workloads, or a bench), beside its published
figure, with the error of each point and the mean and max |error| per chip, per role (fitted,
prediction, derived) and overall. Usage: scripts/validate.sh [BUILD_DIR] [--markdown]"""
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"scripts/validate.sh: failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.strip()}")
    return r.stdout


def measure(build, point, steps):
    """The point's figure from one run: throughput, step_ms, tflops:<label>, allreduce_ms:<bytes>."""
    spec = point["run"]
    figure = point["figure"]
    if spec.startswith("bench:"):
        words = shlex.split(spec[len("bench:"):])
        out = run([os.path.join(build, "bench", words[0])] + words[1:])
    else:
        extra = ["--steps", str(steps)] if not figure.startswith("tflops") else []
        out = run([os.path.join(build, "workloads", "npu-run")] + shlex.split(spec) + ["--standalone", "--fast"] + extra)
    if figure == "throughput":
        return float(re.search(r"^  throughput\s+([0-9.]+)", out, re.M).group(1))
    if figure == "step_ms":
        return float(re.search(r"^  step time\s+([0-9.]+) ms", out, re.M).group(1))
    kind, _, key = figure.partition(":")
    if kind == "tflops":  # matmul-sweep: " <m>x<k>x<n>  <us>  <TFLOPS>"
        return float(re.search(r"^\s*" + re.escape(key) + r"\s+[0-9.]+\s+([0-9.]+)", out, re.M).group(1))
    if kind == "allreduce_ms":  # allreduce_sweep: size count type redop time(us) ...
        return float(re.search(r"^\s*" + key + r"\s+\d+\s+\S+\s+\S+\s+([0-9.]+)", out, re.M).group(1)) / 1000
    sys.exit(f"scripts/validate.sh: unknown figure '{figure}' in points.json")


def figure(x):
    """A figure as people read it: 15,580 and 311.0 and 8.061, never 1.558e+04."""
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.1f}" if x >= 100 else f"{x:.4g}"


def summary(label, errors):
    if not errors:
        return ""
    mean = sum(abs(e) for e in errors) / len(errors)
    return f"| {label} | {len(errors)} | {mean:.1f}% | {max(abs(e) for e in errors):.1f}% |"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    steps = 20  # the mean of steps 2-20: after a warm-up (an input pipeline's first stock) is used up
    points = json.load(open(os.path.join(ROOT, "workloads", "validation", "points.json")))["points"]
    print("| chip | point | role | emulated | published | error |")
    print("|---|---|---|---|---|---|")
    rows = []
    for p in points:
        got = measure(build, p, steps)
        # A time is better lower: its error is how much faster or slower, as for a rate.
        err = (got / p["published"] - 1) * 100
        rows.append((p, err))
        print(f"| {p['chip']} | {p['name']} | {p['role']} | {figure(got)} {p['unit']} | {figure(p['published'])} {p['unit']} | {err:+.1f}% |")
    print()
    print("| group | points | mean \\|error\\| | max \\|error\\| |")
    print("|---|---|---|---|")
    for chip in dict.fromkeys(p["chip"] for p, _ in rows):
        print(summary(chip, [e for p, e in rows if p["chip"] == chip]))
    for role in ("fitted", "prediction", "derived"):
        print(summary(role, [e for p, e in rows if p["role"] == role]))
    print(summary("all", [e for _, e in rows]))


if __name__ == "__main__":
    main()

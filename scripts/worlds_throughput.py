#!/usr/bin/env python3
"""Steps/s of `karakuri simulate --worlds N` for N = 1, 2, 8, and the machine's own ceiling.

Usage: python3 scripts/worlds_throughput.py [--rounds R] [--karakuri BIN] [--write-doc [--force]]

Needs a release build (`cargo build --release -p karakuri-cli`). For each case (the bundled
demo, 08_fourbar, 11_pile_mixed) and each round, in turn: N = 1, 2 and 8 worlds in one process
(`--worlds N --seed 1`), then the *control*: two separate single-world processes started
together (`--worlds 1`, seeds 1 and 2), whose summed steps/s is what two cores give two
independent copies of the same work with nothing shared but the machine. The speed-ups are
N-worlds steps/s over the same round's N = 1; the control's ratio says how much of a shortfall
from 2.0 is the machine's (shared caches and memory bandwidth), not the batch's.

`--write-doc` replaces the table between the `worlds:begin` / `worlds:end` markers of
docs/PERFORMANCE.md; it refuses when the 1-minute load average before the run was above half
the cores (the runs load both cores themselves; `--force` writes anyway).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(REPO, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- worlds:begin -->", "<!-- worlds:end -->"
SCENES = os.path.join(REPO, "..", "shared", "validation", "scenes")
LOCAL = os.path.join(REPO, "tests", "scenes")


def scene(name):
    shared = os.path.join(SCENES, name)
    return shared if os.path.exists(shared) else os.path.join(LOCAL, name)


# (label, scene argument or None for the demo, simulated seconds per world)
CASES = [
    ("demo (Solo-12, 12 dof, 4 feet)", None, 120.0),
    ("08_fourbar (closed loop)", "08_fourbar.json", 600.0),
    ("11_pile_mixed (64 bodies, ~450 contacts)", "11_pile_mixed.json", 3.0),
]


def load1():
    return float(open("/proc/loadavg").read().split()[0])


def command(binary, case, worlds, seed):
    _, name, duration = case
    cmd = [binary, "simulate"]
    if name:
        cmd.append(scene(name))
    return cmd + ["--worlds", str(worlds), "--seed", str(seed), "--duration", str(duration)]


def speed_of(output, cmd):
    m = re.search(r"^speed\s+(\d+) steps/s", output, re.M)
    if not m:
        sys.exit(f"no 'speed' line from {' '.join(cmd)}:\n{output}")
    return float(m.group(1))


def run(binary, case, worlds, seed=1):
    cmd = command(binary, case, worlds, seed)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return speed_of(out.stdout + out.stderr, cmd)


def control(binary, case):
    """Two single-world processes at once: their summed steps/s."""
    cmds = [command(binary, case, 1, seed) for seed in (1, 2)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in cmds]
    total = 0.0
    for p, c in zip(procs, cmds):
        out, _ = p.communicate()
        if p.returncode != 0:
            sys.exit(f"{' '.join(c)} failed:\n{out}")
        total += speed_of(out, c)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--karakuri", default=os.path.join(REPO, "target", "release", "karakuri"))
    ap.add_argument("--write-doc", action="store_true")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.karakuri):
        sys.exit(f"{a.karakuri} not found: build it with `cargo build --release -p karakuri-cli`")
    loads = [load1()]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res = {c[0]: {"1": [], "2": [], "8": [], "c": []} for c in CASES}
    for r in range(a.rounds):
        for case in CASES:
            row = res[case[0]]
            for n in (1, 2, 8):
                row[str(n)].append(run(a.karakuri, case, n))
            row["c"].append(control(a.karakuri, case))
            loads.append(load1())
            print(f"round {r + 1} {case[0]}: " + ", ".join(f"{k}: {v[-1]:.0f}" for k, v in row.items()), file=sys.stderr)

    def ratios(row, key):
        return [x / y for x, y in zip(row[key], row["1"])]

    lines = [
        f"`python3 scripts/worlds_throughput.py --rounds {a.rounds}`, {started}, 1-min load average "
        f"{loads[0]:.2f} before the run, {max(loads):.2f} at most during it (its own runs) ({os.cpu_count()} cores). Steps/s are all "
        "worlds' steps per wall-clock second, medians over the rounds; the speed-ups are the "
        "median (and range) over the rounds of each round's ratio to its own N = 1 run (runs last "
        "1–3 s a world). *Two processes* is the "
        "control: two single-world processes run at once, summed (what the machine gives two "
        "independent copies of the work).",
        "",
        "| case | N = 1 steps/s | N = 2 | N = 8 | N = 2 / N = 1 | N = 8 / N = 1 | two processes / N = 1 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case in CASES:
        row = res[case[0]]
        med = {k: statistics.median(v) for k, v in row.items()}
        rng = {k: ratios(row, k) for k in ("2", "8", "c")}
        fmt = lambda xs: f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"  # noqa: E731
        num = lambda x: f"{x:,.0f}".replace(",", " ")  # noqa: E731
        lines.append(
            f"| {case[0]} | {num(med['1'])} | {num(med['2'])} | {num(med['8'])} | "
            f"{fmt(rng['2'])} | {fmt(rng['8'])} | {fmt(rng['c'])} |"
        )
    table = "\n".join(lines)
    print(table)
    if a.write_doc:
        # the runs themselves load both cores: only the load found before them is someone else's
        limit = (os.cpu_count() or 2) / 2
        if loads[0] > limit and not a.force:
            sys.exit(f"load average {loads[0]:.2f} (> {limit}) before the run: not written (--force writes anyway)")
        doc = open(DOC).read()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"{DOC} has no {BEGIN} ... {END} markers")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        open(DOC, "w").write(f"{head}{BEGIN}\n{table}\n{END}{tail}")
        print(f"written into {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""karakuri against MuJoCo, µs per step on every validation scene, in one run, interleaved.

Usage: python3 scripts/sim_vs_mujoco.py [SCENES...] [--rounds N] [--karakuri BIN]
       [--json FILE] [--write-doc [--max-load L | --force]]

SCENES default to ../shared/validation/scenes/*.json. Needs a release build
(`cargo build --release -p karakuri-cli`) and `pip install mujoco`.

Each round runs, for every scene in turn, karakuri then MuJoCo (so a change of machine load
hits both alike); the figure per scene is the median over rounds. Both step the same
min(duration/dt, 2000) steps from the initial state and both are summarised the same way:
the median of the means of batches of 100 consecutive steps.
- karakuri: `karakuri simulate SCENE --duration n*dt --steps CSV`, the batches made of the
  per-step wall-clock `wall_ns` column (each step timed around `World::step`, nothing else);
  once as written (defaults: resting islands sleep) and once with `engine.sleep.enabled: false`
  (MuJoCo's default is not to sleep), both shown.
- MuJoCo: `scripts/mujoco_steps.py`'s MJCF conversion and timing (default options, one
  thread), twice per round: a Python loop of `mj_step` (as the validation README measures) and
  `mj_step(m, d, nstep=100)` inside C (no binding overhead: the strict comparison). The ratio
  column is karakuri / MuJoCo-in-C (below 1: karakuri faster).

The 1-minute load average is read before and after; `--write-doc` replaces the table between
the `sim-vs-mujoco` markers of docs/PERFORMANCE.md, and refuses when the load average went
above --max-load (default: half the cores) during the run, since the numbers of a machine
shared with builds measure the load (`--force` writes anyway).
"""
import argparse
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mujoco  # noqa: E402
import mujoco_steps as mjs  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(REPO, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- sim-vs-mujoco:begin -->", "<!-- sim-vs-mujoco:end -->"


def load1():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return float("nan")


def steps_of(scene):
    return min(int(round(scene["world"]["duration"] / scene["world"]["dt"])), mjs.MAX_STEPS)


def without_sleep(path, scene, tmp):
    """A copy of the scene with karakuri's sleeping turned off (`engine.sleep.enabled: false`)."""
    s = json.loads(json.dumps(scene))
    s.setdefault("engine", {}).setdefault("sleep", {})["enabled"] = False
    out = os.path.join(tmp, os.path.basename(path))
    with open(out, "w") as f:
        json.dump(s, f)
    return out


def karakuri_us(binary, path, scene, tmp):
    """Median over batches of mjs.BATCH steps of the mean wall µs per step."""
    n = steps_of(scene)
    dt = scene["world"]["dt"]
    csv_path = os.path.join(tmp, "steps.csv")
    subprocess.run([binary, "simulate", path, "--duration", repr(n * dt), "--steps", csv_path],
                   check=True, stdout=subprocess.DEVNULL)
    with open(csv_path) as f:
        ns = [int(r["wall_ns"]) for r in csv.DictReader(f) if r["step"] != "0"]
    if len(ns) != n:
        raise RuntimeError("%s: %d steps in steps.csv, expected %d" % (path, len(ns), n))
    return batch_median_us(ns)


def batch_median_us(ns):
    """The median over consecutive batches of mjs.BATCH per-step wall times (ns) of their mean, in µs."""
    nb = max(1, len(ns) // mjs.BATCH)
    b = min(mjs.BATCH, len(ns))
    means = [sum(ns[i * b:(i + 1) * b]) / b / 1000.0 for i in range(nb)]
    return statistics.median(means)


def replace_section(path, begin, end, text):
    """Put text between the begin and end marker lines of the file at path (exits if they are missing)."""
    doc = open(path).read()
    if begin not in doc or end not in doc:
        sys.exit("%s: no %s ... %s markers" % (path, begin, end))
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)
    print("wrote %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--karakuri", default=os.path.join(REPO, "target", "release", "karakuri"))
    ap.add_argument("--json", metavar="FILE", help="write every round's numbers")
    ap.add_argument("--write-doc", action="store_true", help="put the table into docs/PERFORMANCE.md")
    ap.add_argument("--max-load", type=float, default=(os.cpu_count() or 2) / 2,
                    help="largest 1-min load average for --write-doc (default: half the cores)")
    ap.add_argument("--force", action="store_true", help="--write-doc whatever the load")
    args = ap.parse_args()
    paths = args.scenes or sorted(glob.glob(mjs.DEFAULT_GLOB))
    if not paths:
        sys.exit("no scenes found (default %s)" % mjs.DEFAULT_GLOB)
    if not os.access(args.karakuri, os.X_OK):
        sys.exit("%s: not found; build it: cargo build --release -p karakuri-cli" % args.karakuri)

    scenes = []
    for p in paths:
        scene = json.load(open(p))
        _, m, d, reset = mjs.build(scene)
        scenes.append((os.path.splitext(os.path.basename(p))[0], p, scene, m, d, reset))

    loads = [load1()]
    rows = {name: {"karakuri": [], "karakuri_awake": [], "mujoco_python": [], "mujoco_c": []}
            for name, *_ in scenes}
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, path, scene, m, d, reset in scenes:
                rows[name]["karakuri"].append(karakuri_us(args.karakuri, path, scene, tmp))
                awake = without_sleep(path, scene, tmp)
                rows[name]["karakuri_awake"].append(karakuri_us(args.karakuri, awake, scene, tmp))
                rows[name]["mujoco_python"].append(mjs.time_scene(scene, m, d, reset, 1, False)[0])
                rows[name]["mujoco_c"].append(mjs.time_scene(scene, m, d, reset, 1, True)[0])
            loads.append(load1())
            print("round %d/%d done, load average %.2f" % (r + 1, args.rounds, loads[-1]), file=sys.stderr)

    med = {name: {k: statistics.median(v) for k, v in cols.items()} for name, cols in rows.items()}
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    lines = [
        textwrap.fill("Measured %s by `scripts/sim_vs_mujoco.py --rounds %d` (%.0f s): karakuri release build against "
        "MuJoCo %s (default options, one thread), interleaved scene by scene; median over rounds of the "
        "median 100-step batch mean over min(duration/dt, %d) steps from the initial state. 1-min load "
        "average %.2f .. %.2f on %d cores. Ratio: karakuri / MuJoCo in C (below 1: karakuri faster). "
        "karakuri sleeps resting islands by default (MuJoCo does not): the 'sleep off' columns run "
        "the same scene with `engine.sleep.enabled: false`."
        % (when, args.rounds, time.time() - started, mujoco.__version__, mjs.MAX_STEPS,
           min(loads), max(loads), os.cpu_count() or 0), 100),
        "",
        "| scene | karakuri µs/step | karakuri, sleep off | MuJoCo µs/step (Python) | MuJoCo µs/step (in C) "
        "| ratio | ratio, sleep off |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, v in med.items():
        lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |"
                     % (name, v["karakuri"], v["karakuri_awake"], v["mujoco_python"], v["mujoco_c"],
                        v["karakuri"] / v["mujoco_c"], v["karakuri_awake"] / v["mujoco_c"]))
    table = "\n".join(lines)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"loads": loads, "rounds": rows, "median": med}, f, indent=1)
            f.write("\n")
    if args.write_doc:
        if max(loads) > args.max_load and not args.force:
            sys.exit("not writing %s: the load average reached %.2f (> %.2f): the machine is not quiet "
                     "(--force to write anyway)" % (DOC, max(loads), args.max_load))
        replace_section(DOC, BEGIN, END, table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How a `Batch` of robot worlds scales from one thread to two: `karakuri simulate --worlds N`
with RAYON_NUM_THREADS=1 and =2, interleaved, for N = 2, 8, 32 robot worlds.

Usage: python3 scripts/batch_scaling.py [--rounds R] [--karakuri BIN] [--worlds 2,8,32]
                                        [--world-steps S] [--sleep]

Needs a release build (`cargo build --release -p karakuri-cli`). The robots: Go2 and Solo-12
standing under PD (the robot race's scenes, `scripts/robot_race.py --write-scenes`, which need
example-robot-data) and dm_control's quadruped (tests/data/mjcf). Each run takes about
S world steps in all (N worlds of S / N steps each). The YAML robots run with sleeping off, or
with --sleep with `engine.sleep.actuated: true` (standing still, Solo-12 falls asleep after
about 0.7 s and the batch then measures mostly sleeping steps). For each robot and N, the best steps/s of the rounds on 1 and on 2
threads, their ratio (issue 29 asks 1.8 or more), the CPU/wall of each run and the process CPU
µs per world step: a ratio below 1.8 with CPU/wall near 2 is the work (caches, memory; the CPU
µs per world step then grow from 1 to 2 threads), with CPU/wall well below 2 the machine's
other load (which takes the cores, not the batch). The 1-minute load average is printed before and after: on a loaded
machine the ratio measures the load, not the batch.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load1():
    return float(open("/proc/loadavg").read().split()[0])


def scenes(tmp, sleep):
    """(label, scene path) of the robots this machine has."""
    out = []
    d = os.path.join(tmp, "race")
    r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "robot_race.py"), "--quick",
                        "--only", "Go2,Solo", "--write-scenes", d],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for label, name in [("Go2 standing, PD", "Go2_standing_PD.yaml"), ("Solo-12 standing, PD", "Solo_12_standing_PD.yaml")]:
        p = os.path.join(d, name)
        if not os.path.exists(p):
            print(f"skipped {label}: robot_race.py wrote no {name} ({r.stderr.strip()[-200:]})")
            continue
        with open(p, "a") as f:
            f.write("engine: {sleep: {actuated: true}}\n" if sleep else "engine: {sleep: {enabled: false}}\n")
        out.append((label, p))
    out.append(("dm_control quadruped", os.path.join(REPO, "tests", "data", "mjcf", "dm_control", "quadruped.xml")))
    return out


def run(binary, scene, worlds, steps, threads):
    """(steps/s, CPU/wall, CPU µs per world step) of one `simulate --worlds` run on `threads` threads."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    dt = 0.001 if scene.endswith(".yaml") else 0.005  # quadruped.xml: timestep 0.005
    cmd = [binary, "simulate", scene, "--worlds", str(worlds), "--seed", "1",
           "--duration", repr(max(1, steps // worlds) * dt), "--dt", repr(dt)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    m = re.search(r"^speed\s+(\d+) steps/s.* ([\d.]+) µs CPU per world step; CPU/wall ([\d.]+)", p.stdout, re.M)
    t = re.search(r"on (\d+) threads", p.stdout)
    if not m or not t or int(t.group(1)) != threads:
        sys.exit(f"unexpected output of {' '.join(cmd)}:\n{p.stdout}")
    return float(m.group(1)), float(m.group(3)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--karakuri", default=os.path.join(REPO, "target", "release", "karakuri"))
    ap.add_argument("--worlds", default="2,8,32")
    ap.add_argument("--world-steps", type=int, default=64000, help="world steps per run, all worlds")
    ap.add_argument("--sleep", action="store_true", help="let the servo-held robots sleep")
    a = ap.parse_args()
    ns = [int(x) for x in a.worlds.split(",")]
    before = load1()
    with tempfile.TemporaryDirectory() as tmp:
        cases = scenes(tmp, a.sleep)
        best = {}
        for _ in range(a.rounds):
            for label, path in cases:
                for n in ns:
                    for threads in (1, 2):
                        r = run(a.karakuri, path, n, a.world_steps, threads)
                        k = (label, n, threads)
                        if r[0] > best.get(k, (0,))[0]:
                            best[k] = r
    after = load1()
    print(f"load average (1 min) {before:.2f} before, {after:.2f} after; {os.cpu_count()} cores; "
          f"best of {a.rounds} interleaved rounds, {a.world_steps} world steps a run")
    print("| robot | N worlds | steps/s, 1 thread | steps/s, 2 threads | ratio | CPU/wall, 1 / 2 threads "
          "| CPU µs per world step, 1 / 2 threads |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, _ in cases:
        for n in ns:
            (s1, cw1, c1), (s2, cw2, c2) = best[(label, n, 1)], best[(label, n, 2)]
            print(f"| {label} | {n} | {s1:.0f} | {s2:.0f} | {s2 / s1:.2f} | {cw1:.2f} / {cw2:.2f} | {c1:.2f} / {c2:.2f} |")


if __name__ == "__main__":
    main()

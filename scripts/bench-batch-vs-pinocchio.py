#!/usr/bin/env python3
"""Batched dynamics (karakuri.batch, issue 33) against single calls and Pinocchio, one run.

    scripts/bench-batch            (builds what it needs, then runs this with --write-doc)
    or: cargo build --release -p karakuri --example batch_bench
        PYTHONPATH=<karakuri package> python3 scripts/bench-batch-vs-pinocchio.py [--time 0.3] [--rounds 7] [--write-doc]

Per robot and algorithm (rnea, aba; rnea_derivatives, aba_derivatives in the one-core table;
then crba, minv, fk, gravity, jacobians), ns per state:

* karakuri in Rust (crates/karakuri/examples/batch_bench.rs): its single call cycling over 1024
  random states; the batched call on N = 1, 8, 64, 1024 states on one thread; N = 1024 on two
  threads;
* Pinocchio 4.1.0 (the pin wheel, same process as the Python rows): `rneaInParallel` /
  `abaInParallel` over a `ModelPool` with 1024 states (columns), on 1 thread (a C++ loop of its
  single call: its single-call time without Python) and on 2 threads;
* the derivatives: Pinocchio has no `InParallel` for them; its single call is a Python loop of
  `computeRNEADerivatives` / `computeABADerivatives` less the cost of a call from Python
  (rnea's Python loop less its C++ loop);
* from Python: `karakuri.batch.rnea(model, Q, V, A)` on 1 and 2 threads against a Python loop
  of `pin.rnea` over the same 1024 states;
* crba, minv (M⁻¹), fk, gravity, jacobians: karakuri in Rust as above, against Pinocchio's
  single calls (`crba`, `computeMinverse`, `forwardKinematics`, `computeGeneralizedGravity`,
  `computeJointJacobians`) in a C++ loop over 1024 states: scripts/pinocchio_single_bench.cpp,
  built here with g++ against the pin wheel's headers and library and the cmeel-eigen wheel's
  headers (`PIN_BENCH` names a built binary; without one these rows leave Pinocchio out).

Every figure is the fastest of `--rounds` rounds: thread CPU time for work on one thread,
wall time on two (on a shared machine the fastest round is the least disturbed one; two
threads gain only when two cores are free). Both libraries load the same URDF files of tests/data.
--write-doc replaces the section "Many states at once" of docs/PERFORMANCE.md.
"""

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import karakuri

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "target" / "release" / "examples" / "batch_bench"
ROBOTS = [("ur5", False), ("panda", False), ("solo12", True), ("talos_reduced", True)]
N = 1024
HEADING = "## Many states at once: karakuri.batch (issue 33)"
MORE = ("crba", "minv", "fk", "gravity", "jacobians")
PIN_BENCH = Path(os.environ.get("PIN_BENCH", ROOT / "target" / "release" / "pinocchio_single_bench"))


def pinocchio_cpp(name, floating, rounds):
    """Pinocchio's single calls in a C++ loop ({algo: ns per state}), or {} without the binary."""
    if not PIN_BENCH.exists():
        return {}
    urdf = str(ROOT / "tests" / "data" / f"{name}.urdf")
    model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
    path = PIN_BENCH.parent / f"{name}.pinmodel"
    with open(path, "w") as f:
        for j in range(1, model.njoints):
            jm, M, Y = model.joints[j], model.jointPlacements[j], model.inertias[j]
            kind, inertia = jm.shortname(), Y.inertia
            row = [model.parents[j], *M.rotation.flatten(), *M.translation, Y.mass, *Y.lever]
            row += [inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2], inertia[2, 2]]
            if kind in ("JointModelPrismaticUnaligned", "JointModelRevoluteUnaligned"):
                row += list(jm.extract().axis)
            f.write(f"{kind} {row[0]} " + " ".join(repr(float(x)) for x in row[1:]) + "\n")
    out = subprocess.run([str(PIN_BENCH), str(path), "--rounds", str(rounds)], check=True, capture_output=True, text=True).stdout
    return {d["algo"]: d["pinocchio_single"] for d in map(json.loads, out.splitlines())}


def best(rounds, f, units, threads=1):
    """Fastest ns per unit over the rounds: thread CPU time when the work runs on this thread
    alone (threads=1), wall time otherwise."""
    clock = time.thread_time_ns if threads == 1 else time.perf_counter_ns
    f()
    out = float("inf")
    for _ in range(rounds):
        t = clock()
        f()
        out = min(out, (clock() - t) / units)
    return out


def pinocchio_side(name, floating, rounds):
    urdf = str(ROOT / "tests" / "data" / f"{name}.urdf")
    model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
    data = model.createData()
    rng = np.random.default_rng(0)
    q0 = pin.neutral(model)
    Q = np.stack([pin.integrate(model, q0, rng.uniform(-1, 1, model.nv)) for _ in range(N)], axis=1)
    V, A = (np.asfortranarray(rng.uniform(-1, 1, (model.nv, N))) for _ in range(2))
    Q = np.asfortranarray(Q)
    pool = pin.ModelPool(model, 2)
    tau = np.zeros((model.nv, N), order="F")
    out = {}
    for algo, par, single in (("rnea", pin.rneaInParallel, pin.rnea), ("aba", pin.abaInParallel, pin.aba)):
        out[algo] = {
            t: best(rounds, lambda t=t: par(t, pool, Q, V, A, tau), N, t) for t in (1, 2)
        }
        cols = [(Q[:, i].copy(), V[:, i].copy(), A[:, i].copy()) for i in range(N)]

        def loop(single=single, cols=cols):
            for q, v, a in cols:
                single(model, data, q, v, a)

        out[algo]["python_loop"] = best(rounds, loop, N)
    # the derivatives have no InParallel: their single call is a Python loop of it less the
    # cost of a call from Python, estimated as rnea's Python loop less its C++ loop (record 0076)
    call = max(out["rnea"]["python_loop"] - out["rnea"][1], 0.0)
    for algo, single in (("rnea_derivatives", pin.computeRNEADerivatives), ("aba_derivatives", pin.computeABADerivatives)):
        cols = [(Q[:, i].copy(), V[:, i].copy(), A[:, i].copy()) for i in range(N)]

        def loop(single=single, cols=cols):
            for q, v, a in cols:
                single(model, data, q, v, a)

        t = best(rounds, loop, N)
        out[algo] = {1: t - call, 2: float("nan"), "python_loop": t}
    return out


def karakuri_python(name, floating, rounds):
    model = karakuri.load_urdf(str(ROOT / "tests" / "data" / f"{name}.urdf"), floating=floating)
    rng = np.random.default_rng(1)
    Q = np.stack([karakuri.random_configuration(model, seed=s) for s in range(N)])
    V, A = (rng.uniform(-1, 1, (N, model.nv)) for _ in range(2))
    return {
        algo: {t: best(rounds, lambda f=f, t=t: f(model, Q, V, A, threads=t), N, t) for t in (1, 2)}
        for algo, f in (("rnea", karakuri.batch.rnea), ("aba", karakuri.batch.aba))
    }


def karakuri_rust(name, floating, budget):
    cmd = [str(BENCH), str(ROOT / "tests" / "data" / f"{name}.urdf"), "--time", str(budget)]
    if floating:
        cmd.append("--floating")
    lines = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    return {d["algo"]: d for d in map(json.loads, lines)}


def tables(rows):
    one = [
        "| robot (nv) | call | karakuri single | batch N=1 | N=8 | N=64 | N=1024 | N=1024 / karakuri single | Pinocchio single (C++ loop) | N=1024 / Pinocchio |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    two = [
        "| robot (nv) | call | karakuri 1 thread | karakuri 2 threads | speed-up | Pinocchio InParallel 2 threads | karakuri / Pinocchio, 2 threads | Python: loop of pin | Python: karakuri.batch 1 thread | 2 threads | loop of pin / batch (2 threads) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, nv, algo, r, p, kp in rows:
        b = r["batch_1thread"]
        if kp is None:  # the derivatives: one-core table only (Pinocchio's single estimated, 0076)
            one.append(
                f"| {name} ({nv}) | {algo} | {r['single']:.0f} | {b['1']:.0f} | {b['8']:.0f} | {b['64']:.0f} | {b['1024']:.0f} | "
                f"**{b['1024'] / r['single']:.2f}** | {p[1]:.0f} | **{b['1024'] / p[1]:.2f}** |"
            )
            continue
        one.append(
            f"| {name} ({nv}) | {algo} | {r['single']:.0f} | {b['1']:.0f} | {b['8']:.0f} | {b['64']:.0f} | {b['1024']:.0f} | "
            f"**{b['1024'] / r['single']:.2f}** | {p[1]:.0f} | **{b['1024'] / p[1]:.2f}** |"
        )
        two.append(
            f"| {name} ({nv}) | {algo} | {b['1024']:.0f} | {r['batch_2threads_1024']:.0f} | **{b['1024'] / r['batch_2threads_1024']:.2f}** | "
            f"{p[2]:.0f} | **{r['batch_2threads_1024'] / p[2]:.2f}** | {p['python_loop']:.0f} | {kp[1]:.0f} | {kp[2]:.0f} | "
            f"**{p['python_loop'] / kp[2]:.1f}** |"
        )
    return "\n".join(one), "\n".join(two)


def more_table(rows):
    out = [
        "| robot (nv) | call | karakuri single | batch N=1 | N=8 | N=64 | N=1024 | N=1024 / karakuri single | 1 thread (wall) | 2 threads | speed-up | Pinocchio single (C++ loop) | N=1024 / Pinocchio |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, nv, algo, r, pc in rows:
        b, w1, w2 = r["batch_1thread"], r["batch_1thread_wall_1024"], r["batch_2threads_1024"]
        pin_cols = f"{pc:.0f} | **{b['1024'] / pc:.2f}**" if pc else "– | –"
        out.append(
            f"| {name} ({nv}) | {algo} | {r['single']:.0f} | {b['1']:.0f} | {b['8']:.0f} | {b['64']:.0f} | {b['1024']:.0f} | "
            f"**{b['1024'] / r['single']:.2f}** | {w1:.0f} | {w2:.0f} | **{w1 / w2:.2f}** | {pin_cols} |"
        )
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=0.3, help="seconds per karakuri figure in Rust")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    rows, more = [], []
    load_start = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    for name, floating in ROBOTS:
        print(f">> {name}", flush=True)
        r = karakuri_rust(name, floating, args.time)
        p = pinocchio_side(name, floating, args.rounds)
        kp = karakuri_python(name, floating, args.rounds)
        for algo in ("rnea", "aba", "rnea_derivatives", "aba_derivatives"):
            rows.append((name, r[algo]["nv"], algo, r[algo], p[algo], kp.get(algo)))
        pc = pinocchio_cpp(name, floating, args.rounds)
        more.extend((name, r[a]["nv"], a, r[a], pc.get(a)) for a in MORE)
    one, two = tables(rows)
    three = more_table(more)
    load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    header = (
        f"ns per state; karakuri {karakuri.__version__}, pinocchio {pin.__version__}, Python {platform.python_version()}, "
        f"{platform.processor() or platform.machine()}, load average {' '.join(load_start)} at the start of the run, "
        f"{' '.join(load)} at the end."
    )
    print(header, one, two, three, sep="\n\n")
    if args.write_doc:
        write_doc(header, one, two, three)


def write_doc(header, one, two, three):
    doc = ROOT / "docs" / "PERFORMANCE.md"
    text = doc.read_text()
    start = text.index(HEADING)
    gen_start = text.index("<!-- batch tables -->", start)
    gen_end = text.index("<!-- end of batch tables -->", gen_start)
    body = (
        f"<!-- batch tables -->\n{header}\n\nOne core:\n\n{one}\n\nTwo threads, and from Python:\n\n{two}\n\n"
        f"The other batched functions (one core, then two threads in wall time):\n\n{three}\n"
    )
    doc.write_text(text[:gen_start] + body + text[gen_end:])


if __name__ == "__main__":
    main()

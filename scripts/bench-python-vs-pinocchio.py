#!/usr/bin/env python3
"""Per-call time from Python: karakuri's bindings against Pinocchio's own, same process.

    python3 -m venv /tmp/bench && /tmp/bench/bin/pip install ./crates/karakuri-py pin==4.1.0 example-robot-data==6.0.0
    /tmp/bench/bin/python scripts/bench-python-vs-pinocchio.py [--calls 20000] [--rounds 7]

Both libraries load the same URDF files (tests/data/talos_reduced.urdf with a free flyer, the
humanoid; tests/data/ur5.urdf fixed, the arm) and are fed the same random states (mapped
between their joint orders by joint name; checked to give the same results first). One
measurement is the wall time of a Python loop of `--calls` calls cycling over 100 prepared
states, divided by the number of calls: what a user's loop pays, interpreter and binding
overhead included. Time is the thread's CPU time (`time.thread_time_ns`, as `karakuri bench`
uses), so that time spent descheduled on a shared machine does not count. The libraries alternate measurement by measurement; each cell is the median
over `--rounds` rounds. Pinocchio's CRBA and ABA are timed in both of its conventions (LOCAL,
WORLD) and the faster is kept. Results are new arrays on both sides (Pinocchio's bindings
copy `data.tau`, `data.M`, `data.ddq` into a new numpy array; so do karakuri's).
"""

import argparse
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import karakuri
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = [("talos_reduced", True), ("ur5", False)]
STATES = 100


class Pair:
    """One robot loaded by both libraries, with maps between their q and v orders."""

    def __init__(self, name, floating):
        urdf = str(ROOT / "tests" / "data" / f"{name}.urdf")
        self.name = name
        self.k = karakuri.load_urdf(urdf, floating=floating)
        self.kd = self.k.create_data()
        self.p = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
        self.pd = self.p.createData()
        assert (self.p.nq, self.p.nv) == (self.k.nq, self.k.nv), "continuous joints differ in nq: pick another robot"
        self.q_map = np.empty(self.k.nq, dtype=int)  # pinocchio index of each karakuri q entry
        self.v_map = np.empty(self.k.nv, dtype=int)
        for j in range(1, self.p.njoints):
            name_j = self.p.names[j]
            jm = self.p.joints[j]
            kq, kv = self.k.idx_q(name_j), self.k.idx_v(name_j)
            self.q_map[kq : kq + jm.nq] = jm.idx_q + np.arange(jm.nq)
            self.v_map[kv : kv + jm.nv] = jm.idx_v + np.arange(jm.nv)
        rng = np.random.default_rng(0)
        self.states = []
        for s in range(STATES):
            q = karakuri.random_configuration(self.k, seed=s)
            v, a, tau = (rng.uniform(-1, 1, self.k.nv) for _ in range(3))
            self.states.append((q, v, a, tau))

    def to_pin(self, q, v, a, tau):
        qp, vp, ap, tp = np.empty(self.k.nq), np.empty(self.k.nv), np.empty(self.k.nv), np.empty(self.k.nv)
        qp[self.q_map], vp[self.v_map], ap[self.v_map], tp[self.v_map] = q, v, a, tau
        return qp, vp, ap, tp

    def check_agreement(self):
        k, kd, p, pd = self.k, self.kd, self.p, self.pd
        vm = self.v_map
        for q, v, a, tau in self.states[:10]:
            qp, vp, ap, tp = self.to_pin(q, v, a, tau)
            assert np.abs(karakuri.rnea(k, kd, q, v, a) - pin.rnea(p, pd, qp, vp, ap)[vm]).max() < 1e-8
            assert np.abs(karakuri.crba(k, kd, q) - pin.crba(p, pd, qp)[np.ix_(vm, vm)]).max() < 1e-8
            assert np.abs(karakuri.aba(k, kd, q, v, tau) - pin.aba(p, pd, qp, vp, tp)[vm]).max() < 1e-7


def loops(pair):
    """call -> {library: function timing one measurement of n calls, ns per call}. The loops
    are written out (no per-call lambda) so that what is timed beside the call itself is one
    iteration over a list of prepared states, the same on both sides."""
    k, kd, p, pd = pair.k, pair.kd, pair.p, pair.pd
    ks = pair.states
    ps = [pair.to_pin(*s) for s in ks]

    def rnea(f, model, data, states, n, *extra):
        cycle = states * (n // len(states))
        t = time.thread_time_ns()
        for q, v, a, _ in cycle:
            f(model, data, q, v, a, *extra)
        return (time.thread_time_ns() - t) / len(cycle)

    def crba(f, model, data, states, n, *extra):
        cycle = states * (n // len(states))
        t = time.thread_time_ns()
        for q, _, _, _ in cycle:
            f(model, data, q, *extra)
        return (time.thread_time_ns() - t) / len(cycle)

    def aba(f, model, data, states, n, *extra):
        cycle = states * (n // len(states))
        t = time.thread_time_ns()
        for q, v, _, tau in cycle:
            f(model, data, q, v, tau, *extra)
        return (time.thread_time_ns() - t) / len(cycle)

    conventions = (pin.Convention.LOCAL, pin.Convention.WORLD)
    return {
        "rnea": {
            "karakuri": lambda n: rnea(karakuri.rnea, k, kd, ks, n),
            "pinocchio": lambda n: rnea(pin.rnea, p, pd, ps, n),
        },
        "crba": {
            "karakuri": lambda n: crba(karakuri.crba, k, kd, ks, n),
            "pinocchio": lambda n: min(crba(pin.crba, p, pd, ps, n, c) for c in conventions),
        },
        "aba": {
            "karakuri": lambda n: aba(karakuri.aba, k, kd, ks, n),
            "pinocchio": lambda n: min(aba(pin.aba, p, pd, ps, n, c) for c in conventions),
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000, help="calls per measurement")
    ap.add_argument("--rounds", type=int, default=7, help="measurements per cell (median)")
    args = ap.parse_args()
    print(f"karakuri {karakuri.__version__}, pinocchio {pin.__version__}, numpy {np.__version__}, "
          f"Python {platform.python_version()}, {platform.processor() or platform.machine()}")
    rows = []
    for name, floating in ROBOTS:
        pair = Pair(name, floating)
        pair.check_agreement()
        for algo, libs in loops(pair).items():
            for f in libs.values():  # warm up
                f(args.calls // 10)
            times = {lib: [] for lib in libs}
            for _ in range(args.rounds):
                for lib, f in libs.items():
                    times[lib].append(f(args.calls))
            k = statistics.median(times["karakuri"])
            p = statistics.median(times["pinocchio"])
            spread = tuple(max(times[lib]) / min(times[lib]) for lib in ("karakuri", "pinocchio"))
            rows.append((algo, f"{name} ({pair.k.nq}/{pair.k.nv})", k, p, spread))
    print()
    print("| call | robot (nq/nv) | karakuri ns | Pinocchio ns | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for algo, robot, k, p, spread in rows:
        print(f"| {algo} | {robot} | {k:.0f} | {p:.0f} | **{k / p:.2f}** |")
    print()
    print("max/min over the rounds (karakuri, Pinocchio): "
          + ", ".join(f"{a} {r.split()[0]} {s[0]:.2f}, {s[1]:.2f}" for a, r, _, _, s in rows))


if __name__ == "__main__":
    main()

"""A PD-gain sweep of a pendulum, spread over Ray tasks (or run serially without Ray).

Every task takes a chunk of (kp, kd) pairs and simulates them together in one
``karakuri.Batch`` (one world per pair, stepped in Rust threads with the GIL released),
computing the PD torques for the whole batch in numpy every control period. It reports, per
pair, the final angle, the steady-state error and the overshoot of a step to ``--target``.

    python examples/ray_sweep.py                # Ray's task API if Ray is installed
    python examples/ray_sweep.py --serial       # the same tasks called in this process

There is no cluster code here: ``ray.init()`` starts a local Ray (or joins the cluster that
``RAY_ADDRESS`` names); the tasks are plain functions, so the serial fallback runs the very
same code.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

import karakuri

PENDULUM = Path(__file__).resolve().parents[1] / "tests" / "scenes" / "pendulum.yaml"


def evaluate(scene: str, gains: Sequence[Tuple[float, float]], target: float, duration: float, period: float) -> List[Dict[str, float]]:
    """Simulates one world per ``(kp, kd)`` in a Batch under the PD law
    ``tau = kp (target - q) - kd dq`` (held for ``period`` s) and returns one result per pair."""
    batch = karakuri.Batch(scene, len(gains))
    kp = np.array([g[0] for g in gains])[:, None]
    kd = np.array([g[1] for g in gains])[:, None]
    lo, hi = batch.action_bounds
    frame = max(1, round(period / batch.dt))
    obs = batch.observations()
    peak = np.zeros(len(gains))
    for _ in range(round(duration / (frame * batch.dt))):
        q, dq = obs[:, 0:1], obs[:, 1:2]  # the layout: q then dq per joint (one joint here)
        obs = batch.step(np.clip(kp * (target - q) - kd * dq, lo, hi), steps=frame)
        peak = np.maximum(peak, obs[:, 0])
    q = obs[:, 0]
    return [
        {"kp": float(p), "kd": float(d), "q": float(qi), "error": float(target - qi), "overshoot": float(max(0.0, pk - qi))}
        for (p, d), qi, pk in zip(gains, q, peak)
    ]


def sweep(
    kps: Sequence[float],
    kds: Sequence[float],
    *,
    scene: str = str(PENDULUM),
    target: float = 0.8,
    duration: float = 5.0,
    period: float = 0.005,
    chunk: int = 8,
    serial: bool = False,
) -> List[Dict[str, float]]:
    """Evaluates every (kp, kd) pair, ``chunk`` pairs per task: Ray tasks when Ray is
    installed and ``serial`` is false, else the same function called here in turn."""
    pairs = list(itertools.product(kps, kds))
    chunks = [pairs[i : i + chunk] for i in range(0, len(pairs), chunk)]
    ray = None
    if not serial:
        try:
            import ray  # type: ignore[no-redef]
        except ImportError:
            print("Ray is not installed (pip install ray): running the tasks serially", file=sys.stderr)
    if ray is None:
        results = [evaluate(scene, c, target, duration, period) for c in chunks]
    else:
        ray.init(ignore_reinit_error=True)
        task = ray.remote(evaluate)
        results = ray.get([task.remote(scene, c, target, duration, period) for c in chunks])
    return [r for chunk_results in results for r in chunk_results]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", action="store_true", help="do not use Ray even if it is installed")
    parser.add_argument("--scene", default=str(PENDULUM))
    parser.add_argument("--target", type=float, default=0.8, help="target angle (rad)")
    parser.add_argument("--duration", type=float, default=5.0, help="simulated seconds per run")
    parser.add_argument("--kp", type=float, nargs="+", default=[5.0, 10.0, 20.0, 40.0])
    parser.add_argument("--kd", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = sweep(args.kp, args.kd, scene=args.scene, target=args.target, duration=args.duration, serial=args.serial)
    wall = time.perf_counter() - start
    print(f"{'kp':>6} {'kd':>6} {'q (rad)':>10} {'error':>10} {'overshoot':>10}")
    for r in results:
        print(f"{r['kp']:6.2f} {r['kd']:6.2f} {r['q']:10.5f} {r['error']:10.5f} {r['overshoot']:10.5f}")
    best = min(results, key=lambda r: abs(r["error"]) + r["overshoot"])
    print(f"best: kp = {best['kp']}, kd = {best['kd']} ({len(results)} runs in {wall:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

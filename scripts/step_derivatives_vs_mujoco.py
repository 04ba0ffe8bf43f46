#!/usr/bin/env python3
"""karakuri's World.step_derivatives against MuJoCo's mjd_transitionFD on the same MJCF models,
interleaved in one process (decision record 0069).

Each model is loaded by both: by karakuri as a scene robot without collision (`collision:
none`), by MuJoCo with contacts disabled (`mjDSBL_CONTACT`); then with contacts (record 0078):
dm_control's quadruped standing on its toes after `--settle-contacts` steps, both with their
contacts (karakuri's derivatives through its contact solve's active set). Both are linearised at the model's initial state after `--settle` steps;
An RK4 model runs MuJoCo's Euler (mjd_transitionFD refuses RK4). MuJoCo's forward differences (its default, `centered=0`, eps 1e-6) take 2 nv + nu steps,
karakuri's analytic derivatives one call. Rounds alternate the two; the median per call is
printed, and the ratio karakuri / MuJoCo.

    python3 scripts/step_derivatives_vs_mujoco.py [--rounds 5] [--calls 200]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import mujoco
import numpy as np

import karakuri

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["dm_control/pendulum.xml", "dm_control/acrobot.xml", "dm_control/cheetah.xml", "dm_control/humanoid.xml"]
CONTACT_MODELS = ["dm_control/cheetah.xml", "dm_control/quadruped.xml"]


def karakuri_world(xml, tmp, contacts=False):
    scene = tmp / (xml.stem + ".yaml")
    if contacts:
        scene.write_text(f"name: {xml.stem}\nrobots: [{{name: r, mjcf: {xml}}}]\n")
    else:
        scene.write_text(f"name: {xml.stem}\ncontact: {{mode: none}}\nrobots: [{{name: r, mjcf: {xml}, collision: none}}]\n")
    return karakuri.World.from_file(str(scene))


def per_call(f, calls):
    t = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--settle", type=int, default=20)
    ap.add_argument("--settle-contacts", type=int, default=1000)
    args = ap.parse_args()
    print(f"{'model':<12} {'nv':>3} {'nu':>3} {'karakuri µs':>12} {'MuJoCo FD µs':>13} {'ratio':>7}  integrators")
    with tempfile.TemporaryDirectory() as tmp:
        for rel, contacts in [(r, False) for r in MODELS] + [(r, True) for r in CONTACT_MODELS]:
            settle = args.settle_contacts if contacts else args.settle
            xml = ROOT / "tests/data/mjcf" / rel
            w = karakuri_world(xml, Path(tmp), contacts)
            w.step(settle)
            m = mujoco.MjModel.from_xml_path(str(xml))
            if not contacts:
                m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
            if m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
                # mjd_transitionFD refuses RK4; karakuri's auto steps a damped, actuated model by Euler too
                m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
            d = mujoco.MjData(m)
            for _ in range(settle):
                mujoco.mj_step(m, d)
            nx, nu = 2 * m.nv + m.na, m.nu
            A, B = np.zeros((nx, nx)), np.zeros((nx, nu))
            kk, mj = [], []
            try:
                w.step_derivatives()
            except ValueError as e:
                print(f"{xml.stem:<12} karakuri refuses: {e}")
                continue
            for _ in range(args.rounds):
                kk.append(per_call(w.step_derivatives, args.calls))
                mj.append(per_call(lambda: mujoco.mjd_transitionFD(m, d, 1e-6, 0, A, B, None, None), args.calls))
            ka, ma = statistics.median(kk) * 1e6, statistics.median(mj) * 1e6
            integ = mujoco.mjtIntegrator(m.opt.integrator).name
            name = xml.stem + (" (contacts)" if contacts else "")
            print(f"{name:<12} {m.nv:>3} {m.nu:>3} {ka:>12.1f} {ma:>13.1f} {ka / ma:>7.3f}  MuJoCo {integ}, {d.ncon} contacts")


if __name__ == "__main__":
    main()

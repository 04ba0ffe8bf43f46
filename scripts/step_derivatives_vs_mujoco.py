#!/usr/bin/env python3
"""karakuri's World.step_derivatives against MuJoCo's mjd_transitionFD on the same MJCF models,
interleaved in one process (decision record 0069).

Each model is loaded by both: by karakuri as a scene robot without collision (`collision:
none`), by MuJoCo with contacts disabled (`mjDSBL_CONTACT`); then with contacts (record 0078):
the cheetah and gymnasium's ant standing after `--settle-contacts` steps, both with their
contacts (karakuri's derivatives through its contact solve's active set). Both are linearised
at the model's initial state (with the joints of POSE set in both: the ant's ankles and the
pusher arm's elbow and wrist start on a joint limit, which the derivatives refuse) after
`--settle` steps. An RK4 model runs MuJoCo's Euler (mjd_transitionFD refuses RK4).
MuJoCo's forward differences (its default, `centered=0`, eps 1e-6) take 2 nv + nu steps,
karakuri's analytic derivatives one call; both write into arrays made once (karakuri's
`out=`, Fortran order). Rounds alternate the two, timed in the process's CPU time; the best
round's time per call is printed
(`--stat median` for the median: the best is the one a shared, loaded machine disturbs
least), and the ratio karakuri / MuJoCo. The quadruped is gymnasium's ant (dm_control's is refused: its
tendons), the arm gymnasium's pusher (a PR2 arm, 7 joints, and its puck's and goal's slides).

    python3 scripts/step_derivatives_vs_mujoco.py [--rounds 5] [--calls 200] [--stat min|median]
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
MODELS = ["dm_control/pendulum.xml", "dm_control/acrobot.xml", "dm_control/cheetah.xml", "dm_control/humanoid.xml",
          "gymnasium/ant.xml", "gymnasium/pusher_v5.xml"]
CONTACT_MODELS = ["dm_control/cheetah.xml", "gymnasium/ant.xml"]
# joint positions (rad) set in both engines before settling: inside the joints' ranges
POSE = {
    "ant": {"ankle_1": 0.87, "ankle_2": -0.87, "ankle_3": -0.87, "ankle_4": 0.87},
    "pusher_v5": {"r_elbow_flex_joint": -1.0, "r_wrist_flex_joint": -0.5},
}
LABEL = {"ant": "ant (quadruped)", "pusher_v5": "pusher (arm)"}


def karakuri_world(xml, tmp, contacts=False):
    scene = tmp / (xml.stem + ".yaml")
    if contacts:
        scene.write_text(f"name: {xml.stem}\nrobots: [{{name: r, mjcf: {xml}}}]\n")
    else:
        scene.write_text(f"name: {xml.stem}\ncontact: {{mode: none}}\nrobots: [{{name: r, mjcf: {xml}, collision: none}}]\n")
    return karakuri.World.from_file(str(scene))


def per_call(f, calls):
    # the process's CPU time: on a shared machine a long round is preempted more often than a
    # short one, which wall time would charge to the slower engine
    t = time.process_time()
    for _ in range(calls):
        f()
    return (time.process_time() - t) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--settle", type=int, default=20)
    ap.add_argument("--settle-contacts", type=int, default=1000)
    ap.add_argument("--stat", choices=["min", "median"], default="min")
    args = ap.parse_args()
    print(f"{'model':<22} {'nv':>3} {'nu':>3} {'karakuri µs':>12} {'MuJoCo FD µs':>13} {'ratio':>7}  integrators")
    with tempfile.TemporaryDirectory() as tmp:
        for rel, contacts in [(r, False) for r in MODELS] + [(r, True) for r in CONTACT_MODELS]:
            settle = args.settle_contacts if contacts else args.settle
            xml = ROOT / "tests/data/mjcf" / rel
            w = karakuri_world(xml, Path(tmp), contacts)
            m = mujoco.MjModel.from_xml_path(str(xml))
            d = mujoco.MjData(m)
            pose = POSE.get(xml.stem, {})
            q = np.array(w.q)
            for name, x in pose.items():
                q[w.joint_names.index("r/" + name)] = x
                d.qpos[m.jnt_qposadr[m.joint(name).id]] = x
            w.set_joint_positions(q)
            w.step(settle)
            if not contacts:
                m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
            if m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
                # mjd_transitionFD refuses RK4; karakuri's auto steps a damped, actuated model by Euler too
                m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
            for _ in range(settle):
                mujoco.mj_step(m, d)
            nx, nu = 2 * m.nv + m.na, m.nu
            A, B = np.zeros((nx, nx)), np.zeros((nx, nu))
            kk, mj = [], []
            name = LABEL.get(xml.stem, xml.stem) + (", contacts" if contacts else "")
            try:
                out = w.step_derivatives()
            except ValueError as e:
                print(f"{name:<22} karakuri refuses: {e}")
                continue
            out = (np.asfortranarray(out[0]), np.asfortranarray(out[1]))
            for _ in range(args.rounds):
                kk.append(per_call(lambda: w.step_derivatives(out=out), args.calls))
                mj.append(per_call(lambda: mujoco.mjd_transitionFD(m, d, 1e-6, 0, A, B, None, None), args.calls))
            stat = min if args.stat == "min" else statistics.median
            ka, ma = stat(kk) * 1e6, stat(mj) * 1e6
            integ = mujoco.mjtIntegrator(m.opt.integrator).name
            print(f"{name:<22} {m.nv:>3} {m.nu:>3} {ka:>12.1f} {ma:>13.1f} {ka / ma:>7.3f}  MuJoCo {integ}, {d.ncon} contacts")


if __name__ == "__main__":
    main()

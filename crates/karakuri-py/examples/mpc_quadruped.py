#!/usr/bin/env python3
"""Linear MPC keeping Solo-12 standing against a push, on karakuri's step derivatives.

Solo-12 (the URDF inside karakuri, `builtin:solo12.urdf`) stands on a ball per foot on the
floor (a box on its base lands a fall), each of its 12 joints on the same PD position servo. After it has settled, a push
(the scene's `perturbations`: a force on the base for a short time) shoves it sideways.

* **PD alone**: the servos' targets stay at the standing posture (kp 3 N·m/rad, kd 0.05).
* **MPC**: at every step, `world.step_derivatives()` linearises the next step about the state
  now (through the four foot contacts, record 0078): `e⁺ ≈ A e + B δu + d`, `e` the error from
  the standing state in the derivatives' tangent space (joint angles, base position and
  rotation vector in base axes, their rates), `δu` the targets' offset from the standing
  ones, `d` the drift of one step with the standing targets (a probe step, undone by
  `restore`). A finite-horizon LQR on that affine model (a Riccati recursion over `--horizon`
  steps, terminal cost 10 Q) gives this step's offset, clipped to ±0.5 rad; the servos and
  their gains are PD alone's. The standing place follows the feet: when a push makes them
  slide, the reference base position moves with their contacts' centre. While the push acts
  the derivatives are refused (0069: pushes in the step) and the controller keeps the last
  plan's gain and feed-forward.

    python3 crates/karakuri-py/examples/mpc_quadruped.py [--push 27] [--horizon 40]

prints, for both controllers, the base's largest and final distance (cm) and tilt (degrees)
from its standing pose, its final height error, how far the feet slid, where the base ends
over them, and whether it fell (the base box on the floor). The default push, 27 N sideways for 0.1 s on 2.5 kg (more
than the feet's friction, μ m g = 24.5 N, can hold: both slide), topples PD alone and not
the MPC (docs/decisions/0083-mpc-quadruped-push-recovery.md).
"""

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

import karakuri

DT = 0.005
KP, KD = 3.0, 0.05
FOOT = 0.016  # foot ball radius (m)
STAND = {"HAA": 0.0, "HFE": 0.8, "KFE": -1.6}  # front legs; hind legs mirror HFE and KFE
SETTLE = 1.0  # s under PD before the push
PUSH_START, PUSH_TIME = 1.2, 0.1  # s
BASE = "solo/base_link"
U_MAX = 0.5  # rad: the largest offset of a target from the standing one
R_WEIGHT = 1.0

SCENE = """
world: {{gravity: [0, 0, -9.81], dt: {dt}}}
engine: {{integrator: semi_implicit_euler, sleep: {{enabled: false}}}}
materials: {{m: {{static_friction: 1.0}}}}
bodies: [{{name: floor, shapes: [{{type: plane, material: m}}]}}]
robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: floating
    collision: none
    material: m
    shapes: [{{link: FL_FOOT, type: sphere, radius: {r}}}, {{link: FR_FOOT, type: sphere, radius: {r}}},
             {{link: HL_FOOT, type: sphere, radius: {r}}}, {{link: HR_FOOT, type: sphere, radius: {r}}},
             {{link: base_link, type: box, half_extents: [0.17, 0.06, 0.03]}}]
    pose: {{position: [0, 0, 0.26]}}
    q0: {{FL_HFE: 0.8, FL_KFE: -1.6, FR_HFE: 0.8, FR_KFE: -1.6, HL_HFE: -0.8, HL_KFE: 1.6, HR_HFE: -0.8, HR_KFE: 1.6}}
    actuators:
      - {{joints: '*', mode: position, kp: {kp}, kd: {kd}, target: 0.0}}
perturbations:
  - {{body: {base}, force: {force}, start: {start}, duration: {duration}}}
"""


def make_world(push):
    """Solo-12 on the floor, pushed by `push` (N, world axes) from PUSH_START for PUSH_TIME."""
    text = SCENE.format(dt=DT, r=FOOT, kp=KP, kd=KD, base=BASE, force=list(push), start=PUSH_START, duration=PUSH_TIME)
    path = Path(tempfile.mkdtemp()) / "solo_push.yaml"
    path.write_text(text)
    return karakuri.World.from_file(str(path))


def standing_targets(world):
    """The standing posture over `actuator_names` (hind legs' HFE and KFE mirrored)."""
    out = []
    for name in world.actuator_names:
        leg, joint = name.split("/")[-1].split("_")
        sign = -1.0 if leg.startswith("H") and joint != "HAA" else 1.0
        out.append(sign * STAND[joint])
    return np.array(out)


def angle(R):
    """Rotation angle of R (rad)."""
    return math.acos(max(-1.0, min(1.0, (np.trace(R) - 1.0) / 2.0)))


def log_so3(R):
    """Rotation vector of R (for the small rotations the controller sees: it is
    ill-conditioned near π)."""
    theta = angle(R)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2.0
    return w if theta < 1e-9 else w * (theta / math.sin(theta))


def base_pose(world):
    T = world.poses[world.body_index(BASE)]
    return T[:3, :3], T[:3, 3]


def feet_points(world):
    """The floor contacts' points of the feet (world axes)."""
    return [c["point"] for c in world.contacts if "floor" in c["bodies"] and BASE not in c["bodies"]]


def feet(world):
    """Centre of the feet's floor contacts (world axes)."""
    points = feet_points(world)
    return np.mean(points, axis=0) if points else np.full(3, np.nan)


def error(world, ref):
    """The state's error from the standing state `ref`, in the order of A's tangent space:
    joint angles, base position and rotation vector (base axes), joint rates, base velocity
    and angular velocity (base axes)."""
    R, p = base_pose(world)
    i = world.body_index(BASE)
    return np.concatenate([
        world.q - ref["q"],
        R.T @ (p - ref["p"]),
        log_so3(ref["R"].T @ R),
        world.dq,
        R.T @ world.linear_velocities[i],
        R.T @ world.angular_velocities[i],
    ])


W_JOINT, W_XY, W_Z, W_ROT = 1.0, 100.0, 100.0, 100.0  # on the errors (rad, m)
W_JOINT_RATE, W_LIN, W_ANG = 0.01, 1.0, 0.1  # on the rates (rad/s, m/s)


def weights(nj):
    """Q over the error (joints, base position, base rotation; their rates), R over δu."""
    q = np.concatenate([np.full(nj, W_JOINT), [W_XY, W_XY, W_Z], np.full(3, W_ROT),
                        np.full(nj, W_JOINT_RATE), np.full(3, W_LIN), np.full(3, W_ANG)])
    return np.diag(q), R_WEIGHT * np.eye(nj)


def lqr_plan(A, B, d, Q, R, QF, horizon):
    """Gain K and feed-forward k of the first step of the finite-horizon LQR on
    e⁺ = A e + B δu + d with cost Σ e'Qe + δu'Rδu + e_H'QF e_H (Riccati backwards)."""
    P, p = QF, np.zeros(A.shape[0])
    for _ in range(horizon):
        PB = P @ B
        S = R + B.T @ PB
        K = -np.linalg.solve(S, PB.T @ A)
        k = -np.linalg.solve(S, B.T @ (P @ d + p))
        Acl = A + B @ K
        p = K.T @ (R @ k) + Acl.T @ (P @ (B @ k + d) + p)
        P = Q + K.T @ R @ K + Acl.T @ P @ Acl
        P = 0.5 * (P + P.T)
    return K, k


def run(push, mpc, horizon=40, duration=3.0, log=None):
    """Settles Solo-12, pushes it, returns its record after the push: time, base distance
    (m) and tilt (rad) from the standing pose, base height (m)."""
    world = make_world(push)
    u_ref = standing_targets(world)
    world.set_targets(u_ref)
    world.step(int(round(SETTLE / DT)))
    R, p = base_pose(world)
    ref = {"q": world.q.copy(), "p": p.copy(), "R": R.copy(), "height": p[2], "feet": feet(world), "p0": p.copy()}
    nj = len(u_ref)
    Q, Rw = weights(nj)
    QF = 10.0 * Q
    K, k = np.zeros((nj, 2 * len(ref["q"]) + 12)), np.zeros(nj)
    rec = []
    ref["held_push"] = ref["held_other"] = 0
    while world.time < duration - 1e-9:
        if len(feet_points(world)) == 4 and len(world.contacts) == 4:  # the standing place: over the four feet where they are now
            ref["p"][:2] = ref["p0"][:2] + (feet(world) - ref["feet"])[:2]
        e = error(world, ref)
        u = u_ref
        if mpc:
            try:
                world.set_targets(u_ref)
                A, B = world.step_derivatives()
                snap = world.snapshot()
                world.step()
                d = error(world, ref) - A @ e
                world.restore(snap)
                K, k = lqr_plan(A, B, d, Q, Rw, QF, horizon)
                u = u_ref + np.clip(K @ e + k, -U_MAX, U_MAX)
            except ValueError as err:
                # refused (record 0069: a push acting in this step; 0078: e.g. the base box
                # sliding on four corners after a fall): keep the last plan
                ref["held_push" if "push" in str(err) else "held_other"] += 1
                u = u_ref + np.clip(K @ e + k, -U_MAX, U_MAX)
        world.set_targets(u)
        world.step()
        R, p = base_pose(world)
        base_down = any(BASE in c["bodies"] for c in world.contacts)
        rec.append((world.time, float(np.linalg.norm(p - ref["p0"])), angle(ref["R"].T @ R), float(p[2]),
                    len(world.contacts), *(feet(world) - ref["feet"])[:2], *(p - ref["p0"])[:2], base_down))
    if log and mpc:
        log(f"MPC: the last plan held {ref['held_push']} steps (push), {ref['held_other']} (other refusals)")
    return np.array(rec), ref


def summary(rec, ref):
    """After the push: the base's largest and final distance (cm) and tilt (degrees) from its
    standing pose, its final height error (cm), how far the feet slid (cm, their contacts'
    centre), the final base distance from its standing place over the feet (cm), whether it
    fell (the base box touched the floor or tilted past 45°) and whether all four feet
    touch at the end (and nothing else)."""
    after = rec[rec[:, 0] > PUSH_START]
    last = after[-1]
    fallen = bool(np.any(after[:, 9]) or np.any(after[:, 2] > math.radians(45)))
    return {
        "max_cm": 100 * after[:, 1].max(), "max_deg": math.degrees(after[:, 2].max()),
        "final_cm": 100 * last[1], "final_deg": math.degrees(last[2]),
        "final_dz_cm": 100 * (last[3] - ref["height"]),
        "feet_slid_cm": 100 * float(np.hypot(last[5], last[6])),
        "over_feet_cm": 100 * float(np.hypot(last[7] - last[5], last[8] - last[6])),
        "fallen": fallen, "four_feet": bool(last[4] == 4 and not last[9]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--push", type=float, default=27.0, help="sideways push (N) on the base for 0.1 s")
    ap.add_argument("--horizon", type=int, default=40)
    ap.add_argument("--duration", type=float, default=3.0)
    args = ap.parse_args()
    for mpc in (False, True):
        t0 = time.perf_counter()
        rec, ref = run([0.0, args.push, 0.0], mpc, args.horizon, args.duration, log=print)
        s = summary(rec, ref)
        print(f"{'MPC' if mpc else 'PD '}: largest {s['max_cm']:.2f} cm / {s['max_deg']:.2f} deg, "
              f"final {s['final_cm']:.2f} cm / {s['final_deg']:.2f} deg (height {s['final_dz_cm']:+.2f} cm, "
              f"feet slid {s['feet_slid_cm']:.2f} cm, base over the feet {s['over_feet_cm']:.2f} cm), "
              f"fallen: {s['fallen']}, four feet down: {s['four_feet']} ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()

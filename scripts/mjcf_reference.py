#!/usr/bin/env python3
"""MuJoCo's own mass matrices and bias forces for the MJCF models of tests/data/mjcf, in
karakuri's coordinates: tests/data/mjcf/<source>/<model>.ref.json, read by
crates/karakuri/tests/mjcf_mujoco.rs.

For each model: at qpos0, at the first keyframe (if any) and at 3 random configurations within
the joint ranges (seeded), MuJoCo's mj_fullM (armature included) and qfrc_bias at zero velocity
and at a random velocity; also the world positions of named sites and the world poses
(position, row-major rotation) of named bodies, and qpos, qvel as MuJoCo has them.

Coordinates (docs/MJCF.md): karakuri's q is qpos with quaternions [x y z w] (MuJoCo [w x y z]);
karakuri's v is qvel but for a free joint's linear velocity, in body axes (MuJoCo: world axes).
With A = d(qvel)/d(v) (blockdiag(R, I) on a free joint, identity elsewhere), qvel = A v, so
kinetic energy gives M_k = Aᵀ M A, and M qacc + c = τ with qacc = A a + Ȧ v gives
c_k = Aᵀ (c + M Ȧ v), Ȧ v = [R (ω × v_lin); 0] on a free joint.

Also, for each model, MuJoCo's compiled simulation arrays (geoms, joint limits and passive
properties, actuators, sensors, equality constraints, contact pairs and excludes, options,
keyframes) as tests/data/mjcf/<source>/<model>.sim.json, read by
crates/karakuri/tests/mjcf_world.rs (`mjcf::load_world`).

Usage: python3 scripts/mjcf_reference.py [--sim-only] [MODEL.xml ...]   (default: every model listed below)
Needs: pip install mujoco==4.0.0 numpy
"""
import json
import os
import sys

import mujoco
import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mjcf")
MODELS = [
    "dm_control/acrobot.xml", "dm_control/cartpole.xml", "dm_control/cheetah.xml", "dm_control/finger.xml",
    "dm_control/hopper.xml", "dm_control/humanoid.xml", "dm_control/humanoid_CMU.xml",
    "dm_control/manipulator.xml", "dm_control/quadruped.xml", "dm_control/walker.xml",
    "dm_control/pendulum.xml", "dm_control/reacher.xml", "dm_control/swimmer.xml",
    "dm_control/point_mass.xml", "dm_control/ball_in_cup.xml", "dm_control/fish.xml",
    "gymnasium/ant.xml", "gymnasium/half_cheetah.xml", "gymnasium/hopper.xml", "gymnasium/humanoid.xml",
    "gymnasium/humanoidstandup.xml", "gymnasium/inverted_double_pendulum.xml",
    "gymnasium/inverted_pendulum.xml", "gymnasium/pusher.xml", "gymnasium/pusher_v5.xml",
    "gymnasium/reacher.xml", "gymnasium/swimmer.xml", "gymnasium/walker2d.xml", "gymnasium/walker2d_v5.xml",
    "gymnasium/point.xml",
    "mujoco_mjx/humanoid.xml", "mujoco_mjx/02_humanoids.xml", "features/features.xml",
]

# models whose bodies weigh their mesh geoms: the mass matrix and bias only, read by
# crates/karakuri-sim/tests/mjcf_mesh_inertia.rs (the core's tests have no mesh reader)
MESH_MODELS = ["mujoco_warp/aloha_pot/scene.xml"]

# models for the simulation arrays only (features_sim: every element load_world reads)
SIM_MODELS = MODELS + ["features/features_sim.xml"]


def quat_mat(q):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q, float) / np.linalg.norm(q))
    return m.reshape(3, 3)


def to_karakuri_q(m, qpos):
    q = np.array(qpos, float)
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        t = m.jnt_type[j]
        at = a + 3 if t == mujoco.mjtJoint.mjJNT_FREE else a if t == mujoco.mjtJoint.mjJNT_BALL else None
        if at is not None:
            q[at:at + 4] = [qpos[at + 1], qpos[at + 2], qpos[at + 3], qpos[at]]
    return q


def jacobian_and_drift(m, qpos, v_k):
    """A = d qvel / d v and Ȧ v (see the module's docstring)."""
    A = np.eye(m.nv)
    adot_v = np.zeros(m.nv)
    for j in range(m.njnt):
        if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE:
            continue
        a, d = m.jnt_qposadr[j], m.jnt_dofadr[j]
        R = quat_mat(qpos[a + 3:a + 7])
        A[d:d + 3, d:d + 3] = R
        adot_v[d:d + 3] = R @ np.cross(v_k[d + 3:d + 6], v_k[d:d + 3])
    return A, adot_v


def random_qpos(m, rng):
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a, t = m.jnt_qposadr[j], m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.uniform(-1, 1, 3)
            qpos[a + 3:a + 7] = rng.normal(size=4)
            qpos[a + 3:a + 7] /= np.linalg.norm(qpos[a + 3:a + 7])
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            qpos[a:a + 4] = rng.normal(size=4)
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        elif m.jnt_limited[j]:
            qpos[a] = rng.uniform(*m.jnt_range[j])
        else:
            qpos[a] = rng.uniform(-np.pi, np.pi) if t == mujoco.mjtJoint.mjJNT_HINGE else rng.uniform(-1, 1)
    return qpos


def case(m, d, label, qpos, rng):
    qvel = rng.uniform(-1, 1, m.nv)
    d.qpos[:] = qpos
    d.qvel[:] = 0
    mujoco.mj_forward(m, d)
    sites = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, i): d.site_xpos[i].tolist()
             for i in range(m.nsite) if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, i)}
    bodies = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i): d.xpos[i].tolist() + d.xmat[i].tolist()
              for i in range(1, m.nbody) if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i)}
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    bias0 = d.qfrc_bias.copy()
    d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    bias = d.qfrc_bias.copy()
    # karakuri's v for this qvel: v_lin = Rᵀ qvel_lin on free joints
    A0, _ = jacobian_and_drift(m, qpos, np.zeros(m.nv))
    v_k = np.linalg.solve(A0, qvel)
    A, adot_v = jacobian_and_drift(m, qpos, v_k)
    return {
        "label": label,
        "qpos": np.asarray(qpos, float).tolist(),
        "qvel": qvel.tolist(),
        "site_positions": sites,
        "body_poses": bodies,
        "q": to_karakuri_q(m, qpos).tolist(),
        "v": v_k.tolist(),
        "mass_matrix": (A.T @ M @ A).ravel().tolist(),
        "bias_zero_velocity": (A.T @ bias0).tolist(),
        "bias": (A.T @ (bias + M @ adot_v)).tolist(),
    }


def reference(rel):
    path = os.path.join(ROOT, rel)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    cases = [case(m, d, "qpos0", m.qpos0.copy(), rng)]
    if m.nkey > 0:
        cases.append(case(m, d, "key0", m.key_qpos[0].copy(), rng))
    for k in range(3):
        cases.append(case(m, d, f"random{k}", random_qpos(m, rng), rng))
    # bodies with a joint on their path to the world (mocap bodies, welded to the world in
    # karakuri, are not)
    def moves(b):
        while b != 0:
            if m.body_jntnum[b] > 0:
                return True
            b = m.body_parentid[b]
        return False

    moving = [b for b in range(1, m.nbody) if moves(b)]
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    return {
        "source": rel,
        "mujoco": mujoco.__version__,
        "nq": int(m.nq),
        "nv": int(m.nv),
        "total_mass": float(m.body_mass[1:].sum()),
        "moving_mass": float(m.body_mass[moving].sum()),
        "gravity": (m.opt.gravity * (0 if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY else 1)).tolist(),
        "joint_names": names,
        "cases": cases,
    }


def enum_names(enum, values):
    return [enum(int(v)).name for v in values]


def simulation(rel):
    """MuJoCo's compiled simulation arrays (see the module's docstring)."""
    m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, rel))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    lst = lambda a: (np.asarray(a).astype(int) if np.asarray(a).dtype == bool else np.asarray(a)).tolist()
    return {
        "source": rel,
        "mujoco": mujoco.__version__,
        "geom_type": enum_names(mujoco.mjtGeom, m.geom_type),
        "geom_bodyid": lst(m.geom_bodyid),
        "geom_size": lst(m.geom_size),
        "geom_pos": lst(m.geom_pos),
        "geom_quat": lst(m.geom_quat),
        "geom_xpos": lst(d.geom_xpos),
        "geom_xmat": lst(d.geom_xmat),
        "geom_friction": lst(m.geom_friction),
        "geom_contype": lst(m.geom_contype),
        "geom_conaffinity": lst(m.geom_conaffinity),
        "geom_condim": lst(m.geom_condim),
        "geom_priority": lst(m.geom_priority),
        "geom_solref": lst(m.geom_solref),
        "geom_solimp": lst(m.geom_solimp),
        "geom_margin": lst(m.geom_margin),
        "geom_gap": lst(m.geom_gap),
        "jnt_limited": lst(m.jnt_limited),
        "jnt_range": lst(m.jnt_range),
        "jnt_stiffness": lst(m.jnt_stiffness),
        "jnt_solref": lst(m.jnt_solref),
        "jnt_solimp": lst(m.jnt_solimp),
        "jnt_dofadr": lst(m.jnt_dofadr),
        "jnt_qposadr": lst(m.jnt_qposadr),
        "qpos_spring": lst(m.qpos_spring),
        "qpos0": lst(m.qpos0),
        "dof_damping": lst(m.dof_damping),
        "dof_frictionloss": lst(m.dof_frictionloss),
        "actuator_trntype": enum_names(mujoco.mjtTrn, m.actuator_trntype),
        "actuator_trnid": lst(m.actuator_trnid[:, 0]),
        "actuator_dyntype": enum_names(mujoco.mjtDyn, m.actuator_dyntype),
        "actuator_dynprm": lst(m.actuator_dynprm[:, 0]),
        "actuator_gaintype": enum_names(mujoco.mjtGain, m.actuator_gaintype),
        "actuator_biastype": enum_names(mujoco.mjtBias, m.actuator_biastype),
        "actuator_gainprm": lst(m.actuator_gainprm[:, :3]),
        "actuator_biasprm": lst(m.actuator_biasprm[:, :3]),
        "actuator_gear": lst(m.actuator_gear),
        "actuator_ctrllimited": lst(m.actuator_ctrllimited),
        "actuator_ctrlrange": lst(m.actuator_ctrlrange),
        "actuator_forcelimited": lst(m.actuator_forcelimited),
        "actuator_forcerange": lst(m.actuator_forcerange),
        "sensor_type": enum_names(mujoco.mjtSensor, m.sensor_type),
        "sensor_objid": lst(m.sensor_objid),
        "eq_type": enum_names(mujoco.mjtEq, m.eq_type),
        "eq_obj1id": lst(m.eq_obj1id),
        "eq_obj2id": lst(m.eq_obj2id),
        "pair_geom1": lst(m.pair_geom1),
        "pair_geom2": lst(m.pair_geom2),
        "pair_friction": lst(m.pair_friction),
        "pair_condim": lst(m.pair_dim),
        "exclude_signature": lst(m.exclude_signature),
        "ntendon": int(m.ntendon),
        "opt_timestep": float(m.opt.timestep),
        "opt_gravity": lst(m.opt.gravity * (0 if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY else 1)),
        "opt_integrator": mujoco.mjtIntegrator(int(m.opt.integrator)).name,
        "opt_cone": mujoco.mjtCone(int(m.opt.cone)).name,
        "opt_impratio": float(m.opt.impratio),
        "key_qpos": lst(m.key_qpos),
        "key_qvel": lst(m.key_qvel),
        "key_ctrl": lst(m.key_ctrl),
    }


def main():
    args = sys.argv[1:]
    sim_only = "--sim-only" in args
    models = [a for a in args if a != "--sim-only"] or SIM_MODELS + MESH_MODELS
    for rel in models:
        if not sim_only and (rel in MODELS or rel in MESH_MODELS):
            out = os.path.join(ROOT, rel[:-4] + ".ref.json")
            ref = reference(rel)
            with open(out, "w") as f:
                json.dump(ref, f)
            print(f"{rel}: nq {ref['nq']} nv {ref['nv']} -> {os.path.relpath(out)}")
        if rel in MESH_MODELS:
            continue
        out = os.path.join(ROOT, rel[:-4] + ".sim.json")
        with open(out, "w") as f:
            json.dump(simulation(rel), f)
        print(f"{rel}: simulation arrays -> {os.path.relpath(out)}")


if __name__ == "__main__":
    main()

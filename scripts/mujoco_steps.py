#!/usr/bin/env python3
"""MuJoCo's cost per step on the validation scenes, measured on this machine.

Usage: python3 scripts/mujoco_steps.py [SCENES...] [--json FILE] [--repeats N] [--in-c]
       [--print-mjcf SCENE]

SCENES default to ../shared/validation/scenes/*.json relative to the repo root. Needs
`pip install mujoco` (numpy comes with it).

Each karakuri-validation-scene (../shared/validation/SCENE_FORMAT.md) is converted to MJCF:
- every body becomes a <body> with pose_in_parent as pos/quat (file quaternions are [x,y,z,w],
  MJCF wants "w x y z"); a free joint puts q0 in the body's pos/quat (free bodies have parent
  'world', so this is the initial qpos) and qd0 in qvel (linear = world velocity of the body
  origin, as MuJoCo's free joint; angular rotated into body axes, as MuJoCo's free joint);
- revolute joints become <joint type="hinge" pos=anchor axis=axis> in file order (the file's
  T(anchor)*motion*T(-anchor) convention is MuJoCo's), and q0/qd0 are written to qpos/qvel, so
  qpos0 stays the zero configuration the scene's pose_in_parent refers to;
- mass/com/inertia as <inertial pos mass fullinertia>; static bodies (parent world, no joint)
  get no inertial and are welded to the world;
- shapes: sphere / box (half extents = MJCF size) / capsule (radius, half_length) / plane with
  their body-frame pose; friction = the material's dynamic_friction (MuJoCo's torsional and
  rolling defaults kept); collide=false shapes get contype=conaffinity=0;
- loop_constraints become <equality><connect site1 site2> at the two anchors (a point
  constraint; for these planar loops its extra rows are redundant with the parallel hinges, as
  the scene's note says); collision_exclude_pairs become <contact><exclude>;
- world.gravity and timestep = world.dt; everything else is MuJoCo's default (Euler
  integrator, soft contacts, PGS-free Newton solver, parent-child contact filtering).

Restitution, separate static friction and the scene's contact error correction have no MuJoCo
equivalent in defaults and are not reproduced: MuJoCo's soft contacts bounce less (e ~ 0.13
instead of 0.5) and let a sticking box creep. That is not the point here: only the cost per step
is measured. The sanity checks below (printed on stderr) make sure the MJCF is the same
scene: initial world poses of all bodies against `initial_world_pose`, free-fall position at T,
first contact time of the bounce, the stack staying up, the four-bar loop staying closed, the
double pendulum's energy, the cradle's first ball hitting the second.

Timing: a short warm-up (200 steps, then reset to the initial state), then
min(duration/dt, 2000) steps from the initial state in batches of 100 steps, each batch timed
with time.perf_counter_ns(); the figure is the median of the batch means (over --repeats runs,
default 3, pooled). By default a batch is a Python loop of mujoco.mj_step(m, d) (one step per
call, as "measured from Python" in the validation README, binding overhead included); --in-c
times mujoco.mj_step(m, d, nstep=100) instead (C loop, no per-step Python overhead).
`cpu_us_per_step` is the robot race's measure (`scripts/robot_race.py`): all n steps of the run
from the initial state, R times after a warm-up of min(n, 200) steps, the thread's CPU time of
each 100-step segment (one mj_step(m, d, nstep=100)), each segment's least over the R runs,
summed; `karakuri simulate --cpu-time R` times karakuri's steps the same way.
"""
import argparse
import glob
import json
import math
import os
import statistics
import sys
import time

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GLOB = os.path.join(REPO, "..", "shared", "validation", "scenes", "*.json")
BATCH = 100
MAX_STEPS = 2000
WARMUP = 200


def fmt(v):
    return " ".join(repr(float(x)) for x in v)


def quat_wxyz(q_xyzw):
    x, y, z, w = q_xyzw
    return [w, x, y, z]


def pose_attrs(pose):
    return 'pos="%s" quat="%s"' % (fmt(pose["position"]), fmt(quat_wxyz(pose["orientation"])))


def quat_to_mat(q_wxyz):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q_wxyz, dtype=float))
    return m.reshape(3, 3)


def geom_xml(shape, materials, name):
    t = shape["type"]
    attrs = ['name="%s"' % name, pose_attrs(shape["pose"])]
    if t == "sphere":
        attrs += ['type="sphere"', 'size="%r"' % float(shape["radius"])]
    elif t == "box":
        attrs += ['type="box"', 'size="%s"' % fmt(shape["half_extents"])]
    elif t == "capsule":
        attrs += ['type="capsule"', 'size="%r %r"' % (float(shape["radius"]), float(shape["half_length"]))]
    elif t == "plane":
        # infinite plane; MJCF size only affects rendering (0 0 = infinite)
        attrs += ['type="plane"', 'size="0 0 1"']
    else:
        raise ValueError("unsupported shape type %r" % t)
    mat = shape.get("material")
    if mat:
        mu = float(materials[mat]["dynamic_friction"])
        attrs.append('friction="%r 0.005 0.0001"' % mu)
    if not shape.get("collide", True):
        attrs += ['contype="0"', 'conaffinity="0"']
    # explicit <inertial> on every moving body, so geom masses never matter
    return "<geom %s/>" % " ".join(attrs)


def scene_to_mjcf(scene):
    """Return (mjcf_xml, init) where init lists (joint_name, kind, q0, qd0)."""
    world = scene["world"]
    materials = scene.get("materials", {}) or {}
    bodies = scene["bodies"]
    children = {}
    for b in bodies:
        children.setdefault(b["parent"], []).append(b)
    loops = scene.get("loop_constraints", []) or []
    sites = {}  # body name -> list of (site_name, anchor)
    for i, lc in enumerate(loops):
        if lc.get("type", "revolute") not in ("revolute", "ball", "spherical", "point"):
            raise ValueError("unsupported loop constraint type %r" % lc.get("type"))
        sites.setdefault(lc["body_a"], []).append(("loop%d_a" % i, lc["anchor_a"]))
        sites.setdefault(lc["body_b"], []).append(("loop%d_b" % i, lc["anchor_b"]))
    init = []

    def body_xml(b, indent):
        pad = "  " * indent
        joints = b.get("joints", []) or []
        free = [j for j in joints if j["type"] == "free"]
        lines = []
        if free:
            if len(joints) != 1 or b["parent"] != "world":
                raise ValueError("free joint must be the only joint of a child of world (%s)" % b["name"])
            p = b["pose_in_parent"]
            if any(abs(x) > 1e-12 for x in p["position"]) or any(
                    abs(x - y) > 1e-12 for x, y in zip(p["orientation"], [0, 0, 0, 1])):
                raise ValueError("free body %s with a non-identity pose_in_parent" % b["name"])
            pose = free[0]["q0"]
        else:
            pose = b["pose_in_parent"]
        lines.append('%s<body name="%s" %s>' % (pad, b["name"], pose_attrs(pose)))
        for j in joints:
            if j["type"] == "free":
                lines.append('%s  <freejoint name="%s"/>' % (pad, j["name"]))
                init.append((j["name"], "free", j["q0"], j["qd0"]))
            elif j["type"] in ("revolute", "hinge"):
                attrs = ['name="%s"' % j["name"], 'type="hinge"', 'pos="%s"' % fmt(j.get("anchor", [0, 0, 0])),
                         'axis="%s"' % fmt(j["axis"])]
                if j.get("limits"):
                    attrs += ['limited="true"', 'range="%s"' % fmt(j["limits"])]
                for key, attr in (("damping", "damping"), ("stiffness", "stiffness"),
                                  ("spring_reference", "springref"), ("armature", "armature")):
                    if j.get(key) is not None:
                        attrs.append('%s="%r"' % (attr, float(j[key])))
                lines.append("%s  <joint %s/>" % (pad, " ".join(attrs)))
                init.append((j["name"], "hinge", float(j.get("q0", 0.0)), float(j.get("qd0", 0.0))))
            else:
                raise ValueError("unsupported joint type %r" % j["type"])
        if joints:
            I = b["inertia"]
            lines.append('%s  <inertial pos="%s" mass="%r" fullinertia="%r %r %r %r %r %r"/>' % (
                pad, fmt(b["com"]), float(b["mass"]), I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]))
        elif b["parent"] != "world":
            raise ValueError("jointless body %s welded to a body: not in the format" % b["name"])
        for k, s in enumerate(b.get("shapes", []) or []):
            lines.append("%s  %s" % (pad, geom_xml(s, materials, s.get("name") or "%s_g%d" % (b["name"], k))))
        for sname, anchor in sites.get(b["name"], []):
            lines.append('%s  <site name="%s" pos="%s"/>' % (pad, sname, fmt(anchor)))
        for c in children.get(b["name"], []):
            lines.extend(body_xml(c, indent + 1))
        lines.append("%s</body>" % pad)
        return lines

    out = ['<mujoco model="%s">' % scene["name"],
           '  <option timestep="%r" gravity="%s"/>' % (float(world["dt"]), fmt(world["gravity"])),
           "  <worldbody>"]
    for b in children.get("world", []):
        out.extend(body_xml(b, 2))
    out.append("  </worldbody>")
    if loops:
        out.append("  <equality>")
        for i, lc in enumerate(loops):
            out.append('    <connect name="%s" site1="loop%d_a" site2="loop%d_b"/>' % (lc.get("name", "loop%d" % i), i, i))
        out.append("  </equality>")
    excl = scene.get("collision_exclude_pairs", []) or []
    if excl:
        out.append("  <contact>")
        for pair in excl:
            a, b = (pair["body_a"], pair["body_b"]) if isinstance(pair, dict) else pair
            out.append('    <exclude body1="%s" body2="%s"/>' % (a, b))
        out.append("  </contact>")
    out.append("</mujoco>")
    return "\n".join(out) + "\n", init


def build(scene):
    xml, init = scene_to_mjcf(scene)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    qpos = d.qpos.copy()
    qvel = d.qvel.copy()
    for name, kind, q0, qd0 in init:
        jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
        qa, va = m.jnt_qposadr[jid], m.jnt_dofadr[jid]
        if kind == "free":
            qpos[qa:qa + 3] = q0["position"]
            qw = quat_wxyz(q0["orientation"])
            qpos[qa + 3:qa + 7] = qw
            qvel[va:va + 3] = qd0["linear"]
            R = quat_to_mat(qw)
            qvel[va + 3:va + 6] = R.T @ np.asarray(qd0["angular"], dtype=float)
        else:
            qpos[qa] = q0
            qvel[va] = qd0

    def reset():
        mujoco.mj_resetData(m, d)
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        mujoco.mj_forward(m, d)

    reset()
    return xml, m, d, reset


# ---------------------------------------------------------------- sanity checks

def body_id(m, name):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)


def check_initial_poses(scene, m, d):
    worst_p = worst_q = 0.0
    for b in scene["bodies"]:
        w = b.get("initial_world_pose")
        if not w:
            continue
        i = body_id(m, b["name"])
        dp = np.linalg.norm(d.xpos[i] - np.asarray(w["position"]))
        qe = np.asarray(quat_wxyz(w["orientation"]))
        dq = min(np.linalg.norm(d.xquat[i] - qe), np.linalg.norm(d.xquat[i] + qe))
        worst_p, worst_q = max(worst_p, dp), max(worst_q, dq)
    ok = worst_p < 1e-6 and worst_q < 1e-6
    return ok, "initial poses: max |dp| %.2e m, max |dq| %.2e" % (worst_p, worst_q)


def run_full(m, d, reset, n, probe):
    reset()
    rows = [probe(0)]
    for k in range(1, n + 1):
        mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)  # after mj_step, xpos/site_xpos still lag qpos by one step
        rows.append(probe(k))
    return rows


def scene_checks(scene, m, d, reset):
    """Physics sanity per scene kind: (ok, message) list. Loose tolerances: soft contacts differ."""
    name = scene["name"]
    dt, T = scene["world"]["dt"], scene["world"]["duration"]
    n = int(round(T / dt))
    res = [check_initial_poses(scene, m, d)]
    params = scene.get("parameters", {}) or {}
    if name.startswith("01_free_fall"):
        i = body_id(m, "ball")
        run_full(m, d, reset, n, lambda k: None)
        z, x, vz = d.xpos[i][2], d.xpos[i][0], d.qvel[2]
        ref = 10.0 - 0.5 * 9.81 * T * T
        res.append((abs(z - ref) < 0.01 and abs(x - 1.0) < 1e-9 and abs(vz + 9.81) < 1e-9,
                    "free fall: z(T) %.4f (analytic %.4f), x(T) %.6f, vz %.6f" % (z, ref, x, vz)))
    elif name.startswith("02_bounce"):
        i = body_id(m, "ball")
        zs = np.array([r for r in run_full(m, d, reset, n, lambda k: d.xpos[i][2])])
        contact = np.argmax(zs <= 0.1) * dt
        # MuJoCo's default soft contact (solref 0.02 s) lets the 4.4 m/s impact sink ~3 cm
        res.append((abs(contact - 0.4515) < 0.003 and zs.min() > 0.05 and abs(zs[-1] - 0.1) < 0.005,
                    "bounce: first contact t %.4f s (analytic 0.4515), min z %.4f (soft contact), final z %.4f"
                    % (contact, zs.min(), zs[-1])))
    elif name.startswith("03_slide"):
        i = body_id(m, "box")
        run_full(m, d, reset, n, lambda k: None)
        x = d.xpos[i][0]
        res.append((abs(x - 0.6796) < 0.02 and abs(d.xpos[i][2] - 0.1) < 0.002,
                    "slide: stop x %.4f (analytic 0.6796), z %.4f" % (x, d.xpos[i][2])))
    elif name.startswith("04"):
        i = body_id(m, "box")
        p0 = d.xpos[i].copy()
        run_full(m, d, reset, n, lambda k: None)
        disp = np.linalg.norm(d.xpos[i] - p0)
        exp = {e["id"]: e.get("analytic") for e in scene["expected"]}.get("displacement_at_T", 0.0)
        res.append((abs(disp - exp) < 0.02, "incline: displacement %.4f m (analytic %.4f)" % (disp, exp)))
    elif name.startswith("05"):
        top = [b["name"] for b in scene["bodies"] if b.get("joints")][-1]
        i = body_id(m, top)
        z0 = d.xpos[i].copy()
        run_full(m, d, reset, n, lambda k: None)
        res.append((np.linalg.norm(d.xpos[i] - z0) < 0.01,
                    "stack: top box moved %.2e m over %.1f s" % (np.linalg.norm(d.xpos[i] - z0), T)))
    elif name.startswith("06") or name.startswith("08"):
        def energy(k):
            mujoco.mj_energyPos(m, d)
            mujoco.mj_energyVel(m, d)
            loop = 0.0
            if m.neq:
                sa, sb = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, s) for s in ("loop0_a", "loop0_b"))
                loop = np.linalg.norm(d.site_xpos[sa] - d.site_xpos[sb])
            return d.energy[0] + d.energy[1], loop
        rows = np.array(run_full(m, d, reset, n, energy))
        e0 = rows[0, 0]
        scale = params.get("energy_scale") or abs(e0)  # the scene metric's normalisation
        drift = np.max(np.abs(rows[:, 0] - e0)) / scale
        tol = {e["id"]: e.get("tolerance") for e in scene["expected"]}.get("energy_drift_max") or 0.02
        msg = "energy: max |E-E0|/scale %.4f (scene tolerance %.3g), E0 %.4f J" % (drift, tol, e0)
        ok = drift < 2 * tol
        if m.neq:
            msg += ", loop gap initial %.2e m, max %.2e m" % (rows[0, 1], rows[:, 1].max())
            ok = ok and rows[0, 1] < 1e-6 and rows[:, 1].max() < 0.01
        res.append((ok, msg))
    elif name.startswith("09"):
        ids = [body_id(m, b["name"]) for b in scene["bodies"]]
        rows = np.array(run_full(m, d, reset, n, lambda k: d.qvel.copy()))
        hit = np.max(np.abs(rows[:, 1:]))  # the struck balls move at all
        res.append((hit > 0.05 and m.nbody - 1 == len(ids),
                    "cradle: max hinge speed of balls 1..4 %.3f rad/s (impacts happen)" % hit))
    return res


# ---------------------------------------------------------------- timing

def time_scene(scene, m, d, reset, repeats, in_c, clock=time.perf_counter_ns):
    """(median batch mean µs/step, steps timed); clock: wall (default) or e.g. time.thread_time_ns."""
    n = min(int(round(scene["world"]["duration"] / scene["world"]["dt"])), MAX_STEPS)
    nb = max(1, n // BATCH)
    step = mujoco.mj_step
    reset()
    for _ in range(WARMUP):
        step(m, d)
    means = []
    for _ in range(repeats):
        reset()
        for _ in range(nb):
            if in_c:
                t0 = clock()
                step(m, d, BATCH)
                t1 = clock()
            else:
                t0 = clock()
                for _ in range(BATCH):
                    step(m, d)
                t1 = clock()
            means.append((t1 - t0) / BATCH / 1000.0)
    return statistics.median(means), nb * BATCH


def cpu_us_per_step(m, d, reset, n, repeats, clock=time.thread_time_ns):
    """CPU µs per step of n steps from the initial state: a warm-up of min(n, WARMUP) untimed
    steps, then `repeats` runs, each from reset() (outside the clock), timed in segments of
    BATCH steps by this thread's CPU clock around one mj_step(m, d, nstep=BATCH) (the C loop and
    nothing else); each segment's least time over the runs, summed over the n steps. As
    `karakuri simulate --cpu-time` times karakuri's steps (`robot_race.py` uses both)."""
    reset()
    mujoco.mj_step(m, d, min(n, WARMUP))
    sizes = [min(BATCH, n - k) for k in range(0, n, BATCH)]
    best = [math.inf] * len(sizes)
    for _ in range(repeats):
        reset()
        for i, size in enumerate(sizes):
            t0 = clock()
            mujoco.mj_step(m, d, size)
            t1 = clock()
            best[i] = min(best[i], t1 - t0)
    return sum(best) / n / 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*")
    ap.add_argument("--json", metavar="FILE", help="write {scene: us_per_step}")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per scene, batches pooled (default 3)")
    ap.add_argument("--in-c", action="store_true", help="time mj_step(m, d, nstep=100) instead of a Python loop")
    ap.add_argument("--no-check", action="store_true", help="skip the physics sanity checks")
    ap.add_argument("--print-mjcf", action="store_true", help="print each generated MJCF on stderr")
    args = ap.parse_args()
    paths = args.scenes or sorted(glob.glob(DEFAULT_GLOB))
    if not paths:
        sys.exit("no scenes found (default %s)" % DEFAULT_GLOB)

    results, failed = {}, []
    for p in paths:
        scene = json.load(open(p))
        name = os.path.splitext(os.path.basename(p))[0]
        try:
            xml, m, d, reset = build(scene)
        except Exception as e:  # report and go on
            print("%s: not converted: %s" % (name, e), file=sys.stderr)
            failed.append(name)
            continue
        if args.print_mjcf:
            print(xml, file=sys.stderr)
        if not args.no_check:
            for ok, msg in scene_checks(scene, m, d, reset):
                print("%s %s: %s" % ("ok  " if ok else "FAIL", name, msg), file=sys.stderr)
                if not ok:
                    failed.append(name)
        us, steps = time_scene(scene, m, d, reset, args.repeats, args.in_c)
        results[name] = round(us, 3)

    how = "mj_step(m, d, nstep=%d)" % BATCH if args.in_c else "Python loop of mj_step"
    print("MuJoCo %s, one thread, default options; median over batches of %d steps (%s), "
          "%d timed run(s) of min(duration/dt, %d) steps after a %d-step warm-up\n"
          % (mujoco.__version__, BATCH, how, args.repeats, MAX_STEPS, WARMUP))
    print("| scene | MuJoCo µs/step |")
    print("|---|---|")
    for k, v in results.items():
        print("| %s | %.2f |" % (k, v))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    if failed:
        print("sanity check failures / unconverted: %s" % ", ".join(sorted(set(failed))), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

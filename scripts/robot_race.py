#!/usr/bin/env python3
"""The robot race: karakuri against MuJoCo on robot models, µs/step and what the step did.

Usage: python3 scripts/robot_race.py [--quick] [--rounds N] [--only NAME,...] [--karakuri BIN]
       [--json FILE] [--write-doc] [--write-scenes DIR]

Needs a release build (`cargo build --release -p karakuri-cli`), `pip install mujoco` and, for
the URDF robots, example-robot-data (its share/ directory is found beside Python's
site-packages, or set EXAMPLE_ROBOT_DATA_DIR to its `robots` directory, as the tests read it).

Every robot runs in both engines from the same state for the same simulated time (2 s;
--quick: 0.2 s), the robots interleaved (each round runs karakuri then MuJoCo on one robot,
then the next robot):
- MJCF files (dm_control, gymnasium, MJX and MuJoCo Warp test data, under tests/data/mjcf,
  /tmp/extra/tests/data/mjcf or the unpacked wheels in /tmp/wheels): the file's own options,
  from its first keyframe with that keyframe's ctrl (MuJoCo: mj_resetDataKeyframe; karakuri
  starts an MJCF robot there by itself), ctrl held.
- URDF robots (Go2, Solo-12, TALOS from example-robot-data) standing under PD. One description
  below (`URDF_ROBOTS`) makes both models: the standing configuration of the robot's own SRDF,
  a floating base at the SRDF's root height, a position servo on every joint (the same kp, kd
  and the URDF's effort limit as a torque bound) holding the standing angles, the URDF's
  collision geometry replaced by the same primitives (foot spheres, sole boxes) on the same
  links, friction 0.8 on robot and floor, dt 1 ms. karakuri gets a scene (`robots:` with
  `collision: none`, `shapes:` and `actuators:`); MuJoCo gets the same URDF through its URDF
  import (collisions removed, fusestatic off so the foot links stay bodies), saved as MJCF and
  completed: a free joint on the root, the same geoms, a floor plane, `<position>` actuators
  with kp, kv and forcerange, and `implicitfast` integration (so the actuator's kv is implicit
  as karakuri's servo is; MuJoCo's default contact softness is kept).

Columns: µs/step, karakuri's twice, MuJoCo's once. The CPU figures of both engines are taken
the same way, on the same steps: the robot's n steps (2 s of it) from its start state, run R =
max(3, ceil(4000 / n)) times per engine and round after an untimed warm-up of min(n, 200) steps,
each run from a reset to the start state; every 100-step segment of a run is timed by the
calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) read just before its first step and just
after its last; each segment's least time over the round's R runs is kept (other processes
only ever add to a segment: preemption, cache and core sharing), their sum over n is the
round's figure, and the least over rounds is the table's. karakuri: `karakuri simulate --cpu-time R` (`World::step` in a loop, the world
restored from a snapshot between runs; no loading, no CSV writing, no progress or per-step
clock); MuJoCo: `scripts/mujoco_steps.py`'s `cpu_us_per_step`, `mj_step(m, d, nstep=100)` per
segment (the C loop; reset and `mj_forward` outside the clock). Both engines step on one
thread. The second karakuri column is
`scripts/sim_vs_mujoco.py`'s summary of the `--steps` CSV's `wall_ns` (wall clock around each
`World::step`, from a cold start), the median of 100-step batch means, as a cross-check. Then
the ratio karakuri / MuJoCo, the mean
number of contacts per step (MuJoCo: `d.ncon`), the share of karakuri's steps whose solve met
`engine.tolerance` (`converged`), the root body's height at the end in both engines (the first
body with a free joint, else the first body: the origin of its frame in world z, MuJoCo's read
after `mj_kinematics`, since `mj_step` leaves `xpos` at the step's start state; gymnasium's
hopper and walker2d balance upright on a limp chain from qpos0, an unstable equilibrium that
MuJoCo's soft foot contact tips over and karakuri's hard one does not: decision 0070), and for
standing robots
the foot slip: the largest horizontal travel of a foot body between 0.5 s (settled) and the
end, in mm. A model karakuri refuses is reported as refused with its first error line.
`--write-doc` replaces the table between the `robot-race` markers of docs/PERFORMANCE.md.
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mujoco  # noqa: E402
import mujoco_steps as mjs  # noqa: E402
import sim_vs_mujoco as svm  # noqa: E402

REPO = svm.REPO
BEGIN, END = "<!-- robot-race:begin -->", "<!-- robot-race:end -->"
DURATION, QUICK_DURATION, SETTLE = 2.0, 0.2, 0.5
TIMED_STEPS = 4000  # steps timed per engine and round (at least 3 runs of the robot's n)
WHEELS, EXTRA = "/tmp/wheels", "/tmp/extra/tests/data/mjcf"

# name, candidate paths (first found wins), foot bodies (standing robots) or None
MJCF_ROBOTS = [
    ("dm_control humanoid (falls)", ["tests/data/mjcf/dm_control/humanoid.xml",
                                     WHEELS + "/dmc/dm_control/suite/humanoid.xml"], None),
    ("dm_control quadruped", ["tests/data/mjcf/dm_control/quadruped.xml",
                              WHEELS + "/dmc/dm_control/suite/quadruped.xml"], None),
    ("gymnasium ant", ["tests/data/mjcf/gymnasium/ant.xml",
                       WHEELS + "/gym/gymnasium/envs/mujoco/assets/ant.xml"], None),
    ("gymnasium half_cheetah", ["tests/data/mjcf/gymnasium/half_cheetah.xml",
                                WHEELS + "/gym/gymnasium/envs/mujoco/assets/half_cheetah.xml"], None),
    ("gymnasium hopper", ["tests/data/mjcf/gymnasium/hopper.xml",
                          WHEELS + "/gym/gymnasium/envs/mujoco/assets/hopper.xml"], None),
    ("gymnasium walker2d", ["tests/data/mjcf/gymnasium/walker2d.xml",
                            WHEELS + "/gym/gymnasium/envs/mujoco/assets/walker2d.xml"], None),
    ("gymnasium humanoid", ["tests/data/mjcf/gymnasium/humanoid.xml",
                            WHEELS + "/gym/gymnasium/envs/mujoco/assets/humanoid.xml"], None),
    ("barkour (standing)", [EXTRA + "/barkour/barkour_v0_mjx.xml",
                            WHEELS + "/mjx/mujoco/mjx/test_data/barkour_v0/assets/barkour_v0_mjx.xml"],
     ["lower_leg_1to1_front_right", "lower_leg_1to1_front_left", "lower_leg_1to1_hind_right",
      "lower_leg_1to1_hind_left"]),
    ("shadow hand", [WHEELS + "/mjx/mujoco/mjx/test_data/shadow_hand/scene_right.xml",
                     EXTRA + "/shadow/scene_right.xml"], None),
    ("aloha_pot", ["tests/data/mjcf/mujoco_warp/aloha_pot/scene.xml",
                   WHEELS + "/warp/mujoco_warp/test_data/aloha_pot/scene.xml"], None),
]

# The URDF robots: file under example-robot-data/robots, SRDF and its standing state, PD
# gains (kp N·m/rad, kd N·m·s/rad; the URDF's effort limit bounds the torque), and the
# contact primitives that replace the URDF's collision meshes: (link, type, size, offset).
URDF_ROBOTS = [
    ("Go2 (standing, PD)", dict(
        urdf="go2_description/urdf/go2.urdf", srdf="go2_description/srdf/go2.srdf", state="standing",
        kp=40.0, kd=1.0,
        shapes=[(f, "sphere", [0.022], [0, 0, 0]) for f in ("FL_foot", "FR_foot", "RL_foot", "RR_foot")]
        + [("base", "box", [0.19, 0.047, 0.057], [0, 0, 0])],
        feet=["FL_foot", "FR_foot", "RL_foot", "RR_foot"])),
    ("Solo-12 (standing, PD)", dict(
        urdf="solo_description/robots/solo12.urdf", srdf="solo_description/srdf/solo.srdf", state="standing",
        kp=8.0, kd=0.2,
        shapes=[(f, "sphere", [0.016], [0, 0, 0]) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
        + [("base_link", "box", [0.19, 0.1, 0.04], [0, 0, 0])],
        feet=["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"])),
    ("TALOS (standing, PD)", dict(
        urdf="talos_data/robots/talos_reduced.urdf", srdf="talos_data/srdf/talos.srdf", state="half_sitting",
        kp=2000.0, kd=20.0,
        shapes=[(f, "box", [0.1, 0.065, 0.01], [0, 0, 0.01]) for f in ("left_sole_link", "right_sole_link")],
        feet=["left_sole_link", "right_sole_link"])),
]
FRICTION = 0.8


def erd_robots():
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        return env
    return os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")


def srdf_state(path, state):
    """The SRDF group state's joint values: ({joint: value}, root position)."""
    root = ET.parse(path).getroot()
    for gs in root.iter("group_state"):
        if gs.get("name") == state:
            vals = {j.get("name"): [float(x) for x in j.get("value").split()] for j in gs.iter("joint")}
            base = vals.pop("root_joint", [0, 0, 0])[:3]
            return {k: v[0] for k, v in vals.items()}, base
    raise ValueError("%s: no group_state %r" % (path, state))


def urdf_joints(urdf_text):
    """The moving 1-dof joints of a URDF in file order: [(name, effort limit or None)]."""
    out = []
    for j in ET.fromstring(urdf_text).findall("joint"):
        if j.get("type") in ("revolute", "continuous", "prismatic"):
            lim = j.find("limit")
            eff = float(lim.get("effort")) if lim is not None and lim.get("effort") else None
            out.append((j.get("name"), eff if eff and eff > 0 else None))
    return out


def urdf_root_link(urdf_text):
    r = ET.fromstring(urdf_text)
    children = {j.find("child").get("link") for j in r.findall("joint")}
    return next(l.get("name") for l in r.findall("link") if l.get("name") not in children)


def rpy_matrix(r, p, y):
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def fused_frame(urdf_text, link):
    """(moving body, offset): karakuri merges fixed-joint links into their parent, so a foot link
    is its nearest ancestor reached by a moving joint (or the root) plus this offset in its frame."""
    by_child = {j.find("child").get("link"): j for j in ET.fromstring(urdf_text).findall("joint")}
    off = [0.0, 0.0, 0.0]
    while link in by_child and by_child[link].get("type") == "fixed":
        j = by_child[link]
        o = j.find("origin")
        xyz = [float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
        rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
        rm = rpy_matrix(*rpy)
        off = [xyz[i] + sum(rm[i][k] * off[k] for k in range(3)) for i in range(3)]
        link = j.find("parent").get("link")
    return link, off


def quat_rotate(q_xyzw, v):
    x, y, z, w = q_xyzw
    t = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])]
    return [v[0] + w * t[0] + y * t[2] - z * t[1], v[1] + w * t[1] + z * t[0] - x * t[2],
            v[2] + w * t[2] + x * t[1] - y * t[0]]


def karakuri_urdf_scene(name, spec, urdf_path, q0, base, joints, duration):
    """The karakuri scene (YAML text) of a URDF robot standing under PD."""
    def num(x):
        return repr(float(x))
    lines = ["schema: karakuri-scene", "schema_version: 1", "name: %s" % re.sub(r"\W+", "_", name).strip("_"),
             "world: {gravity: [0.0, 0.0, -9.81], dt: 0.001, duration: %s}" % num(duration),
             "materials:", "  ground: {static_friction: %s, dynamic_friction: %s, restitution: 0.0}" % (num(FRICTION), num(FRICTION)),
             "bodies:", "  - {name: floor, parent: world, shapes: [{type: plane, material: ground}]}",
             "robots:", "  - name: robot", "    urdf: %s" % urdf_path, "    root: floating",
             "    pose: {position: [%s]}" % ", ".join(num(x) for x in base), "    material: ground",
             "    q0: {%s}" % ", ".join("%s: %s" % (j, num(q0.get(j, 0.0))) for j, _ in joints),
             "    collision: none", "    actuators:"]
    for j, eff in joints:
        lim = ", effort_limit: %s" % num(eff) if eff else ""
        lines.append("      - {joints: [%s], mode: position, kp: %s, kd: %s%s, target: %s}"
                     % (j, num(spec["kp"]), num(spec["kd"]), lim, num(q0.get(j, 0.0))))
    lines.append("    shapes:")
    for link, typ, size, off in spec["shapes"]:
        dims = "radius: %s" % num(size[0]) if typ == "sphere" else "half_extents: [%s]" % ", ".join(num(x) for x in size)
        lines.append("      - {link: %s, type: %s, %s, pose: {position: [%s]}}"
                     % (link, typ, dims, ", ".join(num(x) for x in off)))
    return "\n".join(lines) + "\n"


def mujoco_urdf_model(spec, urdf_text, q0, base, joints, tmp):
    """The same robot for MuJoCo: its URDF import, completed as the module docstring says."""
    r = ET.fromstring(urdf_text)
    for link in r.findall("link"):
        for c in link.findall("collision") + link.findall("visual"):
            link.remove(c)
    ext = ET.SubElement(r, "mujoco")
    ET.SubElement(ext, "compiler", fusestatic="false", discardvisual="true", balanceinertia="false")
    m0 = mujoco.MjModel.from_xml_string(ET.tostring(r, encoding="unicode"))
    saved = os.path.join(tmp, "urdf_import.xml")
    mujoco.mj_saveLastXML(saved, m0)
    x = ET.parse(saved).getroot()
    opt = x.find("option")
    if opt is None:
        opt = ET.SubElement(x, "option")
    opt.set("timestep", "0.001")
    opt.set("integrator", "implicitfast")
    wb = x.find("worldbody")
    root_name = urdf_root_link(urdf_text)
    bodies = {b.get("name"): b for b in wb.iter("body")}
    root = bodies[root_name]
    root.set("pos", " ".join(repr(float(v)) for v in base))
    root.insert(0, ET.Element("freejoint", name="root"))
    fr = "%r 0.005 0.0001" % FRICTION
    wb.insert(0, ET.Element("geom", name="floor", type="plane", size="0 0 1", friction=fr))
    for link, typ, size, off in spec["shapes"]:
        ET.SubElement(bodies[link], "geom", type=typ, size=" ".join(repr(float(s)) for s in size),
                      pos=" ".join(repr(float(o)) for o in off), friction=fr, mass="0")
    act = x.find("actuator")
    if act is None:
        act = ET.SubElement(x, "actuator")
    for j, eff in joints:
        a = ET.SubElement(act, "position", joint=j, kp=repr(spec["kp"]), kv=repr(spec["kd"]))
        if eff:
            a.set("forcerange", "%r %r" % (-eff, eff))
            a.set("forcelimited", "true")
    m = mujoco.MjModel.from_xml_string(ET.tostring(x, encoding="unicode"))
    d = mujoco.MjData(m)

    def reset():
        mujoco.mj_resetData(m, d)
        for j, _ in joints:
            d.qpos[m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]] = q0.get(j, 0.0)
        for i, (j, _) in enumerate(joints):
            d.ctrl[i] = q0.get(j, 0.0)
        mujoco.mj_forward(m, d)
    return m, d, reset


def mjcf_model(path):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)

    def reset():
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        else:
            mujoco.mj_resetData(m, d)
        mujoco.mj_forward(m, d)
    return m, d, reset


def body_name(m, i):
    return mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i) or "body%d" % i


def root_body(m):
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return body_name(m, int(m.jnt_bodyid[j]))
    return body_name(m, 1)


def mujoco_run(m, d, reset, n, dt, root, feet):
    """Untimed pass: mean contacts, the root's final height, foot slip (mm) after SETTLE, and the
    deepest penetration (mm) from SETTLE to the end (robots with feet)."""
    reset()
    ids = {body_name(m, i): i for i in range(m.nbody)}
    rid = ids[root]
    fids = [ids[f] for f in feet or []]
    settle = int(round(SETTLE / dt))
    ncon, at_settle, deep = 0, None, 0.0
    for k in range(1, n + 1):
        mujoco.mj_step(m, d)
        ncon += d.ncon
        if k >= settle and d.ncon:
            # the step's contacts (found at its start): MuJoCo's dist < 0 is a penetration
            deep = max(deep, -float(d.contact.dist[:d.ncon].min()))
        if k == min(settle, n):
            # mj_step leaves xpos at the step's start state: the poses of qpos after step k
            # (what karakuri's trajectory row k holds) need the kinematics of the new qpos
            mujoco.mj_kinematics(m, d)
            at_settle = [d.xpos[f][:2].copy() for f in fids]
    mujoco.mj_kinematics(m, d)
    slip = max((math.hypot(*(d.xpos[f][:2] - p)) * 1000 for f, p in zip(fids, at_settle)),
               default=None) if n > settle else None
    return ncon / n, float(d.xpos[rid][2]), slip, (deep * 1000 if fids and n > settle else None)


def repeats(n):
    """Timed runs of n steps per engine and round: at least 3, and TIMED_STEPS steps in all."""
    return max(3, math.ceil(TIMED_STEPS / n))


def karakuri_run(binary, path, n, dt, root, feet, tmp):
    """One `karakuri simulate --cpu-time` run: (CPU µs/step, wall µs/step in the step, mean
    contacts, converged share, root height, slip mm, deepest contact from SETTLE on in mm)."""
    steps, out = os.path.join(tmp, "steps.csv"), os.path.join(tmp, "out.csv")
    p = subprocess.run([binary, "simulate", path, "--duration", repr(n * dt), "--steps", steps, "--out", out,
                        "--cpu-time", str(repeats(n))],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        err = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("warning")]
        first = (err or ["exit %d" % p.returncode])[0]
        # keep the reason: drop the "error: FILE: robots[0].mjcf: FILE:" prefix
        raise RuntimeError(re.sub(r"^error: .*?\.xml: (robots\[0\]\.mjcf: )?\S+\.xml:", "line ", first))
    with open(steps) as f:
        rows = [r for r in csv.DictReader(f) if r["step"] != "0"]
    if len(rows) != n:
        raise RuntimeError("%d steps in the CSV, expected %d" % (len(rows), n))
    cpu = re.search(r"^cpu time +([0-9.]+) µs/step", p.stdout, re.M)
    if cpu is None:
        raise RuntimeError("no 'cpu time' line in the summary (a karakuri without --cpu-time?)")
    us = svm.batch_median_us([int(r["wall_ns"]) for r in rows])
    contacts = sum(int(r["contacts"]) for r in rows) / n
    conv = sum(int(r["converged"]) for r in rows) / n
    settle = min(int(round(SETTLE / dt)), n)
    deep = max((float(r["depth"]) for r in rows if int(r["step"]) >= settle), default=0.0) * 1000 \
        if feet and n > settle else None
    z, at, end = None, {}, {}
    frames = {}  # karakuri body -> [(foot, offset in the body's frame)]
    for foot in feet or []:
        body, off = foot if isinstance(foot, tuple) else (foot, [0.0, 0.0, 0.0])
        frames.setdefault(body, []).append((body + ":" + str(off), off))
    with open(out) as f:
        for r in csv.DictReader(f):
            b = r["body"].split("/", 1)[-1]
            k = int(r["step"])
            if b == root and k == n:
                z = float(r["pz"])
            if b in frames and k in (settle, n):
                q = [float(r[c]) for c in ("qx", "qy", "qz", "qw")]
                for key, off in frames[b]:
                    w = quat_rotate(q, off)
                    (at if k == settle else end)[key] = (float(r["px"]) + w[0], float(r["py"]) + w[1])
    slip = max((math.hypot(end[b][0] - at[b][0], end[b][1] - at[b][1]) * 1000 for b in end),
               default=None) if feet and n > settle else None
    return float(cpu.group(1)), us, contacts, conv, z, slip, deep


def prepare(quick, only, tmp):
    """[(name, karakuri scene path, (m, d, reset), n steps, dt, root, feet, note)]."""
    dur = QUICK_DURATION if quick else DURATION
    out = []
    for name, cands, feet in MJCF_ROBOTS:
        if only and not any(o.lower() in name.lower() for o in only):
            continue
        path = next((os.path.join(REPO, c) for c in cands if os.path.exists(os.path.join(REPO, c))), None)
        if path is None:
            print("%s: not found (%s)" % (name, ", ".join(cands)), file=sys.stderr)
            continue
        m, d, reset = mjcf_model(path)
        dt = m.opt.timestep
        out.append((name, path, (m, d, reset), int(round(dur / dt)), dt, root_body(m), (feet, feet),
                    os.path.relpath(path, REPO) if path.startswith(REPO) else path))
    erd = erd_robots()
    for name, spec in URDF_ROBOTS:
        if only and not any(o.lower() in name.lower() for o in only):
            continue
        urdf = os.path.join(erd, spec["urdf"])
        if not os.path.exists(urdf):
            print("%s: %s not found (set EXAMPLE_ROBOT_DATA_DIR)" % (name, urdf), file=sys.stderr)
            continue
        text = open(urdf).read()
        q0, base = srdf_state(os.path.join(erd, spec["srdf"]), spec["state"])
        joints = urdf_joints(text)
        scene = os.path.join(tmp, re.sub(r"\W+", "_", name).strip("_") + ".yaml")
        with open(scene, "w") as f:
            f.write(karakuri_urdf_scene(name, spec, urdf, q0, base, joints, dur))
        m, d, reset = mujoco_urdf_model(spec, text, q0, base, joints, tmp)
        out.append((name, scene, (m, d, reset), int(round(dur / 0.001)), 0.001, urdf_root_link(text),
                    (spec["feet"], [fused_frame(text, f) for f in spec["feet"]]), "example-robot-data " + spec["urdf"]))
    return out


def fmt(x, f):
    return "–" if x is None else f % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke mode: %.1f s per robot, one round" % QUICK_DURATION)
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1): the least CPU figure, the median wall one")
    ap.add_argument("--only", help="comma-separated parts of robot names")
    ap.add_argument("--karakuri", default=os.path.join(REPO, "target", "release", "karakuri"))
    ap.add_argument("--json", metavar="FILE", help="write the numbers")
    ap.add_argument("--write-doc", action="store_true", help="put the table into docs/PERFORMANCE.md")
    ap.add_argument("--write-scenes", metavar="DIR", help="also copy the URDF robots' karakuri scenes to DIR")
    args = ap.parse_args()
    if not os.access(args.karakuri, os.X_OK):
        sys.exit("%s: not found; build it: cargo build --release -p karakuri-cli" % args.karakuri)
    only = [o.strip() for o in args.only.split(",")] if args.only else None
    rounds = 1 if args.quick else args.rounds
    loads, started = [svm.load1()], time.time()
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        robots = prepare(args.quick, only, tmp)
        if args.write_scenes:
            os.makedirs(args.write_scenes, exist_ok=True)
            for r in robots:
                if r[1].startswith(tmp):
                    with open(os.path.join(args.write_scenes, os.path.basename(r[1])), "w") as f:
                        f.write(open(r[1]).read())
        for rnd in range(rounds):
            for name, path, (m, d, reset), n, dt, root, feet, _ in robots:
                e = res.setdefault(name, {"k_us": [], "m_us": []})
                try:
                    cpu, us, c, conv, z, slip, deep = karakuri_run(args.karakuri, path, n, dt, root, feet[1], tmp)
                    e["k_us"].append(us)
                    e.setdefault("k_cpu", []).append(cpu)
                    e.update(k_contacts=c, converged=conv, k_z=z, k_slip=slip, k_deep=deep)
                except (RuntimeError, OSError) as err:
                    e["refused"] = str(err)
                e["m_us"].append(mjs.cpu_us_per_step(m, d, reset, n, repeats(n)))
                if rnd == 0:
                    e["m_contacts"], e["m_z"], e["m_slip"], e["m_deep"] = mujoco_run(m, d, reset, n, dt, root, feet[0])
                print("%s: %s" % (name, {k: v for k, v in e.items()}), file=sys.stderr)
            loads.append(svm.load1())
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    dur = QUICK_DURATION if args.quick else DURATION
    head = textwrap.fill(
        "Measured %s by `scripts/robot_race.py%s` (%.0f s, %d round(s)): karakuri release build against "
        "MuJoCo %s (one thread, in C), %.1f s of each robot from the same state, robots interleaved; "
        "CPU µs/step of both: the thread's CPU time of the robot's steps alone after a warm-up, by "
        "100-step segments, each segment's least over max(3, 4000 / n) runs, summed, the least over rounds; "
        "wall: median over rounds. "
        "1-min load average %.2f .. %.2f on %d cores (other work on the machine: the µs are that load's). "
        "Ratio: karakuri CPU / MuJoCo CPU (below 1: karakuri faster). 'converged': share of karakuri's "
        "steps whose solve met engine.tolerance. Slip: largest horizontal travel of a foot from %.1f s "
        "to the end; deepest: the deepest contact from then to the end (karakuri's "
        "contact.penetration_tolerance: 1 mm unless the file sets it)."
        % (when, " --quick" if args.quick else "", time.time() - started, rounds, mujoco.__version__, dur,
           min(loads), max(loads), os.cpu_count() or 0, SETTLE), 100)
    lines = [head, "",
             "| robot | karakuri µs/step (CPU) | karakuri µs/step (wall, in step) | MuJoCo µs/step (CPU) | ratio "
             "| contacts karakuri / MuJoCo | converged | root z at end karakuri / MuJoCo (m) "
             "| foot slip karakuri / MuJoCo (mm) | deepest contact at rest karakuri / MuJoCo (mm) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, path, _, n, dt, *_rest in robots:
        e = res[name]
        mu = min(e["m_us"])
        if "refused" in e:
            lines.append("| %s | refused: %s | | %.2f | | – / %.1f | | – / %.3f | | |"
                         % (name, e["refused"].replace("|", "/")[:120], mu, e["m_contacts"], e["m_z"]))
            continue
        ku, kc = statistics.median(e["k_us"]), min(e["k_cpu"])
        slip = ("%s / %s" % (fmt(e["k_slip"], "%.1f"), fmt(e["m_slip"], "%.1f"))) if e["k_slip"] is not None else ""
        deep = ("%s / %s" % (fmt(e["k_deep"], "%.2f"), fmt(e["m_deep"], "%.2f"))) if e["k_deep"] is not None else ""
        lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %.1f / %.1f | %.1f %% | %.3f / %.3f | %s | %s |"
                     % (name, kc, ku, mu, kc / mu, e["k_contacts"], e["m_contacts"], 100 * e["converged"],
                        e["k_z"], e["m_z"], slip, deep))
    lines.append("")
    lines.append("Models: " + "; ".join("%s: %s, dt %g s, %d steps" % (r[0], r[7], r[4], r[3]) for r in robots) + ".")
    table = "\n".join(lines)
    print(table)
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump({"loads": loads, "results": res}, f, indent=1)
            f.write("\n")
    if args.write_doc:
        svm.replace_section(svm.DOC, BEGIN, END, table)


if __name__ == "__main__":
    main()

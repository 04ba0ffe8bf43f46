//! The robots pass: each scene robot is loaded from its source and grafted onto the world as
//! a subtree (its joints `robot/joint`, its links bodies `robot/link`; the robot's universe a
//! static body at its pose). Its one-dof joints' passive parameters and finite limits are
//! recorded by joint id, a floating root gets its initial state, and the names its `q0` and
//! `v0` give are checked.
//!
//! A robot source is anything that gives a karakuri [`Model`] of the robot with its collision
//! geometry and remarks ([`UrdfRobot`]): a URDF or an MJCF file ([`load`]). An MJCF robot also
//! brings its joints' springs (`stiffness` towards `springref`) and its start (the keyframe
//! `robots[].keyframe` names, else the first, else qpos0: the free joints' poses and
//! velocities, the one-dof joints' values and speeds) and its actuators (motor, position,
//! velocity, general: [`mjcf_servo`]; the others as joint forces: `mjcf_actuators`); its
//! `armature` goes with each joint into the world model (its mass matrix), not as a dof setting.

use karakuri::io::body::BodyModel;
use karakuri::io::mjcf::{from_mujoco_qpos, from_mujoco_qvel, Actuator as MjcfActuator, JointProps, MjcfWorld, Transmission};
use karakuri::model::{JointId, JointType};
use karakuri::spatial::{quat_from_xyzw, Se3};
use karakuri::Model;

use super::builder::{model_err, scene_err, se3, ActuatorSetting, Builder, DofSetting, FreeStart, Grafted, JointValue, LimitSetting};
use super::model::SimBody;
use crate::scene::geometry::UrdfRobot;
use crate::scene::{ActuatorMode, ActuatorSpec, Pose, RobotRoot, Scene, Target};
use crate::SimError;

/// A loaded robot: its model and shapes, and an MJCF file's world or a `.body` file's model.
type Loaded = ((UrdfRobot, Option<MjcfWorld>), Option<BodyModel>);

/// Loads robot `ri` of the scene from its source: a URDF file, or one built into the binary
/// (the loader checks and repairs it and reads its collision meshes), or an MJCF file (then
/// also its whole [`MjcfWorld`]), or a Choreonoid `.body` file (then its [`BodyModel`]).
pub(super) fn load(scene: &Scene, ri: usize) -> Result<Loaded, SimError> {
    if scene.robots[ri].body.is_some() {
        let (robot, body) = crate::scene::body_geometry::load_body_robot(scene, ri)?;
        return Ok(((robot, None), Some(body)));
    }
    Ok((load_mjcf_or_urdf(scene, ri)?, None))
}

fn load_mjcf_or_urdf(scene: &Scene, ri: usize) -> Result<(UrdfRobot, Option<MjcfWorld>), SimError> {
    if scene.robots[ri].mjcf.is_some() {
        let (robot, world) = crate::scene::mjcf_geometry::load_mjcf_robot(scene, ri)?;
        return Ok((robot, Some(world)));
    }
    Ok((crate::scene::geometry::load_robot(scene, ri)?, None))
}

/// Loads and grafts every scene robot, in scene order.
pub(super) fn robots(b: &mut Builder) -> Result<(), SimError> {
    for ri in 0..b.scene.robots.len() {
        let ((mut robot, world), body) = load(b.scene, ri)?;
        b.warnings.append(&mut robot.warnings);
        let g = graft(b, ri, robot, world.as_ref())?;
        check_joint_names(b.scene, ri, &g.robot.model)?;
        let rs = &b.scene.robots[ri];
        if let Some(body) = &body {
            super::body_robot::body_start(b, ri, body, &g);
        } else if let Some(world) = &world {
            let key = mjcf_key(b.scene, ri, world)?;
            mjcf_start(b, ri, world, key, &g)?;
            mjcf_actuators(b, ri, world, key, &g);
        } else if rs.root == RobotRoot::Floating && g.robot.model.njoints > 1 {
            let (linear, angular) = (rs.base_velocity.linear, rs.base_velocity.angular);
            b.free_start.push(FreeStart { joint: g.joint[1], pose: rs.pose, linear, angular });
        }
        super::tracks::robot_tracks(b, ri, body.as_ref(), &g)?;
        b.robots.push(g);
        b.mjcf_worlds.push(world);
    }
    Ok(())
}

/// Robot `ri`'s joints and links onto the world: a static body for its universe's links, then
/// a world joint and body per robot joint (its parent's world joint; a joint on the robot's
/// universe placed at the robot's pose, unless it is the floating root), each one-dof joint's
/// settings recorded.
fn graft(b: &mut Builder, ri: usize, robot: UrdfRobot, world: Option<&MjcfWorld>) -> Result<Grafted, SimError> {
    let scene = b.scene;
    let rs = &scene.robots[ri];
    let rm = &robot.model;
    let base = se3(&rs.pose);
    let mut joint = vec![0usize; rm.njoints];
    let mut body = vec![usize::MAX; rm.njoints];
    body[0] = b.bodies.len();
    let root = SimBody {
        name: format!("{}/{}", rs.name, rm.body_names[0]),
        joint: 0,
        placement: base,
        parent: None,
        mass: 0.0,
        bounds: None,
    };
    b.bodies.push(root);
    let err = |e| model_err(scene, format!("robots[{ri}]"), e);
    for j in 1..rm.njoints {
        let placement = if rm.parents[j] == 0 && rm.joint_types[j] != JointType::FreeFlyer {
            base.compose(&rm.joint_placements[j])
        } else {
            rm.joint_placements[j]
        };
        let name = format!("{}/{}", rs.name, rm.joint_names[j]);
        let id = b.model.add_joint(JointId(joint[rm.parents[j]]), &name, rm.joint_types[j], placement).map_err(err)?;
        let bname = format!("{}/{}", rs.name, rm.body_names[j]);
        b.model.add_inertia(id, &bname, rm.inertias[j]).map_err(err)?;
        b.model.set_body_name(id, &bname).map_err(err)?;
        if world.is_some() {
            // an MJCF joint's armature (every kind, as MuJoCo's dof_armature) goes with it into
            // the world model's mass matrix (a `.body` robot's rotor inertia is a dof setting)
            let (iv, nv) = (rm.idx_v[j], rm.nvs[j]);
            b.model.set_armature(id, &rm.armature[iv..iv + nv]).map_err(err)?;
        }
        let props = world.and_then(|w| w.joints.iter().find(|p| p.name == rm.joint_names[j]));
        link_settings(b, ri, rm, j, id.0, props);
        joint[j] = id.0;
        body[j] = b.bodies.len();
        let parent = Some(body[rm.parents[j]]);
        b.bodies.push(SimBody { name: bname, joint: id.0, placement: Se3::identity(), parent, mass: rm.inertias[j].mass, bounds: None });
    }
    Ok(Grafted { robot, base, joint, body })
}

/// Records robot joint `j` (world joint `id`): its finite limits (revolute, prismatic) and, for
/// a one-dof joint, its passive parameters (the URDF's damping plus the robot's
/// `joint_damping`, the robot's `joint_stiffness` about its `q0`, the URDF's friction; an
/// MJCF joint's `props`: its own `stiffness` towards `springref` instead).
fn link_settings(b: &mut Builder, ri: usize, rm: &Model, j: usize, id: usize, props: Option<&JointProps>) {
    let rs = &b.scene.robots[ri];
    let (iq, nq) = (rm.idx_q[j], rm.nqs[j]);
    let (lo, hi) = (&rm.lower_position_limit[iq..iq + nq], &rm.upper_position_limit[iq..iq + nq]);
    let limited = matches!(rm.joint_types[j], JointType::Revolute { .. } | JointType::Prismatic { .. });
    if nq == 1 && lo[0].is_finite() && hi[0].is_finite() && limited {
        b.limits.push(LimitSetting { joint: id, lower: lo[0], upper: hi[0] });
    }
    let (iv, nv) = (rm.idx_v[j], rm.nvs[j]);
    if nv == 1 {
        let q_ref = rs.q0.iter().find(|(n, _)| n == &rm.joint_names[j]).map_or(0.0, |(_, x)| *x);
        let (stiffness, spring_reference) = match props {
            Some(p) if p.stiffness != 0.0 => (p.stiffness + rs.joint_stiffness, p.springref),
            _ => (rs.joint_stiffness, q_ref),
        };
        b.dofs.push(DofSetting {
            joint: id,
            damping: rm.damping[iv] + rs.joint_damping,
            stiffness,
            spring_reference,
            armature: 0.0,
            friction: rm.friction[iv],
        });
    }
}

/// The keyframe MJCF robot `ri` starts from: the one its `keyframe` names (an error lists the
/// file's), else the first, else none (qpos0).
fn mjcf_key(scene: &Scene, ri: usize, world: &MjcfWorld) -> Result<Option<usize>, SimError> {
    let Some(name) = &scene.robots[ri].keyframe else {
        return Ok((!world.keyframes.is_empty()).then_some(0));
    };
    match world.keyframes.iter().position(|k| &k.name == name) {
        Some(k) => Ok(Some(k)),
        None => {
            let names: Vec<&str> = world.keyframes.iter().map(|k| k.name.as_str()).collect();
            let reason = format!("the MJCF file has no keyframe '{name}' (its keyframes: {})", names.join(", "));
            Err(scene_err(scene, format!("robots[{ri}].keyframe"), reason))
        }
    }
}

/// MJCF robot `ri`'s start, from keyframe `key` (else qpos0, at rest): each free joint's pose
/// and velocity (MuJoCo's qvel: the origin's world velocity, the angular velocity in body
/// axes), each one-dof joint's value and speed; a ball joint starts at the identity and at
/// rest (a warning says so when the keyframe turns or spins it).
fn mjcf_start(b: &mut Builder, ri: usize, world: &MjcfWorld, key: Option<usize>, g: &Grafted) -> Result<(), SimError> {
    let rm = &g.robot.model;
    let (qpos, qvel) = key.map_or((&world.qpos0, None), |k| (&world.keyframes[k].qpos, Some(&world.keyframes[k].qvel)));
    let err = |e: String| scene_err(b.scene, format!("robots[{ri}].mjcf"), e);
    let q = from_mujoco_qpos(rm, qpos).map_err(|e| err(e.to_string()))?;
    let zero = vec![0.0; rm.nv];
    let v = from_mujoco_qvel(rm, qpos, qvel.unwrap_or(&zero)).map_err(|e| err(e.to_string()))?;
    for j in 1..rm.njoints {
        let (iq, nq, iv) = (rm.idx_q[j], rm.nqs[j], rm.idx_v[j]);
        match rm.joint_types[j] {
            JointType::FreeFlyer => {
                let pose = Pose { position: [q[iq], q[iq + 1], q[iq + 2]], orientation: [q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]] };
                // karakuri's free-flyer velocity is in body axes; the start wants world axes
                let r = quat_from_xyzw(&pose.orientation);
                let (l, a) = (r * v.fixed_rows::<3>(iv), r * v.fixed_rows::<3>(iv + 3));
                b.free_start.push(FreeStart { joint: g.joint[j], pose, linear: [l.x, l.y, l.z], angular: [a.x, a.y, a.z] });
            }
            _ if nq == 1 => {
                b.q0.push(JointValue { joint: g.joint[j], value: q[iq] });
                b.v0.push(JointValue { joint: g.joint[j], value: v[iv] });
            }
            _ if q.as_slice()[iq..iq + nq] != [0.0, 0.0, 0.0, 1.0] || v.as_slice()[iv..iv + 3] != [0.0; 3] => {
                b.warnings.push(format!(
                    "robots[{ri}]: ball joint '{}' starts at the identity and at rest, not at its keyframe value",
                    rm.joint_names[j]
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// MJCF robot `ri`'s actuators, each holding keyframe `key`'s `ctrl` (else 0), clamped to
/// `ctrlrange`: one without activation dynamics on a hinge or slide, alone on it, whose gain and
/// bias do not push away, is a scene actuator ([`mjcf_servo`]); any other on hinges and slides
/// (a fixed tendon, activation dynamics, a second one on a joint, a gain or bias that pushes
/// away) is a joint force at its held ctrl (`mjcf_actuators`, a warning counts them); a site
/// transmission or one on a ball or free joint is left out (a warning counts them).
fn mjcf_actuators(b: &mut Builder, ri: usize, world: &MjcfWorld, key: Option<usize>, g: &Grafted) {
    let rm = &g.robot.model;
    let (mut left_out, mut as_forces) = (0, 0);
    let world_joint = |mj: usize| rm.joint_id(&world.joints[mj].name).map(|j| j.0).filter(|&j| rm.nvs[j] == 1).map(|j| g.joint[j]);
    for (ai, a) in world.actuators.iter().enumerate() {
        let ctrl = key.map_or(0.0, |k| world.keyframes[k].ctrl[ai]);
        let ctrl = a.ctrlrange.map_or(ctrl, |(lo, hi)| ctrl.clamp(lo, hi));
        let joint = match a.transmission {
            Transmission::Joint(mj) => world_joint(mj),
            _ => None,
        };
        if let (Some(joint), Some((spec, bias))) = (joint, mjcf_servo(a, ctrl)) {
            if !b.actuators.iter().any(|s| s.joint == joint) {
                b.actuators.push(ActuatorSetting { joint, spec, bias });
                continue;
            }
        }
        let name = format!("{}/{}", b.scene.robots[ri].name, a.name);
        match super::mjcf_actuators::pending_force(name, a, world, ctrl, b.scene.world.dt, world_joint) {
            Some(p) => {
                b.actuator_forces.push(p);
                as_forces += 1;
            }
            None => left_out += 1,
        }
    }
    let file = b.scene.robots[ri].mjcf.as_deref().unwrap_or_default();
    if as_forces > 0 {
        b.warnings.push(format!(
            "robots[{ri}] ('{file}'): {as_forces} actuators (tendon transmissions, activation dynamics, a second one on a joint) \
             act as joint forces at their held ctrl: not commanded through the world, no actuatorfrc (docs/MJCF.md)"
        ));
    }
    if left_out > 0 {
        b.warnings.push(format!(
            "robots[{ri}] ('{file}'): {left_out} actuators not simulated yet (site transmissions, ball and free joints)"
        ));
    }
}

/// An MJCF actuator on a one-dof joint at held control `ctrl`, as a scene actuator and a
/// constant torque. MuJoCo's force `gain · ctrl + bias` with the affine `gain = g₀ + g₁ L +
/// g₂ L̇`, `bias = b₀ + b₁ L + b₂ L̇` at length `L = gear · q` gives the joint `gear · force`:
/// `τ = k₀ − kp q − kd q̇` with `k₀ = gear (g₀ ctrl + b₀)`, `kp = −gear² (g₁ ctrl + b₁)`,
/// `kd = −gear² (g₂ ctrl + b₂)`. No `kp` nor `kd`: a torque actuator of `k₀` (a motor); a
/// `kp`: a position servo of target `k₀ / kp`; a `kd` alone (a velocity servo): a position
/// servo of gain 0 and constant torque `k₀`. `forcerange · gear` is the effort limit (its
/// larger bound). None: activation dynamics, or `kp` or `kd` negative.
fn mjcf_servo(a: &MjcfActuator, ctrl: f64) -> Option<(ActuatorSpec, f64)> {
    if a.dynamics.is_some() {
        return None;
    }
    let gear = a.gear[0];
    let (g, b) = (a.gainprm, if a.bias_affine { a.biasprm } else { [0.0; 3] });
    let (g1, g2) = if a.gain_affine { (g[1], g[2]) } else { (0.0, 0.0) };
    let k0 = gear * (g[0] * ctrl + b[0]);
    let kp = -gear * gear * (g1 * ctrl + b[1]);
    let kd = -gear * gear * (g2 * ctrl + b[2]);
    if kp < 0.0 || kd < 0.0 || !(k0.is_finite() && kp.is_finite() && kd.is_finite()) {
        return None;
    }
    let effort_limit = a.forcerange.map(|(lo, hi)| lo.abs().max(hi.abs()) * gear.abs());
    let spec = |mode, kp, kd, target| ActuatorSpec { mode, kp, kd, target: Target::Value(target), effort_limit, velocity_limit: None };
    Some(if kp == 0.0 && kd == 0.0 {
        (spec(ActuatorMode::Torque, 0.0, 0.0, k0), 0.0)
    } else if kp > 0.0 {
        (spec(ActuatorMode::Position, kp, kd, k0 / kp), 0.0)
    } else {
        (spec(ActuatorMode::Position, 0.0, kd, 0.0), k0)
    })
}

/// Every joint robot `ri`'s `q0` and `v0` name is one of the robot's.
fn check_joint_names(scene: &Scene, ri: usize, rm: &Model) -> Result<(), SimError> {
    let rs = &scene.robots[ri];
    for (key, list) in [("q0", &rs.q0), ("v0", &rs.v0)] {
        for (name, _) in list {
            if rm.joint_id(name).is_none() {
                let path = format!("robots[{ri}].{key}.{name}");
                return Err(scene_err(scene, path, format!("the robot has no joint '{name}'")));
            }
        }
    }
    Ok(())
}

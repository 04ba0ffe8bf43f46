//! An MJCF robot's sensors and `<equality>` constraints on the world model: each MJCF sensor
//! as one of the simulator's sensor kinds (named `robot/sensor`), each active `connect` and
//! `weld` as a loop closure (ball, weld), anchored as MuJoCo anchors them: at qpos0. What has
//! no counterpart is left out, and a warning per robot counts it.

use karakuri::io::mjcf::{from_mujoco_qpos, EqualityKind, MjcfWorld, SensorKind as MjSensor, Transmission};
use karakuri::model::JointType;
use karakuri::spatial::Se3;
use karakuri::Model;

use super::builder::{Builder, Grafted};
use super::initial::placements;
use super::model::{Actuator, LoopSpec, Sensor};
use super::sensors::{plain, subtree};
use crate::scene::{LoopKind, SensorKind};
use crate::SimError;

/// The MJCF robots' sensors, in robot then MuJoCo order. `actuators` are the world's (an
/// `actuatorfrc` reads the one on its actuator's joint, divided by the gear).
pub(super) fn mjcf_sensors(b: &mut Builder, model: &Model, actuators: &[Actuator]) -> Vec<Sensor> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (ri, (g, world)) in b.robots.iter().zip(&b.mjcf_worlds).enumerate() {
        let Some(world) = world else { continue };
        let robot = &b.scene.robots[ri].name;
        let mut left_out = Vec::new();
        for s in &world.sensors {
            match sensor(world, g, model, actuators, &s.kind) {
                Some((kind, joint, placement, index, gain)) => {
                    let mut sn = plain(format!("{robot}/{}", s.name), kind, joint, placement);
                    if kind.is_wrench() {
                        sn.subtree = subtree(model, joint);
                    }
                    (sn.index, sn.gain) = (index, gain);
                    out.push(sn);
                }
                None => left_out.push(s.name.clone()),
            }
        }
        if !left_out.is_empty() {
            notes.push(format!(
                "robots[{ri}]: {} MJCF sensors not simulated: {} (a force or torque sensor needs a site on a body with its own joint, a frame sensor a site, xbody or geom without reference frame, an actuatorfrc a simulated actuator)",
                left_out.len(),
                left_out.join(", ")
            ));
        }
    }
    b.warnings.append(&mut notes);
    out
}

/// One MJCF sensor as (kind, world joint, placement in it, actuator index, gain), `None` when
/// it has no counterpart.
fn sensor(world: &MjcfWorld, g: &Grafted, model: &Model, actuators: &[Actuator], kind: &MjSensor) -> Option<(SensorKind, usize, Se3, usize, f64)> {
    let rm = &g.robot.model;
    let site = |s: usize| {
        let (_, body, frame) = &world.sites[s];
        let (rj, x) = world.body_placement(*body);
        (rj.0, *body, x.compose(frame))
    };
    let on = |kind: SensorKind, (rj, _, x): (usize, usize, Se3)| {
        let (j, p) = g.on_world(rj, &x);
        Some((kind, j, p, 0, 1.0))
    };
    let one_dof = |mj: usize| rm.joint_id(&world.joints[mj].name).map(|j| j.0).filter(|&j| rm.nvs[j] == 1);
    match kind {
        MjSensor::Accelerometer(s) => on(SensorKind::Accelerometer, site(*s)),
        MjSensor::Gyro(s) => on(SensorKind::RateGyro, site(*s)),
        MjSensor::Velocimeter(s) => on(SensorKind::Velocimeter, site(*s)),
        MjSensor::Touch(s) => on(SensorKind::Touch, site(*s)),
        MjSensor::Force(s) | MjSensor::Torque(s) => {
            let (rj, body, x) = site(*s);
            // MuJoCo's force is the site's body's subtree: a body with its own joint here
            if rj == 0 || rm.body_names[rj] != world.body_names[body] {
                return None;
            }
            let k = if matches!(kind, MjSensor::Force(_)) { SensorKind::Force3 } else { SensorKind::Torque };
            on(k, (rj, body, x))
        }
        MjSensor::JointPos(mj) => one_dof(*mj).map(|j| (SensorKind::JointPosition, g.joint[j], Se3::identity(), 0, 1.0)),
        MjSensor::JointVel(mj) => one_dof(*mj).map(|j| (SensorKind::JointVelocity, g.joint[j], Se3::identity(), 0, 1.0)),
        MjSensor::ActuatorFrc(a) => {
            let act = &world.actuators[*a];
            let Transmission::Joint(mj) = act.transmission else { return None };
            let j = g.joint[one_dof(mj)?];
            let index = actuators.iter().position(|x| x.dof == model.idx_v[j])?;
            (act.gear[0] != 0.0).then(|| (SensorKind::ActuatorForce, j, Se3::identity(), index, 1.0 / act.gear[0]))
        }
        MjSensor::Frame { which, object, reference: None } => {
            let kind = match which.as_str() {
                "framepos" => SensorKind::FramePosition,
                "framequat" => SensorKind::FrameQuaternion,
                "framelinvel" => SensorKind::FrameLinearVelocity,
                _ => SensorKind::FrameAngularVelocity,
            };
            let (rj, x) = match object.0.as_str() {
                "site" => {
                    let (rj, _, x) = site(object.1);
                    (rj, x)
                }
                "xbody" => {
                    let (rj, x) = world.body_placement(object.1);
                    (rj.0, x)
                }
                "geom" => {
                    let (rj, x) = world.geom_placement(object.1);
                    (rj.0, x)
                }
                // a body's inertial frame: its angular velocity is its frame's
                _ if kind == SensorKind::FrameAngularVelocity => {
                    let (rj, x) = world.body_placement(object.1);
                    (rj.0, x)
                }
                _ => return None,
            };
            on(kind, (rj, 0, x))
        }
        MjSensor::Frame { .. } => None,
    }
}

/// World placements at MuJoCo's qpos0 of each robot joint's world joint (the world's for the
/// robot's universe), as the grafted world places them: a tree under a free joint where the
/// free joint puts it, the others at the robot's `base`.
fn qpos0_placements(world: &MjcfWorld, g: &Grafted) -> Result<Vec<Se3>, String> {
    let rm = &g.robot.model;
    let q = from_mujoco_qpos(rm, &world.qpos0).map_err(|e| e.to_string())?;
    let x = placements(rm, &q).map_err(|e| e.to_string())?;
    let mut out = vec![Se3::identity(); rm.njoints];
    for j in 1..rm.njoints {
        let mut root = j;
        while rm.parents[root] != 0 {
            root = rm.parents[root];
        }
        out[j] = if rm.joint_types[root] == JointType::FreeFlyer { x[j] } else { g.base.compose(&x[j]) };
    }
    Ok(out)
}

/// The MJCF robots' active `connect` and `weld` equalities as loop closures; the others
/// (inactive ones, `joint` and `tendon` couplings, a weld's `torquescale`) are counted in a
/// warning.
pub(super) fn mjcf_loops(b: &mut Builder) -> Result<Vec<LoopSpec>, SimError> {
    let mut loops = Vec::new();
    let mut notes = Vec::new();
    for (ri, (g, world)) in b.robots.iter().zip(&b.mjcf_worlds).enumerate() {
        let Some(world) = world else { continue };
        if world.equalities.is_empty() {
            continue;
        }
        let at = |e: String| super::builder::scene_err(b.scene, format!("robots[{ri}].mjcf"), e);
        let x0 = qpos0_placements(world, g).map_err(at)?;
        // a body's (world joint, frame in it, world placement of that joint at qpos0)
        let place = |body: usize| {
            let (rj, x) = world.body_placement(body);
            let (j, l) = g.on_world(rj.0, &x);
            (j, l, x0[rj.0])
        };
        let mut left_out = Vec::new();
        for (k, e) in world.equalities.iter().enumerate() {
            let name = e.name.clone().unwrap_or_else(|| format!("equality{k}"));
            let spec = match (&e.kind, e.active) {
                (EqualityKind::Connect { body1, body2, anchor }, true) => {
                    let ((ja, la, xa), (jb, _, xb)) = (place(*body1), place(*body2));
                    let pa = la.transform_point(anchor);
                    let pb = xb.inverse().transform_point(&xa.transform_point(&pa));
                    Some(LoopSpec { kind: LoopKind::Ball, ja, pa, jb, pb, axis_a: Default::default(), axis_b: Default::default(), rel_rotation: xa.rotation.transpose() * xb.rotation })
                }
                (EqualityKind::Weld { body1, body2, relpose, .. }, true) => {
                    let ((ja, la, xa), (jb, lb, xb)) = (place(*body1), place(*body2));
                    // MuJoCo's relpose: body2's frame in body1's
                    let (pa, pb, rel_rotation) = match relpose {
                        Some(r) => (la.compose(r).translation, lb.translation, la.rotation * r.rotation * lb.rotation.transpose()),
                        None => {
                            let pa = la.translation;
                            (pa, xb.inverse().transform_point(&xa.transform_point(&pa)), xa.rotation.transpose() * xb.rotation)
                        }
                    };
                    Some(LoopSpec { kind: LoopKind::Weld, ja, pa, jb, pb, axis_a: Default::default(), axis_b: Default::default(), rel_rotation })
                }
                _ => None,
            };
            match spec {
                Some(l) if l.ja != l.jb => loops.push(l),
                _ => left_out.push(name),
            }
        }
        if !left_out.is_empty() {
            notes.push(format!(
                "robots[{ri}]: {} MJCF equality constraints not simulated: {} (inactive ones, joint and tendon couplings, a connect or weld between bodies that move as one)",
                left_out.len(),
                left_out.join(", ")
            ));
        }
    }
    b.warnings.append(&mut notes);
    Ok(loops)
}

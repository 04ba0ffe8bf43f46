//! An MJCF robot's sensors, `<equality>` constraints and fixed tendons on the world model:
//! each MJCF sensor as one of the simulator's sensor kinds (named `robot/sensor`), each active
//! `connect` and `weld` as a loop closure (ball, weld), anchored as MuJoCo anchors them: at
//! qpos0; each active `joint` and `tendon` equality with a linear `polycoef` and each fixed
//! tendon's `range` as a linear joint row. What has no counterpart is left out, and a warning
//! per robot names it.

use karakuri::io::mjcf::{from_mujoco_qpos, EqualityKind, MjcfWorld, SensorKind as MjSensor, Transmission};
use karakuri::model::JointType;
use karakuri::spatial::Se3;
use karakuri::Model;

use super::builder::{Builder, Grafted};
use super::initial::placements;
use super::model::{Actuator, LinearRow, LoopSpec, Sensor, SpatialTendon};
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
            // the simulator keeps the first actuator of a joint only
            if world.actuators[..*a].iter().any(|b| matches!(b.transmission, Transmission::Joint(k) if k == mj)) {
                return None;
            }
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

/// The MJCF robots' active `connect` and `weld` equalities as loop closures (a weld's
/// `torquescale` is not used); inactive ones are named in a warning (`joint` and `tendon`
/// equalities: [`mjcf_linear_rows`]).
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
                (EqualityKind::Joint { .. } | EqualityKind::Tendon { .. }, _) => continue,
                _ => None,
            };
            match spec {
                Some(l) if l.ja != l.jb => loops.push(l),
                _ => left_out.push(name),
            }
        }
        if !left_out.is_empty() {
            notes.push(format!(
                "robots[{ri}]: {} MJCF equality constraints not simulated: {} (inactive ones, a connect or weld between bodies that move as one)",
                left_out.len(),
                left_out.join(", ")
            ));
        }
    }
    b.warnings.append(&mut notes);
    Ok(loops)
}

/// A linear row's `(iq, dof, coef)` terms.
type Terms = Vec<(usize, usize, f64)>;

/// `Σ coef · q` of MJCF joints `(MuJoCo joint id, coef)` as world `(iq, dof, coef)` terms, with
/// its value at qpos0; `None` when a joint is not a hinge or slide.
fn terms(world: &MjcfWorld, g: &Grafted, model: &Model, joints: &[(usize, f64)]) -> Option<(Terms, f64)> {
    let rm = &g.robot.model;
    let mut out = Vec::with_capacity(joints.len());
    let mut at_qpos0 = 0.0;
    for &(mj, coef) in joints {
        let rj = rm.joint_id(&world.joints[mj].name).map(|j| j.0).filter(|&j| rm.nvs[j] == 1)?;
        let wj = g.joint[rj];
        out.push((model.idx_q[wj], model.idx_v[wj], coef));
        at_qpos0 += coef * world.qpos0[rm.idx_q[rj]];
    }
    Some((out, at_qpos0))
}

/// An active `joint` or `tendon` equality `y − y0 = c0 + c1 (x − x0)` (y, x the joints' or
/// tendons' values, y0, x0 theirs at qpos0; no x: `y − y0 = c0`) as a row `C = 0`; `None` for
/// a `polycoef` beyond the linear term or a joint that is not a hinge or slide.
fn equality_row(world: &MjcfWorld, g: &Grafted, model: &Model, kind: &EqualityKind) -> Option<(Terms, f64)> {
    let (y, x, c) = match kind {
        EqualityKind::Joint { joint1, joint2, polycoef } => (vec![(*joint1, 1.0)], joint2.map(|j| vec![(j, 1.0)]), polycoef),
        EqualityKind::Tendon { tendon1, tendon2, polycoef } => {
            (world.tendons[*tendon1].joints.clone(), tendon2.map(|t| world.tendons[t].joints.clone()), polycoef)
        }
        _ => return None,
    };
    if c[2..].iter().any(|&k| k != 0.0) {
        return None;
    }
    let (mut row, y0) = terms(world, g, model, &y)?;
    let mut offset = -y0 - c[0];
    if let Some(x) = x {
        let (xs, x0) = terms(world, g, model, &x)?;
        row.extend(xs.into_iter().map(|(iq, dof, k)| (iq, dof, -c[1] * k)));
        offset += c[1] * x0;
    }
    Some((row, offset))
}

/// The MJCF robots' active `joint` and `tendon` equalities with a linear `polycoef` (rows
/// `C = 0`) and their fixed tendons' `range`s (rows `lo ≤ L ≤ hi`); the others, and a row over
/// more than two trees of the world, are named in a warning, as are tendons' springs, dampers
/// and friction losses (not simulated).
pub(super) fn mjcf_linear_rows(b: &mut Builder, model: &Model) -> Vec<LinearRow> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let trees = |r: &[(usize, usize, f64)]| {
        let mut t: Vec<_> = r.iter().map(|&(_, dof, _)| tree_root(model, model.dof_joint[dof])).collect();
        t.sort_unstable();
        t.dedup();
        t.len() <= 2
    };
    for (ri, (g, world)) in b.robots.iter().zip(&b.mjcf_worlds).enumerate() {
        let Some(world) = world else { continue };
        let robot = &b.scene.robots[ri].name;
        let mut left_out = Vec::new();
        for (k, e) in world.equalities.iter().enumerate() {
            if !matches!(e.kind, EqualityKind::Joint { .. } | EqualityKind::Tendon { .. }) {
                continue;
            }
            let name = format!("{robot}/{}", e.name.clone().unwrap_or_else(|| format!("equality{k}")));
            match equality_row(world, g, model, &e.kind).filter(|(r, _)| e.active && trees(r)) {
                Some((terms, offset)) => rows.push(LinearRow { name, terms, offset, range: None }),
                None => left_out.push(name),
            }
        }
        let mut passive = 0;
        for t in &world.tendons {
            passive += usize::from(t.stiffness != 0.0 || t.damping != 0.0 || t.frictionloss != 0.0);
            let Some(range) = t.range else { continue };
            let name = format!("{robot}/{}", t.name);
            match terms(world, g, model, &t.joints).filter(|(r, _)| trees(r)) {
                Some((terms, _)) => rows.push(LinearRow { name, terms, offset: 0.0, range: Some(range) }),
                None => left_out.push(name),
            }
        }
        if !left_out.is_empty() {
            notes.push(format!(
                "robots[{ri}]: {} MJCF joint/tendon equalities or tendon ranges not simulated: {} (inactive ones, a polycoef beyond the linear term, a joint that is not a hinge or slide)",
                left_out.len(),
                left_out.join(", ")
            ));
        }
        if passive > 0 {
            notes.push(format!("robots[{ri}]: {passive} MJCF tendon(s) with stiffness, damping or frictionloss: not simulated yet (a tendon's range is)"));
        }
    }
    b.warnings.append(&mut notes);
    rows
}

/// The MJCF robots' spatial tendons with a range, their sites as points on world joints (one
/// over more than two trees of the world is left out); spatial tendons' springs, dampers and
/// friction losses are named in a warning.
pub(super) fn mjcf_spatial_tendons(b: &mut Builder, model: &Model) -> Vec<SpatialTendon> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (ri, (g, world)) in b.robots.iter().zip(&b.mjcf_worlds).enumerate() {
        let Some(world) = world else { continue };
        let robot = &b.scene.robots[ri].name;
        let mut passive = 0;
        for t in &world.spatial_tendons {
            passive += usize::from(t.stiffness != 0.0 || t.damping != 0.0 || t.frictionloss != 0.0);
            let Some(range) = t.range else { continue };
            let points = t
                .sites
                .iter()
                .map(|&s| {
                    let (_, body, frame) = &world.sites[s];
                    let (rj, x) = world.body_placement(*body);
                    let (j, p) = g.on_world(rj.0, &x.compose(frame));
                    (j, p.translation)
                })
                .collect::<Vec<_>>();
            let mut roots: Vec<usize> = points.iter().filter(|p| p.0 != 0).map(|p| tree_root(model, p.0)).collect();
            roots.sort_unstable();
            roots.dedup();
            if roots.len() > 2 {
                notes.push(format!("robots[{ri}]: MJCF spatial tendon '{}' joins more than two trees: not simulated", t.name));
                continue;
            }
            out.push(SpatialTendon { name: format!("{robot}/{}", t.name), points, range });
        }
        if passive > 0 {
            notes.push(format!("robots[{ri}]: {passive} MJCF spatial tendon(s) with stiffness, damping or frictionloss: not simulated yet (a tendon's range is)"));
        }
    }
    b.warnings.append(&mut notes);
    out
}

/// The first joint below the world on joint `j`'s path (its tree's root).
fn tree_root(model: &Model, mut j: usize) -> usize {
    while model.parents[j] != 0 {
        j = model.parents[j];
    }
    j
}

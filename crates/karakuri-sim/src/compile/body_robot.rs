//! What a Choreonoid `.body` robot brings beside its tree (grafted by the robots pass like a
//! URDF's): a free root's start (the robot's `pose` composed with the file's root placement),
//! the joints' start at `standardPose` (else `jointAngle` / `jointDisplacement`; the robot's
//! `q0` by name over both), a position servo holding each revolute and prismatic joint there
//! (gains [`HOLD_KP`], [`HOLD_KD`]; none when the robot lists its own `actuators`), its force
//! sensors, rate gyros, accelerometers and IMUs as the world's sensors, and its extra joints
//! as loop constraints.

use karakuri::io::body::{BodyJointKind, BodyModel, DeviceKind, ExtraJointKind};
use karakuri::spatial::quat_to_xyzw;

use super::builder::{se3, ActuatorSetting, Builder, FreeStart, Grafted, JointValue};
use super::model::Sensor;
use crate::scene::{ActuatorMode, ActuatorSpec, LoopConstraint, LoopKind, Pose, SensorKind, Target};

/// Position gain of the standard-pose hold, N·m/rad (N/m): Choreonoid's SR1 sample controller
/// (`SR1MinimumController.cpp`) holds SR1's legs and waist with 8000.
pub const HOLD_KP: f64 = 8000.0;
/// Velocity gain of the hold, N·m·s/rad: the same controller's 100.
pub const HOLD_KD: f64 = 100.0;

/// The world body pairs `(a, b)`, `a < b`, that a `.body` robot's `collision_detection_rules`
/// turn off (Choreonoid's rules): links at most `disabled_link_chain_level` joints apart along
/// the tree, each `disabled_link_group`'s pairs, and `disabled_links` with every other link.
/// `body` is each robot joint's world body.
pub(super) fn rule_pairs(model: &BodyModel, body: &[usize]) -> Vec<(usize, usize)> {
    let rules = &model.collision_rules;
    let links = &model.links;
    // the links from a link up to the root
    let up = |mut k: usize| {
        let mut path = vec![k];
        while let Some(p) = links[k].parent {
            path.push(p);
            k = p;
        }
        path
    };
    let apart = |a: usize, b: usize| {
        let (pa, pb) = (up(a), up(b));
        let common = pa.iter().position(|x| pb.contains(x)).unwrap_or(pa.len());
        let in_b = pb.iter().position(|x| Some(x) == pa.get(common)).unwrap_or(pb.len());
        common + in_b
    };
    let mut out = vec![];
    for a in 0..links.len() {
        for c in a + 1..links.len() {
            let (na, nc) = (&links[a].name, &links[c].name);
            let off = rules.disabled_link_chain_level.is_some_and(|lv| apart(a, c) <= lv)
                || rules.disabled_links.iter().any(|l| l == na || l == nc)
                || rules.disabled_pairs.iter().any(|(x, y)| (x == na && y == nc) || (x == nc && y == na));
            let (ba, bc) = (body[links[a].joint], body[links[c].joint]);
            if off && ba != bc {
                out.push((ba.min(bc), ba.max(bc)));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Robot `ri`'s start, hold, sensors and loops from its `.body` file.
pub(super) fn body_start(b: &mut Builder, ri: usize, body: &BodyModel, g: &Grafted) {
    let rules = rule_pairs(body, &g.body);
    b.rule_excluded.extend(rules);
    let rs = &b.scene.robots[ri];
    let rm = &g.robot.model;
    if body.links.first().is_some_and(|l| l.kind == BodyJointKind::Free) && rm.njoints > 1 {
        let x = se3(&rs.pose).compose(&body.root_placement);
        let t = x.translation;
        let pose = Pose { position: [t.x, t.y, t.z], orientation: quat_to_xyzw(&x.rotation) };
        let (linear, angular) = (rs.base_velocity.linear, rs.base_velocity.angular);
        b.free_start.push(FreeStart { joint: g.joint[1], pose, linear, angular });
    }
    let start = |name: &str| {
        let named = |list: &[(String, f64)]| list.iter().find(|(n, _)| n == name).map(|(_, x)| *x);
        named(&rs.q0).or_else(|| named(&body.standard_pose)).or_else(|| named(&body.initial_q))
    };
    let hold = rs.actuators.is_empty();
    for j in 1..rm.njoints {
        if rm.nqs[j] != 1 {
            continue;
        }
        let name = &rm.joint_names[j];
        let value = start(name);
        // rotorInertia (× gearRatio²) as the joint's armature
        let armature = rm.armature[rm.idx_v[j]];
        b.dofs.iter_mut().filter(|d| d.joint == g.joint[j]).for_each(|d| d.armature += armature);
        if let Some(value) = value {
            b.q0.push(JointValue { joint: g.joint[j], value });
        }
        if hold {
            let target = Target::Value(value.unwrap_or(0.0));
            let spec = ActuatorSpec { mode: ActuatorMode::Position, kp: HOLD_KP, kd: HOLD_KD, target, effort_limit: None, velocity_limit: None };
            b.actuators.push(ActuatorSetting { joint: g.joint[j], spec, bias: 0.0 });
        }
    }
    sensors(b, ri, body, g);
    loops(b, ri, body);
}

/// The body's sensors on the world's joints (an IMU as an accelerometer `NAME/accel` and a rate
/// gyro `NAME/gyro`); a force sensor measures its link's joint (a warning when its link is
/// fixed to its parent: then the joint that moves it).
fn sensors(b: &mut Builder, ri: usize, body: &BodyModel, g: &Grafted) {
    let robot = b.scene.robots[ri].name.clone();
    for d in &body.devices {
        let (joint, placement) = g.on_world(d.joint, &d.placement);
        let kinds: &[(SensorKind, &str)] = match d.kind {
            DeviceKind::ForceSensor => &[(SensorKind::Force, "")],
            DeviceKind::RateGyroSensor => &[(SensorKind::RateGyro, "")],
            DeviceKind::AccelerationSensor => &[(SensorKind::Accelerometer, "")],
            DeviceKind::Imu => &[(SensorKind::Accelerometer, "/accel"), (SensorKind::RateGyro, "/gyro")],
            DeviceKind::Other(_) => &[],
        };
        if d.kind == DeviceKind::ForceSensor && body.links[d.link].kind == BodyJointKind::Fixed {
            b.warnings.push(format!("robots[{ri}]: force sensor '{}' is on a fixed link: it measures the joint that moves it", d.name));
        }
        for (kind, suffix) in kinds {
            let name = format!("{robot}/{}{suffix}", d.name);
            b.body_sensors.push(Sensor { name, kind: *kind, joint, index: 0, gain: 1.0, placement, subtree: vec![], noise: None });
        }
    }
}

/// The extra joints as loop constraints between `robot/link1` and `robot/link2`.
fn loops(b: &mut Builder, ri: usize, body: &BodyModel) {
    let robot = &b.scene.robots[ri].name;
    for (k, e) in body.extra_joints.iter().enumerate() {
        let kind = match e.kind {
            ExtraJointKind::Ball => LoopKind::Ball,
            ExtraJointKind::Hinge => hinge_kind(b, ri, body, e),
            ExtraJointKind::Piston => LoopKind::Piston,
            ExtraJointKind::Fixed => LoopKind::Weld,
        };
        b.body_loops.push(LoopConstraint {
            name: format!("{robot}/extra_joint{k}"),
            kind,
            body_a: format!("{robot}/{}", e.link1),
            anchor_a: e.point1.into(),
            body_b: format!("{robot}/{}", e.link2),
            anchor_b: e.point2.into(),
            axis_a: e.axis.into(),
            note: Some(e.at.clone()),
        });
    }
}

/// A hinge whose anchors are apart along its axis at the start (as in Choreonoid's
/// ClosedLinkSample, where the links are stacked 4 cm apart) is held as a piston: the axial
/// offset kept, everything else a hinge's; a warning says so. Otherwise a revolute loop.
fn hinge_kind(b: &mut Builder, ri: usize, body: &BodyModel, e: &karakuri::io::body::ExtraJoint) -> LoopKind {
    let m = &body.model;
    let mut data = karakuri::Data::new(m);
    karakuri::algorithms::forward_kinematics(m, &mut data, &body.start_configuration());
    let Ok(o_m_i) = data.joint_placements() else { return LoopKind::Revolute };
    let world = |name: &str| body.links.iter().find(|l| l.name == name).map(|l| o_m_i[l.joint].compose(&l.placement));
    let (Some(x1), Some(x2)) = (world(&e.link1), world(&e.link2)) else { return LoopKind::Revolute };
    let d = x2.transform_point(&e.point2) - x1.transform_point(&e.point1);
    let a = x1.rotation * e.axis;
    let axial = d.dot(&a);
    if axial.abs() > 1e-9 {
        let radial = (d - axial * a).norm();
        b.warnings.push(format!(
            "robots[{ri}]: extra joint {}: hinge anchors {axial:.4} m apart along its axis at the start ({radial:.1e} m across): held as a piston (the axial offset kept)",
            e.at
        ));
        return LoopKind::Piston;
    }
    LoopKind::Revolute
}

/// Each force sensor's child side, once the world model is built.
pub(super) fn finish_sensors(sensors: &mut [Sensor], model: &karakuri::Model) {
    for s in sensors.iter_mut().filter(|s| s.kind == SensorKind::Force) {
        let mut subtree = vec![false; model.njoints];
        for k in s.joint..model.njoints {
            subtree[k] = k == s.joint || (k > 0 && subtree[model.parents[k]]);
        }
        s.subtree = subtree;
    }
}

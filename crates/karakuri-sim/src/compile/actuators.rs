//! The actuators pass: scene bodies' joint actuators, then each robot's `actuators` by joint
//! name in order (a later entry replaces an earlier one; a URDF's effort and velocity limits
//! where the scene gives none), on the world model's indices. A prescribed joint's target
//! must stay within the joint's limits.

use karakuri::Model;

use super::builder::{scene_err, ActuatorSetting, Builder};
use super::model::{Actuator, Limit};
use crate::engine::ActuatorInfo;
use crate::scene::{ActuatorMode, JointSelection, Scene};
use crate::SimError;

/// Every actuator on its joint's indices, in scene order (bodies' joints, then robots'), and
/// each one-dof joint's actuator `(one_dof)`.
pub(super) fn actuators(
    b: &Builder,
    model: &Model,
    limits: &[Limit],
    one_dof: &[usize],
) -> Result<(Vec<Actuator>, Vec<Option<usize>>), SimError> {
    let mut settings: Vec<ActuatorSetting> =
        b.actuators.iter().map(|a| ActuatorSetting { joint: a.joint, spec: a.spec.clone(), bias: a.bias }).collect();
    for ri in 0..b.scene.robots.len() {
        robot_actuators(b, model, ri, &mut settings)?;
    }
    let actuators: Vec<Actuator> = settings
        .into_iter()
        .map(|a| Actuator {
            name: model.joint_names[a.joint].clone(),
            dof: model.idx_v[a.joint],
            iq: model.idx_q[a.joint],
            mode: a.spec.mode,
            kp: a.spec.kp,
            kd: a.spec.kd,
            bias: a.bias,
            target: a.spec.target,
            effort_limit: a.spec.effort_limit.unwrap_or(f64::INFINITY),
            velocity_limit: a.spec.velocity_limit.unwrap_or(f64::INFINITY),
        })
        .collect();
    check_prescribed(b.scene, &actuators, limits)?;
    let one_dof_actuator =
        one_dof.iter().map(|&j| actuators.iter().position(|a| a.dof == model.idx_v[j])).collect();
    Ok((actuators, one_dof_actuator))
}

/// Robot `ri`'s `actuators` onto `out`: each entry's joints (names, or `"*"` for every one-dof
/// joint of the robot) take its actuator, the URDF's limits filling those the entry leaves out.
fn robot_actuators(b: &Builder, model: &Model, ri: usize, out: &mut Vec<ActuatorSetting>) -> Result<(), SimError> {
    let (scene, rs, g) = (b.scene, &b.scene.robots[ri], &b.robots[ri]);
    let prefix = format!("{}/", rs.name);
    for (ai, a) in rs.actuators.iter().enumerate() {
        let at = format!("robots[{ri}].actuators[{ai}].joints");
        let mut selected: Vec<usize> = Vec::new();
        match &a.joints {
            JointSelection::All(star) if star == "*" => {
                let mine = |j: &usize| model.nvs[*j] == 1 && model.joint_names[*j].starts_with(&prefix);
                selected.extend((1..model.njoints).filter(mine));
            }
            JointSelection::All(other) => {
                return Err(scene_err(scene, at, format!("expected a list of joint names or \"*\", found \"{other}\"")))
            }
            JointSelection::Names(names) => {
                for n in names {
                    let j = model
                        .joint_id(&format!("{prefix}{n}"))
                        .ok_or_else(|| scene_err(scene, at.clone(), format!("the robot has no joint '{n}'")))?;
                    if model.nvs[j.0] != 1 {
                        let reason = format!("joint '{n}' has {} dofs; actuators drive 1-dof joints", model.nvs[j.0]);
                        return Err(scene_err(scene, at, reason));
                    }
                    selected.push(j.0);
                }
            }
        }
        let rm = &g.robot.model;
        let positive = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
        for j in selected {
            let mut spec = a.actuator();
            if let Some(rj) = g.joint.iter().position(|&w| w == j).filter(|&rj| rj > 0) {
                let iv = rm.idx_v[rj];
                spec.effort_limit = spec.effort_limit.or(positive(rm.effort_limit[iv]));
                spec.velocity_limit = spec.velocity_limit.or(positive(rm.velocity_limit[iv]));
            }
            out.retain(|x| x.joint != j);
            out.push(ActuatorSetting { joint: j, spec, bias: 0.0 });
        }
    }
    Ok(())
}

/// A prescribed joint's target within its limits (else the limit rows and the prescribed row
/// contradict each other); the error names the joint's actuator in the scene.
fn check_prescribed(scene: &Scene, actuators: &[Actuator], limits: &[Limit]) -> Result<(), SimError> {
    for a in actuators.iter().filter(|a| a.mode == ActuatorMode::Prescribed) {
        let (lo, hi) = a.target.range();
        let Some(l) = limits.iter().find(|l| l.dof == a.dof) else { continue };
        if lo < l.lo || hi > l.hi {
            let reason = format!(
                "joint '{}': the prescribed target spans [{lo}, {hi}], outside the joint's limits [{}, {}]",
                a.name, l.lo, l.hi
            );
            let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
            return Err(crate::scene::scene_error(&file, &actuator_path(scene, &a.name), reason));
        }
    }
    Ok(())
}

/// Where the actuator of world joint `joint` is written in the scene: a body joint's
/// `actuator.target`, or the robot's `actuators`.
fn actuator_path(scene: &Scene, joint: &str) -> String {
    for (bi, b) in scene.bodies.iter().enumerate() {
        if let Some(k) = b.joints.iter().position(|j| j.name() == joint) {
            return format!("bodies[{bi}].joints[{k}].actuator.target");
        }
    }
    match scene.robots.iter().position(|r| joint.starts_with(&format!("{}/", r.name))) {
        Some(ri) => format!("robots[{ri}].actuators"),
        None => "actuators".into(),
    }
}

/// Checks a command to actuator `a` of `actuators` (every engine's, before it takes the
/// target): [`crate::control::check_command`] with the actuator's bounds and its joint's range
/// among `limits`.
pub fn check_command(actuators: &[Actuator], limits: &[Limit], a: usize, target: f64, time: f64) -> Result<(), SimError> {
    let act = &actuators[a];
    let bounds = ActuatorInfo { mode: act.mode, effort_limit: act.effort_limit, velocity_limit: act.velocity_limit };
    let range = limits.iter().find(|l| l.dof == act.dof).map(|l| [l.lo, l.hi]);
    crate::control::check_command(&act.name, &bounds, range, target, time)
}

//! The sensors pass: the scene's sensors on the world model, then an MJCF robot's
//! (`mjcf_sensors`). A body's sensor (accelerometer, rate gyro, velocimeter, touch, frame
//! sensors) sits on the body's joint, its pose composed with the body's placement; a wrench
//! sensor (force, force3, torque) measures its joint, with the joint's subtree (the child
//! side); joint position and velocity read a one-dof joint, an actuator force the joint's
//! actuator. Noise and bias per reading component.

use karakuri::spatial::{quat_from_xyzw, Se3};
use karakuri::Model;

use super::builder::v3;
use super::model::{Actuator, Noise, Sensor, SimBody};
use crate::engine::SensorInfo;
use crate::scene::{PerComponent, Scene, SensorKind};
use crate::SimError;

/// The sensors (the scene's, then the MJCF robots' `extra`), and what the world reports of
/// each.
pub(super) fn sensors(
    scene: &Scene,
    model: &Model,
    bodies: &[SimBody],
    actuators: &[Actuator],
    extra: Vec<Sensor>,
) -> Result<(Vec<Sensor>, Vec<SensorInfo>), SimError> {
    let mut sensors = resolve(scene, model, bodies, actuators)?;
    sensors.extend(extra);
    let infos = sensors.iter().map(|s| SensorInfo { name: s.name.clone(), kind: s.kind }).collect();
    Ok((sensors, infos))
}

/// Which joints are in joint `j`'s subtree `(njoints)`.
pub(super) fn subtree(model: &Model, j: usize) -> Vec<bool> {
    let mut subtree = vec![false; model.njoints];
    for k in j..model.njoints {
        subtree[k] = k == j || subtree[model.parents[k]];
    }
    subtree
}

/// A sensor of `kind` on joint `joint` at `placement`, exact, gain 1.
pub(super) fn plain(name: String, kind: SensorKind, joint: usize, placement: Se3) -> Sensor {
    Sensor { name, kind, joint, index: 0, gain: 1.0, placement, subtree: Vec::new(), noise: None }
}

/// Each scene sensor on its joint. Errors name `sensors[i].joint` / `.body` / `.type`.
fn resolve(scene: &Scene, model: &Model, bodies: &[SimBody], actuators: &[Actuator]) -> Result<Vec<Sensor>, SimError> {
    let err = |i: usize, key: &str, reason: String| {
        let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
        crate::scene::scene_error(&file, &format!("sensors[{i}].{key}"), reason)
    };
    let mut out = Vec::with_capacity(scene.sensors.len());
    for (i, s) in scene.sensors.iter().enumerate() {
        let pose = Se3::new(quat_from_xyzw(&s.pose.orientation), v3(&s.pose.position));
        let mut sensor = match (s.kind.on_joint(), &s.body, &s.joint) {
            (true, _, Some(name)) => {
                let j = model
                    .joint_id(name)
                    .filter(|j| j.0 != 0)
                    .ok_or_else(|| err(i, "joint", format!("unknown joint '{name}'")))?
                    .0;
                let mut sensor = plain(s.name.clone(), s.kind, j, pose);
                match s.kind {
                    SensorKind::JointPosition | SensorKind::JointVelocity if model.nvs[j] != 1 => {
                        return Err(err(i, "joint", format!("'{name}' is not a one-dof joint")));
                    }
                    SensorKind::ActuatorForce => {
                        sensor.index = actuators
                            .iter()
                            .position(|a| a.dof == model.idx_v[j] && model.nvs[j] == 1)
                            .ok_or_else(|| err(i, "joint", format!("joint '{name}' has no actuator")))?;
                    }
                    k if k.is_wrench() => sensor.subtree = subtree(model, j),
                    _ => {}
                }
                sensor
            }
            (false, Some(name), _) => {
                let b = bodies
                    .iter()
                    .find(|b| &b.name == name)
                    .ok_or_else(|| err(i, "body", format!("unknown body '{name}'")))?;
                plain(s.name.clone(), s.kind, b.joint, b.placement.compose(&pose))
            }
            _ => return Err(err(i, "type", format!("a {:?} sensor needs `{}`", s.kind, if s.kind.on_joint() { "joint" } else { "body" }))),
        };
        let len = s.kind.width();
        let part = |p: &PerComponent, k: usize| if k < len { p.get(k) } else { 0.0 };
        sensor.noise = s.noise.as_ref().map(|n| Noise {
            std: std::array::from_fn(|k| part(&n.std, k)),
            bias: std::array::from_fn(|k| part(&n.bias, k)),
            seed: n.seed,
        });
        out.push(sensor);
    }
    Ok(out)
}

//! The sensors pass: the scene's sensors on the world model. A body's sensor (accelerometer,
//! rate gyro) sits on the body's joint, its pose composed with the body's placement; a force
//! sensor measures its joint, with the joint's subtree (the child side). Noise and bias per
//! reading component.

use karakuri::spatial::{quat_from_xyzw, Se3};
use karakuri::Model;

use super::builder::v3;
use super::model::{Noise, Sensor, SimBody};
use crate::engine::SensorInfo;
use crate::scene::{PerComponent, Scene, SensorKind};
use crate::SimError;

/// The sensors, and what the world reports of each.
pub(super) fn sensors(scene: &Scene, model: &Model, bodies: &[SimBody]) -> Result<(Vec<Sensor>, Vec<SensorInfo>), SimError> {
    let sensors = resolve(scene, model, bodies)?;
    let infos = sensors.iter().map(|s| SensorInfo { name: s.name.clone(), kind: s.kind }).collect();
    Ok((sensors, infos))
}

/// Each scene sensor on its joint. Errors name `sensors[i].joint` / `.body` / `.type`.
fn resolve(scene: &Scene, model: &Model, bodies: &[SimBody]) -> Result<Vec<Sensor>, SimError> {
    let err = |i: usize, key: &str, reason: String| {
        let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
        crate::scene::scene_error(&file, &format!("sensors[{i}].{key}"), reason)
    };
    let mut out = Vec::with_capacity(scene.sensors.len());
    for (i, s) in scene.sensors.iter().enumerate() {
        let pose = Se3::new(quat_from_xyzw(&s.pose.orientation), v3(&s.pose.position));
        let sensor = match (s.kind, &s.body, &s.joint) {
            (SensorKind::Force, _, Some(name)) => {
                let j = model
                    .joint_id(name)
                    .filter(|j| j.0 != 0)
                    .ok_or_else(|| err(i, "joint", format!("unknown joint '{name}'")))?
                    .0;
                let mut subtree = vec![false; model.njoints];
                for k in j..model.njoints {
                    subtree[k] = k == j || subtree[model.parents[k]];
                }
                Sensor { name: s.name.clone(), kind: s.kind, joint: j, placement: pose, subtree, noise: None }
            }
            (_, Some(name), _) => {
                let b = bodies
                    .iter()
                    .find(|b| &b.name == name)
                    .ok_or_else(|| err(i, "body", format!("unknown body '{name}'")))?;
                Sensor {
                    name: s.name.clone(),
                    kind: s.kind,
                    joint: b.joint,
                    placement: b.placement.compose(&pose),
                    subtree: Vec::new(),
                    noise: None,
                }
            }
            _ => return Err(err(i, "type", "a sensor needs `body` (accelerometer, rate_gyro) or `joint` (force)".into())),
        };
        let mut sensor = sensor;
        // accelerometers and gyros read 3 components
        let len = if s.kind == SensorKind::Force { 6 } else { 3 };
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

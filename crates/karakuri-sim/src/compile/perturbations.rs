//! The perturbations pass: the scene's `perturbations` (a wrench on a body or robot link over
//! a time window) on the world's bodies, windows in steps. [`push_on`] and [`window_steps`]
//! also make the pushes an engine takes through its API.

use karakuri::spatial::Vec3;

use super::model::{Push, SimBody};
use crate::scene::{scene_error, Scene};
use crate::SimError;

/// The steps a window of `duration` seconds takes at `dt`: rounded, at least one.
pub fn window_steps(duration: f64, dt: f64) -> u64 {
    ((duration / dt).round() as u64).max(1)
}

/// A push on body `bi` of `bodies` for the steps `from_step..to_step`; the force acts at
/// `point` (body frame). A static body is refused (`None`).
pub fn push_on(
    bodies: &[SimBody],
    bi: usize,
    force: Vec3,
    torque: Vec3,
    point: Vec3,
    (from_step, to_step): (u64, u64),
) -> Option<Push> {
    let b = &bodies[bi];
    if b.joint == 0 {
        return None;
    }
    let p = b.placement.transform_point(&point);
    Some(Push {
        body: bi,
        joint: b.joint,
        point: [p.x, p.y, p.z],
        force: [force.x, force.y, force.z],
        torque: [torque.x, torque.y, torque.z],
        from_step,
        to_step,
    })
}

/// The scene's `perturbations` on the world's bodies, windows in steps of `dt`. Errors name
/// the entry: a robot link that does not exist, a static body.
pub fn perturbations(scene: &Scene, bodies: &[SimBody], dt: f64) -> Result<Vec<Push>, SimError> {
    let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
    let v = |a: &[f64; 3]| Vec3::new(a[0], a[1], a[2]);
    scene
        .perturbations
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = format!("perturbations[{i}].body");
            let bi = bodies
                .iter()
                .position(|b| b.name == p.body)
                .ok_or_else(|| scene_error(&file, &at, format!("unknown body '{}'", p.body)))?;
            let from = (p.start / dt).round() as u64;
            let window = (from, from + window_steps(p.duration, dt));
            push_on(bodies, bi, v(&p.force), v(&p.torque), v(&p.point), window)
                .ok_or_else(|| scene_error(&file, &at, format!("body '{}' is static: nothing to push", p.body)))
        })
        .collect()
}

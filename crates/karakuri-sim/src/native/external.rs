//! External forces (pushes): a wrench on a body over a window of steps, from the scene's
//! `perturbations` ([`SimModel::perturbations`]) or applied through the API
//! ([`SimState::pushes`]), turned into joint forces `τ += Jᵀ f` by the external-forces stage.

use karakuri::spatial::{Se3, Vec3};
use karakuri::Data;
use nalgebra::DVector;

use super::build::{SimBody, SimModel};
pub use super::parts::Push;
use super::state::SimState;
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

/// External forces: `τ += Jᵀ f` for every push acting in step `s.steps` (the scene's and the
/// API's), `f` the push's wrench about the world origin (`force`, `torque + p × force`, `p`
/// the world point), `J` the world motion columns of the joints from the body's joint to the
/// root. Reads `m.perturbations`, `s.pushes`, `s.steps`, `data`'s placements and Jacobian
/// (fresh at the evaluated configuration); writes `tau`.
pub fn external_forces(m: &SimModel, s: &SimState, data: &Data, tau: &mut DVector<f64>) -> Result<(), SimError> {
    let active = m.perturbations.iter().chain(&s.pushes).filter(|p| p.active(s.steps));
    let mut any = active.clone().peekable();
    if any.peek().is_none() {
        return Ok(());
    }
    let (o_m_i, jac) = (data.joint_placements()?, data.jacobians()?);
    let model = &m.model;
    for p in active {
        let f = Vec3::from(p.force);
        let x: &Se3 = &o_m_i[p.joint];
        let n = Vec3::from(p.torque) + x.transform_point(&Vec3::from(p.point)).cross(&f);
        let mut j = p.joint;
        while j != 0 {
            for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
                let c = jac.column(k);
                tau[k] += c[0] * f.x + c[1] * f.y + c[2] * f.z + c[3] * n.x + c[4] * n.y + c[5] * n.z;
            }
            j = model.parents[j];
        }
    }
    Ok(())
}

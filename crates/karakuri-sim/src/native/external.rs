//! External forces (pushes): a wrench on a body over a window of steps, from the scene's
//! `perturbations` (compiled: [`SimModel::perturbations`]) or applied through the API
//! ([`SimState::pushes`]), turned into joint forces `τ += Jᵀ f` by the external-forces stage.

use karakuri::spatial::{Se3, Vec3};
use karakuri::Data;
use nalgebra::DVector;

pub use crate::compile::{push_on, window_steps, Push};

use super::build::SimModel;
use super::state::SimState;
use crate::SimError;

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

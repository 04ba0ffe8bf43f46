//! The configuration update's Jacobians in the tangent space, joint by joint: the semi-implicit
//! Euler step's `q⁺ = q ⊕ dt v` (`integrate.rs`) with the free flyer's linear velocity
//! re-expressed in the new body axes. A perturbation of a pose is `(R exp(δθ), p + R δp)`
//! before and after (the core's `integrate`).
//!
//! A free flyer with `l`, `ω` its body-frame velocity (after the velocity update) and
//! `E = exp(dt ω)`, `Jr` the right Jacobian of SO(3) at `dt ω`: `p⁺ = p + dt R l`,
//! `R⁺ = R E`, `l⁺ = Eᵀ l`, `ω⁺ = ω` give
//!
//! ```text
//! δp⁺ = Eᵀ δp − dt Eᵀ [l]× δθ + dt Eᵀ δl
//! δθ⁺ = Eᵀ δθ + dt Jr δω
//! δl⁺ = Eᵀ δl + dt [Eᵀ l]× Jr δω
//! δω⁺ = δω
//! ```
//!
//! A ball joint is the rotation rows alone; a one-dof joint `q⁺ = q + dt v`.

use karakuri::model::JointType;
use karakuri::spatial::{exp3, left_jacobian3, skew, Mat3, Mat6, Vec3};

/// The right Jacobian of SO(3) at `phi`: `exp(φ + δ) ≈ exp(φ) exp(Jr(φ) δ)`, which is the left
/// one at `-φ` (the core's `left_jacobian3`, the `V` of `exp6`).
pub fn right_jacobian(phi: &Vec3) -> Mat3 {
    left_jacobian3(&-phi)
}

/// The blocks of one joint's update: `δq⁺ = Pq δq + Pv δv`, `δv⁺ = Vv δv` with `δv` the
/// velocity after the velocity update (`vel`, the joint's part of it), the joint's first
/// `nv` rows and columns of each.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// `∂q⁺/∂q`.
    pub pq: Mat6,
    /// `∂q⁺/∂v`.
    pub pv: Mat6,
    /// `∂v⁺/∂v`.
    pub vv: Mat6,
}

/// The blocks of joint kind `jt` moving with `vel` for `dt`; `None` for a kind the step
/// derivatives do not cover (planar).
pub fn blocks(jt: &JointType, vel: &[f64], dt: f64) -> Option<Blocks> {
    let mut b = Blocks { pq: Mat6::identity(), pv: Mat6::zeros(), vv: Mat6::identity() };
    match jt {
        JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => {
            b.pv[(0, 0)] = dt;
        }
        JointType::Spherical => {
            let w = Vec3::new(vel[0], vel[1], vel[2]);
            let et = exp3(&(w * dt)).transpose();
            b.pq.fixed_view_mut::<3, 3>(0, 0).copy_from(&et);
            b.pv.fixed_view_mut::<3, 3>(0, 0).copy_from(&(right_jacobian(&(w * dt)) * dt));
        }
        JointType::FreeFlyer => {
            let l = Vec3::new(vel[0], vel[1], vel[2]);
            let w = Vec3::new(vel[3], vel[4], vel[5]);
            let et = exp3(&(w * dt)).transpose();
            let jr = right_jacobian(&(w * dt)) * dt;
            b.pq.fixed_view_mut::<3, 3>(0, 0).copy_from(&et);
            b.pq.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-(et * skew(&l)) * dt));
            b.pq.fixed_view_mut::<3, 3>(3, 3).copy_from(&et);
            b.pv.fixed_view_mut::<3, 3>(0, 0).copy_from(&(et * dt));
            b.pv.fixed_view_mut::<3, 3>(3, 3).copy_from(&jr);
            b.vv.fixed_view_mut::<3, 3>(0, 0).copy_from(&et);
            b.vv.fixed_view_mut::<3, 3>(0, 3).copy_from(&(skew(&(et * l)) * jr));
        }
        JointType::Universe | JointType::Planar => return None,
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `exp(φ + ε e_i) ≈ exp(φ) exp(ε Jr e_i)`: the column of Jr against a central difference
    /// of `log(exp(φ)ᵀ exp(φ ± ε e_i))`, at a large and a tiny angle.
    #[test]
    fn the_right_jacobian_matches_a_central_difference() {
        for phi in [Vec3::new(0.3, -1.1, 0.7), Vec3::new(1e-5, 2e-5, -1e-5)] {
            let jr = right_jacobian(&phi);
            let eps = 1e-6;
            for i in 0..3 {
                let mut e = Vec3::zeros();
                e[i] = eps;
                let r0t = exp3(&phi).transpose();
                let up = karakuri::spatial::log3(&(r0t * exp3(&(phi + e))));
                let down = karakuri::spatial::log3(&(r0t * exp3(&(phi - e))));
                let fd = (up - down) / (2.0 * eps);
                let err = (fd - jr.column(i)).norm();
                assert!(err < 1e-8, "column {i} at {phi:?}: {err:e}");
            }
        }
    }
}

//! Algorithms: free functions over `(&Model, &mut Data, ...)`. None allocates.
//!
//! | function | algorithm | book |
//! | --- | --- | --- |
//! | [`forward_kinematics`] | placements, velocities, accelerations | RBDA §4 |
//! | [`inverse_dynamics`] (rnea) | recursive Newton–Euler | RBDA Table 5.1 |
//! | [`mass_matrix`] (crba) | composite rigid body | RBDA Table 6.2 |
//! | [`forward_dynamics`] (aba) | articulated body | RBDA Table 7.1 |
//! | [`joint_jacobian`], [`frame_jacobian`] | Jacobians | RBDA §4.1.4 |
//! | [`rnea_derivatives`], [`aba_derivatives`] | analytical derivatives of the dynamics | Carpentier & Mansard 2018 |

// index loops over dofs and joints read like the book's sums
#![allow(clippy::needless_range_loop)]

mod aba;
mod com;
mod configuration;
mod crba;
pub mod derivatives;
mod energy;
pub mod hybrid;
mod jacobian;
mod kinematics;
pub mod ltdl;
mod rnea;

pub use aba::{forward_dynamics, forward_dynamics_with_forces};
pub use com::{center_of_mass, center_of_mass_jacobian, center_of_mass_velocity};
pub use configuration::{difference, integrate, integrate_into, neutral, normalize, random_configuration, SplitMix64};
pub use crba::mass_matrix;
pub use derivatives::{
    aba_derivatives, aba_derivatives_with_forces, constrained_dynamics_derivatives, rnea_derivatives,
    rnea_derivatives_with_forces, ConstrainedDerivatives, ConstrainedDerivativesError, DerivativesWorkspace,
};
pub use energy::{kinetic_energy, potential_energy};
pub use hybrid::{hybrid_dynamics, hybrid_dynamics_aba, hybrid_dynamics_crba, HybridMethod, HybridWorkspace};
pub use jacobian::{
    frame_jacobian, joint_jacobian, joint_jacobian_dot, joint_jacobian_time_variation, joint_jacobians,
    ReferenceFrame,
};
pub use kinematics::{
    forward_kinematics, forward_kinematics_acceleration, forward_kinematics_velocity, frame_placement, frame_velocity,
    update_frame_placements,
};
pub use ltdl::mass_matrix_inverse;
pub use rnea::{gravity_torques, inverse_dynamics, inverse_dynamics_with_forces, nonlinear_effects};

use crate::model::{mul_axis_rotation, revolute_placement_after, JointType, Model};
use crate::spatial::quarter_turn::dispatch_quarter_turn;
use crate::spatial::{sin_cos, Force, Mat3, Motion, OriginInertia, Se3, Vec3};
use nalgebra::DVector;

/// `(sin q, cos q)` of every revolute joint into `data.joint_sin_cos`: the first step of every
/// recursion that places joints ([`update_joint_placement`] reads them). Apart from the
/// placements so that they do not wait on it: the angles are independent, the placements a
/// chain, and a sine takes as long as a few joint placements.
#[inline(always)]
pub(crate) fn joint_angles(model: &Model, data: &mut crate::Data, q: &[f64]) {
    for i in 1..model.njoints {
        if let JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } = model.joint_types[i] {
            data.joint_sin_cos[i] = sin_cos(q[model.idx_q[i]]);
        }
    }
}

/// Placement of joint `i` for configuration `q`: `li_m_i` (placement ∘ X_J(q)) and `o_m_i`
/// (parents first), revolute angles from [`joint_angles`]. The one forward-kinematics step
/// every recursion starts with. A revolute joint about ±x, ±y, ±z whose placement has no
/// rotation (the usual URDF case) skips both 3x3 products: `o_R_i = o_R_λ R_J` mixes two
/// columns of the parent's rotation.
#[inline(always)]
pub(crate) fn update_joint_placement(model: &Model, data: &mut crate::Data, q: &[f64], i: usize) {
    let placement = &model.joint_placements[i];
    let p = model.parents[i];
    if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = model.joint_types[i] {
        let (s, cos) = data.joint_sin_cos[i];
        match axis.signed_basis() {
            Some((c, sign)) if model.placement_quarter_turn[i] == Some(0) => {
                let s = sign * s; // about −e_c by q = about e_c by −q
                data.li_m_i[i] = Se3::new(mul_axis_rotation(&Mat3::identity(), c, s, cos), placement.translation);
                let o_p = data.o_m_i[p];
                data.o_m_i[i] = Se3::new(mul_axis_rotation(&o_p.rotation, c, s, cos), o_p.transform_point(&placement.translation));
                return;
            }
            _ => data.li_m_i[i] = revolute_placement_after(&axis, placement, s, cos),
        }
    } else {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        data.li_m_i[i] = model.joint_types[i].placement_after(placement, &q[iq..iq + nq]);
    }
    data.o_m_i[i] = data.o_m_i[p].compose(&data.li_m_i[i]);
}

/// `parent += λX_i* y`: the inertia `y`, given in joint `i`'s frame, added to its parent's in
/// the parent's frame (`li` = `li_m_i`). When the joint is a revolute about ±x, ±y or ±z and its
/// placement has no rotation or a quarter turn, `λX_i` is an elementary rotation (with its
/// entries moved) and a translation: about 20 flops, not 60, fused with the sum.
#[inline(always)]
pub(crate) fn add_inertia_to_parent(model: &Model, i: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    match (model.elementary_rotation_axis[i], model.placement_quarter_turn[i]) {
        (Some(axis), Some(0)) => add_turned_plane::<0>(axis, li, y, parent),
        (Some(axis), Some(turn)) => add_turned_inertia(turn, axis, li, y, parent),
        _ => parent.add_transformed(y, li),
    }
}

#[inline(always)]
fn add_turned_plane<const Q: u8>(axis: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    match axis {
        0 => parent.add_transformed_plane::<Q, 1, 2, 0>(y, li),
        1 => parent.add_transformed_plane::<Q, 2, 0, 1>(y, li),
        _ => parent.add_transformed_plane::<Q, 0, 1, 2>(y, li),
    }
}

/// [`add_inertia_to_parent`] after a quarter-turn placement: one instance per turn and axis
/// (72), called rather than inlined so that the recursions using it stay small.
#[inline(never)]
fn add_turned_inertia(turn: u8, axis: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    dispatch_quarter_turn!(turn, add_turned_plane(axis, li, y, parent))
}

/// `I S_k`: the inertia `y` (in dof `k`'s joint frame) times dof `k`'s motion subspace; a
/// column of the 6x6 inertia, read off without products when `S_k` is a basis vector.
#[inline(always)]
pub(crate) fn inertia_times_dof(model: &Model, k: usize, y: &OriginInertia) -> Force {
    let (h, m) = (&y.h, y.mass);
    match model.dof_axis[k] {
        Some(0) => Force::new(Vec3::new(m, 0.0, 0.0), Vec3::new(0.0, h.z, -h.y)),
        Some(1) => Force::new(Vec3::new(0.0, m, 0.0), Vec3::new(-h.z, 0.0, h.x)),
        Some(2) => Force::new(Vec3::new(0.0, 0.0, m), Vec3::new(h.y, -h.x, 0.0)),
        Some(3) => Force::new(Vec3::new(0.0, -h.z, h.y), y.i_o.column(0).into()),
        Some(4) => Force::new(Vec3::new(h.z, 0.0, -h.x), y.i_o.column(1).into()),
        Some(5) => Force::new(Vec3::new(-h.y, h.x, 0.0), y.i_o.column(2).into()),
        _ => y.mul_motion(&model.motion_subspace[k]),
    }
}

/// `S_i x_i`: the joint motion of joint `i` for the dof values `x` (velocity or acceleration).
#[inline]
pub(crate) fn joint_motion(model: &Model, i: usize, x: &[f64]) -> Motion {
    let iv = model.idx_v[i];
    let mut m = Motion::zero();
    for k in iv..iv + model.nvs[i] {
        m += model.motion_subspace[k] * x[k];
    }
    m
}

/// `Sᵢᵀ f` written into `out[idx_v..idx_v + nv]`.
#[inline]
pub(crate) fn project_force(model: &Model, i: usize, f: &Force, out: &mut [f64]) {
    let iv = model.idx_v[i];
    for k in iv..iv + model.nvs[i] {
        out[k] = model.motion_subspace[k].dot(f);
    }
}

/// Checks vector sizes once at the API boundary.
#[track_caller]
#[inline]
pub(crate) fn check_len(what: &str, v: &DVector<f64>, n: usize) {
    assert!(v.len() == n, "{what} has {} entries, the model needs {n}", v.len());
}

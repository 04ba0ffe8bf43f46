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
//! | [`mass_matrix_inverse`] | M⁻¹ through the branch-induced LᵀDL | RBDA §6.5 |
//! | [`compute_all_terms`] | M, C q̇ + g, placements, velocities, Jacobians | |
//! | [`compute_all_terms_of_lone_roots`] | the same for a world of one-joint trees, in one pass | |
//!
//! Every function that takes `q` records in [`Data::fresh`](crate::Data::fresh) what it left
//! valid (and so that everything else is stale); every read of a derived quantity checks it.

// index loops over dofs and joints read like the book's sums
#![allow(clippy::needless_range_loop)]

mod aba;
mod all_terms;
mod com;
mod configuration;
mod crba;
pub mod derivatives;
mod energy;
pub mod hybrid;
mod jacobian;
mod jcalc;
mod kinematics;
mod lone_roots;
mod rnea;

pub use aba::{forward_dynamics, forward_dynamics_with_forces};
pub use all_terms::compute_all_terms;
pub use lone_roots::{compute_all_terms_of_lone_roots, LoneRoots};
pub use com::{center_of_mass, center_of_mass_jacobian, center_of_mass_velocity};
pub use configuration::{difference, integrate, integrate_into, neutral, normalize, random_configuration, SplitMix64};
pub use crba::{factorize_mass_matrix, mass_matrix, mass_matrix_inverse};
pub(crate) use crba::{articulated_factors_apply, factor_by_articulated_inertias, invert_mass_matrix};
pub use derivatives::{
    aba_derivatives, aba_derivatives_with_forces, rnea_derivatives, rnea_derivatives_with_forces, DerivativesWorkspace,
};
pub use energy::{kinetic_energy, potential_energy};
pub use hybrid::{hybrid_dynamics, HybridMethod, HybridWorkspace};
pub use jacobian::{
    frame_jacobian, joint_jacobian, joint_jacobian_dot, joint_jacobian_time_variation, joint_jacobians,
    ReferenceFrame,
};
pub use kinematics::{
    forward_kinematics, forward_kinematics_acceleration, forward_kinematics_velocity, frame_placement, frame_velocity,
    update_frame_placements,
};
pub(crate) use jcalc::{
    add_articulated_to_parent, add_inertia_to_parent, axis_motion, dof_dot, dof_in_frame, inertia_times_dof, is_floating_root, is_free_flyer, joint_motion,
    force_to_parent, motion_cross_axis, motion_to_joint, place_joints, place_joints_after_crba, project_force,
};
pub use jcalc::is_lone_root;
pub use rnea::{gravity_torques, inverse_dynamics, inverse_dynamics_with_forces, nonlinear_effects};
pub(crate) use rnea::nonlinear_effects_after_crba;

use nalgebra::DVector;

/// Checks vector sizes once at the API boundary.
#[track_caller]
#[inline]
pub(crate) fn check_len(what: &str, v: &DVector<f64>, n: usize) {
    assert!(v.len() == n, "{what} has {} entries, the model needs {n}", v.len());
}

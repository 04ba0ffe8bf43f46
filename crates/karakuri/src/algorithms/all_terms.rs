//! Everything a simulation step reads at (q, q̇), in one call (Pinocchio's `computeAllTerms`).

use super::jacobian::fill_world_columns;
use super::mass_matrix;
use super::rnea::nonlinear_effects_after_crba;
use crate::data::{Data, Fresh};
use crate::model::Model;
use nalgebra::DVector;

/// What [`compute_all_terms`] (and its one-pass form for lone roots) leaves fresh.
pub(crate) const ALL_TERMS: Fresh = Fresh::PLACEMENTS
    .union(Fresh::VELOCITIES)
    .union(Fresh::ACCELERATIONS)
    .union(Fresh::ACCELERATIONS_WITH_GRAVITY)
    .union(Fresh::JACOBIANS)
    .union(Fresh::MASS_MATRIX)
    .union(Fresh::NONLINEAR_EFFECTS);

/// At (q, q̇): the mass matrix M, the nonlinear effects C q̇ + g
/// ([`Data::nonlinear_effects`]), world placements, body velocities and accelerations at
/// q̈ = 0 (with and without gravity), and the world Jacobian columns of every dof — all fresh
/// together after it (the separate calls would each leave only their own fresh, since each
/// takes q anew). The factorisation of M is one call more ([`super::factorize_mass_matrix`]).
pub fn compute_all_terms(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    // CRBA first: it leaves placements in its working frame, which RNEA then puts in the world
    // (without computing the joint angles again, and only when a floating root made the
    // frames differ)
    mass_matrix(model, data, q);
    nonlinear_effects_after_crba(model, data, q, v);
    data.nle.copy_from(&data.tau);
    fill_world_columns(model, data);
    data.fresh = ALL_TERMS;
}

//! Kinetic and potential energy.

use crate::algorithms::kinematics::{forward_kinematics, forward_kinematics_velocity};
use crate::data::Data;
use crate::model::Model;
use nalgebra::DVector;

/// Kinetic energy ½ q̇ᵀ M q̇ (`data.kinetic_energy`).
pub fn kinetic_energy(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    forward_kinematics_velocity(model, data, q, v);
    data.kinetic_energy = (1..model.njoints).map(|i| model.inertias[i].kinetic_energy(&data.v[i])).sum();
    data.kinetic_energy
}

/// Potential energy −Σ mᵢ g·cᵢ (`data.potential_energy`): zero at z = 0 for gravity along −z.
pub fn potential_energy(model: &Model, data: &mut Data, q: &DVector<f64>) -> f64 {
    forward_kinematics(model, data, q);
    let g = model.gravity.linear;
    data.potential_energy = -(1..model.njoints)
        .map(|i| {
            let inertia = &model.inertias[i];
            inertia.mass * g.dot(&data.o_m_i[i].transform_point(&inertia.com))
        })
        .sum::<f64>();
    data.potential_energy
}

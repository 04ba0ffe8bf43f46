//! Centre of mass: position, velocity, Jacobian.

use crate::algorithms::kinematics::{forward_kinematics, forward_kinematics_velocity};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::Vec3;
use nalgebra::{DMatrix, DVector};

/// Centre of mass of the model in the world (`data.com`).
pub fn center_of_mass(model: &Model, data: &mut Data, q: &DVector<f64>) -> Vec3 {
    forward_kinematics(model, data, q);
    let mut sum = Vec3::zeros();
    for i in 1..model.njoints {
        let inertia = &model.inertias[i];
        sum += inertia.mass * data.o_m_i[i].transform_point(&inertia.com);
    }
    data.com = sum / model.total_mass();
    data.com
}

/// Velocity of the centre of mass in the world (`data.com_velocity`); also sets `data.com`.
pub fn center_of_mass_velocity(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> Vec3 {
    forward_kinematics_velocity(model, data, q, v);
    let (mut sum, mut vsum) = (Vec3::zeros(), Vec3::zeros());
    for i in 1..model.njoints {
        let inertia = &model.inertias[i];
        let x = &data.o_m_i[i];
        sum += inertia.mass * x.transform_point(&inertia.com);
        let vi = &data.v[i];
        vsum += inertia.mass * (x.rotation * (vi.linear + vi.angular.cross(&inertia.com)));
    }
    let m = model.total_mass();
    data.com = sum / m;
    data.com_velocity = vsum / m;
    data.com_velocity
}

/// Jacobian of the centre of mass (`data.com_jacobian`, 3 x nv): `J_com v` = its velocity.
pub fn center_of_mass_jacobian<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    forward_kinematics(model, data, q);
    // subtree mass and mass-weighted com sums (world), accumulated leaves first
    data.subtree_mass.fill(0.0);
    data.subtree_moment.fill(Vec3::zeros());
    for i in (1..model.njoints).rev() {
        let inertia = &model.inertias[i];
        data.subtree_mass[i] += inertia.mass;
        data.subtree_moment[i] += inertia.mass * data.o_m_i[i].transform_point(&inertia.com);
        let p = model.parents[i];
        let (m, mc) = (data.subtree_mass[i], data.subtree_moment[i]);
        data.subtree_mass[p] += m;
        data.subtree_moment[p] += mc;
    }
    let total = model.total_mass();
    data.com = data.subtree_moment[0] / total;
    for k in 0..model.nv {
        let i = model.dof_joint[k];
        let s = data.o_m_i[i].act_motion(&model.motion_subspace[k]);
        // Σ_subtree m_j (v_o + ω × c_j) = m v_o + ω × Σ m_j c_j
        let col = (data.subtree_mass[i] * s.linear + s.angular.cross(&data.subtree_moment[i])) / total;
        data.com_jacobian.column_mut(k).copy_from(&col);
    }
    &data.com_jacobian
}

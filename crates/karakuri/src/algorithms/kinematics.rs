//! Forward kinematics: placements, velocities and accelerations of every joint (RBDA §4.1).

use super::{check_len, joint_angles, joint_motion, update_joint_placement};
use crate::data::{Data, Stage};
use crate::model::{FrameId, Model};
use crate::spatial::{Motion, Se3};
use nalgebra::DVector;

/// Placements of every joint for configuration `q`: `data.li_m_i`, `data.o_m_i`.
pub fn forward_kinematics(model: &Model, data: &mut Data, q: &DVector<f64>) {
    check_len("q", q, model.nq);
    joint_angles(model, data, q.as_slice());
    for i in 1..model.njoints {
        // li_m_i = X_T X_J(q) (placement then joint motion), o_m_i = o_m_λ(i) li_m_i
        update_joint_placement(model, data, q.as_slice(), i);
    }
    data.stage = Stage::Positions;
}

/// Placements and body velocities (`data.v`, each in its joint frame).
pub fn forward_kinematics_velocity(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    check_len("v", v, model.nv);
    forward_kinematics(model, data, q);
    data.v[0] = Motion::zero();
    for i in 1..model.njoints {
        let p = model.parents[i];
        // v_i = X_i v_λ(i) + S_i q̇_i
        data.v[i] = data.li_m_i[i].inv_act_motion(&data.v[p]) + joint_motion(model, i, v.as_slice());
    }
    data.stage = Stage::Velocities;
}

/// Placements, body velocities and body accelerations (`data.a`, gravity not included).
pub fn forward_kinematics_acceleration(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
) {
    check_len("a", a, model.nv);
    forward_kinematics_velocity(model, data, q, v);
    // the universe does not accelerate (ABA leaves -gravity here)
    data.a[0] = Motion::zero();
    for i in 1..model.njoints {
        let p = model.parents[i];
        let v_j = joint_motion(model, i, v.as_slice());
        // a_i = X_i a_λ(i) + S_i q̈_i + v_i × S_i q̇_i
        data.a[i] = data.li_m_i[i].inv_act_motion(&data.a[p])
            + joint_motion(model, i, a.as_slice())
            + data.v[i].cross(&v_j);
    }
    data.stage = Stage::Accelerations;
}

/// World placements of every frame (`data.o_m_f`) from the joint placements in `data`.
pub fn update_frame_placements(model: &Model, data: &mut Data) {
    data.require(Stage::Positions, "update_frame_placements");
    for (k, f) in model.frames.iter().enumerate() {
        data.o_m_f[k] = data.o_m_i[f.parent_joint.0].compose(&f.placement);
    }
}

/// World placement of one frame from the joint placements in `data`.
pub fn frame_placement(model: &Model, data: &Data, frame: FrameId) -> Se3 {
    data.require(Stage::Positions, "frame_placement");
    let f = model.frame(frame);
    data.o_m_i[f.parent_joint.0].compose(&f.placement)
}

/// Spatial velocity of a frame, in the frame itself.
pub fn frame_velocity(model: &Model, data: &Data, frame: FrameId) -> Motion {
    data.require(Stage::Velocities, "frame_velocity");
    let f = model.frame(frame);
    f.placement.inv_act_motion(&data.v[f.parent_joint.0])
}

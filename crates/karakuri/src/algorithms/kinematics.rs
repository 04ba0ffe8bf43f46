//! Forward kinematics: placements, velocities and accelerations of every joint (RBDA §4.1).

use super::jcalc::joint_velocity;
use super::{check_len, motion_to_joint, place_joints};
use crate::data::{Data, Fresh, Stale};
use crate::model::{FrameId, Model};
use crate::spatial::{Motion, Se3};
use nalgebra::DVector;

/// Placements of every joint for configuration `q`: `data.li_m_i`, `data.o_m_i`
/// ([`Data::joint_placements`]). Fresh after: placements.
pub fn forward_kinematics(model: &Model, data: &mut Data, q: &DVector<f64>) {
    check_len("q", q, model.nq);
    // li_m_i = X_T X_J(q) (placement then joint motion), o_m_i = o_m_λ(i) li_m_i
    place_joints(model, data, q.as_slice(), |_, _| {});
    data.fresh = Fresh::PLACEMENTS;
}

/// Placements and body velocities (`data.v`, each in its joint frame). Fresh after:
/// placements, velocities.
pub fn forward_kinematics_velocity(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    let vs = v.as_slice();
    data.v[0] = Motion::zero();
    place_joints(model, data, q.as_slice(), |data, i| {
        // v_i = X_i v_λ(i) + S_i q̇_i (plane turns, one-component joint motions: record 0094)
        data.v[i] = joint_velocity::<false>(model, i, &data.li_m_i[i], &data.v[model.parents[i]], vs, None).0;
    });
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES;
}

/// Placements, body velocities and body accelerations (`data.a`, gravity not included).
/// Fresh after: placements, velocities, accelerations.
pub fn forward_kinematics_acceleration(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
) {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    check_len("a", a, model.nv);
    let (vs, as_) = (v.as_slice(), a.as_slice());
    data.v[0] = Motion::zero();
    data.a[0] = Motion::zero();
    place_joints(model, data, q.as_slice(), |data, i| {
        let (p, x) = (model.parents[i], data.li_m_i[i]);
        // a_i = X_i a_λ(i) + S_i q̈_i + v_i × S_i q̇_i
        let (vi, bias) = joint_velocity::<true>(model, i, &x, &data.v[p], vs, Some(as_));
        data.v[i] = vi;
        data.a[i] = motion_to_joint(model, i, &x, &data.a[p]) + bias;
    });
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS;
}

/// World placements of every frame (`data.o_m_f`, [`Data::frame_placements`]) from the joint
/// placements in `data`. Needs placements; adds frame placements to what is fresh.
pub fn update_frame_placements(model: &Model, data: &mut Data) -> Result<(), Stale> {
    data.require(Fresh::PLACEMENTS, "update_frame_placements")?;
    for (k, f) in model.frames.iter().enumerate() {
        data.o_m_f[k] = data.o_m_i[f.parent_joint.0].compose(&f.placement);
    }
    data.fresh = data.fresh | Fresh::FRAME_PLACEMENTS;
    Ok(())
}

/// World placement of one frame from the joint placements in `data` (needs placements).
pub fn frame_placement(model: &Model, data: &Data, frame: FrameId) -> Result<Se3, Stale> {
    data.require(Fresh::PLACEMENTS, "frame_placement")?;
    let f = model.frame(frame);
    Ok(data.o_m_i[f.parent_joint.0].compose(&f.placement))
}

/// Spatial velocity of a frame, in the frame itself (needs velocities).
pub fn frame_velocity(model: &Model, data: &Data, frame: FrameId) -> Result<Motion, Stale> {
    data.require(Fresh::PLACEMENTS | Fresh::VELOCITIES, "frame_velocity")?;
    let f = model.frame(frame);
    Ok(f.placement.inv_act_motion(&data.v[f.parent_joint.0]))
}

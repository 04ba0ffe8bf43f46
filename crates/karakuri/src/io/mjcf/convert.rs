//! MuJoCo's qpos and qvel to karakuri's q and v and back, for models from this loader.
//!
//! | joint | MuJoCo | karakuri |
//! | --- | --- | --- |
//! | free | qpos `[x y z qw qx qy qz]`; qvel `[v ω]`, v the body origin's velocity in **world** axes, ω in body axes | q `[x y z qx qy qz qw]`; v `[Rᵀ v, ω]`, both in body axes |
//! | ball | qpos `[qw qx qy qz]`; qvel ω in body axes | q `[qx qy qz qw]`; v the same |
//! | hinge, slide | qpos (`ref` folded into the joint frame) | the same |
//!
//! `R` is the body's rotation (the quaternion in qpos). The positions and velocity indices are
//! MuJoCo's (`idx_q` = `jnt_qposadr`, `idx_v` = `jnt_dofadr`).

use nalgebra::DVector;

use super::orient::quat_wxyz;
use super::MjcfError;
use crate::model::{JointType, Model};

fn size_error(what: &str, n: usize, expected: usize) -> MjcfError {
    MjcfError { file: String::new(), line: None, element: String::new(), reason: format!("{what} has {n} entries, the model needs {expected}") }
}

fn check(what: &str, x: &[f64], n: usize) -> Result<(), MjcfError> {
    if x.len() == n {
        Ok(())
    } else {
        Err(size_error(what, x.len(), n))
    }
}

/// karakuri's q from MuJoCo's qpos (quaternions reordered).
pub fn from_mujoco_qpos(model: &Model, qpos: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("qpos", qpos, model.nq)?;
    let mut q = DVector::from_column_slice(qpos);
    for at in quaternions(model) {
        let w = qpos[at];
        q.as_mut_slice()[at..at + 3].copy_from_slice(&qpos[at + 1..at + 4]);
        q[at + 3] = w;
    }
    Ok(q)
}

/// MuJoCo's qpos from karakuri's q.
pub fn to_mujoco_qpos(model: &Model, q: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("q", q, model.nq)?;
    let mut out = DVector::from_column_slice(q);
    for at in quaternions(model) {
        out[at] = q[at + 3];
        out.as_mut_slice()[at + 1..at + 4].copy_from_slice(&q[at..at + 3]);
    }
    Ok(out)
}

/// karakuri's v from MuJoCo's qpos and qvel (a free joint's linear velocity to body axes).
pub fn from_mujoco_qvel(model: &Model, qpos: &[f64], qvel: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("qpos", qpos, model.nq)?;
    check("qvel", qvel, model.nv)?;
    Ok(turn_free_linear(model, qvel, |iq| [qpos[iq + 3], qpos[iq + 4], qpos[iq + 5], qpos[iq + 6]], false))
}

/// MuJoCo's qvel from karakuri's q and v.
pub fn to_mujoco_qvel(model: &Model, q: &[f64], v: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("q", q, model.nq)?;
    check("v", v, model.nv)?;
    Ok(turn_free_linear(model, v, |iq| [q[iq + 6], q[iq + 3], q[iq + 4], q[iq + 5]], true))
}

/// `vel` with each free joint's linear velocity turned by its rotation R (`to_world`) or by Rᵀ,
/// R of the quaternion `[w, x, y, z]` that `wxyz` reads at the joint's first position index.
fn turn_free_linear(model: &Model, vel: &[f64], wxyz: impl Fn(usize) -> [f64; 4], to_world: bool) -> DVector<f64> {
    let mut out = DVector::from_column_slice(vel);
    for j in (1..model.njoints).filter(|&j| model.joint_types[j] == JointType::FreeFlyer) {
        let (iq, iv) = (model.idx_q[j], model.idx_v[j]);
        let r = quat_wxyz(wxyz(iq));
        let lin = nalgebra::Vector3::new(vel[iv], vel[iv + 1], vel[iv + 2]);
        let lin = if to_world { r * lin } else { r.transpose() * lin };
        out.as_mut_slice()[iv..iv + 3].copy_from_slice(lin.as_slice());
    }
    out
}

/// The first position index of each free or ball joint's quaternion.
fn quaternions(model: &Model) -> impl Iterator<Item = usize> + '_ {
    (1..model.njoints).filter_map(|j| match model.joint_types[j] {
        JointType::FreeFlyer => Some(model.idx_q[j] + 3),
        JointType::Spherical => Some(model.idx_q[j]),
        _ => None,
    })
}

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
    for j in 1..model.njoints {
        let i = model.idx_q[j];
        let at = match model.joint_types[j] {
            JointType::FreeFlyer => i + 3,
            JointType::Spherical => i,
            _ => continue,
        };
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
    for j in 1..model.njoints {
        let i = model.idx_q[j];
        let at = match model.joint_types[j] {
            JointType::FreeFlyer => i + 3,
            JointType::Spherical => i,
            _ => continue,
        };
        out[at] = q[at + 3];
        out.as_mut_slice()[at + 1..at + 4].copy_from_slice(&q[at..at + 3]);
    }
    Ok(out)
}

/// karakuri's v from MuJoCo's qpos and qvel (a free joint's linear velocity to body axes).
pub fn from_mujoco_qvel(model: &Model, qpos: &[f64], qvel: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("qpos", qpos, model.nq)?;
    check("qvel", qvel, model.nv)?;
    let mut v = DVector::from_column_slice(qvel);
    for j in (1..model.njoints).filter(|&j| model.joint_types[j] == JointType::FreeFlyer) {
        let (iq, iv) = (model.idx_q[j], model.idx_v[j]);
        let r = quat_wxyz([qpos[iq + 3], qpos[iq + 4], qpos[iq + 5], qpos[iq + 6]]);
        let lin = r.transpose() * nalgebra::Vector3::new(qvel[iv], qvel[iv + 1], qvel[iv + 2]);
        v.as_mut_slice()[iv..iv + 3].copy_from_slice(lin.as_slice());
    }
    Ok(v)
}

/// MuJoCo's qvel from karakuri's q and v.
pub fn to_mujoco_qvel(model: &Model, q: &[f64], v: &[f64]) -> Result<DVector<f64>, MjcfError> {
    check("q", q, model.nq)?;
    check("v", v, model.nv)?;
    let mut out = DVector::from_column_slice(v);
    for j in (1..model.njoints).filter(|&j| model.joint_types[j] == JointType::FreeFlyer) {
        let (iq, iv) = (model.idx_q[j], model.idx_v[j]);
        let r = quat_wxyz([q[iq + 6], q[iq + 3], q[iq + 4], q[iq + 5]]);
        let lin = r * nalgebra::Vector3::new(v[iv], v[iv + 1], v[iv + 2]);
        out.as_mut_slice()[iv..iv + 3].copy_from_slice(lin.as_slice());
    }
    Ok(out)
}

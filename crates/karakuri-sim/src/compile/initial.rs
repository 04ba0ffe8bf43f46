//! The initial-state pass: the world's q0 and v0 from the model's neutral configuration, the
//! scene bodies' hinge values, the robots' `q0` / `v0` by joint name, the free flyers' poses
//! and twists, and each prescribed joint on its trajectory.

use karakuri::algorithms;
use karakuri::spatial::{quat_from_xyzw, Se3};
use karakuri::{Data, Model};
use nalgebra::DVector;

use super::builder::{v3, Builder};
use super::model::Actuator;
use crate::scene::ActuatorMode;
use crate::SimError;

/// The initial configuration `(nq)` and velocity `(nv)`.
pub(super) fn initial_state(b: &Builder, model: &Model, actuators: &[Actuator]) -> (DVector<f64>, DVector<f64>) {
    let mut q = algorithms::neutral(model);
    let mut v = DVector::zeros(model.nv);
    for x in &b.q0 {
        q[model.idx_q[x.joint]] = x.value;
    }
    for x in &b.v0 {
        v[model.idx_v[x.joint]] = x.value;
    }
    for rs in &b.scene.robots {
        let joint = |name: &str| model.joint_id(&format!("{}/{}", rs.name, name)).map(|j| j.0);
        for (name, x) in &rs.q0 {
            if let Some(j) = joint(name).filter(|&j| model.nqs[j] == 1) {
                q[model.idx_q[j]] = *x;
            }
        }
        for (name, x) in &rs.v0 {
            if let Some(j) = joint(name).filter(|&j| model.nvs[j] == 1) {
                v[model.idx_v[j]] = *x;
            }
        }
    }
    for f in &b.free_start {
        let (iq, iv) = (model.idx_q[f.joint], model.idx_v[f.joint]);
        q.as_mut_slice()[iq..iq + 3].copy_from_slice(&f.pose.position);
        q.as_mut_slice()[iq + 3..iq + 7].copy_from_slice(&f.pose.orientation);
        // the free flyer's velocity is in its body frame
        let rt = quat_from_xyzw(&f.pose.orientation).transpose();
        let (l, a) = (rt * v3(&f.linear), rt * v3(&f.angular));
        v.as_mut_slice()[iv..iv + 3].copy_from_slice(l.as_slice());
        v.as_mut_slice()[iv + 3..iv + 6].copy_from_slice(a.as_slice());
    }
    // a prescribed joint starts on its trajectory, at the velocity the step's integrator
    // would have arriving there (`(x(0) − x(−dt)) / dt`, as every later step's), so its
    // first step asks no jump of it
    let dt = b.scene.world.dt;
    for a in actuators.iter().filter(|a| a.mode == ActuatorMode::Prescribed) {
        let (x0, x1) = (a.target.at(0.0).0, a.target.at(-dt).0);
        (q[a.iq], v[a.dof]) = (x0, (x0 - x1) / dt);
    }
    (q, v)
}

/// The world placement of every joint frame at configuration `q` `(njoints)`.
pub(super) fn placements(model: &Model, q: &DVector<f64>) -> Result<Vec<Se3>, SimError> {
    let mut data = Data::new(model);
    algorithms::forward_kinematics(model, &mut data, q);
    Ok(data.joint_placements()?.to_vec())
}

//! The configuration update on the configuration manifold, `q ⊕ dt v`: the integrate stage's
//! (semi-implicit Euler), SHAKE's trial configurations and RK4's (`rk4.rs`) use it.

use karakuri::model::JointType;
use karakuri::spatial::{exp3, quat_from_xyzw, Vec3};
use karakuri::Model;
use nalgebra::DVector;


/// Quaternion product of `[x, y, z, w]` quaternions.
fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    let (x1, y1, z1, w1) = (a[0], a[1], a[2], a[3]);
    let (x2, y2, z2, w2) = (b[0], b[1], b[2], b[3]);
    [
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
    ]
}

/// `q ← q ⊕ dt v` in place. Free flyers move their origin along the world velocity and rotate
/// by `exp(dt ω)`, and their body-frame linear velocity in `v` is re-expressed in the new
/// orientation (the same world velocity); other joints use the joint's own integration.
pub fn integrate_world(model: &Model, q: &mut DVector<f64>, v: &mut DVector<f64>, dt: f64) {
    integrate_world_with(model, q, v, None, dt);
}

/// [`integrate_world`] moving by `v + v_p` when a pseudo-velocity `v_p` (the split-impulse
/// pass's, `(nv)`) is given: `q ← q ⊕ dt (v + v_p)`, `v` unchanged but for free flyers' linear
/// part, re-expressed in the body axes the total rotation reached.
pub fn integrate_world_with(
    model: &Model,
    q: &mut DVector<f64>,
    v: &mut DVector<f64>,
    pseudo: Option<&[f64]>,
    dt: f64,
) {
    let p = |k: usize| pseudo.map_or(0.0, |vp| vp[k]);
    for j in 1..model.njoints {
        let (iq, nq, iv, nv) = (model.idx_q[j], model.nqs[j], model.idx_v[j], model.nvs[j]);
        if model.joint_types[j] == JointType::FreeFlyer {
            let quat = [q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]];
            let r = quat_from_xyzw(&quat);
            let lin = Vec3::new(v[iv], v[iv + 1], v[iv + 2]);
            let move_lin = lin + Vec3::new(p(iv), p(iv + 1), p(iv + 2));
            let w = Vec3::new(v[iv + 3] + p(iv + 3), v[iv + 4] + p(iv + 4), v[iv + 5] + p(iv + 5));
            let pv = r * move_lin * dt;
            for c in 0..3 {
                q[iq + c] += pv[c];
            }
            let th = w.norm() * dt;
            let dq = if th > 0.0 {
                let ax = w / w.norm();
                let s = (0.5 * th).sin();
                [ax.x * s, ax.y * s, ax.z * s, (0.5 * th).cos()]
            } else {
                [0.0, 0.0, 0.0, 1.0]
            };
            let mut nq_ = quat_mul(&quat, &dq);
            let n = nq_.iter().map(|x| x * x).sum::<f64>().sqrt();
            nq_.iter_mut().for_each(|x| *x /= n);
            q.as_mut_slice()[iq + 3..iq + 7].copy_from_slice(&nq_);
            // same world velocity, new body axes
            let rl = exp3(&(w * dt)).transpose() * lin;
            for c in 0..3 {
                v[iv + c] = rl[c];
            }
        } else if nq == 1 && nv == 1 {
            // revolute, prismatic: q + dt v (as `JointType::integrate`, without the copies)
            q[iq] += (v[iv] + p(iv)) * dt;
        } else {
            // a joint has at most 7 configuration and 6 velocity coordinates
            let (mut qs, mut vs) = ([0.0; 7], [0.0; 6]);
            qs[..nq].copy_from_slice(&q.as_slice()[iq..iq + nq]);
            for (k, (x, y)) in vs[..nv].iter_mut().zip(&v.as_slice()[iv..iv + nv]).enumerate() {
                *x = (y + p(iv + k)) * dt;
            }
            model.joint_types[j].integrate(
                &qs[..nq],
                &vs[..nv],
                &mut q.as_mut_slice()[iq..iq + nq],
            );
        }
    }
}

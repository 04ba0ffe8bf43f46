//! Pass 1 of hybrid dynamics, shared by the articulated-body route, the mass-matrix route and
//! the floating-base shortcut.

use super::workspace::HybridWorkspace;
use crate::algorithms::{axis_motion, joint_motion, motion_cross_axis, place_joints};
use crate::data::{Data, Fresh};
use crate::model::Model;
use crate::spatial::Motion;
use nalgebra::DVector;

/// Forward pass shared by both routes and the floating-base fast path (RBDA Table 5.1 with
/// q̈1 = 0): placements, velocities, a⁰_i = X_i a⁰_λ(i) + v_i × S_i q̇_i + S_i q̈_i (q̈_i known on
/// inverse joints, zero on forward ones; a⁰_0 = -g) and f⁰_i = I_i a⁰_i + v_i ×* I_i v_i into
/// `ws.pa`. Not inlined into its three callers, so that its per-joint step (a closure) has
/// one call site and is inlined into the loop.
#[inline(never)]
pub(super) fn bias_pass(
    model: &Model,
    data: &mut Data,
    ws: &mut HybridWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    known: &DVector<f64>,
    is_forward: &[bool],
) {
    let (qs, vs, ks) = (q.as_slice(), v.as_slice(), known.as_slice());
    ws.a0[0] = -model.gravity;
    data.v[0] = Motion::zero();
    place_joints(model, data, qs, |data, i| {
        let (p, x) = (model.parents[i], data.li_m_i[i]);
        let iv = model.idx_v[i];
        let (vi, a0) = match model.dof_axis[iv] {
            Some(c) if model.nvs[i] == 1 => {
                // one basis-vector dof (aligned revolute or prismatic): S q̇ and v × S q̇ in closed form
                let qdd = if is_forward[i] { 0.0 } else { ks[iv] };
                let vi = x.inv_act_motion(&data.v[p]) + axis_motion(c, vs[iv]);
                let bias = motion_cross_axis(&vi, c, vs[iv]) + axis_motion(c, qdd);
                (vi, x.inv_act_motion(&ws.a0[p]) + bias)
            }
            _ => {
                let v_j = joint_motion(model, i, vs);
                let vi = x.inv_act_motion(&data.v[p]) + v_j;
                let mut a0 = x.inv_act_motion(&ws.a0[p]) + vi.cross(&v_j);
                if !is_forward[i] {
                    a0 += joint_motion(model, i, ks);
                }
                (vi, a0)
            }
        };
        data.v[i] = vi;
        ws.a0[i] = a0;
        let inertia = &model.inertias[i];
        ws.pa[i] = inertia.mul_motion(&a0) + vi.cross_force(&inertia.mul_motion(&vi));
    });
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES;
}

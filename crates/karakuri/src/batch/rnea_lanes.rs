//! RNEA in lanes: `algorithms::inverse_dynamics` (and `nonlinear_effects`, `a = None`) for four
//! states at once, the same operations in the same order (RBDA Table 5.1, local frames).

use super::lanes::{inertia_mul, LMotion, LaneWorkspace, L, LANES};
use crate::model::Model;

/// Every group of `LANES` states of the `k` given (the last one padded).
#[inline(always)]
pub(crate) fn rnea_groups(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], a: Option<&[f64]>, tau: &mut [f64]) {
    for g in 0..k.div_ceil(LANES) {
        w.load(m, g, k, q, v, a);
        rnea_group(m, w, a.is_some());
        w.store(m, g, k, tau);
    }
}

/// One group: forward pass (velocities, accelerations with gravity, forces), backward pass
/// (τ = Sᵀ f, forces to the parents), armature.
#[inline(always)]
fn rnea_group(m: &Model, w: &mut LaneWorkspace, with_a: bool) {
    let gravity = LMotion::splat(&-m.gravity);
    for i in 1..m.njoints {
        let p = m.parents[i];
        let v_j = super::lanes::joint_motion(m, i, &w.x1);
        let x = w.li[i];
        let (v, a_gf) = if p == 0 {
            let a_j = if with_a { super::lanes::joint_motion(m, i, &w.x2) } else { LMotion::default() };
            (v_j, x.inv_act_motion(gravity).add(a_j))
        } else {
            let v = x.inv_act_motion(w.v[p]).add(v_j);
            let mut bias = v.cross(v_j);
            if with_a {
                bias = bias.add(super::lanes::joint_motion(m, i, &w.x2));
            }
            (v, x.inv_act_motion(w.a_gf[p]).add(bias))
        };
        w.v[i] = v;
        w.a_gf[i] = a_gf;
        let h = inertia_mul(m, i, v);
        w.f[i] = inertia_mul(m, i, a_gf).add(v.cross_force(h));
    }
    for i in (1..m.njoints).rev() {
        let f = w.f[i];
        let iv = m.idx_v[i];
        for k in iv..iv + m.nvs[i] {
            w.out[k] = LMotion::splat(&m.motion_subspace[k]).dot(f);
        }
        let p = m.parents[i];
        if p > 0 {
            let fp = w.li[i].act_force(f);
            w.f[p] = w.f[p].add(fp);
        }
    }
    if with_a {
        for (k, &arm) in m.armature.iter().enumerate() {
            if arm != 0.0 {
                w.out[k] += L::splat(arm) * w.x2[k];
            }
        }
    }
}

twice! {
    /// RNEA (`a` given) or the nonlinear effects (`a = None`) of `k` states in lanes.
    pub(crate) fn rnea_chunk(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], a: Option<&[f64]>, tau: &mut [f64]) {
        rnea_groups(m, w, k, q, v, a, tau);
    }
}

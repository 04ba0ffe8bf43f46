//! ∂τ/∂q, ∂τ/∂v and ∂τ/∂a = M of the recursive Newton–Euler algorithm (Carpentier & Mansard
//! 2018, Algorithm 1 in world coordinates, as Pinocchio's `computeRNEADerivatives`).
//!
//! With `J_k` the motion subspace column of dof k in the world, body i's velocity and
//! acceleration are `v_i = v_λ + J_i q̇_i`, `a_i = a_λ + J_i q̈_i + v_λ × J_i q̇_i` (gravity as
//! `a_0 = −g`) and its force `f_i = I_i a_i + v_i ×* I_i v_i`. Moving dof j (tangent
//! direction) moves everything attached to its subtree by the twist `J_j`, and besides that
//! `∂v_i/∂q_j = v_λ(j) × J_j`, `∂a_i/∂q_j = a_λ(j) × J_j + v_λ(j) × ∂v/∂q_j + ∂v/∂q_j × v_i`,
//! `∂a_i/∂q̇_j = v_j × J_j + ∂v/∂q_j + J_j × v_i`. With the subtree sums `I^C`, `B^C`
//! ([`MomentumVariation`]) and `F` of the backward pass, for dof k of joint i and dof j of an
//! ancestor (or of i itself):
//!
//! * `∂τ_k/∂q_j = J_kᵀ (I^C_i ∂a/∂q_j + B^C_i ∂v/∂q_j)`, `∂τ_k/∂q̇_j = J_kᵀ (I^C_i ∂a/∂q̇_j + B^C_i J_j)`
//! * `∂τ_j/∂q_k = J_jᵀ (I^C_i ∂a/∂q_k + B^C_i ∂v/∂q_k + J_k ×* F_i)`, `∂τ_j/∂q̇_k = J_jᵀ (I^C_i ∂a/∂q̇_k + B^C_i J_k)`
//! * `M_kj = M_jk = J_jᵀ I^C_i J_k`.
//!
//! (the rigid motion of the subtree cancels in the first line: `J_k` and `F_i` turn together).

use super::{DerivativesWorkspace, MomentumVariation};
use crate::algorithms::{check_len, joint_angles, update_joint_placement};
use crate::data::{Data, Stage};
use crate::model::Model;
use crate::spatial::{Force, Motion};
use nalgebra::DVector;

/// ∂τ/∂q and ∂τ/∂v of τ = RNEA(q, v, a) into `ws.dtau_dq`, `ws.dtau_dv`; ∂τ/∂a = M(q) into
/// `data.mass_matrix` (full symmetric) and τ into `data.tau`. Reads q, v, a; writes the
/// placements of `data` (`Stage::Positions`).
#[doc(alias = "computeRNEADerivatives")]
pub fn rnea_derivatives(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
) {
    check_len("a", a, model.nv);
    rnea_derivatives_impl(model, data, ws, q, v, a, None);
}

/// [`rnea_derivatives`] with external forces `f_ext` on each body, in the body's joint frame
/// (`njoints` entries; the universe's is ignored), as [`inverse_dynamics_with_forces`](crate::algorithms::inverse_dynamics_with_forces).
pub fn rnea_derivatives_with_forces(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    f_ext: &[Force],
) {
    check_len("a", a, model.nv);
    assert_eq!(f_ext.len(), model.njoints, "f_ext needs one force per joint (njoints)");
    rnea_derivatives_impl(model, data, ws, q, v, a, Some(f_ext));
}

pub(super) fn rnea_derivatives_impl(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    f_ext: Option<&[Force]>,
) {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    assert_eq!(ws.j.len(), model.nv, "the DerivativesWorkspace was made for another model");
    forward_pass(model, data, ws, q.as_slice(), v.as_slice(), a.as_slice(), f_ext);
    data.stage = Stage::Positions;
    backward_pass(model, data, ws);
}

/// Placements, then per joint `v_i`, `a_i`, `I_i`, `B_i`, `f_i` and per dof `J_k`, `∂v/∂q_k`,
/// `∂a/∂q_k`, `∂a/∂q̇_k`, all in world coordinates.
#[inline(always)]
fn forward_pass(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    f_ext: Option<&[Force]>,
) {
    ws.ov[0] = Motion::zero();
    ws.oa[0] = -model.gravity;
    joint_angles(model, data, q);
    for i in 1..model.njoints {
        update_joint_placement(model, data, q, i);
        let o_m_i = data.o_m_i[i];
        let p = model.parents[i];
        let (v_p, a_p) = (ws.ov[p], ws.oa[p]);
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        let mut v_j = Motion::zero();
        let mut a_j = Motion::zero();
        for k in iv..iv + nv {
            let j = o_m_i.act_motion(&model.motion_subspace[k]);
            ws.j[k] = j;
            v_j += j * v[k];
            a_j += j * a[k];
        }
        let v_i = v_p + v_j;
        let a_i = a_p + a_j + v_p.cross(&v_j);
        ws.ov[i] = v_i;
        ws.oa[i] = a_i;
        for k in iv..iv + nv {
            let j = ws.j[k];
            let dv_dq = v_p.cross(&j);
            ws.dv_dq[k] = dv_dq;
            ws.da_dq[k] = a_p.cross(&j) + v_p.cross(&dv_dq);
            ws.da_dv[k] = v_i.cross(&j) + dv_dq;
        }
        let y = model.origin_inertias[i].transformed(&o_m_i);
        let h = y.mul_motion(&v_i);
        let mut f = y.mul_motion(&a_i) + v_i.cross_force(&h);
        if let Some(fe) = f_ext {
            f -= o_m_i.act_force(&fe[i]);
        }
        ws.bc[i] = MomentumVariation::of_body(&y, &v_i, &h);
        ws.ic[i] = y;
        ws.fc[i] = f;
    }
}

/// Subtree sums `I^C`, `B^C`, `F` (children first) and the entries of ∂τ/∂q, ∂τ/∂v and M
/// between each joint's dofs and those of the joint and its ancestors (module documentation).
#[inline(always)]
fn backward_pass(model: &Model, data: &mut Data, ws: &mut DerivativesWorkspace) {
    let n = model.nv;
    let (dq, dv, m, tau) = (
        ws.dtau_dq.as_mut_slice(),
        ws.dtau_dv.as_mut_slice(),
        data.mass_matrix.as_mut_slice(),
        data.tau.as_mut_slice(),
    );
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        let (ic, bc, f) = (ws.ic[i], ws.bc[i], ws.fc[i]);
        let ancestors = &ws.ancestor_dofs[ws.ancestor_start[i]..ws.ancestor_start[i + 1]];
        for k in iv..iv + nv {
            let j_k = ws.j[k];
            tau[k] = j_k.dot(&f);
            // row k: F^a = I^C J_k (= ∂F/∂q̈_k), r = angular part of J_kᵀ B^C
            let fa = ic.mul_motion(&j_k);
            let r = bc.transpose_mul_motion(&j_k);
            // column k: ∂F_i/∂q_k, ∂F_i/∂q̇_k
            let df_dq = ic.mul_motion(&ws.da_dq[k]) + bc.mul_motion(&ws.dv_dq[k]) + j_k.cross_force(&f);
            let df_dv = ic.mul_motion(&ws.da_dv[k]) + bc.mul_motion(&j_k);
            for &j in ancestors {
                let j_j = &ws.j[j];
                dq[j * n + k] = ws.da_dq[j].dot(&fa) + ws.dv_dq[j].angular.dot(&r);
                dv[j * n + k] = ws.da_dv[j].dot(&fa) + j_j.angular.dot(&r);
                dq[k * n + j] = j_j.dot(&df_dq);
                dv[k * n + j] = j_j.dot(&df_dv);
                let mkj = j_j.dot(&fa);
                m[j * n + k] = mkj;
                m[k * n + j] = mkj;
            }
            // the joint's own block (its dofs move body i like an ancestor's would)
            for j in iv..iv + nv {
                dq[j * n + k] = ws.da_dq[j].dot(&fa) + ws.dv_dq[j].angular.dot(&r);
                dv[j * n + k] = ws.da_dv[j].dot(&fa) + ws.j[j].angular.dot(&r);
                m[j * n + k] = ws.j[j].dot(&fa);
            }
        }
        let p = model.parents[i];
        if p > 0 {
            ws.ic[p].add(&ic);
            ws.bc[p].add(&bc);
            ws.fc[p] += f;
        }
    }
}

//! ∂τ/∂q, ∂τ/∂v and ∂τ/∂a = M of the recursive Newton–Euler algorithm (Carpentier & Mansard
//! 2018, in world coordinates as Pinocchio's `computeRNEADerivatives`).
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
use crate::algorithms::{check_len, place_joints};
use crate::data::{Data, Fresh};
use crate::model::Model;
use crate::spatial::{Force, Motion};
use nalgebra::DVector;

/// ∂τ/∂q and ∂τ/∂v of τ = RNEA(q, v, a) into `ws.dtau_dq`, `ws.dtau_dv`; ∂τ/∂a = M(q) into
/// `data.mass_matrix` (full symmetric) and τ into `data.tau`. Reads q, v, a; writes the
/// placements of `data` (fresh after: placements, M).
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

pub(crate) fn rnea_derivatives_impl(
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
    forward_pass(model, data, ws, q.as_slice(), v.as_slice(), Some(a.as_slice()), f_ext);
    data.fresh = Fresh::PLACEMENTS | Fresh::MASS_MATRIX;
    backward_pass::<true>(model, data, ws);
    ws.tau.copy_from(&data.tau);
}

/// Placements, then per joint `v_i`, `a_i`, `I_i`, `B_i`, `f_i` and per dof `J_k`, `∂v/∂q_k`,
/// `∂a/∂q_k`, `∂a/∂q̇_k`, all in world coordinates (`a = None`: q̈ = 0).
#[inline(always)]
pub(super) fn forward_pass(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &[f64],
    v: &[f64],
    a: Option<&[f64]>,
    f_ext: Option<&[Force]>,
) {
    ws.ov[0] = Motion::zero();
    ws.oa[0] = -model.gravity;
    place_joints(model, data, q, |data, i| {
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
            if let Some(a) = a {
                a_j += j * a[k];
            }
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
    });
}

/// Subtree sums `I^C`, `B^C`, `F` (children first), τ, and the entries of M, ∂τ/∂v and (when
/// `Q`) ∂τ/∂q between each joint's dofs and those of the joint and its ancestors (module
/// documentation).
#[inline(always)]
pub(super) fn backward_pass<const Q: bool>(model: &Model, data: &mut Data, ws: &mut DerivativesWorkspace) {
    let n = model.nv;
    let (dq, dv, m, tau) = (
        ws.dtau_dq.as_mut_slice(),
        ws.dtau_dv.as_mut_slice(),
        data.mass_matrix.as_mut_slice(),
        data.tau.as_mut_slice(),
    );
    let (j_cols, dv_dq, da_dq, da_dv) = (&ws.j[..], &ws.dv_dq[..], &ws.da_dq[..], &ws.da_dv[..]);
    let (fa_store, r_store) = (&mut ws.fa[..], &mut ws.r[..]);
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        let (ic, bc, f) = (ws.ic[i], ws.bc[i], ws.fc[i]);
        let ancestors = &ws.ancestor_dofs[ws.ancestor_start[i]..ws.ancestor_start[i + 1]];
        for k in iv..iv + nv {
            let j_k = j_cols[k];
            tau[k] = j_k.dot(&f);
            // row k: F^a = I^C J_k (= ∂F/∂q̈_k), r = angular part of J_kᵀ B^C
            let fa = ic.mul_motion(&j_k);
            let r = bc.transpose_mul_motion(&j_k);
            if !Q {
                // kept for the second sweep at q̈ (configuration_entries_at)
                (fa_store[k], r_store[k]) = (fa, r);
            }
            if Q {
                let df_dq = ic.mul_motion(&da_dq[k]) + bc.mul_motion(&dv_dq[k]) + j_k.cross_force(&f);
                configuration_entries(dq, n, k, iv..iv + nv, ancestors, j_cols, dv_dq, da_dq, &fa, &r, &df_dq);
            }
            // column k: ∂F_i/∂q̇_k
            let df_dv = ic.mul_motion(&da_dv[k]) + bc.mul_motion(&j_k);
            for &j in ancestors {
                let j_j = &j_cols[j];
                dv[j * n + k] = da_dv[j].dot(&fa) + j_j.angular.dot(&r);
                dv[k * n + j] = j_j.dot(&df_dv);
                let mkj = j_j.dot(&fa);
                m[j * n + k] = mkj;
                m[k * n + j] = mkj;
            }
            // the joint's own block (its dofs move body i like an ancestor's would)
            for j in iv..iv + nv {
                dv[j * n + k] = da_dv[j].dot(&fa) + j_cols[j].angular.dot(&r);
                m[j * n + k] = j_cols[j].dot(&fa);
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

/// The entries of ∂τ/∂q (column-major `dq`, `n x n`) between dof k of a joint (its dofs `own`)
/// and the dofs of the joint and of its `ancestors`: row k from `fa` = `I^C J_k` and `r` (the
/// angular part of `J_kᵀ B^C`), column k (ancestors' rows) from `df_dq` = `∂F/∂q_k`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn configuration_entries(
    dq: &mut [f64],
    n: usize,
    k: usize,
    own: std::ops::Range<usize>,
    ancestors: &[usize],
    j_cols: &[Motion],
    dv_dq: &[Motion],
    da_dq: &[Motion],
    fa: &Force,
    r: &crate::spatial::Vec3,
    df_dq: &Force,
) {
    for &j in ancestors {
        dq[j * n + k] = da_dq[j].dot(fa) + dv_dq[j].angular.dot(r);
        dq[k * n + j] = j_cols[j].dot(df_dq);
    }
    for j in own {
        dq[j * n + k] = da_dq[j].dot(fa) + dv_dq[j].angular.dot(r);
    }
}

/// ∂τ/∂q at a = q̈ after [`forward_pass`] and [`backward_pass`] ran with q̈ = 0 (the ABA route,
/// where q̈ is only known once M is): the accelerations grow by `δa_i = δa_λ + J_i q̈_i`, so
/// `∂a/∂q_k` by `δa_λ × J_k`, and the subtree forces by `I^C_i δa_λ + P_i` with
/// `P_i = Σ_{k in subtree} I^C_k J_k q̈_k`; M, ∂τ/∂v, `I^C` and `B^C` do not depend on q̈.
#[inline(always)]
pub(super) fn configuration_entries_at(model: &Model, ws: &mut DerivativesWorkspace, qdd: &[f64]) {
    let n = model.nv;
    ws.delta_a[0] = Motion::zero();
    for i in 1..model.njoints {
        let da_p = ws.delta_a[model.parents[i]];
        let mut da = da_p;
        for k in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
            let j = ws.j[k];
            da += j * qdd[k];
            ws.da_dq[k] += da_p.cross(&j);
        }
        ws.delta_a[i] = da;
        ws.p[i] = Force::zero();
    }
    let dq = ws.dtau_dq.as_mut_slice();
    let (j_cols, dv_dq, da_dq) = (&ws.j[..], &ws.dv_dq[..], &ws.da_dq[..]);
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        let (ic, bc) = (&ws.ic[i], &ws.bc[i]);
        let p = model.parents[i];
        let mut p_i = ws.p[i];
        for k in iv..iv + nv {
            p_i += ws.fa[k] * qdd[k];
        }
        let f = ws.fc[i] + ic.mul_motion(&ws.delta_a[p]) + p_i;
        let ancestors = &ws.ancestor_dofs[ws.ancestor_start[i]..ws.ancestor_start[i + 1]];
        for k in iv..iv + nv {
            let j_k = j_cols[k];
            // I^C J_k and J_kᵀ B^C do not depend on q̈: the first sweep's (same bits)
            let (fa, r) = (&ws.fa[k], &ws.r[k]);
            let df_dq = ic.mul_motion(&da_dq[k]) + bc.mul_motion(&dv_dq[k]) + j_k.cross_force(&f);
            configuration_entries(dq, n, k, iv..iv + nv, ancestors, j_cols, dv_dq, da_dq, fa, r, &df_dq);
        }
        if p > 0 {
            ws.p[p] += p_i;
        }
    }
}

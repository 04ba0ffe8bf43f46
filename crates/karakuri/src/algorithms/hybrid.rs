//! Hybrid dynamics: each joint is either *forward* (its torque is known, its acceleration is
//! sought) or *inverse* (its acceleration is known, its torque is sought). Both routes solve
//! the same equations `M(q) q̈ + C(q, q̇) q̇ + g(q) = τ`, partitioned by joint:
//!
//! ```text
//! [H11 H12] [q̈1]   [C'1]   [τ1]      1: forward dofs (τ1 known, q̈1 sought)
//! [H21 H22] [ 0 ] + [C'2] = [τ2]      2: inverse dofs (q̈2 known, τ2 sought)
//! ```
//!
//! with `C' = RNEA(q, q̇, q̈ with q̈1 = 0)`, so `H11 q̈1 = τ1 - C'1` and `τ2 = C'2 + H21 q̈1`.
//!
//! * [`HybridMethod::ArticulatedBody`], O(n): the articulated-body
//!   algorithm in which inverse joints pass their prescribed acceleration instead of being
//!   articulated (RBDA §9.2). Written in *acceleration-offset* form: a first RNEA-like pass
//!   computes every body's acceleration `a⁰` and force `f⁰` with the forward joints'
//!   accelerations set to zero; the true accelerations are `a = a⁰ + δa`, where `δa` is
//!   produced by the forward joints alone. Bodies with no forward joint above them have
//!   `δa = 0`: their torques are plain RNEA. Below a forward joint, a subtree with only
//!   inverse joints moves rigidly with `δa`, so its articulated inertia is its composite
//!   rigid-body inertia (10 numbers, as in CRBA); the 6x6 articulated inertia is only formed
//!   for joints that have forward joints both above (or at) and below (or at) them.
//!
//!   Fast path: when the only forward joint is a free-flyer child of the universe (a floating
//!   robot driven by a known base wrench, every other joint following a known acceleration:
//!   RBDA's floating-base inverse dynamics, Table 9.6), every moved body shares one world-frame
//!   offset `δa`, so the route specialises to the shared RNEA-like forward pass, one backward
//!   pass (RNEA's force recursion plus CRBA's composite inertias in joint frames and each
//!   `F_k = I^c S_k` moved to world coordinates once), a closed-form 6x6 solve at the base and
//!   `τ_k += F_k · δa` (no sweep carrying `δa` frame by frame; its cost against
//!   [`inverse_dynamics`](super::inverse_dynamics) is in `docs/PERFORMANCE.md`).
//! * [`HybridMethod::Crba`]: the route of metapod. `C'` by one RNEA,
//!   only the blocks H11 and H21 of the mass matrix by a hybrid CRBA that visits only the
//!   subtrees below forward joints, `H11 q̈1 = τ1 - C'1` by the branch-induced LᵀDL of H11
//!   (its pattern is the tree contracted to the forward dofs: no fill-in, see
//!   [`Factorization::set_parents`]), then
//!   `τ2 = C'2 + H21 q̈1`.
//!
//! Both write the full `q̈` and `τ` into a [`HybridWorkspace`] (allocated once per model; the
//! calls allocate nothing) and leave placements and velocities in `Data`
//! (fresh after: placements, velocities).
//!
//! ```
//! use karakuri::algorithms::{hybrid::*, *};
//! use karakuri::{io::urdf, Data};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/ur5.urdf");
//! let model = urdf::load(path, urdf::Root::Fixed).unwrap();
//! let mut data = Data::new(&model);
//! let mut ws = HybridWorkspace::new(&model);
//! let q = neutral(&model);
//! let v = nalgebra::DVector::zeros(model.nv);
//! // the first joint is driven by a zero torque, the others follow zero accelerations
//! let mut is_forward = vec![false; model.njoints];
//! is_forward[1] = true;
//! let known = nalgebra::DVector::zeros(model.nv);
//! let (qdd, tau) = hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &is_forward,
//!                                  HybridMethod::ArticulatedBody);
//! assert_eq!(tau[0], 0.0);
//! assert!(qdd.iter().skip(1).all(|&a| a == 0.0));
//! ```

mod bias;
mod floating_base;
mod workspace;

pub use workspace::{HybridMethod, HybridWorkspace};
use bias::bias_pass;
use workspace::NONE;

use super::aba::{invert_d, joint_acceleration, transform_inertia_matrix};
use super::{add_inertia_to_parent, check_len, project_force};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::{Force, Mat6, Motion, Vec6};
use nalgebra::DVector;

/// Hybrid dynamics: for joints with `is_forward[j]` the torque is known and the acceleration
/// sought; for the others the acceleration is known and the torque sought.
///
/// * `known` `(nv)`: τ on the dofs of forward joints, q̈ on the dofs of inverse joints.
/// * `is_forward` `(njoints)`: one flag per joint, index 0 (the universe) ignored.
///
/// Returns `(q̈, τ)`, both full `(nv)`, satisfying `M q̈ + C q̇ + g = τ`; they stay in `ws`.
/// With every joint forward this is [`forward_dynamics`](super::forward_dynamics), with every
/// joint inverse [`inverse_dynamics`](super::inverse_dynamics). Placements and velocities are
/// left in `data` (fresh after: placements, velocities). See the [module documentation](self) for the two
/// methods.
#[allow(clippy::too_many_arguments)]
pub fn hybrid_dynamics<'a>(
    model: &Model,
    data: &mut Data,
    ws: &'a mut HybridWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    known: &DVector<f64>,
    is_forward: &[bool],
    method: HybridMethod,
) -> (&'a DVector<f64>, &'a DVector<f64>) {
    check_inputs(model, ws, q, v, known, is_forward);
    match method {
        HybridMethod::ArticulatedBody => articulated_body_route(model, data, ws, q, v, known, is_forward),
        HybridMethod::Crba => crba_route(model, data, ws, q, v, known, is_forward),
    }
    (&ws.qdd, &ws.tau)
}

/// [`hybrid_dynamics`] by the O(n) articulated-body route (RBDA §9.2), into `ws.qdd`, `ws.tau`.
fn articulated_body_route(model: &Model, data: &mut Data, ws: &mut HybridWorkspace, q: &DVector<f64>, v: &DVector<f64>, known: &DVector<f64>, is_forward: &[bool]) {
    if let Some(root) = floating_base::single_floating_root(model, is_forward) {
        return floating_base::floating_base_inverse(model, data, ws, q, v, known, is_forward, root);
    }
    classify_joints(model, ws, is_forward);
    bias_pass(model, data, ws, q, v, known, is_forward);
    articulated_backward_pass(model, data, ws, known, is_forward);
    articulated_forward_pass(model, data, ws, known, is_forward);
}

/// [`hybrid_dynamics`] by the mass-matrix route (metapod's hybrid CRBA), into `ws.qdd`, `ws.tau`.
fn crba_route(model: &Model, data: &mut Data, ws: &mut HybridWorkspace, q: &DVector<f64>, v: &DVector<f64>, known: &DVector<f64>, is_forward: &[bool]) {
    classify_joints(model, ws, is_forward);
    bias_pass(model, data, ws, q, v, known, is_forward);
    // C' = RNEA with q̈1 = 0: the backward pass of RNEA over f⁰, into τ for now
    for i in (1..model.njoints).rev() {
        let p = model.parents[i];
        project_force(model, i, &ws.pa[i], ws.tau.as_mut_slice());
        if p > 0 {
            let fp = data.li_m_i[i].act_force(&ws.pa[i]);
            ws.pa[p] += fp;
        }
    }
    hybrid_crba(model, data, ws, is_forward);
    let n1 = forward_dof_pattern(model, ws, is_forward);
    // H11 (upper triangle along the contracted branches), then q̈1 = H11⁻¹ (τ1 - C'1)
    for a in 0..n1 {
        let ka = ws.forward_dofs[a];
        ws.h11[(a, a)] = ws.m[(ka, ka)];
        let mut b = ws.forward_parent[a];
        while b != NONE {
            ws.h11[(b, a)] = ws.m[(ka, ws.forward_dofs[b])];
            b = ws.forward_parent[b];
        }
        ws.rhs[a] = known[ka] - ws.tau[ka];
    }
    ws.h11_fact.set_parents(&ws.forward_parent[..n1]);
    ws.h11_fact.factorize(&ws.h11);
    ws.h11_fact.solve(&mut ws.rhs[..n1]);
    // outputs: forward dofs get q̈1 and their known τ; inverse dofs their known q̈ and
    // τ2 = C'2 + H21 q̈1, H21 nonzero only on ancestors and descendants of each forward dof
    for k in 0..model.nv {
        if ws.forward_index[k] == NONE {
            ws.qdd[k] = known[k];
        }
    }
    for a in 0..n1 {
        let kb = ws.forward_dofs[a];
        let x = ws.rhs[a];
        ws.qdd[kb] = x;
        ws.tau[kb] = known[kb];
        let mut r = model.dof_parent[kb];
        while r != NONE {
            if ws.forward_index[r] == NONE {
                ws.tau[r] += ws.m[(r, kb)] * x;
            }
            r = model.dof_parent[r];
        }
        let j = model.dof_joint[kb];
        for r in model.idx_v[j] + model.nvs[j]..model.subtree_end_v[j] {
            if ws.forward_index[r] == NONE {
                ws.tau[r] += ws.m[(r, kb)] * x;
            }
        }
    }
}

#[track_caller]
fn check_inputs(model: &Model, ws: &HybridWorkspace, q: &DVector<f64>, v: &DVector<f64>, known: &DVector<f64>, is_forward: &[bool]) {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    check_len("known", known, model.nv);
    assert_eq!(is_forward.len(), model.njoints, "is_forward needs one flag per joint (njoints, the universe's ignored)");
    assert_eq!(ws.qdd.len(), model.nv, "HybridWorkspace was made for another model");
    assert_eq!(ws.moved_by_forward.len(), model.njoints, "HybridWorkspace was made for another model");
}

/// `moved_by_forward` (forward or below a forward joint) and `supports_forward` (forward or
/// above one), O(n).
fn classify_joints(model: &Model, ws: &mut HybridWorkspace, is_forward: &[bool]) {
    ws.moved_by_forward[0] = false;
    ws.supports_forward[0] = false;
    for i in 1..model.njoints {
        ws.moved_by_forward[i] = is_forward[i] || ws.moved_by_forward[model.parents[i]];
        ws.supports_forward[i] = is_forward[i];
    }
    for i in (1..model.njoints).rev() {
        if ws.supports_forward[i] {
            ws.supports_forward[model.parents[i]] = true;
        }
    }
}


/// Backward pass of the articulated-body route (RBDA §9.2; Table 7.1 for the
/// forward joints), in offset form: the force a subtree needs is f_i = IA_i δa_i + pA_i.
///
/// * inverse-only subtree below a forward joint: IA_i = I^c_i (composite, `ws.ic`);
/// * forward joint: U = IA S, D = Sᵀ U, u = τ - Sᵀ pA, and the parent receives
///   Ia = IA - U D⁻¹ Uᵀ, pa = pA + U D⁻¹ u (no c term: velocity products are in a⁰);
/// * inverse joint with forward joints below: passes IA and pA unchanged.
fn articulated_backward_pass(model: &Model, data: &Data, ws: &mut HybridWorkspace, known: &DVector<f64>, is_forward: &[bool]) {
    // the inertias start with the bodies' own
    for i in 1..model.njoints {
        if ws.moved_by_forward[i] {
            ws.ic[i] = model.origin_inertias[i];
            if ws.supports_forward[i] {
                ws.ia[i] = Mat6::zeros();
            }
        }
    }
    for i in (1..model.njoints).rev() {
        let p = model.parents[i];
        let x = data.li_m_i[i];
        if !ws.moved_by_forward[i] || !ws.supports_forward[i] {
            // RNEA-like: the bias force goes up as is; the composite inertia too if needed
            if p > 0 {
                let fp = x.act_force(&ws.pa[i]);
                ws.pa[p] += fp;
                if ws.moved_by_forward[i] {
                    // the parent is moved too (i is not forward); an articulated parent adds
                    // its `ic` to its 6x6 IA when it is processed
                    let (ic_lo, ic_hi) = ws.ic.split_at_mut(i);
                    add_inertia_to_parent(model, i, &x, &ic_hi[0], &mut ic_lo[p]);
                }
            }
            continue;
        }
        // articulated: IA_i = (articulated children) + (body and inverse-only children)
        let ia_i = ws.ia[i] + ws.ic[i].to_matrix();
        ws.ia[i] = ia_i;
        if p == 0 && !is_forward[i] {
            continue;
        }
        let mut pa = ws.pa[i].to_vec6();
        let mut ia_up = ia_i;
        // what the parent needs: pA (if there is a parent), Ia (if it is moved by a forward joint)
        let inertia_up = p > 0 && ws.moved_by_forward[p];
        if is_forward[i] {
            let (iv, nv) = (model.idx_v[i], model.nvs[i]);
            for k in 0..nv {
                let s = model.motion_subspace[iv + k].to_vec6();
                ws.u_cols[iv + k] = ia_i * s;
                ws.u[iv + k] = known[iv + k] - s.dot(&pa);
            }
            ws.d_inv[i] = invert_d(model, &ws.u_cols, i);
            let d_inv = &ws.d_inv[i];
            for r in 0..nv {
                if p == 0 {
                    break;
                }
                // (U D⁻¹)_r, and (D⁻¹ u)_r
                let mut ud_r = Vec6::zeros();
                let mut du_r = 0.0;
                for k in 0..nv {
                    ud_r += ws.u_cols[iv + k] * d_inv[(k, r)];
                    du_r += d_inv[(r, k)] * ws.u[iv + k];
                }
                if inertia_up {
                    ia_up -= ud_r * ws.u_cols[iv + r].transpose();
                }
                pa += ws.u_cols[iv + r] * du_r;
            }
        }
        if p > 0 {
            ws.pa[p] += x.act_force(&Force::from_vec6(&pa));
            if inertia_up {
                ws.ia[p] += transform_inertia_matrix(&x, &ia_up);
            }
        }
    }
}

/// Forward pass of the articulated-body route: δa_i = X_i δa_λ(i) (+ S_i q̈_i on forward
/// joints, q̈_i = D⁻¹ (u_i - Uᵀ X_i δa_λ(i))); on inverse joints τ_i = S_iᵀ (IA_i δa_i + pA_i).
fn articulated_forward_pass(model: &Model, data: &Data, ws: &mut HybridWorkspace, known: &DVector<f64>, is_forward: &[bool]) {
    ws.da[0] = Motion::zero();
    for i in 1..model.njoints {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        if !ws.moved_by_forward[i] {
            // no forward joint above: δa_i = 0, plain RNEA
            ws.da[i] = Motion::zero();
            project_force(model, i, &ws.pa[i], ws.tau.as_mut_slice());
            ws.qdd.as_mut_slice()[iv..iv + nv].copy_from_slice(&known.as_slice()[iv..iv + nv]);
            continue;
        }
        let p = model.parents[i];
        let mut da = data.li_m_i[i].inv_act_motion(&ws.da[p]);
        if is_forward[i] {
            joint_acceleration(model, i, &ws.d_inv[i], ws.u.as_slice(), &ws.u_cols, &da, ws.qdd.as_mut_slice());
            for r in iv..iv + nv {
                ws.tau[r] = known[r];
                da += model.motion_subspace[r] * ws.qdd[r];
            }
        } else {
            let f = if ws.supports_forward[i] {
                Force::from_vec6(&(ws.ia[i] * da.to_vec6())) + ws.pa[i]
            } else {
                ws.ic[i].mul_motion(&da) + ws.pa[i]
            };
            project_force(model, i, &f, ws.tau.as_mut_slice());
            ws.qdd.as_mut_slice()[iv..iv + nv].copy_from_slice(&known.as_slice()[iv..iv + nv]);
        }
        ws.da[i] = da;
    }
}

/// Hybrid CRBA (RBDA Table 6.2 restricted): composite inertias only for joints moved by a
/// forward joint, and the entries M[j, i] of ancestor pairs (j ancestor-or-self of i) with
/// i or j forward, into `ws.m` (both triangles).
fn hybrid_crba(model: &Model, data: &Data, ws: &mut HybridWorkspace, is_forward: &[bool]) {
    for i in 1..model.njoints {
        if ws.moved_by_forward[i] {
            ws.ic[i] = model.origin_inertias[i];
        }
    }
    let mut f_cols = [Force::zero(); 6];
    for i in (1..model.njoints).rev() {
        if !ws.moved_by_forward[i] {
            continue;
        }
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        // F = I^c_i S_i, carried up to each ancestor j: M[j, i] = S_jᵀ F
        for k in 0..nv {
            f_cols[k] = ws.ic[i].mul_motion(&model.motion_subspace[iv + k]);
        }
        let mut j = i;
        loop {
            if is_forward[i] || is_forward[j] {
                let (jv, jn) = (model.idx_v[j], model.nvs[j]);
                for k in 0..nv {
                    for r in 0..jn {
                        let m = model.motion_subspace[jv + r].dot(&f_cols[k]);
                        ws.m[(jv + r, iv + k)] = m;
                        ws.m[(iv + k, jv + r)] = m;
                    }
                }
            }
            let p = model.parents[j];
            // above the topmost forward ancestor no entry is needed
            if p == 0 || !ws.moved_by_forward[p] && !is_forward[i] {
                break;
            }
            for f in f_cols.iter_mut().take(nv) {
                *f = data.li_m_i[j].act_force(f);
            }
            j = p;
        }
        let p = model.parents[i];
        if p > 0 && ws.moved_by_forward[p] {
            let (ic_lo, ic_hi) = ws.ic.split_at_mut(i);
            add_inertia_to_parent(model, i, &data.li_m_i[i], &ic_hi[0], &mut ic_lo[p]);
        }
    }
}

/// The forward dofs, their branch-induced parents among themselves (the tree contracted to
/// the forward dofs, so H11 factorises without fill-in), and the reverse index. Returns n1.
fn forward_dof_pattern(model: &Model, ws: &mut HybridWorkspace, is_forward: &[bool]) -> usize {
    let mut n1 = 0;
    for k in 0..model.nv {
        let fwd = is_forward[model.dof_joint[k]];
        let lambda = model.dof_parent[k];
        let nearest_above = if lambda == NONE { NONE } else { ws.nearest_forward[lambda] };
        if fwd {
            ws.forward_dofs[n1] = k;
            ws.forward_index[k] = n1;
            ws.forward_parent[n1] = if nearest_above == NONE { NONE } else { ws.forward_index[nearest_above] };
            ws.nearest_forward[k] = k;
            n1 += 1;
        } else {
            ws.forward_index[k] = NONE;
            ws.nearest_forward[k] = nearest_above;
        }
    }
    n1
}

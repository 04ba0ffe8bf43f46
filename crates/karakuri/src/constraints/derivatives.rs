//! Derivatives of the contact-constrained forward dynamics (Pinocchio's
//! `computeConstraintDynamicsDerivatives`): q̈ and λ solve
//!
//! ```text
//! M q̈ + b − Gᵀ λ = τ        (R(q, v, q̈, λ) = τ, R = RNEA with the constraint forces)
//! G q̈ − γ = 0               (c(q, v, q̈) = 0, the constraint acceleration)
//! ```
//!
//! so for x = q, v: `M ∂q̈ − Gᵀ ∂λ = −∂R/∂x` and `G ∂q̈ = −∂c/∂x` (and `[I; 0]` for τ). With
//! `U = −M⁻¹ ∂R/∂x`, `Y = M⁻¹ Gᵀ` and `K = G M⁻¹ Gᵀ` (range space):
//! `∂λ = K⁻¹ (−∂c/∂x − G U)`, `∂q̈ = U + Y ∂λ`.
//!
//! ∂R/∂x is [`rnea_derivatives_with_forces`](super::rnea_derivatives_with_forces) with the
//! constraint forces as body wrenches, corrected for contacts, whose force keeps its world
//! direction while the body turns (the body-fixed wrench would turn with it): the difference is
//! the wrench of `ω_j × F` at the contact point, `∂R_i/∂q_j += (J_i at x) · (ω_j × F)` over the
//! dofs i, j of the contact body's chain. ∂c/∂x follows the body's world velocity and
//! acceleration a (without gravity): a frame row is `φ · a` (φ turning with the body, so only
//! the non-rigid part of `∂a/∂q_j`, `∂a/∂q_j|rnea − J_j × g + ∂v/∂q_j × v`, remains); a contact row is `n · ẍ` for the classical
//! acceleration `ẍ = a_lin + a_ang × x + ω × (v_lin + ω × x)` of the point, which turns with
//! the subtree (`ω_j × ẍ`) besides its non-rigid part.
//!
//! Supported: contacts and frame constraints (3-D point and 6-D contacts) without Baumgarte
//! stabilisation; loop constraints and stabilised rows are refused with an error.

use super::types::{ConstraintError, ConstraintKind, Method};
use super::ConstraintSet;
use crate::algorithms::derivatives::{minus_minv_times, rnea_derivatives_impl, DerivativesWorkspace};
use crate::algorithms::{check_len, forward_kinematics, invert_mass_matrix};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::{Force, Motion, Vec3};
use nalgebra::{DMatrix, DVector};

/// Why [`constrained_dynamics_derivatives`] could not run.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ConstrainedDerivativesError {
    /// A constraint of a kind (or with a setting) the derivatives do not cover.
    #[error("constraint '{constraint}': {reason}")]
    Unsupported {
        /// Name (or index) of the constraint.
        constraint: String,
        /// What is not supported.
        reason: &'static str,
    },
    /// The workspace was made for another model or constraint set.
    #[error("the ConstrainedDerivatives workspace was made for {expected} constraint rows and nv = {expected_nv}, the call has {rows} rows and nv = {nv}")]
    WrongSize {
        /// Rows it was made for.
        expected: usize,
        /// nv it was made for.
        expected_nv: usize,
        /// Rows of the constraint set.
        rows: usize,
        /// nv of the model.
        nv: usize,
    },
    /// The constrained forward dynamics failed (conflicting constraints).
    #[error(transparent)]
    Solve(#[from] ConstraintError),
}

/// Buffers and results of [`constrained_dynamics_derivatives`] for one model and one bound
/// constraint set (`nc` rows), allocated once by [`ConstrainedDerivatives::new`].
#[derive(Clone, Debug)]
pub struct ConstrainedDerivatives {
    /// ∂q̈/∂q (tangent space) `(nv x nv)`.
    pub dqdd_dq: DMatrix<f64>,
    /// ∂q̈/∂v `(nv x nv)`.
    pub dqdd_dv: DMatrix<f64>,
    /// ∂q̈/∂τ `(nv x nv)`.
    pub dqdd_dtau: DMatrix<f64>,
    /// ∂λ/∂q (tangent space) `(nc x nv)`.
    pub dlambda_dq: DMatrix<f64>,
    /// ∂λ/∂v `(nc x nv)`.
    pub dlambda_dv: DMatrix<f64>,
    /// ∂λ/∂τ `(nc x nv)`.
    pub dlambda_dtau: DMatrix<f64>,
    /// The unconstrained derivatives' workspace (∂R/∂q, ∂R/∂v at the solution).
    rnea: DerivativesWorkspace,
    /// Constraint forces as wrenches on each body, in its joint frame `(njoints)`.
    f_ext: Vec<Force>,
    /// ∂c/∂q, ∂c/∂v `(nc x nv)`.
    dc_dq: DMatrix<f64>,
    dc_dv: DMatrix<f64>,
    /// Y = M⁻¹ Gᵀ `(nv x nc)`.
    y: DMatrix<f64>,
    /// K = G M⁻¹ Gᵀ, then its Cholesky factor (lower) `(nc x nc)`.
    k: DMatrix<f64>,
}

impl ConstrainedDerivatives {
    /// Allocates every buffer for `model` and the bound constraint set `cs`.
    pub fn new(model: &Model, cs: &ConstraintSet) -> Self {
        let (nv, nc) = (model.nv, cs.rows());
        ConstrainedDerivatives {
            dqdd_dq: DMatrix::zeros(nv, nv),
            dqdd_dv: DMatrix::zeros(nv, nv),
            dqdd_dtau: DMatrix::zeros(nv, nv),
            dlambda_dq: DMatrix::zeros(nc, nv),
            dlambda_dv: DMatrix::zeros(nc, nv),
            dlambda_dtau: DMatrix::zeros(nc, nv),
            rnea: DerivativesWorkspace::new(model),
            f_ext: vec![Force::zero(); model.njoints],
            dc_dq: DMatrix::zeros(nc, nv),
            dc_dv: DMatrix::zeros(nc, nv),
            y: DMatrix::zeros(nv, nc),
            k: DMatrix::zeros(nc, nc),
        }
    }
}

/// Solves the constrained forward dynamics of `cs` for (q, v, τ) by `method` (results in
/// `cs.qdd`, `cs.lambda`) and writes their derivatives with respect to q (tangent space), v
/// and τ into `out`. Allocation-free.
#[doc(alias = "computeConstraintDynamicsDerivatives")]
#[allow(clippy::too_many_arguments)]
pub fn constrained_dynamics_derivatives(
    model: &Model,
    data: &mut Data,
    cs: &mut ConstraintSet,
    out: &mut ConstrainedDerivatives,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    method: Method,
) -> Result<(), ConstrainedDerivativesError> {
    let (nv, nc) = (model.nv, cs.rows());
    check_supported(cs, out, nv)?;
    check_len("tau", tau, nv);
    cs.forward_dynamics(model, data, q, v, tau, method)?;
    // the constraint forces as body wrenches (joint frames)
    forward_kinematics(model, data, q);
    out.f_ext.fill(Force::zero());
    for (c, con) in cs.constraints().iter().enumerate() {
        let (body, _) = con.bodies();
        out.f_ext[body.0] += data.o_m_i[body.0].inv_act_force(&cs.forces[c]);
    }
    let ws = &mut out.rnea;
    rnea_derivatives_impl(model, data, ws, q, v, &cs.qdd, Some(&out.f_ext));
    contact_direction_terms(model, data, cs, ws);
    constraint_bias_derivatives(model, data, cs, ws, &mut out.dc_dq, &mut out.dc_dv);
    // U = −M⁻¹ ∂R/∂(q, v) into dqdd_dq, dqdd_dv (workspace of the unconstrained derivatives)
    invert_mass_matrix(model, data);
    minus_minv_times(model, ws, data.mass_matrix_inverse.as_slice());
    // Y = M⁻¹ Gᵀ, K = G M⁻¹ Gᵀ = L Lᵀ (products by hand: nalgebra's dense products allocate
    // packing buffers)
    let (minv, g) = (&data.mass_matrix_inverse, &cs.g);
    out.y.fill(0.0);
    for (r, mut y) in out.y.column_iter_mut().enumerate() {
        for (k, mk) in minv.column_iter().enumerate() {
            if g[(r, k)] != 0.0 {
                y.axpy(g[(r, k)], &mk, 1.0);
            }
        }
    }
    out.k.fill(0.0);
    mul_add(&mut out.k, g, &out.y, 1.0);
    cholesky_in_place(&mut out.k, nc);
    // x = q, v: ∂λ = K⁻¹ (−∂c − G U), ∂q̈ = U + Y ∂λ
    for (u, dc, dl, dqdd) in [
        (&ws.dqdd_dq, &out.dc_dq, &mut out.dlambda_dq, &mut out.dqdd_dq),
        (&ws.dqdd_dv, &out.dc_dv, &mut out.dlambda_dv, &mut out.dqdd_dv),
    ] {
        dl.copy_from(dc);
        dl.neg_mut();
        mul_add(dl, g, u, -1.0);
        cholesky_solve_columns(&out.k, dl, nc);
        dqdd.copy_from(u);
        mul_add(dqdd, &out.y, dl, 1.0);
    }
    // τ: ∂λ = −K⁻¹ Yᵀ, ∂q̈ = M⁻¹ + Y ∂λ
    for r in 0..nc {
        for j in 0..nv {
            out.dlambda_dtau[(r, j)] = -out.y[(j, r)];
        }
    }
    cholesky_solve_columns(&out.k, &mut out.dlambda_dtau, nc);
    out.dqdd_dtau.copy_from(minv);
    mul_add(&mut out.dqdd_dtau, &out.y, &out.dlambda_dtau, 1.0);
    Ok(())
}

/// Refuses what the derivatives do not cover (loop constraints, Baumgarte-stabilised rows) and
/// an `out` sized for another set or model.
fn check_supported(cs: &ConstraintSet, out: &ConstrainedDerivatives, nv: usize) -> Result<(), ConstrainedDerivativesError> {
    let nc = cs.rows();
    if out.dlambda_dq.nrows() != nc || out.dqdd_dq.nrows() != nv {
        return Err(ConstrainedDerivativesError::WrongSize { expected: out.dlambda_dq.nrows(), expected_nv: out.dqdd_dq.nrows(), rows: nc, nv });
    }
    for (index, con) in cs.constraints().iter().enumerate() {
        let label = || con.name.clone().unwrap_or_else(|| format!("#{index}"));
        if matches!(con.kind, ConstraintKind::Loop { .. }) {
            return Err(ConstrainedDerivativesError::Unsupported { constraint: label(), reason: "loop constraints are not differentiated yet" });
        }
        if con.baumgarte_time.is_some() {
            return Err(ConstrainedDerivativesError::Unsupported { constraint: label(), reason: "Baumgarte-stabilised rows are not differentiated yet" });
        }
    }
    Ok(())
}

/// Adds to `∂τ/∂q` (`ws.dtau_dq`) the contacts' share: a contact force keeps its world
/// direction (module documentation), so moving dof j turns its moment about the chain's dofs.
fn contact_direction_terms(model: &Model, data: &Data, cs: &ConstraintSet, ws: &mut DerivativesWorkspace) {
    let n = model.nv;
    let dq = ws.dtau_dq.as_mut_slice();
    for (c, con) in cs.constraints().iter().enumerate() {
        if let ConstraintKind::Contact { body, point, .. } = &con.kind {
            let s = body.0;
            let x = data.o_m_i[s].transform_point(point);
            let f = cs.forces[c].linear;
            let chain = ws.ancestor_dofs[ws.ancestor_start[s]..ws.ancestor_start[s + 1]].iter().copied().chain(model.idx_v[s]..model.idx_v[s] + model.nvs[s]);
            for j in chain.clone() {
                let w = ws.j[j].angular.cross(&f);
                for i in chain.clone() {
                    let ji = &ws.j[i];
                    dq[j * n + i] += (ji.linear + ji.angular.cross(&x)).dot(&w);
                }
            }
        }
    }
}

/// `∂c/∂q`, `∂c/∂v` (`dc_dq`, `dc_dv`, rows x nv) of the constraint bias over the dofs of each
/// constraint body's chain (zero elsewhere), from the velocity and acceleration derivatives
/// in `ws`.
fn constraint_bias_derivatives(model: &Model, data: &Data, cs: &ConstraintSet, ws: &DerivativesWorkspace, dc_dq: &mut DMatrix<f64>, dc_dv: &mut DMatrix<f64>) {
    dc_dq.fill(0.0);
    dc_dv.fill(0.0);
    for con in cs.constraints() {
        let (body, _) = con.bodies();
        let s = body.0;
        // world velocity and acceleration without gravity: the recursion's a includes −g, whose
        // share of ∂a/∂q_j (J_j × −g in the rigid part, a_λ × J_j in the rest) is taken out
        let g = model.gravity;
        let (v_s, a_s) = (ws.ov[s], ws.oa[s] + g);
        let chain = ws.ancestor_dofs[ws.ancestor_start[s]..ws.ancestor_start[s + 1]].iter().copied().chain(model.idx_v[s]..model.idx_v[s] + model.nvs[s]);
        match &con.kind {
            ConstraintKind::Frame { placement, axes, .. } => {
                let o_m_f = data.o_m_i[s].compose(placement);
                for (r, axis) in con.rows.clone().zip(axes) {
                    let phi = o_m_f.act_force(&Force::from_vec6(axis));
                    for j in chain.clone() {
                        dc_dq[(r, j)] = (ws.da_dq[j] - ws.j[j].cross(&g) + ws.dv_dq[j].cross(&v_s)).dot(&phi);
                        dc_dv[(r, j)] = (ws.da_dv[j] + ws.j[j].cross(&v_s)).dot(&phi);
                    }
                }
            }
            ConstraintKind::Contact { point, normals, .. } => {
                let x = data.o_m_i[s].transform_point(point);
                let w = v_s.angular;
                let v_x = v_s.linear + w.cross(&x);
                let xdd = a_s.linear + a_s.angular.cross(&x) + w.cross(&v_x);
                // non-rigid change of ẍ for changes δv, δa of the body's velocity and acceleration
                let dxdd = |dv: &Motion, da: &Motion| -> Vec3 {
                    da.linear + da.angular.cross(&x) + dv.angular.cross(&v_x) + w.cross(&(dv.linear + dv.angular.cross(&x)))
                };
                for j in chain {
                    let (dv_dq, j_j) = (&ws.dv_dq[j], &ws.j[j]);
                    let by_q = j_j.angular.cross(&xdd) + dxdd(dv_dq, &(ws.da_dq[j] - j_j.cross(&g) + dv_dq.cross(&v_s)));
                    let by_v = dxdd(j_j, &(ws.da_dv[j] + j_j.cross(&v_s)));
                    for (r, nrm) in con.rows.clone().zip(normals) {
                        dc_dq[(r, j)] = nrm.dot(&by_q);
                        dc_dv[(r, j)] = nrm.dot(&by_v);
                    }
                }
            }
            ConstraintKind::Loop { .. } => unreachable!("refused above"),
        }
    }
}

/// `out += alpha a b`, column by column (contiguous axpys, no allocation).
fn mul_add(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>, alpha: f64) {
    for (mut o, bj) in out.column_iter_mut().zip(b.column_iter()) {
        for (ak, &x) in a.column_iter().zip(bj.iter()) {
            if x != 0.0 {
                o.axpy(alpha * x, &ak, 1.0);
            }
        }
    }
}

/// K = L Lᵀ in place (lower triangle of the leading `n x n` block; K positive definite when G
/// has full row rank, NaN otherwise).
fn cholesky_in_place(k: &mut DMatrix<f64>, n: usize) {
    for j in 0..n {
        let mut d = k[(j, j)];
        for p in 0..j {
            d -= k[(j, p)] * k[(j, p)];
        }
        let l = if d > 0.0 { d.sqrt() } else { f64::NAN };
        k[(j, j)] = l;
        for r in j + 1..n {
            let mut x = k[(r, j)];
            for p in 0..j {
                x -= k[(r, p)] * k[(j, p)];
            }
            k[(r, j)] = x / l;
        }
    }
}

/// B ← (L Lᵀ)⁻¹ B for every column of `b` (`n` rows), L from [`cholesky_in_place`].
fn cholesky_solve_columns(l: &DMatrix<f64>, b: &mut DMatrix<f64>, n: usize) {
    for mut col in b.column_iter_mut() {
        for r in 0..n {
            let mut x = col[r];
            for p in 0..r {
                x -= l[(r, p)] * col[p];
            }
            col[r] = x / l[(r, r)];
        }
        for r in (0..n).rev() {
            let mut x = col[r];
            for p in r + 1..n {
                x -= l[(p, r)] * col[p];
            }
            col[r] = x / l[(r, r)];
        }
    }
}

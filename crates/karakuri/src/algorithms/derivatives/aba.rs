//! ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of the forward dynamics (Carpentier & Mansard 2018, §IV.C):
//! differentiating M(q) q̈ + b(q, v) = τ at q̈ = ABA(q, v, τ) gives
//! `∂q̈/∂(q, v) = −M⁻¹ ∂τ/∂(q, v)` with ∂τ/∂(q, v) those of RNEA at a = q̈.
//!
//! Pinocchio multiplies by a dense M⁻¹ (O(n³)); here M = Lᵀ D L is factorised along the
//! branches (`ltdl`) and the solves run on the rows of ∂τ/∂q and ∂τ/∂v at once (each
//! elimination step is one contiguous `axpy` of two rows of length n): O(n² d).

use super::rnea::rnea_derivatives_impl;
use super::DerivativesWorkspace;
use crate::algorithms::ltdl::invert_mass_matrix;
use crate::algorithms::{check_len, forward_dynamics, forward_dynamics_with_forces};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::Force;
use nalgebra::DVector;

/// ∂q̈/∂q and ∂q̈/∂v of q̈ = ABA(q, v, τ) into `ws.dqdd_dq`, `ws.dqdd_dv`, and ∂q̈/∂τ = M⁻¹ into
/// `data.mass_matrix_inverse` (full symmetric). Also leaves q̈ in `data.ddq`, M in
/// `data.mass_matrix` (its factors in `data.ltdl`) and ∂τ/∂q, ∂τ/∂v at a = q̈ in the workspace.
#[doc(alias = "computeABADerivatives")]
pub fn aba_derivatives(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
) {
    forward_dynamics(model, data, q, v, tau);
    from_rnea_derivatives(model, data, ws, q, v, None);
}

/// [`aba_derivatives`] with external forces `f_ext` on each body, in the body's joint frame
/// (`njoints` entries), as [`forward_dynamics_with_forces`].
pub fn aba_derivatives_with_forces(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    f_ext: &[Force],
) {
    forward_dynamics_with_forces(model, data, q, v, tau, f_ext);
    from_rnea_derivatives(model, data, ws, q, v, Some(f_ext));
}

/// The RNEA derivatives at a = q̈ (`data.ddq`), M⁻¹, then −M⁻¹ ∂τ/∂(q, v).
fn from_rnea_derivatives(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    f_ext: Option<&[Force]>,
) {
    let n = model.nv;
    // q̈ out of `data` for the call (a zero-length vector does not allocate)
    let qdd = std::mem::replace(&mut data.ddq, DVector::zeros(0));
    check_len("q̈", &qdd, n);
    rnea_derivatives_impl(model, data, ws, q, v, &qdd, f_ext);
    data.ddq = qdd;
    invert_mass_matrix(model, data);
    if n == 0 {
        return;
    }
    // rows of ∂τ/∂q and ∂τ/∂v side by side: column k of `rows` = [row k of ∂τ/∂q; row k of ∂τ/∂v]
    let m = 2 * n;
    let rows = ws.rows.as_mut_slice();
    for (c, (xq, xv)) in ws.dtau_dq.as_slice().chunks_exact(n).zip(ws.dtau_dv.as_slice().chunks_exact(n)).enumerate() {
        for r in 0..n {
            rows[r * m + c] = xq[r];
            rows[r * m + n + c] = xv[r];
        }
    }
    solve_rows(&data.ltdl, rows, m);
    // ∂q̈/∂(q, v) = −(solved rows)
    for (c, (yq, yv)) in ws.dqdd_dq.as_mut_slice().chunks_exact_mut(n).zip(ws.dqdd_dv.as_mut_slice().chunks_exact_mut(n)).enumerate() {
        for r in 0..n {
            yq[r] = -rows[r * m + c];
            yv[r] = -rows[r * m + n + c];
        }
    }
}

/// Solves M Y = X for X given by rows: `x[k * m..(k + 1) * m]` is row k (length m), Y
/// overwrites X. M = Lᵀ D L from `f`: x ← L⁻¹ D⁻¹ L⁻ᵀ x, each step a row `axpy`.
fn solve_rows(f: &crate::algorithms::ltdl::Factorization, x: &mut [f64], m: usize) {
    let n = f.n();
    // L⁻ᵀ: last rows first, each row scattered into its ancestors' (all earlier)
    for k in (0..n).rev() {
        let (before, rest) = x.split_at_mut(k * m);
        let xk = &rest[..m];
        let (anc, l) = f.row(k);
        for (&a, &lv) in anc.iter().zip(l) {
            for (y, z) in before[a * m..a * m + m].iter_mut().zip(xk) {
                *y -= lv * z;
            }
        }
    }
    for k in 0..n {
        let inv = 1.0 / f.d(k);
        for y in &mut x[k * m..k * m + m] {
            *y *= inv;
        }
    }
    // L⁻¹: first rows first, each row gathering its ancestors'
    for k in 0..n {
        let (before, rest) = x.split_at_mut(k * m);
        let xk = &mut rest[..m];
        let (anc, l) = f.row(k);
        for (&a, &lv) in anc.iter().zip(l) {
            for (y, z) in xk.iter_mut().zip(&before[a * m..a * m + m]) {
                *y -= lv * z;
            }
        }
    }
}

//! ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of the forward dynamics (Carpentier & Mansard 2018):
//! differentiating M(q) q̈ + b(q, v) = τ at q̈ = ABA(q, v, τ) gives
//! `∂q̈/∂(q, v) = −M⁻¹ ∂τ/∂(q, v)` with ∂τ/∂(q, v) those of RNEA at a = q̈.
//!
//! One RNEA-derivative recursion at q̈ = 0 gives M, the bias b and ∂τ/∂v (which do not depend
//! on q̈); M = Lᵀ D L is factorised along the branches (`ltdl`), q̈ = M⁻¹ (τ − b) is solved on
//! the factors (no separate ABA pass: the placements are computed once), and a light second
//! sweep adds q̈'s share to ∂τ/∂q. M⁻¹ comes from the same factors; Pinocchio then multiplies
//! by the dense M⁻¹ (O(n³)), here only the columns of M⁻¹ at the rows where ∂τ/∂q, ∂τ/∂v can
//! be nonzero (dofs whose joints are ancestor and descendant) enter: O(n² d).

use super::rnea::{backward_pass, configuration_entries_at, forward_pass};
use super::DerivativesWorkspace;
use crate::algorithms::check_len;
use crate::algorithms::crba::invert_mass_matrix;
use crate::data::{Data, Fresh};
use crate::model::Model;
use crate::spatial::Force;
use nalgebra::DVector;

/// ∂q̈/∂q and ∂q̈/∂v of q̈ = ABA(q, v, τ) into `ws.dqdd_dq`, `ws.dqdd_dv`, and ∂q̈/∂τ = M⁻¹ into
/// `data.mass_matrix_inverse` (full symmetric). Also leaves q̈ in `data.ddq`, M in
/// `data.mass_matrix` (its factors in `data.ltdl`), τ in `data.tau`, ∂τ/∂q and ∂τ/∂v at a = q̈
/// in the workspace, and the placements of `data` (fresh after: placements, M).
#[doc(alias = "computeABADerivatives")]
pub fn aba_derivatives(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
) {
    aba_derivatives_impl(model, data, ws, q, v, tau, None);
}

/// [`aba_derivatives`] with external forces `f_ext` on each body, in the body's joint frame
/// (`njoints` entries), as [`forward_dynamics_with_forces`](crate::algorithms::forward_dynamics_with_forces).
pub fn aba_derivatives_with_forces(
    model: &Model,
    data: &mut Data,
    ws: &mut DerivativesWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    f_ext: &[Force],
) {
    assert_eq!(f_ext.len(), model.njoints, "f_ext needs one force per joint (njoints)");
    aba_derivatives_impl(model, data, ws, q, v, tau, Some(f_ext));
}

twice! {
    /// The RNEA recursion at q̈ = 0 gives M, the bias b = τ(q̈ = 0) and ∂τ/∂v (independent of
    /// q̈); then q̈ = M⁻¹ (τ − b) through the factors of M, ∂τ/∂q at a = q̈, and −M⁻¹ ∂τ/∂(q, v).
    /// Compiled twice, for AVX2 and portable (0109).
    fn aba_derivatives_impl(
        model: &Model,
        data: &mut Data,
        ws: &mut DerivativesWorkspace,
        q: &DVector<f64>,
        v: &DVector<f64>,
        tau: &DVector<f64>,
        f_ext: Option<&[Force]>,
    ) {
        check_len("q", q, model.nq);
        check_len("v", v, model.nv);
        check_len("tau", tau, model.nv);
        assert_eq!(ws.j.len(), model.nv, "the DerivativesWorkspace was made for another model");
        let n = model.nv;
        forward_pass(model, data, ws, q.as_slice(), v.as_slice(), None, f_ext);
        data.fresh = Fresh::PLACEMENTS | Fresh::MASS_MATRIX;
        backward_pass::<false>(model, data, ws);
        invert_mass_matrix(model, data);
        // q̈ = M⁻¹ (τ − b), b in data.tau
        for k in 0..n {
            data.ddq[k] = tau[k] - data.tau[k];
            data.tau[k] = tau[k];
        }
        data.ltdl.solve(data.ddq.as_mut_slice());
        ws.qdd.copy_from(&data.ddq);
        ws.tau.copy_from(tau);
        configuration_entries_at(model, ws, data.ddq.as_slice());
        minus_minv_times(model, ws, data.mass_matrix_inverse.as_slice());
    }
}

twice! {
    /// `ws.dqdd_dq = −M⁻¹ ws.dtau_dq`, `ws.dqdd_dv = −M⁻¹ ws.dtau_dv` for the full symmetric M⁻¹
    /// `minv` (column-major): column j of −M⁻¹ X is −Σ_r X[r, j] M⁻¹[:, r] over the dofs r related
    /// to j's joint (the only rows where X can be nonzero), four columns of M⁻¹ at a time.
    /// Compiled twice, for AVX2 (four `f64` an instruction along the output column) and portable.
    pub(crate) fn minus_minv_times(model: &Model, ws: &mut DerivativesWorkspace, minv: &[f64]) {
        let n = model.nv;
        let (xq, xv) = (ws.dtau_dq.as_slice(), ws.dtau_dv.as_slice());
        let (yq, yv) = (ws.dqdd_dq.as_mut_slice(), ws.dqdd_dv.as_mut_slice());
        for i in 1..model.njoints {
            let related = &ws.related_dofs[ws.related_start[i]..ws.related_start[i + 1]];
            for j in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
                let (xq, xv) = (&xq[j * n..j * n + n], &xv[j * n..j * n + n]);
                let (yq, yv) = (&mut yq[j * n..j * n + n], &mut yv[j * n..j * n + n]);
                if ws.zero_dq_column[j] {
                    yq.fill(0.0);
                    minus_minv_column::<false>(related, minv, xv, xv, yv, yq);
                } else {
                    minus_minv_column::<true>(related, minv, xq, xv, yq, yv);
                }
            }
        }
    }
}

/// `ya = −M⁻¹ xa` (and `yb = −M⁻¹ xb` when `BOTH`) for columns `x` that vanish outside `related`.
#[inline(always)]
fn minus_minv_column<const BOTH: bool>(related: &[usize], minv: &[f64], xa: &[f64], xb: &[f64], ya: &mut [f64], yb: &mut [f64]) {
    let n = ya.len();
    let (ya, yb) = (&mut ya[..n], &mut yb[..n]);
    ya.fill(0.0);
    if BOTH {
        yb.fill(0.0);
    }
    let mut chunks = related.chunks_exact(4);
    for r in &mut chunks {
        let col = |t: usize| &minv[r[t] * n..r[t] * n + n];
        let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
        let (a0, a1, a2, a3) = (xa[r[0]], xa[r[1]], xa[r[2]], xa[r[3]]);
        let (b0, b1, b2, b3) = (xb[r[0]], xb[r[1]], xb[r[2]], xb[r[3]]);
        for t in 0..n {
            let (p, q, u, w) = (c0[t], c1[t], c2[t], c3[t]);
            ya[t] -= a0 * p + a1 * q + a2 * u + a3 * w;
            if BOTH {
                yb[t] -= b0 * p + b1 * q + b2 * u + b3 * w;
            }
        }
    }
    for &r in chunks.remainder() {
        let (ca, cb) = (xa[r], xb[r]);
        for ((p, y), z) in minv[r * n..r * n + n].iter().zip(ya.iter_mut()).zip(yb.iter_mut()) {
            *y -= ca * p;
            if BOTH {
                *z -= cb * p;
            }
        }
    }
}

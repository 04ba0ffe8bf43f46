//! ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of the forward dynamics (Carpentier & Mansard 2018, §IV.C):
//! differentiating M(q) q̈ + b(q, v) = τ at q̈ = ABA(q, v, τ) gives
//! `∂q̈/∂(q, v) = −M⁻¹ ∂τ/∂(q, v)` with ∂τ/∂(q, v) those of RNEA at a = q̈.
//!
//! M⁻¹ comes from the branch-induced LᵀDL factors of M (`ltdl`); Pinocchio then multiplies
//! by the dense M⁻¹ (O(n³)), here only the columns of M⁻¹ at the rows where ∂τ/∂q, ∂τ/∂v can
//! be nonzero (dofs whose joints are ancestor and descendant) enter: O(n² d).

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
    // column j of −M⁻¹ X is −Σ_r X[r, j] M⁻¹[:, r] over the dofs r related to j's joint (the
    // only rows where X = ∂τ/∂q or ∂τ/∂v is nonzero), four columns of M⁻¹ at a time
    let minv = data.mass_matrix_inverse.as_slice();
    let (xq, xv) = (ws.dtau_dq.as_slice(), ws.dtau_dv.as_slice());
    let (yq, yv) = (ws.dqdd_dq.as_mut_slice(), ws.dqdd_dv.as_mut_slice());
    for i in 1..model.njoints {
        let related = &ws.related_dofs[ws.related_start[i]..ws.related_start[i + 1]];
        for j in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
            let (xq, xv) = (&xq[j * n..j * n + n], &xv[j * n..j * n + n]);
            let (yq, yv) = (&mut yq[j * n..j * n + n], &mut yv[j * n..j * n + n]);
            yq.fill(0.0);
            yv.fill(0.0);
            let mut chunks = related.chunks_exact(4);
            for r in &mut chunks {
                let col = |t: usize| &minv[r[t] * n..r[t] * n + n];
                let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
                let (q0, q1, q2, q3) = (xq[r[0]], xq[r[1]], xq[r[2]], xq[r[3]]);
                let (v0, v1, v2, v3) = (xv[r[0]], xv[r[1]], xv[r[2]], xv[r[3]]);
                for t in 0..n {
                    let (a, b, c, d) = (c0[t], c1[t], c2[t], c3[t]);
                    yq[t] -= q0 * a + q1 * b + q2 * c + q3 * d;
                    yv[t] -= v0 * a + v1 * b + v2 * c + v3 * d;
                }
            }
            for &r in chunks.remainder() {
                let (cq, cv) = (xq[r], xv[r]);
                for ((a, y), z) in minv[r * n..r * n + n].iter().zip(yq.iter_mut()).zip(yv.iter_mut()) {
                    *y -= cq * a;
                    *z -= cv * a;
                }
            }
        }
    }
}

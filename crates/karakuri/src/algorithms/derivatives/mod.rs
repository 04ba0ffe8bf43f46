//! Analytical derivatives of the dynamics (Carpentier & Mansard, *Analytical Derivatives of
//! Rigid Body Dynamics Algorithms*, RSS 2018; Pinocchio's `computeRNEADerivatives` and
//! `computeABADerivatives`).
//!
//! The derivatives of constrained dynamics, one layer above, are
//! [`crate::constraints::constrained_dynamics_derivatives`].
//!
//! | function | result |
//! | --- | --- |
//! | [`rnea_derivatives`] | ∂τ/∂q, ∂τ/∂v of τ = RNEA(q, v, a), and ∂τ/∂a = M |
//! | [`aba_derivatives`] | ∂q̈/∂q, ∂q̈/∂v of q̈ = ABA(q, v, τ), and ∂q̈/∂τ = M⁻¹ |
//!
//! Derivatives with respect to q are taken in the tangent space, in Pinocchio's convention:
//! column j is d/dε f(integrate(q, ε e_j)) at ε = 0, so a free flyer or a spherical joint is
//! perturbed in its child frame and a continuous joint by its angle.
//!
//! Both are O(n d) for n dofs and tree depth d (plus the O(n² d) sparse solves of the ABA
//! route), allocate nothing, and keep their buffers in a [`DerivativesWorkspace`] apart from
//! [`Data`](crate::Data): a model that never asks for derivatives pays nothing for them.
//!
//! The recursion ([`rnea`]) runs in world coordinates, where moving joint j by its tangent
//! direction moves every quantity attached to its subtree by the twist `J_j` (the joint's
//! motion subspace column in the world): `d X/dq_j = J_j ×` for motions, `J_j ×*` for forces.
//! The ABA route ([`aba`]) uses ∂q̈/∂(q, v) = −M⁻¹ ∂τ/∂(q, v) at a = q̈, with M⁻¹ applied
//! through the branch-induced LᵀDL factors of M.

mod aba;
mod rnea;

pub use aba::{aba_derivatives, aba_derivatives_with_forces};
pub use rnea::{rnea_derivatives, rnea_derivatives_with_forces};
// for the constrained derivatives (crate::constraints), one layer above
pub(crate) use aba::minus_minv_times;
pub(crate) use rnea::rnea_derivatives_impl;

use crate::model::Model;
use crate::spatial::{skew, Force, Mat3, Motion, OriginInertia, Vec3};
use nalgebra::{DMatrix, DVector};

/// Carpentier & Mansard's `B`: the part of a body's spatial force derivative that does not
/// come from its inertia times an acceleration derivative, `B x = v ×* (I x) − I (v × x) +
/// x ×* (I v)` for the body's velocity v and inertia I (both in world coordinates). Written
/// out it reads only the angular part ω_x of x:
///
/// `B x = [2 ω_x × h_lin ; S ω_x − h_ang × ω_x]`
///
/// with `h = I v` the momentum and S symmetric, so a subtree's sum (`B^C`, accumulated like the
/// composite inertia) is 12 numbers, not a 6x6 matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MomentumVariation {
    /// Σ linear momentum `h_lin`.
    pub h_lin: Vec3,
    /// Σ angular momentum about the world origin `h_ang`.
    pub h_ang: Vec3,
    /// Σ `[ω] I_o − I_o [ω] − [v][c] − [c][v]` (symmetric; c the first moment of mass).
    pub s: Mat3,
}

impl MomentumVariation {
    /// The zero term.
    #[inline]
    pub fn zero() -> Self {
        Self { h_lin: Vec3::zeros(), h_ang: Vec3::zeros(), s: Mat3::zeros() }
    }

    /// `B` of one body of inertia `y` moving with `v` (both in the same frame), its momentum `h = y v`.
    #[inline(always)]
    pub fn of_body(y: &OriginInertia, v: &Motion, h: &Force) -> Self {
        let (w, vl, c) = (&v.angular, &v.linear, &y.h);
        // X = [ω] I_o; [ω] I_o − I_o [ω] = X + Xᵀ (I_o symmetric)
        let x = skew(w) * y.i_o;
        // [v][c] + [c][v] = c vᵀ + v cᵀ − 2 (v·c) 1
        let d = 2.0 * vl.dot(c);
        let mut s = Mat3::zeros();
        for r in 0..3 {
            for k in r..3 {
                let e = x[(r, k)] + x[(k, r)] - (c[r] * vl[k] + vl[r] * c[k]) + if r == k { d } else { 0.0 };
                s[(r, k)] = e;
                s[(k, r)] = e;
            }
        }
        Self { h_lin: h.linear, h_ang: h.angular, s }
    }

    /// Adds another term in the same frame.
    #[inline(always)]
    pub fn add(&mut self, o: &Self) {
        self.h_lin += o.h_lin;
        self.h_ang += o.h_ang;
        self.s += o.s;
    }

    /// `B x`.
    #[inline(always)]
    pub fn mul_motion(&self, x: &Motion) -> Force {
        let w = &x.angular;
        Force::new(2.0 * w.cross(&self.h_lin), self.s * w - self.h_ang.cross(w))
    }

    /// The angular part r of `xᵀ B` (its linear part is zero): `xᵀ B y = r · ω_y`.
    #[inline(always)]
    pub fn transpose_mul_motion(&self, x: &Motion) -> Vec3 {
        2.0 * self.h_lin.cross(&x.linear) + self.s * x.angular + self.h_ang.cross(&x.angular)
    }
}

/// Buffers and results of [`rnea_derivatives`] and [`aba_derivatives`] for one model,
/// allocated once by [`DerivativesWorkspace::new`]. Per-joint vectors have `njoints` entries,
/// per-dof vectors `nv`; every spatial quantity is in world coordinates.
#[derive(Clone, Debug)]
pub struct DerivativesWorkspace {
    /// ∂τ/∂q (tangent space) of the last [`rnea_derivatives`], or at a = q̈ of the last
    /// [`aba_derivatives`] `(nv x nv)`.
    pub dtau_dq: DMatrix<f64>,
    /// ∂τ/∂v, likewise `(nv x nv)`.
    pub dtau_dv: DMatrix<f64>,
    /// ∂q̈/∂q (tangent space) of the last [`aba_derivatives`] `(nv x nv)`.
    pub dqdd_dq: DMatrix<f64>,
    /// ∂q̈/∂v of the last [`aba_derivatives`] `(nv x nv)`.
    pub dqdd_dv: DMatrix<f64>,
    /// τ of the last call: RNEA(q, v, a), or the τ given to [`aba_derivatives`] `(nv)`.
    pub tau: DVector<f64>,
    /// q̈ = ABA(q, v, τ) of the last [`aba_derivatives`] `(nv)`.
    pub qdd: DVector<f64>,
    // --- forward pass, per joint ---
    /// Spatial velocity `v_i` `(njoints)`.
    pub(crate) ov: Vec<Motion>,
    /// Spatial acceleration with gravity folded in, `a_i − g` `(njoints)`.
    pub(crate) oa: Vec<Motion>,
    /// Body inertia, then composite inertia of the subtree `I^C_i` `(njoints)`.
    pub(crate) ic: Vec<OriginInertia>,
    /// Body term B_i, then the subtree's `B^C_i` `(njoints)`.
    pub(crate) bc: Vec<MomentumVariation>,
    /// Body force `f_i = I_i a_i + v_i ×* I_i v_i − f_ext`, then the subtree's sum `F_i` `(njoints)`.
    pub(crate) fc: Vec<Force>,
    // --- per dof ---
    /// Motion subspace column `J_k = X_i S_k` `(nv)`.
    pub(crate) j: Vec<Motion>,
    /// `∂v_i/∂q_k` beyond the rigid motion of the subtree: `v_λ × J_k` `(nv)`.
    pub(crate) dv_dq: Vec<Motion>,
    /// `∂a_i/∂q_k` beyond the rigid motion: `a_λ × J_k + v_λ × ∂v/∂q_k` `(nv)`.
    pub(crate) da_dq: Vec<Motion>,
    /// `∂a_i/∂v_k` beyond `J_k × v_i`: `v_i × J_k + ∂v/∂q_k` `(nv)`.
    pub(crate) da_dv: Vec<Motion>,
    /// ABA route: `I^C_i J_k` of dof k (joint i) from the first backward pass, for the second `(nv)`.
    pub(crate) fa: Vec<Force>,
    /// ABA route: the angular part of `J_kᵀ B^C_i`, likewise `(nv)`.
    pub(crate) r: Vec<Vec3>,
    /// ABA route: `δa_i`, the growth of `a_i` from q̈ = 0 to q̈ `(njoints)`.
    pub(crate) delta_a: Vec<Motion>,
    /// ABA route: `P_i = Σ_{k in subtree} I^C_k J_k q̈_k` `(njoints)`.
    pub(crate) p: Vec<Force>,
    /// Strict ancestor dofs of each joint, ascending: `ancestor_dofs[ancestor_start[i]..ancestor_start[i + 1]]`.
    pub(crate) ancestor_dofs: Vec<usize>,
    /// Offsets into `ancestor_dofs` `(njoints + 1)`.
    pub(crate) ancestor_start: Vec<usize>,
    /// Dofs related to each joint's (its ancestors', then its subtree's, its own included):
    /// where its columns of ∂τ/∂q and ∂τ/∂v may be nonzero,
    /// `related_dofs[related_start[i]..related_start[i + 1]]`.
    pub(crate) related_dofs: Vec<usize>,
    /// Offsets into `related_dofs` `(njoints + 1)`.
    pub(crate) related_start: Vec<usize>,
    /// Column k of ∂τ/∂q is zero whatever the state: a translation of a root joint moves the
    /// whole subtree in a uniform gravity field `(nv)`.
    pub(crate) zero_dq_column: Vec<bool>,
}

impl DerivativesWorkspace {
    /// Allocates every buffer for `model`.
    pub fn new(model: &Model) -> Self {
        let (nj, nv) = (model.njoints, model.nv);
        let mut ancestor_dofs = vec![];
        let mut ancestor_start = vec![0; nj + 1];
        let mut related_dofs = vec![];
        let mut related_start = vec![0; nj + 1];
        for i in 1..nj {
            let mut chain = vec![];
            let mut p = model.parents[i];
            while p > 0 {
                chain.extend((model.idx_v[p]..model.idx_v[p] + model.nvs[p]).rev());
                p = model.parents[p];
            }
            ancestor_dofs.extend(chain.iter().rev());
            ancestor_start[i + 1] = ancestor_dofs.len();
            related_dofs.extend(chain.iter().rev());
            for &(lo, hi) in &model.subtree_v_ranges[model.subtree_v_ranges_start[i]..model.subtree_v_ranges_start[i + 1]] {
                related_dofs.extend(lo..hi);
            }
            related_start[i + 1] = related_dofs.len();
        }
        DerivativesWorkspace {
            dtau_dq: DMatrix::zeros(nv, nv),
            dtau_dv: DMatrix::zeros(nv, nv),
            dqdd_dq: DMatrix::zeros(nv, nv),
            dqdd_dv: DMatrix::zeros(nv, nv),
            tau: DVector::zeros(nv),
            qdd: DVector::zeros(nv),
            ov: vec![Motion::zero(); nj],
            oa: vec![Motion::zero(); nj],
            ic: vec![OriginInertia::zero(); nj],
            bc: vec![MomentumVariation::zero(); nj],
            fc: vec![Force::zero(); nj],
            j: vec![Motion::zero(); nv],
            dv_dq: vec![Motion::zero(); nv],
            da_dq: vec![Motion::zero(); nv],
            da_dv: vec![Motion::zero(); nv],
            fa: vec![Force::zero(); nv],
            r: vec![Vec3::zeros(); nv],
            delta_a: vec![Motion::zero(); nj],
            p: vec![Force::zero(); nj],
            ancestor_dofs,
            ancestor_start,
            related_dofs,
            related_start,
            zero_dq_column: (0..nv)
                .map(|k| model.parents[model.dof_joint[k]] == 0 && model.motion_subspace[k].angular == Vec3::zeros())
                .collect(),
        }
    }
}

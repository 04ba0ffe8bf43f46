//! The hybrid dynamics' method choice ([`HybridMethod`]) and buffers ([`HybridWorkspace`]),
//! read by both routes (`hybrid.rs`) and by the floating-base shortcut.

use crate::linalg::Factorization;
use crate::model::Model;
use crate::spatial::{Force, Mat6, Motion, OriginInertia, Vec6};
use nalgebra::{DMatrix, DVector};

/// Marks "none" in the index arrays (no forward parent, no forward index, no nearest forward dof).
pub(super) const NONE: usize = usize::MAX;

/// Which algorithm [`hybrid_dynamics`](super::hybrid_dynamics) uses. Both give the same result (to rounding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HybridMethod {
    /// O(n) articulated-body route (RBDA §9.2): the default and the fastest.
    #[default]
    ArticulatedBody,
    /// Mass-matrix route: hybrid CRBA for the blocks H11, H21, LᵀDL solve on H11.
    Crba,
}

/// Buffers of [`hybrid_dynamics`](super::hybrid_dynamics), allocated once per model by [`HybridWorkspace::new`] (it
/// also caches the model's body inertias: use it with that model only); the results of the
/// last call are [`HybridWorkspace::qdd`] and [`HybridWorkspace::tau`].
#[derive(Clone, Debug)]
pub struct HybridWorkspace {
    /// Joint accelerations of the last call `(nv)`: the known ones on inverse joints.
    pub(super) qdd: DVector<f64>,
    /// Joint forces of the last call `(nv)`: the known ones on forward joints.
    pub(super) tau: DVector<f64>,
    /// Joint `i` is forward or has a forward ancestor: `δa_i` may be nonzero `(njoints)`.
    pub(super) moved_by_forward: Vec<bool>,
    /// Joint `i` is forward or has a forward descendant: its subtree is articulated `(njoints)`.
    pub(super) supports_forward: Vec<bool>,
    /// a⁰: body accelerations (gravity folded in) with forward accelerations zero `(njoints)`.
    pub(super) a0: Vec<Motion>,
    /// δa = a - a⁰ `(njoints)`.
    pub(super) da: Vec<Motion>,
    /// pA: bias force of each subtree, f⁰ accumulated plus the forward joints' share `(njoints)`.
    pub(super) pa: Vec<Force>,
    /// Composite inertia of the inverse-only part below each joint `(njoints)`.
    pub(super) ic: Vec<OriginInertia>,
    /// Floating-base fast path: `F_k = I^c_i S_k` in world coordinates `(nv)`.
    pub(super) f_world: Vec<Force>,
    /// 6x6 articulated inertia of articulated children, then the full IA `(njoints)`.
    pub(super) ia: Vec<Mat6>,
    /// U = IA S per dof `(nv)`.
    pub(super) u_cols: Vec<Vec6>,
    /// u = τ - Sᵀ pA per dof `(nv)`.
    pub(super) u: Vec<f64>,
    /// D⁻¹ = (Sᵀ U)⁻¹ per joint `(njoints)`.
    pub(super) d_inv: Vec<Mat6>,
    // --- mass-matrix route ---
    /// The needed entries of M (columns and rows of forward dofs) `(nv x nv)`.
    pub(super) m: DMatrix<f64>,
    /// H11, leading `n1 x n1` block, upper triangle along the contracted branches `(nv x nv)`.
    pub(super) h11: DMatrix<f64>,
    /// The LᵀDL factors of H11 (pattern `forward_parent[..n1]`).
    pub(super) h11_fact: Factorization,
    /// The forward dofs in increasing order, first `n1` entries `(nv)`.
    pub(super) forward_dofs: Vec<usize>,
    /// Branch-induced parent of each forward dof within the forward dofs `(nv)`.
    pub(super) forward_parent: Vec<usize>,
    /// Index of each dof among the forward dofs, or NONE `(nv)`.
    pub(super) forward_index: Vec<usize>,
    /// Nearest forward dof on the path to the root (self included), or NONE `(nv)`.
    pub(super) nearest_forward: Vec<usize>,
    /// Right-hand side and solution of the H11 solve `(nv)`.
    pub(super) rhs: Vec<f64>,
}

impl HybridWorkspace {
    /// Allocates every buffer for `model`.
    pub fn new(model: &Model) -> Self {
        let (nj, nv) = (model.njoints, model.nv);
        HybridWorkspace {
            qdd: DVector::zeros(nv),
            tau: DVector::zeros(nv),
            moved_by_forward: vec![false; nj],
            supports_forward: vec![false; nj],
            a0: vec![Motion::zero(); nj],
            da: vec![Motion::zero(); nj],
            pa: vec![Force::zero(); nj],
            ic: vec![OriginInertia::zero(); nj],
            f_world: vec![Force::zero(); nv],
            ia: vec![Mat6::zeros(); nj],
            u_cols: vec![Vec6::zeros(); nv],
            u: vec![0.0; nv],
            d_inv: vec![Mat6::zeros(); nj],
            m: DMatrix::zeros(nv, nv),
            h11: DMatrix::zeros(nv, nv),
            h11_fact: Factorization::new(model),
            forward_dofs: vec![0; nv],
            forward_parent: vec![NONE; nv],
            forward_index: vec![NONE; nv],
            nearest_forward: vec![NONE; nv],
            rhs: vec![0.0; nv],
        }
    }
    /// Joint accelerations of the last call `(nv)`.
    pub fn qdd(&self) -> &DVector<f64> {
        &self.qdd
    }
    /// Joint forces of the last call `(nv)`.
    pub fn tau(&self) -> &DVector<f64> {
        &self.tau
    }
}

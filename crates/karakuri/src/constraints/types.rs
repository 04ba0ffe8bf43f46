//! The constraint layer's types: what a constraint ties ([`ConstraintKind`], [`Constraint`]),
//! how a set is solved ([`Method`]) and what the solve found ([`SolveReport`],
//! [`ConstraintError`]), and the solvers' buffers ([`Workspace`]). Below every other file of
//! `constraints` (the set, its evaluation, the solvers, the public solves, assembly and the
//! constrained derivatives), which all read them.

use crate::model::JointId;
use crate::spatial::{Force, Motion, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};
use std::ops::Range;

/// How to solve the constrained equations of motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// LU of the full KKT matrix `[H Gᵀ; G 0]` (RBDL's `...ConstraintsDirect`).
    #[doc(alias = "ForwardDynamicsConstraintsDirect", alias = "ComputeConstraintImpulsesDirect")]
    Direct,
    /// Schur complement `G H⁻¹ Gᵀ λ = c - G H⁻¹ b` with the branch-induced sparse LᵀDL of H
    /// (RBDL's `...RangeSpaceSparse`).
    #[doc(alias = "ForwardDynamicsConstraintsRangeSpaceSparse", alias = "ComputeConstraintImpulsesRangeSpaceSparse")]
    RangeSpaceSparse,
    /// Pivoted QR of `Gᵀ = [Y Z] R`: the particular part from R, the rest from the reduced
    /// system `Zᵀ H Z` (RBDL's `...NullSpace`). Rank revealing: the fallback of the others.
    #[doc(alias = "ForwardDynamicsConstraintsNullSpace", alias = "ComputeConstraintImpulsesNullSpace")]
    NullSpace,
    /// Kokkevis's method: the response to a unit test force per row through the
    /// articulated-body inertias of ABA (no mass matrix), then the same Schur complement
    /// (RBDL's `ForwardDynamicsContactsKokkevis`).
    #[doc(alias = "ForwardDynamicsContactsKokkevis")]
    Kokkevis,
}

/// Errors from building or solving a constraint set.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ConstraintError {
    /// A constraint names a joint (body) the model does not have.
    #[error("constraint '{constraint}': joint {joint} does not exist (the model has {njoints} joints)")]
    UnknownJoint {
        /// Name (or index) of the constraint.
        constraint: String,
        /// The joint id given.
        joint: usize,
        /// Joints in the model, the universe included.
        njoints: usize,
    },
    /// A constraint axis or normal is zero or not finite.
    #[error("constraint '{constraint}': {what} is zero or not finite")]
    BadAxis {
        /// Name (or index) of the constraint.
        constraint: String,
        /// Which vector.
        what: String,
    },
    /// The rows cannot all hold: `G` has rank `rank < rows` and the right-hand side is not in
    /// its range. The least-squares answer (and minimal-norm forces) are in the outputs.
    #[error("conflicting constraints: {rows} rows of rank {rank}, least-squares residual {residual:e}")]
    Conflicting {
        /// Number of rows.
        rows: usize,
        /// Numerical rank of G.
        rank: usize,
        /// Largest violation of `G x = rhs` left by the least-squares answer.
        residual: f64,
    },
    /// [`ConstraintSet::assemble_q`] did not reach the tolerance.
    #[error("assembly did not converge: position error {residual:e} after {iterations} iterations")]
    AssemblyFailed {
        /// Iterations done.
        iterations: usize,
        /// Largest position error left.
        residual: f64,
    },
}

/// What a constraint ties together.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstraintKind {
    /// Point contact: one row per normal, the velocity of `point` (in the body's joint frame)
    /// along the world `normal`. `anchor` is the world point it should stay at (position
    /// error for Baumgarte and assembly; none: zero position error).
    Contact {
        /// The body (joint) carrying the point.
        body: JointId,
        /// The point, in the joint frame.
        point: Vec3,
        /// Unit normals in world axes, one per row.
        normals: Vec<Vec3>,
        /// World position the point is held at, if any.
        anchor: Option<Vec3>,
    },
    /// Frame constraint (a 6-D contact has the six unit axes): one row per spatial axis
    /// `[linear; angular]`, the spatial velocity of the frame in its own axes along it.
    Frame {
        /// The body (joint) carrying the frame.
        body: JointId,
        /// Placement of the frame in the joint frame (joint_from_frame).
        placement: Se3,
        /// Spatial axes in the frame, one per row.
        axes: Vec<Vec6>,
        /// World placement the frame is held at, if any.
        anchor: Option<Se3>,
    },
    /// Loop constraint: one row per spatial axis (in the predecessor frame), the velocity of
    /// the successor relative to the predecessor, expressed in the predecessor frame.
    Loop {
        /// Predecessor body (may be the universe).
        predecessor: JointId,
        /// Frame on the predecessor (joint_from_frame).
        predecessor_frame: Se3,
        /// Successor body.
        successor: JointId,
        /// Frame on the successor (joint_from_frame).
        successor_frame: Se3,
        /// Spatial axes in the predecessor frame, one per row.
        axes: Vec<Vec6>,
    },
}

/// One constraint of a set: a name, what it ties, and its rows in `G`, `γ`, `λ`.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// Optional name (look it up with [`ConstraintSet::find`](super::ConstraintSet::find)).
    pub name: Option<String>,
    /// What it ties together.
    pub kind: ConstraintKind,
    /// Its rows in `G`, `γ` and `λ`.
    pub rows: Range<usize>,
    /// Baumgarte time constant `T` (s), if stabilised: `γ_stab = γ - 2/T ϕ̇ - 1/T² ϕ`.
    pub baumgarte_time: Option<f64>,
}

impl Constraint {
    pub(crate) fn label(&self, index: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("#{index}"))
    }
    /// The body the constraint force acts on (successor for loops), and the body receiving
    /// the opposite force (the universe for contacts).
    pub fn bodies(&self) -> (JointId, JointId) {
        match &self.kind {
            ConstraintKind::Contact { body, .. } | ConstraintKind::Frame { body, .. } => (*body, JointId::UNIVERSE),
            ConstraintKind::Loop { predecessor, successor, .. } => (*successor, *predecessor),
        }
    }
}

/// What the last solve found about the constraint rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveReport {
    /// Method asked for.
    pub method: Method,
    /// Number of rows.
    pub rows: usize,
    /// Numerical rank of G found (equal to `rows` unless redundant or conflicting).
    pub rank: usize,
    /// The method's own factorisation found G rank deficient and the rank-revealing
    /// null-space path answered instead.
    pub fallback: bool,
    /// Largest violation of the constraint equation by the answer (`|G x - rhs|∞`).
    pub residual: f64,
}

/// Buffers of the solvers, allocated at bind (sizes: `nv` dofs, `nc` rows, `nj` joints).
#[derive(Clone, Debug, Default)]
pub(crate) struct Workspace {
    /// World covector of each row: `G_r q̇ = φ_r · (v_succ - v_pred)` (world spatial) `(nc)`.
    pub phi: Vec<Force>,
    /// Successor and predecessor body of each row `(nc)`.
    pub succ: Vec<usize>,
    pub pred: Vec<usize>,
    /// Right-hand sides: `b` (nv) and `c` (nc) of `H x = b + Gᵀ λ`, `G x = c`.
    pub rhs_v: DVector<f64>,
    pub rhs_c: DVector<f64>,
    /// Solution x (nv) and λ (nc).
    pub x: DVector<f64>,
    pub lam: DVector<f64>,
    /// Nonlinear effects C (nv).
    pub nle: DVector<f64>,
    /// KKT matrix (nv+nc)², its right-hand side and pivots.
    pub kkt: DMatrix<f64>,
    pub kkt_x: DVector<f64>,
    pub piv: Vec<usize>,
    /// Range space: W = D^-½ L⁻ᵀ Gᵀ (nv x nc; column r holds row r's entries on its
    /// constraint's support, compact: entry i at its support's i-th dof), K = G H⁻¹ Gᵀ
    /// (nc x nc).
    pub w: DMatrix<f64>,
    pub k: DMatrix<f64>,
    /// Null space: QR of Gᵀ (nv x nc), Householder scales, permutation, Q, H Z, Zᵀ H Z,
    /// normal matrix R̃ R̃ᵀ.
    pub qr: DMatrix<f64>,
    pub beta: Vec<f64>,
    pub perm: Vec<usize>,
    pub q: DMatrix<f64>,
    pub hz: DMatrix<f64>,
    pub zhz: DMatrix<f64>,
    pub nmat: DMatrix<f64>,
    /// Scratch (nv) x2, (nc) x2.
    pub t_nv: DVector<f64>,
    pub t_nv2: DVector<f64>,
    pub t_nc: DVector<f64>,
    pub t_nc2: DVector<f64>,
    /// Kokkevis: test articulated bias forces and accelerations (nj), test `u` (nv).
    pub pa: Vec<Force>,
    pub acc: Vec<Motion>,
    pub uu: DVector<f64>,
    /// Zero accelerations (nv), zero torques (nv).
    pub zero_v: DVector<f64>,
    /// Sparsity, fixed at bind. Constraint `c` has rows `row_off[c]..row_off[c + 1]`, and
    /// its rows are nonzero only on the dofs `sup[sup_off[c]..sup_off[c + 1]]` (ascending):
    /// the ancestor dofs of its bodies, a set closed under `dof_parent`, so `L⁻ᵀ Gᵀ` keeps it.
    /// `sup_sign`: +1 on the successor's path only, -1 on the predecessor's only, 0 on both.
    pub row_off: Vec<usize>,
    pub sup_off: Vec<usize>,
    pub sup: Vec<usize>,
    pub sup_sign: Vec<f64>,
    /// Intersection of the supports of constraints `a >= b`, as positions in `a`'s support
    /// (`pair`) and in `b`'s (`pair_b`), at `pair_off[p]..pair_off[p + 1]` with
    /// `p = a (a + 1) / 2 + b`; `pair_prefix[p]`: both are `0..m` (the common ancestors of
    /// two single chains).
    pub pair_off: Vec<usize>,
    pub pair: Vec<usize>,
    pub pair_b: Vec<usize>,
    pub pair_prefix: Vec<bool>,
    /// Constraint `c`'s support is one chain of the factors: the factor row of its `i`-th
    /// dof is at its `i` first dofs (a body's path to the root: contacts, frames).
    pub path: Vec<bool>,
    /// Joints of each constraint's support, descending:
    /// `chain[chain_off[c]..chain_off[c + 1]]`; the union of all, ascending (`used_joints`),
    /// and its dofs (`used_dofs`).
    pub chain_off: Vec<usize>,
    pub chain: Vec<usize>,
    pub used_joints: Vec<usize>,
    pub used_dofs: Vec<usize>,
    /// Each row's covector in the local frame of its successor and predecessor (Kokkevis)
    /// (nc).
    pub phi_s: Vec<Force>,
    pub phi_p: Vec<Force>,
    /// Motion subspace of each used dof in world coordinates (nv).
    pub s_world: Vec<Motion>,
    /// `D^-½` of the LᵀDL of H (nv).
    pub dis: DVector<f64>,
    /// The branch-induced LᵀDL of H, stored compactly.
    pub fact: crate::linalg::Factorization,
    /// `fact` already holds H's factors (from the articulated inertias, H itself not
    /// computed): the range-space method takes them once instead of factorising H.
    pub prefactored: bool,
}

impl Default for SolveReport {
    fn default() -> Self {
        SolveReport { method: Method::Direct, rows: 0, rank: 0, fallback: false, residual: 0.0 }
    }
}

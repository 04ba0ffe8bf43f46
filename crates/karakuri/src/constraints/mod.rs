//! Constrained dynamics: contact and loop constraints, their exact solution by several
//! methods, collision impulses, assembly and Baumgarte stabilisation (RBDL's `ConstraintSet`,
//! with its method names as doc aliases).
//!
//! A [`ConstraintSet`] holds a list of constraints, each one or more scalar **rows**
//! `G_r q̇ = 0`, and after [`ConstraintSet::bind`] every buffer its solvers need. The
//! constrained equations of motion are
//!
//! ```text
//! [ H  Gᵀ ] [ q̈ ]   [ τ - C ]          H q̈ + C = τ + Gᵀ λ
//! [ G  0  ] [-λ ] = [   γ   ]    i.e.  G q̈ = γ
//! ```
//!
//! with `H` the mass matrix, `C` the nonlinear effects, `G` the constraint Jacobian and
//! `γ = -Ġ q̇` the acceleration bias; `λ` are the constraint forces, one per row. Row kinds:
//!
//! - **contact** (body, point in the body's joint frame, normal in world axes): the
//!   velocity of the body point along the normal; its derivative is the point's *classical*
//!   acceleration along the normal. A 3-D point contact is three rows along the world axes
//!   ([`ConstraintSet::add_point_contact_3d`]); `λ` is then the force on the body in world
//!   axes.
//! - **frame** (body, placement of a frame on it, spatial axes in that frame): the frame's
//!   spatial velocity in its own (local) frame along each axis. A 6-D contact
//!   ([`ConstraintSet::add_frame_contact_6d`]) fixes a frame; `λ` is the wrench on the body in
//!   the local frame, `[force; torque]`.
//! - **loop** (predecessor and successor bodies, a frame on each, spatial axes in the
//!   predecessor frame): the successor's velocity relative to the predecessor, in the
//!   predecessor frame, along each axis ([`ConstraintSet::add_loop_constraint`]).
//!
//! Solvers ([`Method`]): `Direct` (LU of the KKT matrix), `RangeSpaceSparse` (Schur
//! complement `G H⁻¹ Gᵀ` through the branch-induced LᵀDL of `H`), `NullSpace` (pivoted QR
//! of `Gᵀ`), `Kokkevis` (test forces through the articulated-body inertias, no mass matrix).
//! All are exact. When `G` is rank deficient (redundant or conflicting rows) the factorisation
//! notices it and the rank-revealing null-space path gives the least-squares answer: redundant
//! but consistent rows give `Ok` with [`SolveReport::rank`] below [`SolveReport::rows`];
//! conflicting rows give [`ConstraintError::Conflicting`], with the least-squares answer
//! still written to the output buffers. Never NaN.

pub mod rows;
mod solve;

use crate::algorithms::{dof_in_frame, forward_kinematics, forward_kinematics_acceleration};
use crate::data::{Data, Fresh};
use crate::model::{JointId, Model};
use crate::spatial::{log3, Force, Motion, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};
use std::ops::Range;

pub use solve::Method;

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
    /// Optional name (look it up with [`ConstraintSet::find`]).
    pub name: Option<String>,
    /// What it ties together.
    pub kind: ConstraintKind,
    /// Its rows in `G`, `γ` and `λ`.
    pub rows: Range<usize>,
    /// Baumgarte time constant `T` (s), if stabilised: `γ_stab = γ - 2/T ϕ̇ - 1/T² ϕ`.
    pub baumgarte_time: Option<f64>,
}

impl Constraint {
    fn label(&self, index: usize) -> String {
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
    /// Range space: W = L⁻ᵀ Gᵀ (nv x nc), K = G H⁻¹ Gᵀ (nc x nc).
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
    /// Intersection of the supports of constraints `a >= b`, at
    /// `pair[pair_off[p]..pair_off[p + 1]]` with `p = a (a + 1) / 2 + b`.
    pub pair_off: Vec<usize>,
    pub pair: Vec<usize>,
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
}

/// A set of contact and loop constraints on one model, with every buffer its solvers use.
///
/// Build it with the `add_*` methods, then [`ConstraintSet::bind`] it to the model (this
/// allocates everything once; the solvers then allocate nothing). Results land in the public
/// fields: [`ConstraintSet::qdd`], [`ConstraintSet::lambda`] (per row),
/// [`ConstraintSet::forces`] (per constraint, world frame), [`ConstraintSet::v_plus`] and
/// [`ConstraintSet::impulses`] after an impact.
///
/// ```
/// use karakuri::constraints::{ConstraintSet, Method};
/// use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
/// use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
/// use karakuri::Data;
/// use nalgebra::DVector;
/// // a pendulum hanging from a hinge, its tip held by a point contact: it cannot move
/// let mut b = ModelBuilder::new("pendulum");
/// let j = b.add_joint(JointId::UNIVERSE, "hinge", JointType::Revolute { axis: Axis::Y }, Se3::identity()).unwrap();
/// b.add_body(j, "rod", Inertia::new(1.0, Vec3::new(0.0, 0.0, -0.5), Mat3::identity() * 0.01)).unwrap();
/// let model = b.build().unwrap();
/// let mut data = Data::new(&model);
/// let mut cs = ConstraintSet::new();
/// let tip = cs.add_contact(j, Vec3::new(0.0, 0.0, -1.0), Vec3::x(), Some("tip"));
/// cs.bind(&model).unwrap();
/// let (q, v, tau) = (DVector::from_element(1, 0.3), DVector::zeros(1), DVector::zeros(1));
/// let qdd = cs.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::RangeSpaceSparse).unwrap();
/// assert!(qdd[0].abs() < 1e-12);
/// // the contact force (world axes, on the rod) balances gravity's moment about the hinge:
/// // f cos q + m g 0.5 sin q = 0
/// let f = cs.forces[tip].linear.x;
/// assert!((f * 0.3f64.cos() + 9.81 * 0.5 * 0.3f64.sin()).abs() < 1e-9);
/// // every method agrees
/// for method in [Method::Direct, Method::NullSpace, Method::Kokkevis] {
///     cs.forward_dynamics(&model, &mut data, &q, &v, &tau, method).unwrap();
///     assert!((cs.forces[tip].linear.x - f).abs() < 1e-9);
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct ConstraintSet {
    constraints: Vec<Constraint>,
    nrows: usize,
    bound: Option<(usize, usize, usize)>,
    /// Constraint Jacobian `G` (rows x nv), from the last evaluation.
    pub g: DMatrix<f64>,
    /// Acceleration bias `γ = -Ġ q̇` (rows), Baumgarte terms included where enabled.
    pub gamma: DVector<f64>,
    /// Position errors `ϕ` (rows): filled by [`ConstraintSet::position_errors`], and for
    /// Baumgarte-stabilised constraints by every solve.
    pub position_error: DVector<f64>,
    /// Velocity errors `ϕ̇ = G q̇` (rows), from the last evaluation with velocities.
    pub velocity_error: DVector<f64>,
    /// Constraint forces of the last forward-dynamics solve, one per row (contact: force
    /// along the normal; frame: wrench component in the local frame; loop: along the axis in
    /// the predecessor frame, acting on the successor).
    pub lambda: DVector<f64>,
    /// Joint accelerations of the last forward-dynamics solve (nv).
    pub qdd: DVector<f64>,
    /// Velocities after the last impulse solve (nv).
    pub v_plus: DVector<f64>,
    /// Impulses of the last impulse solve, one per row (same meaning as `lambda`).
    pub impulses: DVector<f64>,
    /// Target velocities after an impact, one per row (default zero).
    pub impulse_target: DVector<f64>,
    /// Total force of each constraint on its (successor) body, as a spatial force at the
    /// world origin in world axes; the predecessor receives the opposite. Forces after
    /// forward dynamics, impulses after an impulse solve.
    pub forces: Vec<Force>,
    /// What the last solve found.
    pub report: SolveReport,
    ws: Workspace,
}

impl Default for SolveReport {
    fn default() -> Self {
        SolveReport { method: Method::Direct, rows: 0, rank: 0, fallback: false, residual: 0.0 }
    }
}

fn unit_axes6() -> Vec<Vec6> {
    (0..6)
        .map(|k| {
            let mut a = Vec6::zeros();
            a[k] = 1.0;
            a
        })
        .collect()
}

impl ConstraintSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, name: Option<&str>, kind: ConstraintKind, nrows: usize) -> usize {
        let rows = self.nrows..self.nrows + nrows;
        self.nrows += nrows;
        self.constraints.push(Constraint { name: name.map(str::to_string), kind, rows, baumgarte_time: None });
        self.bound = None;
        self.constraints.len() - 1
    }

    /// Adds a one-row contact: the velocity of `point` (in `body`'s joint frame) along the
    /// world `normal` (normalised here) is zero (RBDL's `AddContactConstraint`). Returns the
    /// constraint index.
    #[doc(alias = "AddContactConstraint")]
    pub fn add_contact(&mut self, body: JointId, point: Vec3, normal: Vec3, name: Option<&str>) -> usize {
        let n = normal.try_normalize(0.0).unwrap_or(normal);
        self.push(name, ConstraintKind::Contact { body, point, normals: vec![n], anchor: None }, 1)
    }

    /// Adds a 3-D point contact: three rows along the world axes, the classical linear
    /// acceleration of the point in world axes is zero; its `λ` is the force on the body in
    /// world axes (the reference's `"3d"` contact).
    pub fn add_point_contact_3d(&mut self, body: JointId, point: Vec3, name: Option<&str>) -> usize {
        let normals = vec![Vec3::x(), Vec3::y(), Vec3::z()];
        self.push(name, ConstraintKind::Contact { body, point, normals, anchor: None }, 3)
    }

    /// Adds a 6-D contact welding the frame at `placement` (joint_from_frame) on `body`: its
    /// spatial acceleration in its own frame is zero; its `λ` is the wrench on the body in
    /// that frame, `[force; torque]` (the reference's `"6d"` contact).
    pub fn add_frame_contact_6d(&mut self, body: JointId, placement: Se3, name: Option<&str>) -> usize {
        self.add_frame_constraint(body, placement, &unit_axes6(), name)
    }

    /// Adds a frame constraint with chosen spatial axes `[linear; angular]` in the frame.
    pub fn add_frame_constraint(&mut self, body: JointId, placement: Se3, axes: &[Vec6], name: Option<&str>) -> usize {
        let kind = ConstraintKind::Frame { body, placement, axes: axes.to_vec(), anchor: None };
        self.push(name, kind, axes.len())
    }

    /// Adds a loop constraint between a frame on `predecessor` and one on `successor`: their
    /// relative position, velocity and acceleration along each spatial `axes` entry
    /// (`[linear; angular]`, in the predecessor frame) are zero (RBDL's
    /// `AddLoopConstraint`).
    #[doc(alias = "AddLoopConstraint")]
    pub fn add_loop_constraint(
        &mut self,
        predecessor: JointId,
        predecessor_frame: Se3,
        successor: JointId,
        successor_frame: Se3,
        axes: &[Vec6],
        name: Option<&str>,
    ) -> usize {
        let kind =
            ConstraintKind::Loop { predecessor, predecessor_frame, successor, successor_frame, axes: axes.to_vec() };
        self.push(name, kind, axes.len())
    }

    /// Enables (`Some(T)`, seconds) or disables Baumgarte stabilisation of one constraint.
    pub fn set_baumgarte(&mut self, constraint: usize, time_constant: Option<f64>) {
        self.constraints[constraint].baumgarte_time = time_constant;
    }

    /// [`ConstraintSet::set_baumgarte`] for every constraint.
    pub fn set_baumgarte_all(&mut self, time_constant: Option<f64>) {
        for c in &mut self.constraints {
            c.baumgarte_time = time_constant;
        }
    }

    /// Holds every contact and frame constraint where it is at configuration `q`: their
    /// anchors (the targets of the position errors) become the current world positions.
    pub fn set_anchors_to_current(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) {
        forward_kinematics(model, data, q);
        for c in &mut self.constraints {
            match &mut c.kind {
                ConstraintKind::Contact { body, point, anchor, .. } => {
                    *anchor = Some(data.o_m_i[body.0].transform_point(point))
                }
                ConstraintKind::Frame { body, placement, anchor, .. } => {
                    *anchor = Some(data.o_m_i[body.0].compose(placement))
                }
                ConstraintKind::Loop { .. } => {}
            }
        }
    }

    /// The constraints, in the order added.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Index of the constraint named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.constraints.iter().position(|c| c.name.as_deref() == Some(name))
    }

    /// Number of scalar rows (size of `λ`).
    pub fn rows(&self) -> usize {
        self.nrows
    }

    /// The `λ` entries of one constraint from the last forward-dynamics solve.
    pub fn lambda_of(&self, constraint: usize) -> &[f64] {
        &self.lambda.as_slice()[self.constraints[constraint].rows.clone()]
    }

    /// Total constraint wrench on `body` (forces of the constraints acting on it, opposite
    /// forces of loops it is the predecessor of), at the world origin in world axes.
    pub fn body_wrench(&self, body: JointId) -> Force {
        let mut f = Force::zero();
        for (c, fc) in self.constraints.iter().zip(&self.forces) {
            let (s, p) = c.bodies();
            if s == body {
                f += *fc;
            }
            if p == body {
                f -= *fc;
            }
        }
        f
    }

    /// Checks the constraints against `model` and allocates every buffer (RBDL's `Bind`).
    #[doc(alias = "Bind")]
    pub fn bind(&mut self, model: &Model) -> Result<(), ConstraintError> {
        let nj = model.njoints;
        for (i, c) in self.constraints.iter().enumerate() {
            let (s, p) = c.bodies();
            for j in [s, p] {
                if j.0 >= nj {
                    return Err(ConstraintError::UnknownJoint { constraint: c.label(i), joint: j.0, njoints: nj });
                }
            }
            let bad = |what: &str| ConstraintError::BadAxis { constraint: c.label(i), what: what.into() };
            match &c.kind {
                ConstraintKind::Contact { normals, point, .. } => {
                    if normals.iter().any(|n| !n.iter().all(|x| x.is_finite()) || n.norm() <= 0.0) {
                        return Err(bad("a normal"));
                    }
                    if !point.iter().all(|x| x.is_finite()) {
                        return Err(bad("the point"));
                    }
                }
                ConstraintKind::Frame { axes, .. } | ConstraintKind::Loop { axes, .. } => {
                    if axes.iter().any(|a| !a.iter().all(|x| x.is_finite()) || a.norm() <= 0.0) {
                        return Err(bad("an axis"));
                    }
                }
            }
        }
        let (nv, nc) = (model.nv, self.nrows);
        self.g = DMatrix::zeros(nc, nv);
        self.gamma = DVector::zeros(nc);
        self.position_error = DVector::zeros(nc);
        self.velocity_error = DVector::zeros(nc);
        self.lambda = DVector::zeros(nc);
        self.qdd = DVector::zeros(nv);
        self.v_plus = DVector::zeros(nv);
        self.impulses = DVector::zeros(nc);
        self.impulse_target = DVector::zeros(nc);
        self.forces = vec![Force::zero(); self.constraints.len()];
        let n = nv + nc;
        self.ws = Workspace {
            phi: vec![Force::zero(); nc],
            succ: vec![0; nc],
            pred: vec![0; nc],
            rhs_v: DVector::zeros(nv),
            rhs_c: DVector::zeros(nc),
            x: DVector::zeros(nv),
            lam: DVector::zeros(nc),
            nle: DVector::zeros(nv),
            kkt: DMatrix::zeros(n, n),
            kkt_x: DVector::zeros(n),
            piv: vec![0; n],
            w: DMatrix::zeros(nv, nc),
            k: DMatrix::zeros(nc, nc),
            qr: DMatrix::zeros(nv, nc),
            beta: vec![0.0; nc],
            perm: vec![0; nc],
            q: DMatrix::zeros(nv, nv),
            hz: DMatrix::zeros(nv, nv),
            zhz: DMatrix::zeros(nv, nv),
            nmat: DMatrix::zeros(nc, nc),
            t_nv: DVector::zeros(nv),
            t_nv2: DVector::zeros(nv),
            t_nc: DVector::zeros(nc),
            t_nc2: DVector::zeros(nc),
            pa: vec![Force::zero(); nj],
            acc: vec![Motion::zero(); nj],
            uu: DVector::zeros(nv),
            zero_v: DVector::zeros(nv),
            ..Workspace::default()
        };
        for con in &self.constraints {
            let (s, p) = con.bodies();
            for r in con.rows.clone() {
                self.ws.succ[r] = s.0;
                self.ws.pred[r] = p.0;
            }
        }
        self.bind_sparsity(model);
        self.bound = Some((model.nq, nv, nj));
        Ok(())
    }

    /// The supports of the constraints, their pairwise intersections and the joint chains
    /// (see [`Workspace`]).
    fn bind_sparsity(&mut self, model: &Model) {
        let ws = &mut self.ws;
        let ncon = self.constraints.len();
        let mut mark = vec![0u8; model.nv];
        let mut jmark = vec![false; model.njoints];
        let mut used = vec![false; model.njoints];
        ws.row_off = vec![0];
        ws.sup_off = vec![0];
        ws.chain_off = vec![0];
        for con in &self.constraints {
            ws.row_off.push(con.rows.end);
            mark.fill(0);
            jmark.fill(false);
            let (s, p) = con.bodies();
            for (body, bit) in [(s.0, 1u8), (p.0, 2u8)] {
                let mut j = body;
                while j > 0 {
                    jmark[j] = true;
                    used[j] = true;
                    for m in &mut mark[model.idx_v[j]..model.idx_v[j] + model.nvs[j]] {
                        *m |= bit;
                    }
                    j = model.parents[j];
                }
            }
            for (k, &m) in mark.iter().enumerate() {
                if m != 0 {
                    ws.sup.push(k);
                    ws.sup_sign.push(match m {
                        1 => 1.0,
                        2 => -1.0,
                        _ => 0.0,
                    });
                }
            }
            ws.sup_off.push(ws.sup.len());
            ws.chain.extend((1..model.njoints).rev().filter(|&j| jmark[j]));
            ws.chain_off.push(ws.chain.len());
        }
        ws.pair_off = vec![0];
        for a in 0..ncon {
            for b in 0..=a {
                let (sa, sb) = (&ws.sup[ws.sup_off[a]..ws.sup_off[a + 1]], &ws.sup[ws.sup_off[b]..ws.sup_off[b + 1]]);
                let (mut i, mut j) = (0, 0);
                while i < sa.len() && j < sb.len() {
                    match sa[i].cmp(&sb[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            ws.pair.push(sa[i]);
                            i += 1;
                            j += 1;
                        }
                    }
                }
                ws.pair_off.push(ws.pair.len());
            }
        }
        ws.used_joints = (1..model.njoints).filter(|&j| used[j]).collect();
        ws.used_dofs = ws.used_joints.iter().flat_map(|&j| model.idx_v[j]..model.idx_v[j] + model.nvs[j]).collect();
        ws.s_world = vec![Motion::zero(); model.nv];
        ws.dis = DVector::zeros(model.nv);
        ws.phi_s = vec![Force::zero(); self.nrows];
        ws.phi_p = vec![Force::zero(); self.nrows];
        ws.fact = crate::linalg::Factorization::new(model);
    }

    #[track_caller]
    fn check_bound(&self, model: &Model) {
        assert!(
            self.bound == Some((model.nq, model.nv, model.njoints)),
            "ConstraintSet is not bound to this model: call bind(&model) after adding constraints"
        );
    }

    /// Fills `G`, `φ` per row, and with `velocities` the velocity errors and `γ` (Baumgarte
    /// included), from `data.o_m_i` (and `data.v`, `data.a` at q̈ = 0 without gravity).
    /// Position errors are computed for all rows when `all_positions`, otherwise only for
    /// Baumgarte-stabilised constraints.
    fn fill_rows(&mut self, model: &Model, data: &Data, velocities: bool, all_positions: bool) {
        let world_va = |j: usize| -> (Motion, Motion) {
            if j == 0 {
                (Motion::zero(), Motion::zero())
            } else {
                (data.o_m_i[j].act_motion(&data.v[j]), data.o_m_i[j].act_motion(&data.a[j]))
            }
        };
        let o_m = |j: usize| if j == 0 { Se3::identity() } else { data.o_m_i[j] };
        // world motion subspaces of the dofs the rows touch
        for &k in &self.ws.used_dofs {
            let o_m_i = &data.o_m_i[model.dof_joint[k]];
            self.ws.s_world[k] = dof_in_frame(model, k, o_m_i);
        }
        // G rows: G_r q̇ = φ_r·(v_s - v_p) = Σ_k ±(φ_r·S_k world) q̇_k over the support
        self.g.as_mut_slice().fill(0.0);
        let nc = self.nrows;
        let g = self.g.as_mut_slice();
        for (c, con) in self.constraints.iter().enumerate() {
            let positions = all_positions || con.baumgarte_time.is_some();
            let (s0, s1) = (self.ws.sup_off[c], self.ws.sup_off[c + 1]);
            let sup = &self.ws.sup[s0..s1];
            let sign = &self.ws.sup_sign[s0..s1];
            let r0 = con.rows.start;
            match &con.kind {
                ConstraintKind::Contact { body, point, normals, anchor } => {
                    let x = o_m(body.0).transform_point(point);
                    let (vw, aw) = if velocities { world_va(body.0) } else { (Motion::zero(), Motion::zero()) };
                    // velocity of the body point and its classical acceleration (world axes)
                    let v_x = vw.linear + vw.angular.cross(&x);
                    let a_cl = aw.linear + aw.angular.cross(&x) + vw.angular.cross(&v_x);
                    // n·(S_lin + S_ang × x): the velocity of the point along n
                    for (&k, &sg) in sup.iter().zip(sign) {
                        let sk = &self.ws.s_world[k];
                        for (kk, n) in normals.iter().enumerate() {
                            g[k * nc + r0 + kk] = sg * rows::point_coefficient(sk, &x, n);
                        }
                    }
                    for (k, n) in normals.iter().enumerate() {
                        let r = r0 + k;
                        self.ws.phi[r] = Force::new(*n, x.cross(n));
                        if velocities {
                            self.velocity_error[r] = n.dot(&v_x);
                            self.gamma[r] = -n.dot(&a_cl);
                        }
                        if positions {
                            self.position_error[r] = anchor.map_or(0.0, |a| n.dot(&(x - a)));
                        }
                    }
                }
                ConstraintKind::Frame { body, placement, axes, anchor } => {
                    let o_m_f = o_m(body.0).compose(placement);
                    let (vw, aw) = if velocities { world_va(body.0) } else { (Motion::zero(), Motion::zero()) };
                    let err = match (positions, anchor) {
                        (true, Some(a)) => {
                            let rel = a.inv_compose(&o_m_f);
                            Motion::new(rel.translation, log3(&rel.rotation))
                        }
                        _ => Motion::zero(),
                    };
                    for (k, axis) in axes.iter().enumerate() {
                        let r = r0 + k;
                        // φ·m_world = axis·(frame-local m): φ = X*_{world<-frame} axis
                        let phi = o_m_f.act_force(&Force::from_vec6(axis));
                        self.ws.phi[r] = phi;
                        for (&k, &sg) in sup.iter().zip(sign) {
                            g[k * nc + r] = sg * rows::wrench_coefficient(&self.ws.s_world[k], &phi);
                        }
                        if velocities {
                            self.velocity_error[r] = vw.dot(&phi);
                            self.gamma[r] = -aw.dot(&phi);
                        }
                        if positions {
                            self.position_error[r] = err.to_vec6().dot(axis);
                        }
                    }
                }
                ConstraintKind::Loop { predecessor, predecessor_frame, successor, successor_frame, axes } => {
                    let (p, s) = (predecessor.0, successor.0);
                    let o_m_fp = o_m(p).compose(predecessor_frame);
                    let (vp, ap) = if velocities { world_va(p) } else { (Motion::zero(), Motion::zero()) };
                    let (vs, a_s) = if velocities { world_va(s) } else { (Motion::zero(), Motion::zero()) };
                    // d/dt [φ·(v_s - v_p)] with φ fixed in the predecessor (φ̇ = v_p ×* φ):
                    // φ·(a_s - a_p - v_p × v_s)
                    let dv = vs - vp;
                    let acc = a_s - ap - vp.cross(&vs);
                    let err = if positions {
                        let rel = o_m_fp.inv_compose(&o_m(s).compose(successor_frame));
                        Motion::new(rel.translation, log3(&rel.rotation))
                    } else {
                        Motion::zero()
                    };
                    for (k, axis) in axes.iter().enumerate() {
                        let r = r0 + k;
                        let phi = o_m_fp.act_force(&Force::from_vec6(axis));
                        self.ws.phi[r] = phi;
                        for (&k, &sg) in sup.iter().zip(sign) {
                            g[k * nc + r] = sg * rows::wrench_coefficient(&self.ws.s_world[k], &phi);
                        }
                        if velocities {
                            self.velocity_error[r] = dv.dot(&phi);
                            self.gamma[r] = -acc.dot(&phi);
                        }
                        if positions {
                            self.position_error[r] = err.to_vec6().dot(axis);
                        }
                    }
                }
            }
            if velocities {
                if let Some(t) = con.baumgarte_time {
                    // Baumgarte: ϕ̈ + 2/T ϕ̇ + 1/T² ϕ = 0
                    for r in con.rows.clone() {
                        self.gamma[r] -= 2.0 / t * self.velocity_error[r] + self.position_error[r] / (t * t);
                    }
                }
            }
        }
    }

    /// The constraint Jacobian `G` at `q` (rows x nv) (RBDL's `CalcConstraintsJacobian`).
    #[doc(alias = "CalcConstraintsJacobian")]
    pub fn jacobian(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) -> &DMatrix<f64> {
        self.check_bound(model);
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, false);
        &self.g
    }

    /// Position errors `ϕ(q)` (rows) (RBDL's `CalcConstraintsPositionError`): contacts and
    /// frames against their anchors (zero without one), loops the relative placement of the
    /// two frames, `[translation; rotation vector]` in the predecessor frame, along each axis.
    #[doc(alias = "CalcConstraintsPositionError")]
    pub fn position_errors(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, true);
        &self.position_error
    }

    /// Velocity errors `G q̇` (rows) (RBDL's `CalcConstraintsVelocityError`).
    #[doc(alias = "CalcConstraintsVelocityError")]
    pub fn velocity_errors(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics_acceleration(model, data, q, v, &self.ws.zero_v);
        self.fill_rows(model, data, true, true);
        &self.velocity_error
    }

    /// The acceleration bias `γ = -Ġ q̇` (rows), with the Baumgarte terms of stabilised
    /// constraints (RBDL's `CalcConstrainedSystemVariables` gamma); `G` comes with it.
    pub fn acceleration_bias(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics_acceleration(model, data, q, v, &self.ws.zero_v);
        self.fill_rows(model, data, true, false);
        &self.gamma
    }

    /// Requires `data` to hold `o_m_i`, `v` and `a` at q̈ = 0 (e.g. after
    /// `nonlinear_effects`), then fills the rows.
    fn fill_rows_from_rnea(&mut self, model: &Model, data: &Data) {
        debug_assert!(data.fresh.contains(Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS), "constrained dynamics after RNEA");
        self.fill_rows(model, data, true, false);
    }

    /// World forces per constraint from per-row multipliers.
    fn update_forces(&mut self, impulses: bool) {
        let lam = if impulses { &self.impulses } else { &self.lambda };
        for (c, con) in self.constraints.iter().enumerate() {
            let mut f = Force::zero();
            for r in con.rows.clone() {
                f += self.ws.phi[r] * lam[r];
            }
            self.forces[c] = f;
        }
    }
}

mod api;
mod assembly;

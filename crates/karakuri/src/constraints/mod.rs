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

mod derivatives;
pub mod rows;
mod solve;
mod types;

use crate::algorithms::forward_kinematics;
use crate::data::Data;
use crate::model::{JointId, Model};
use crate::spatial::{Force, Motion, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};

pub use derivatives::{constrained_dynamics_derivatives, ConstrainedDerivatives, ConstrainedDerivativesError};
pub use types::{Constraint, ConstraintError, ConstraintKind, Method, SolveReport};
use types::Workspace;

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
                let mut prefix = true;
                while i < sa.len() && j < sb.len() {
                    match sa[i].cmp(&sb[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            prefix &= i == j && i == ws.pair.len() - ws.pair_off[ws.pair_off.len() - 1];
                            ws.pair.push(i);
                            ws.pair_b.push(j);
                            i += 1;
                            j += 1;
                        }
                    }
                }
                ws.pair_off.push(ws.pair.len());
                ws.pair_prefix.push(prefix);
            }
        }
        ws.used_joints = (1..model.njoints).filter(|&j| used[j]).collect();
        ws.used_dofs = ws.used_joints.iter().flat_map(|&j| model.idx_v[j]..model.idx_v[j] + model.nvs[j]).collect();
        ws.s_world = vec![Motion::zero(); model.nv];
        ws.dis = DVector::zeros(model.nv);
        ws.phi_s = vec![Force::zero(); self.nrows];
        ws.phi_p = vec![Force::zero(); self.nrows];
        ws.fact = crate::linalg::Factorization::new(model);
        ws.path = (0..ncon)
            .map(|c| {
                let sup = &ws.sup[ws.sup_off[c]..ws.sup_off[c + 1]];
                sup.iter().enumerate().all(|(i, &k)| ws.fact.row(k).0 == &sup[..i])
            })
            .collect();
    }

    #[track_caller]
    fn check_bound(&self, model: &Model) {
        assert!(
            self.bound == Some((model.nq, model.nv, model.njoints)),
            "ConstraintSet is not bound to this model: call bind(&model) after adding constraints"
        );
    }
}

mod api;
mod assembly;
mod evaluate;

//! [`Data`]: every buffer an algorithm needs, allocated once per [`Model`].

use crate::linalg::Factorization;
use crate::model::Model;
use crate::spatial::{ArticulatedInertia, Force, Mat6, Motion, OriginInertia, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};

/// A set of derived quantities of a [`Data`], one bit each: [`Data::fresh`] is the set that
/// holds the values for the inputs (q, and v, q̈ where they apply) last given to an algorithm.
///
/// Every algorithm that takes `q` *assigns* the set (one store): what it computed is fresh,
/// everything else is stale, since the new `q` may differ from the one the rest was computed
/// at. Functions that derive from what `Data` holds without taking `q`
/// ([`update_frame_placements`](crate::algorithms::update_frame_placements),
/// [`factorize_mass_matrix`](crate::algorithms::factorize_mass_matrix)) check the bits they
/// need and add theirs. Every public read checks: the value at the last inputs, or [`Stale`].
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Fresh(u16);

impl Fresh {
    /// Nothing.
    pub const NONE: Fresh = Fresh(0);
    /// Joint placements: `li_m_i` (in the parent joint frame) and `o_m_i` (in the world).
    pub const PLACEMENTS: Fresh = Fresh(1 << 0);
    /// Frame placements in the world (`o_m_f`).
    pub const FRAME_PLACEMENTS: Fresh = Fresh(1 << 1);
    /// Body spatial velocities `v`, each in its joint frame.
    pub const VELOCITIES: Fresh = Fresh(1 << 2);
    /// Body spatial accelerations `a`, each in its joint frame, gravity not included.
    pub const ACCELERATIONS: Fresh = Fresh(1 << 3);
    /// Body spatial accelerations with gravity folded in as a base acceleration (`a_gf`).
    pub const ACCELERATIONS_WITH_GRAVITY: Fresh = Fresh(1 << 4);
    /// World Jacobian columns of every dof (`jacobian`, 6 x nv).
    pub const JACOBIANS: Fresh = Fresh(1 << 5);
    /// Their time derivative (`jacobian_dot`, 6 x nv).
    pub const JACOBIAN_DOT: Fresh = Fresh(1 << 6);
    /// The joint-space inertia matrix M.
    pub const MASS_MATRIX: Fresh = Fresh(1 << 7);
    /// The branch-induced factorisation M = Lᵀ D L.
    pub const MASS_MATRIX_FACTORIZATION: Fresh = Fresh(1 << 8);
    /// M⁻¹.
    pub const MASS_MATRIX_INVERSE: Fresh = Fresh(1 << 9);
    /// C(q, q̇) q̇ + g(q) (`nle`), left by [`compute_all_terms`](crate::algorithms::compute_all_terms).
    pub const NONLINEAR_EFFECTS: Fresh = Fresh(1 << 10);

    const NAMES: [(Fresh, &'static str, &'static str); 11] = [
        (Self::PLACEMENTS, "joint placements", "forward_kinematics"),
        (Self::FRAME_PLACEMENTS, "frame placements", "update_frame_placements (after forward_kinematics)"),
        (Self::VELOCITIES, "body velocities", "forward_kinematics_velocity"),
        (Self::ACCELERATIONS, "body accelerations", "forward_kinematics_acceleration or inverse_dynamics"),
        (Self::ACCELERATIONS_WITH_GRAVITY, "body accelerations with gravity", "inverse_dynamics or forward_dynamics"),
        (Self::JACOBIANS, "joint Jacobians", "joint_jacobians"),
        (Self::JACOBIAN_DOT, "Jacobian time derivatives", "joint_jacobian_time_variation"),
        (Self::MASS_MATRIX, "the mass matrix", "mass_matrix"),
        (Self::MASS_MATRIX_FACTORIZATION, "the mass matrix factorisation", "factorize_mass_matrix (after mass_matrix)"),
        (Self::MASS_MATRIX_INVERSE, "the mass matrix inverse", "mass_matrix_inverse"),
        (Self::NONLINEAR_EFFECTS, "the nonlinear effects", "compute_all_terms"),
    ];

    /// Both sets.
    #[inline(always)]
    pub const fn union(self, other: Fresh) -> Fresh {
        Fresh(self.0 | other.0)
    }

    /// Whether every quantity of `other` is in `self`.
    #[inline(always)]
    pub const fn contains(self, other: Fresh) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Fresh {
    type Output = Fresh;
    #[inline(always)]
    fn bitor(self, other: Fresh) -> Fresh {
        self.union(other)
    }
}

impl std::fmt::Debug for Fresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = Self::NAMES.iter().filter(|(b, ..)| self.contains(*b)).map(|(_, n, _)| *n);
        f.debug_set().entries(names).finish()
    }
}

/// A read of a derived quantity that [`Data`] does not hold for the inputs last given to it
/// (see [`Fresh`]): which read, what it needs and the call that computes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{read} needs {needs}, which Data does not hold for the last inputs it was given: call {call} first")]
pub struct Stale {
    /// The read that failed.
    pub read: &'static str,
    /// The derived quantity it needs.
    pub needs: &'static str,
    /// The algorithm that computes it.
    pub call: &'static str,
}

/// Work buffers and results of the algorithms for one [`Model`]. Per-joint vectors have
/// `njoints` entries (the universe first).
///
/// The buffers are private to the crate: derived quantities are read through the methods
/// below, each of which checks [`Data::fresh`] and returns [`Stale`] rather than a value
/// computed at other inputs; the algorithms return what they compute.
#[derive(Clone, Debug)]
pub struct Data {
    /// Which derived quantities hold the values for the last inputs (see [`Fresh`]).
    pub(crate) fresh: Fresh,
    /// Joint placement in its parent joint frame, joint motion included `(njoints)`.
    pub(crate) li_m_i: Vec<Se3>,
    /// Joint placement in the world `(njoints)`.
    pub(crate) o_m_i: Vec<Se3>,
    /// `(sin q, cos q)` of each revolute joint, the first step of every recursion that places
    /// joints `(njoints)`.
    pub(crate) joint_sin_cos: Vec<(f64, f64)>,
    /// Frame placements in the world `(nframes)`, filled by `update_frame_placements`.
    pub(crate) o_m_f: Vec<Se3>,
    /// Spatial velocity of each body in its own joint frame `(njoints)`.
    pub(crate) v: Vec<Motion>,
    /// Spatial acceleration of each body in its own joint frame, gravity not included
    /// (forward kinematics, RNEA) `(njoints)`.
    pub(crate) a: Vec<Motion>,
    /// Acceleration with gravity added as a fictitious base acceleration `−g` (RNEA, ABA)
    /// `(njoints)`.
    pub(crate) a_gf: Vec<Motion>,
    /// Net spatial force transmitted by each joint, in its frame (RNEA) `(njoints)`.
    pub(crate) f: Vec<Force>,
    /// Joint torques `(nv)`.
    pub(crate) tau: DVector<f64>,
    /// Joint accelerations `(nv)`.
    pub(crate) ddq: DVector<f64>,
    /// C(q, q̇) q̇ + g(q) `(nv)` (`compute_all_terms`).
    pub(crate) nle: DVector<f64>,
    /// Joint-space inertia matrix, full symmetric `(nv x nv)`.
    pub(crate) mass_matrix: DMatrix<f64>,
    /// Its inverse `(nv x nv)`.
    pub(crate) mass_matrix_inverse: DMatrix<f64>,
    /// Composite rigid-body inertia of each subtree about its joint origin, in joint axes
    /// (Pinocchio's `Ycrb`) `(njoints)`, filled by `mass_matrix`.
    pub(crate) ycrb: Vec<OriginInertia>,
    /// Motion subspace column of each dof in CRBA's working frame (the world, or a free-flyer
    /// root's body for its subtree) `(nv)`.
    pub(crate) s_world: Vec<Motion>,
    /// `F_k = I^c_i S_k` of each dof k (of joint i) in CRBA's working frame `(nv)`.
    pub(crate) f_world: Vec<Force>,
    /// Articulated-body inertia `IA` `(njoints)`.
    pub(crate) ia: Vec<ArticulatedInertia>,
    /// Articulated bias force `pA` `(njoints)`.
    pub(crate) pa: Vec<Force>,
    /// Velocity-product acceleration `c = v × vJ` `(njoints)`.
    pub(crate) c: Vec<Motion>,
    /// `U = IA S`, one column per dof `(nv)`.
    pub(crate) u_cols: Vec<Vec6>,
    /// `D⁻¹ = (Sᵀ U)⁻¹` of each joint, top-left `nv_i x nv_i` block used `(njoints)`.
    pub(crate) d_inv: Vec<Mat6>,
    /// `u = τ - Sᵀ pA` `(nv)`.
    pub(crate) u: DVector<f64>,
    /// Joint Jacobians in the world frame, all joints `(6 x nv)`.
    pub(crate) jacobian: DMatrix<f64>,
    /// Time derivative of `jacobian` `(6 x nv)`.
    pub(crate) jacobian_dot: DMatrix<f64>,
    /// Centre of mass of the whole model in the world.
    pub(crate) com: Vec3,
    /// Velocity of the centre of mass in the world.
    pub(crate) com_velocity: Vec3,
    /// Jacobian of the centre of mass `(3 x nv)`.
    pub(crate) com_jacobian: DMatrix<f64>,
    /// Mass of each subtree `(njoints)`.
    pub(crate) subtree_mass: Vec<f64>,
    /// Σ m c over each subtree, world coordinates `(njoints)`.
    pub(crate) subtree_moment: Vec<Vec3>,
    /// Kinetic energy.
    pub(crate) kinetic_energy: f64,
    /// Potential energy (zero at z = 0 for gravity along -z).
    pub(crate) potential_energy: f64,
    /// The branch-induced M = Lᵀ D L (`linalg::ltdl`), by `factorize_mass_matrix` or
    /// `mass_matrix_inverse`.
    pub(crate) ltdl: Factorization,
    /// Row k of L⁻¹ on dof k's chain (the layout of `ltdl`), `mass_matrix_inverse`.
    pub(crate) ltdl_inv_chain: Vec<f64>,
    /// L⁻¹ (unit lower triangular, nonzero only on ancestor pairs), dense column-major
    /// `(nv x nv)`, `mass_matrix_inverse`.
    pub(crate) ltdl_inv: DMatrix<f64>,
    /// Scratch vector `(nv)`.
    pub(crate) tmp_v: DVector<f64>,
}

impl Data {
    /// Allocates every buffer for `model`.
    pub fn new(model: &Model) -> Self {
        let ltdl = Factorization::new(model);
        let (nj, nv) = (model.njoints, model.nv);
        Data {
            fresh: Fresh::NONE,
            li_m_i: vec![Se3::identity(); nj],
            o_m_i: vec![Se3::identity(); nj],
            joint_sin_cos: vec![(0.0, 1.0); nj],
            o_m_f: vec![Se3::identity(); model.frames.len()],
            v: vec![Motion::zero(); nj],
            a: vec![Motion::zero(); nj],
            a_gf: vec![Motion::zero(); nj],
            f: vec![Force::zero(); nj],
            tau: DVector::zeros(nv),
            ddq: DVector::zeros(nv),
            nle: DVector::zeros(nv),
            mass_matrix: DMatrix::zeros(nv, nv),
            mass_matrix_inverse: DMatrix::zeros(nv, nv),
            ycrb: vec![OriginInertia::zero(); nj],
            s_world: vec![Motion::zero(); nv],
            f_world: vec![Force::zero(); nv],
            ia: vec![ArticulatedInertia::default(); nj],
            pa: vec![Force::zero(); nj],
            c: vec![Motion::zero(); nj],
            u_cols: vec![Vec6::zeros(); nv],
            d_inv: vec![Mat6::zeros(); nj],
            u: DVector::zeros(nv),
            jacobian: DMatrix::zeros(6, nv),
            jacobian_dot: DMatrix::zeros(6, nv),
            com: Vec3::zeros(),
            com_velocity: Vec3::zeros(),
            com_jacobian: DMatrix::zeros(3, nv),
            subtree_mass: vec![0.0; nj],
            subtree_moment: vec![Vec3::zeros(); nj],
            kinetic_energy: 0.0,
            potential_energy: 0.0,
            ltdl_inv_chain: vec![0.0; ltdl.chain_len()],
            ltdl,
            ltdl_inv: DMatrix::zeros(nv, nv),
            tmp_v: DVector::zeros(nv),
        }
    }

    /// The derived quantities that hold the values for the inputs last given (see [`Fresh`]).
    #[inline]
    pub fn fresh(&self) -> Fresh {
        self.fresh
    }

    /// `Ok` when every quantity of `needs` is fresh, else [`Stale`] naming the most derived
    /// missing one and the call that computes it (which computes what it derives from too;
    /// `read`: what is being read, for the message).
    #[inline]
    pub fn require(&self, needs: Fresh, read: &'static str) -> Result<(), Stale> {
        if self.fresh.contains(needs) {
            return Ok(());
        }
        let (_, name, call) = Fresh::NAMES
            .iter()
            .rev()
            .find(|(b, ..)| needs.contains(*b) && !self.fresh.contains(*b))
            .copied()
            .unwrap_or((Fresh::NONE, "?", "?"));
        Err(Stale { read, needs: name, call })
    }

    /// World placement of every joint `(njoints)`, `o_m_i` (Pinocchio's `oMi`).
    pub fn joint_placements(&self) -> Result<&[Se3], Stale> {
        self.require(Fresh::PLACEMENTS, "joint_placements")?;
        Ok(&self.o_m_i)
    }

    /// Placement of every joint in its parent joint's frame, joint motion included
    /// `(njoints)`, `li_m_i` (Pinocchio's `liMi`).
    pub fn parent_placements(&self) -> Result<&[Se3], Stale> {
        self.require(Fresh::PLACEMENTS, "parent_placements")?;
        Ok(&self.li_m_i)
    }

    /// World placement of every frame `(nframes)`, `o_m_f`.
    pub fn frame_placements(&self) -> Result<&[Se3], Stale> {
        self.require(Fresh::FRAME_PLACEMENTS, "frame_placements")?;
        Ok(&self.o_m_f)
    }

    /// Spatial velocity of every body in its joint frame `(njoints)`.
    pub fn joint_velocities(&self) -> Result<&[Motion], Stale> {
        self.require(Fresh::VELOCITIES, "joint_velocities")?;
        Ok(&self.v)
    }

    /// Spatial acceleration of every body in its joint frame, gravity not included `(njoints)`.
    pub fn joint_accelerations(&self) -> Result<&[Motion], Stale> {
        self.require(Fresh::ACCELERATIONS, "joint_accelerations")?;
        Ok(&self.a)
    }

    /// Spatial acceleration of every body in its joint frame with gravity folded in as a
    /// base acceleration `−g` (what RNEA and ABA propagate) `(njoints)`.
    pub fn joint_accelerations_with_gravity(&self) -> Result<&[Motion], Stale> {
        self.require(Fresh::ACCELERATIONS_WITH_GRAVITY, "joint_accelerations_with_gravity")?;
        Ok(&self.a_gf)
    }

    /// World Jacobian columns of every dof `(6 x nv)`, rows `[linear; angular]`.
    pub fn jacobians(&self) -> Result<&DMatrix<f64>, Stale> {
        self.require(Fresh::JACOBIANS, "jacobians")?;
        Ok(&self.jacobian)
    }

    /// Time derivative of [`Self::jacobians`] `(6 x nv)`.
    pub fn jacobians_dot(&self) -> Result<&DMatrix<f64>, Stale> {
        self.require(Fresh::JACOBIAN_DOT, "jacobians_dot")?;
        Ok(&self.jacobian_dot)
    }

    /// The joint-space inertia matrix M, full symmetric `(nv x nv)`.
    pub fn mass_matrix(&self) -> Result<&DMatrix<f64>, Stale> {
        self.require(Fresh::MASS_MATRIX, "mass_matrix")?;
        Ok(&self.mass_matrix)
    }

    /// The branch-induced factorisation M = Lᵀ D L (solves with M through it).
    pub fn mass_matrix_factorization(&self) -> Result<&Factorization, Stale> {
        self.require(Fresh::MASS_MATRIX_FACTORIZATION, "mass_matrix_factorization")?;
        Ok(&self.ltdl)
    }

    /// M⁻¹, full symmetric `(nv x nv)`.
    pub fn mass_matrix_inverse(&self) -> Result<&DMatrix<f64>, Stale> {
        self.require(Fresh::MASS_MATRIX_INVERSE, "mass_matrix_inverse")?;
        Ok(&self.mass_matrix_inverse)
    }

    /// C(q, q̇) q̇ + g(q) `(nv)`, left by [`compute_all_terms`](crate::algorithms::compute_all_terms).
    pub fn nonlinear_effects(&self) -> Result<&DVector<f64>, Stale> {
        self.require(Fresh::NONLINEAR_EFFECTS, "nonlinear_effects")?;
        Ok(&self.nle)
    }
}

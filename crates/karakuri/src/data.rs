//! [`Data`]: every buffer an algorithm needs, allocated once per [`Model`].

use crate::model::Model;
use crate::spatial::{Force, Mat6, Motion, OriginInertia, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};

/// How far the kinematic quantities in a [`Data`] have been computed, for the configuration
/// (and velocity, acceleration) last passed to an algorithm. Functions that read kinematics
/// without recomputing them check it and panic with a clear message instead of reading stale
/// values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Nothing computed yet.
    Empty,
    /// Placements `li_m_i`, `o_m_i`.
    Positions,
    /// And body velocities `v`.
    Velocities,
    /// And body accelerations `a`.
    Accelerations,
}

/// Work buffers and results of the algorithms for one [`Model`]. Per-joint vectors have
/// `njoints` entries (the universe first).
#[derive(Clone, Debug)]
pub struct Data {
    /// How far kinematics are computed (see [`Stage`]).
    pub stage: Stage,
    /// Joint placement in its parent joint frame, joint motion included `(njoints)`.
    pub li_m_i: Vec<Se3>,
    /// Joint placement in the world `(njoints)`.
    pub o_m_i: Vec<Se3>,
    /// `(sin q, cos q)` of each revolute joint, the first step of every recursion that places
    /// joints `(njoints)`.
    pub joint_sin_cos: Vec<(f64, f64)>,
    /// Frame placements in the world `(nframes)`, filled by `update_frame_placements`.
    pub o_m_f: Vec<Se3>,
    /// Spatial velocity of each body in its own joint frame `(njoints)`.
    pub v: Vec<Motion>,
    /// Spatial acceleration of each body in its own joint frame `(njoints)`.
    pub a: Vec<Motion>,
    /// Acceleration with gravity added as a fictitious base acceleration (RNEA) `(njoints)`.
    pub a_gf: Vec<Motion>,
    /// Net spatial force transmitted by each joint, in its frame (RNEA) `(njoints)`.
    pub f: Vec<Force>,
    /// Joint torques `(nv)`.
    pub tau: DVector<f64>,
    /// Joint accelerations `(nv)`.
    pub ddq: DVector<f64>,
    /// Joint-space inertia matrix, full symmetric `(nv x nv)`.
    pub mass_matrix: DMatrix<f64>,
    /// Its inverse `(nv x nv)`.
    pub mass_matrix_inverse: DMatrix<f64>,
    /// Composite rigid-body inertia of each subtree about its joint origin, in joint axes
    /// (Pinocchio's `Ycrb`) `(njoints)`, filled by `mass_matrix`.
    pub ycrb: Vec<OriginInertia>,
    /// Motion subspace column of each dof in world coordinates (CRBA) `(nv)`.
    pub s_world: Vec<Motion>,
    /// `F_k = I^c_i S_k` of each dof k (of joint i) in world coordinates (CRBA; the six of a
    /// free-flyer root stay in its own frame) `(nv)`.
    pub f_world: Vec<Force>,
    /// Articulated-body inertia `IA` `(njoints)`.
    pub ia: Vec<Mat6>,
    /// Articulated bias force `pA` `(njoints)`.
    pub pa: Vec<Force>,
    /// Velocity-product acceleration `c = v × vJ` `(njoints)`.
    pub c: Vec<Motion>,
    /// `U = IA S`, one column per dof `(nv)`.
    pub u_cols: Vec<Vec6>,
    /// `D⁻¹ = (Sᵀ U)⁻¹` of each joint, top-left `nv_i x nv_i` block used `(njoints)`.
    pub d_inv: Vec<Mat6>,
    /// `u = τ - Sᵀ pA` `(nv)`.
    pub u: DVector<f64>,
    /// Joint Jacobians in the world frame, all joints `(6 x nv)`.
    pub jacobian: DMatrix<f64>,
    /// Time derivative of `jacobian` `(6 x nv)`.
    pub jacobian_dot: DMatrix<f64>,
    /// Centre of mass of the whole model in the world.
    pub com: Vec3,
    /// Velocity of the centre of mass in the world.
    pub com_velocity: Vec3,
    /// Jacobian of the centre of mass `(3 x nv)`.
    pub com_jacobian: DMatrix<f64>,
    /// Mass of each subtree `(njoints)`.
    pub subtree_mass: Vec<f64>,
    /// Σ m c over each subtree, world coordinates `(njoints)`.
    pub subtree_moment: Vec<Vec3>,
    /// Kinetic energy.
    pub kinetic_energy: f64,
    /// Potential energy (zero at z = 0 for gravity along -z).
    pub potential_energy: f64,
    /// The branch-induced M = Lᵀ D L (`linalg::ltdl`): `data.ltdl.factorize(&data.mass_matrix)`
    /// after `mass_matrix`, or left by `mass_matrix_inverse`.
    pub ltdl: crate::linalg::Factorization,
    /// Row k of L⁻¹ on dof k's chain (the layout of `ltdl`), `mass_matrix_inverse`.
    pub ltdl_inv_chain: Vec<f64>,
    /// L⁻¹ (unit lower triangular, nonzero only on ancestor pairs), dense column-major
    /// `(nv x nv)`, `mass_matrix_inverse`.
    pub ltdl_inv: DMatrix<f64>,
    /// Scratch vector `(nv)`.
    pub tmp_v: DVector<f64>,
    /// Scratch vector `(nv)`.
    pub tmp_v2: DVector<f64>,
    /// Scratch forces `(njoints)`.
    pub tmp_f: Vec<Force>,
}

impl Data {
    /// Allocates every buffer for `model`.
    pub fn new(model: &Model) -> Self {
        let ltdl = crate::linalg::Factorization::new(model);
        let (nj, nv) = (model.njoints, model.nv);
        Data {
            stage: Stage::Empty,
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
            mass_matrix: DMatrix::zeros(nv, nv),
            mass_matrix_inverse: DMatrix::zeros(nv, nv),
            ycrb: vec![OriginInertia::zero(); nj],
            s_world: vec![Motion::zero(); nv],
            f_world: vec![Force::zero(); nv],
            ia: vec![Mat6::zeros(); nj],
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
            tmp_v2: DVector::zeros(nv),
            tmp_f: vec![Force::zero(); nj],
        }
    }

    /// Panics with a clear message unless kinematics are computed to at least `stage`.
    #[track_caller]
    pub fn require(&self, stage: Stage, what: &str) {
        assert!(
            self.stage >= stage,
            "{what} needs kinematics at stage {stage:?} but Data holds {:?}: call forward_kinematics first",
            self.stage
        );
    }
}

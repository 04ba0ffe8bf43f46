//! The kinematic tree: [`ModelBuilder`] assembles it, [`Model`] is the immutable result.
//!
//! Joint `i` moves body `i`; joint 0 is the universe (the world body). Every joint's parent
//! precedes it, so a forward loop over `1..njoints` visits parents first.

mod builder;
mod joint;

pub use builder::ModelBuilder;
pub use joint::{Axis, JointType};
pub(crate) use joint::{dof_axis, elementary_rotation_axis, signed_dof_axis, mul_axis_rotation, revolute_placement_after};

use crate::spatial::{Inertia, Motion, OriginInertia, Se3, Vec3};

/// Index of a joint (and of the body it moves). `JointId(0)` is the universe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointId(pub usize);

/// Index of a frame in [`Model::frames`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(pub usize);

impl JointId {
    /// The universe (world) joint.
    pub const UNIVERSE: JointId = JointId(0);
}

/// What a frame marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The frame of a joint (placement identity on it).
    Joint,
    /// A fixed joint merged into its parent body.
    FixedJoint,
    /// A body (URDF link).
    Body,
    /// A user-defined operational frame.
    Operational,
}

/// A frame attached to a joint: `placement` is joint_from_frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Unique name.
    pub name: String,
    /// The joint that moves it.
    pub parent_joint: JointId,
    /// Its placement in the joint frame.
    pub placement: Se3,
    /// What it marks.
    pub kind: FrameKind,
}

/// A mimic relation recorded from URDF (`q = multiplier * q_leader + offset`); for now the
/// mimic joint is an independent degree of freedom.
#[derive(Clone, Debug, PartialEq)]
pub struct Mimic {
    /// The joint it copies.
    pub joint: String,
    /// Multiplier.
    pub multiplier: f64,
    /// Offset.
    pub offset: f64,
}

/// The immutable description of a kinematic tree. Per-joint arrays have `njoints` entries,
/// index 0 being the universe; per-dof arrays have `nv`, per-configuration arrays `nq`.
#[derive(Clone, Debug)]
pub struct Model {
    /// Name of the model (URDF robot name).
    pub name: String,
    /// Size of the configuration vector.
    pub nq: usize,
    /// Number of degrees of freedom (size of velocity vectors).
    pub nv: usize,
    /// Number of joints, the universe included.
    pub njoints: usize,
    /// Joint names `(njoints)`; `"universe"` first.
    pub joint_names: Vec<String>,
    /// Body (link) names `(njoints)`: the body each joint moves.
    pub body_names: Vec<String>,
    /// Joint kinds `(njoints)`.
    pub joint_types: Vec<JointType>,
    /// Parent joint `(njoints)`; the universe is its own parent.
    pub parents: Vec<usize>,
    /// Children of each joint `(njoints)`.
    pub children: Vec<Vec<usize>>,
    /// Joint frame in the parent joint frame at q = 0 `(njoints)`.
    pub joint_placements: Vec<Se3>,
    /// Body inertias in their joint frames `(njoints)` (fixed children merged in).
    pub inertias: Vec<Inertia>,
    /// First configuration index of each joint `(njoints)`.
    pub idx_q: Vec<usize>,
    /// First velocity index of each joint `(njoints)`.
    pub idx_v: Vec<usize>,
    /// Configuration size of each joint `(njoints)`.
    pub nqs: Vec<usize>,
    /// Velocity size of each joint `(njoints)`.
    pub nvs: Vec<usize>,
    /// The joint each degree of freedom belongs to `(nv)`.
    pub dof_joint: Vec<usize>,
    /// Branch-induced parent of each degree of freedom `(nv)`: the previous dof on the path to
    /// the root, `usize::MAX` at a root (Featherstone's λ for dofs, RBDA §6.5).
    pub dof_parent: Vec<usize>,
    /// Motion subspace column of each degree of freedom `(nv)`, in its joint's child frame.
    pub motion_subspace: Vec<Motion>,
    /// Where `motion_subspace[k]` is a unit basis vector, its index in the flattened
    /// `[linear; angular]` 6-vector, so `Sᵀ f` reads one component (fast path) `(nv)`.
    pub dof_axis: Vec<Option<usize>>,
    /// `Some((c, σ))` where `motion_subspace[k]` is `σ e_c` (σ = ±1; `c` as in `dof_axis`):
    /// `dof_axis`'s fast path extended to the negative axes (icub's and panda's −y, −z joints).
    /// `S x = σ x e_c` and `Sᵀ f = σ f_c`, the same bits as the general products since negation
    /// is exact `(nv)`.
    pub signed_dof_axis: Vec<Option<(usize, f64)>>,
    /// Body inertias about their joint origins (from `inertias`, for composite sums) `(njoints)`.
    pub origin_inertias: Vec<OriginInertia>,
    /// Last dof of the subtree of each joint, exclusive `(njoints)`: dofs `idx_v[i]..subtree_end_v[i]`.
    pub subtree_end_v: Vec<usize>,
    /// Where the rotation of `joint_placements[i]` permutes and flips axes, its quarter-turn
    /// code (0 the identity; see `spatial::quarter_turn`) `(njoints)`: a joint's world rotation
    /// is then its parent's with columns moved, times the joint rotation, no 3x3 product.
    /// [`ModelBuilder::build`] stores rotations within 1e-12 of a quarter turn as that turn
    /// exactly (URDF `rpy` in multiples of π/2 leave `cos(π/2)` residues).
    pub placement_quarter_turn: Vec<Option<u8>>,
    /// For a revolute joint about ±x, ±y or ±z (0, 1, 2) whose placement rotation is a quarter
    /// turn `P` (or none): that axis; `li_m_i`'s rotation is then `P` times the elementary
    /// rotation about it, followed by the constant placement translation `(njoints)`.
    pub elementary_rotation_axis: Vec<Option<usize>>,
    /// Dofs of the subtree of each joint (itself included) as increasing, disjoint,
    /// non-adjacent ranges `start..end`: those of joint `i` are
    /// `subtree_v_ranges[subtree_v_ranges_start[i]..subtree_v_ranges_start[i + 1]]`; a single
    /// range `idx_v[i]..subtree_end_v[i]` when joints are numbered depth-first (URDF models).
    pub subtree_v_ranges: Vec<(usize, usize)>,
    /// Offsets into `subtree_v_ranges` `(njoints + 1)`.
    pub subtree_v_ranges_start: Vec<usize>,
    /// Lower position limits `(nq)` (`-inf` where none).
    pub lower_position_limit: Vec<f64>,
    /// Upper position limits `(nq)` (`+inf` where none).
    pub upper_position_limit: Vec<f64>,
    /// Velocity limits `(nv)` (`+inf` where none).
    pub velocity_limit: Vec<f64>,
    /// Effort limits `(nv)` (`+inf` where none).
    pub effort_limit: Vec<f64>,
    /// Viscous damping `(nv)` (N·m·s/rad or N·s/m), kept for the simulator.
    pub damping: Vec<f64>,
    /// Coulomb friction `(nv)` (N·m or N), kept for the simulator.
    pub friction: Vec<f64>,
    /// Rotor (reflected) inertia added to the diagonal of the mass matrix `(nv)`, as
    /// Pinocchio's `armature` and MuJoCo's joint `armature`: CRBA adds it to `M`, RNEA adds
    /// `armature · q̈` to `τ`, ABA adds it to each joint's `D = Sᵀ Iᴬ S`. Zero unless set
    /// ([`ModelBuilder::set_armature`]; the MJCF loader reads it).
    pub armature: Vec<f64>,
    /// Mimic relations recorded per joint `(njoints)`.
    pub mimic: Vec<Option<Mimic>>,
    /// Frames: joints, bodies, merged fixed joints, operational frames.
    pub frames: Vec<Frame>,
    /// Gravity as a spatial acceleration in the world frame (linear part (0, 0, -9.81)).
    pub gravity: Motion,
}

impl Model {
    /// Looks a joint up by name.
    pub fn joint_id(&self, name: &str) -> Option<JointId> {
        self.joint_names.iter().position(|n| n == name).map(JointId)
    }
    /// Looks up the joint that moves the body of this name.
    pub fn body_id(&self, name: &str) -> Option<JointId> {
        self.body_names.iter().position(|n| n == name).map(JointId)
    }
    /// Looks a frame up by name.
    pub fn frame_id(&self, name: &str) -> Option<FrameId> {
        self.frames.iter().position(|f| f.name == name).map(FrameId)
    }
    /// The frame with this id.
    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id.0]
    }
    /// Total mass of the moving bodies.
    pub fn total_mass(&self) -> f64 {
        // from +0.0: `Sum` for floats starts at -0.0, which a model without bodies printed
        self.inertias[1..].iter().fold(0.0, |m, i| m + i.mass)
    }
    /// Gravity's linear part.
    pub fn gravity_vector(&self) -> Vec3 {
        self.gravity.linear
    }
    /// Is joint `ancestor` on the path from the root to `joint` (inclusive)?
    pub fn is_ancestor(&self, ancestor: usize, mut joint: usize) -> bool {
        loop {
            if joint == ancestor {
                return true;
            }
            if joint == 0 {
                return false;
            }
            joint = self.parents[joint];
        }
    }
}

//! What a `.body` file gives beside its [`Model`]: links, shapes, devices, the standard pose,
//! extra joints and collision rules, each placed on the model joint that moves it; the loader's
//! error ([`BodyError`]); and the plain description the passes fill (links as read).

use std::fmt;
use std::path::PathBuf;

use super::yaml::Node;
use crate::spatial::{Mat3, Se3, Vec3};
use crate::Model;

/// A loaded Choreonoid body: the dynamics model and what the simulator reads beside it.
#[derive(Clone, Debug)]
pub struct BodyModel {
    /// The tree: one joint per moving link (named as the link), fixed and track links merged
    /// into their parent's body (a frame each).
    pub model: Model,
    /// The body's `name`.
    pub name: String,
    /// Every link in the model's depth-first order (children in file order).
    pub links: Vec<BodyLink>,
    /// Shapes (visual, collision or both) on the model's joints.
    pub shapes: Vec<BodyShape>,
    /// Devices (sensors, and the kinds karakuri does not simulate).
    pub devices: Vec<BodyDevice>,
    /// The root link's placement in the file: where a free root starts.
    pub root_placement: Se3,
    /// `standardPose` as joint name and value (radians or metres), in joint-id order.
    pub standard_pose: Vec<(String, f64)>,
    /// Each one-dof joint's initial value from `jointAngle` / `jointDisplacement`.
    pub initial_q: Vec<(String, f64)>,
    /// `extraJoints`: loop closures.
    pub extra_joints: Vec<ExtraJoint>,
    /// `collision_detection_rules`: link pairs whose contact is off.
    pub collision_rules: CollisionRules,
    /// Remarks: what was read but is not simulated, what was left out.
    pub warnings: Vec<String>,
}

impl BodyModel {
    /// The configuration a simulation starts from: a free root at its file placement, the
    /// one-dof joints at their initial values, then the standard pose over them.
    pub fn start_configuration(&self) -> nalgebra::DVector<f64> {
        let m = &self.model;
        let mut q = crate::algorithms::neutral(m);
        if self.links.first().is_some_and(|l| l.kind == BodyJointKind::Free) && m.nq >= 7 {
            let x = &self.root_placement;
            q.as_mut_slice()[0..3].copy_from_slice(x.translation.as_slice());
            q.as_mut_slice()[3..7].copy_from_slice(&crate::spatial::quat_to_xyzw(&x.rotation));
        }
        for (name, v) in self.initial_q.iter().chain(&self.standard_pose) {
            if let Some(j) = m.joint_id(name).filter(|j| m.nqs[j.0] == 1) {
                q[m.idx_q[j.0]] = *v;
            }
        }
        q
    }
}

/// The joint kind of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyJointKind {
    /// Six degrees of freedom (a root only).
    Free,
    /// Rigidly attached to its parent (merged into the parent's body).
    Fixed,
    /// Rotation about `jointAxis`.
    Revolute,
    /// Translation along `jointAxis` (`prismatic` or `slide`).
    Prismatic,
    /// Choreonoid's pseudo continuous track: attached like a fixed link; its surface moves along
    /// `jointAxis` × the contact normal (a track link, driven by the simulator's tracks).
    PseudoContinuousTrack,
}

/// One link.
#[derive(Clone, Debug)]
pub struct BodyLink {
    /// The link's name (also its joint's name when it moves).
    pub name: String,
    /// The model joint that moves it (0: the universe, for a fixed root and links fixed to it).
    pub joint: usize,
    /// Its frame in that joint's frame.
    pub placement: Se3,
    /// Its parent link (an index into `links`), `None` for the root.
    pub parent: Option<usize>,
    /// Its joint kind.
    pub kind: BodyJointKind,
    /// The joint axis in the link frame (unit).
    pub axis: Vec3,
    /// `jointId`, if given.
    pub joint_id: Option<i32>,
    /// The rigid body merged into the model (mass, centre of mass in the link frame, inertia
    /// about it in link axes).
    pub mass: f64,
    /// Centre of mass in the link frame.
    pub com: Vec3,
    /// Rotational inertia about the centre of mass, link axes (row-major).
    pub inertia: [f64; 9],
    /// `file:line` of the link's node.
    pub at: String,
}

/// A shape's geometry in Choreonoid's conventions (cylinders, capsules and cones along y).
#[derive(Clone, Debug, PartialEq)]
pub enum BodyGeometry {
    /// Full edge lengths.
    Box {
        /// x, y, z lengths.
        size: [f64; 3],
    },
    /// A sphere.
    Sphere {
        /// Radius.
        radius: f64,
    },
    /// A cylinder along y.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Full height.
        height: f64,
    },
    /// A capsule along y: `height` between the centres of its end spheres.
    Capsule {
        /// Radius.
        radius: f64,
        /// Length of the cylindrical part.
        height: f64,
    },
    /// A cone along y, apex at +height/2.
    Cone {
        /// Base radius.
        radius: f64,
        /// Full height.
        height: f64,
    },
    /// A mesh file (STL, OBJ, DAE), found at load.
    Mesh {
        /// The resolved path.
        path: PathBuf,
        /// Scale per axis.
        scale: [f64; 3],
    },
    /// An extrusion as the points of its cross-sections along the spine (its convex hull).
    Points {
        /// The points.
        vertices: Vec<[f64; 3]>,
    },
    /// A VRML resource: not read (drawn from the collision shapes instead).
    Vrml {
        /// The path as resolved (not checked).
        path: PathBuf,
    },
}

/// One shape on a link.
#[derive(Clone, Debug)]
pub struct BodyShape {
    /// The link (an index into [`BodyModel::links`]).
    pub link: usize,
    /// The model joint it rides on.
    pub joint: usize,
    /// Its placement in that joint's frame.
    pub placement: Se3,
    /// What it is.
    pub geometry: BodyGeometry,
    /// Drawn (outside `Collision`).
    pub visual: bool,
    /// Collides (outside `Visual`).
    pub collision: bool,
    /// `file:line` of its node.
    pub at: String,
}

/// A device's kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// Six-axis force sensor (force and torque the link receives from its parent).
    ForceSensor,
    /// Angular velocity.
    RateGyroSensor,
    /// Linear acceleration.
    AccelerationSensor,
    /// Acceleration and angular velocity (Choreonoid's `IMU`).
    Imu,
    /// Any other device (camera, range sensor, light, ...): listed, not simulated.
    Other(String),
}

/// One device on a link.
#[derive(Clone, Debug)]
pub struct BodyDevice {
    /// Its kind.
    pub kind: DeviceKind,
    /// Its name.
    pub name: String,
    /// `id`, if given.
    pub id: Option<i32>,
    /// The link (an index into [`BodyModel::links`]).
    pub link: usize,
    /// The model joint it rides on.
    pub joint: usize,
    /// Its placement in that joint's frame.
    pub placement: Se3,
    /// `file:line` of its node.
    pub at: String,
}

/// The kind of an extra joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraJointKind {
    /// Points coincide.
    Ball,
    /// Points coincide, rotation only about the axis.
    Hinge,
    /// Rotation about and translation along the axis free.
    Piston,
    /// All six held.
    Fixed,
}

/// An extra joint (a loop closure) between two links.
#[derive(Clone, Debug)]
pub struct ExtraJoint {
    /// Its kind.
    pub kind: ExtraJointKind,
    /// First link's name.
    pub link1: String,
    /// Second link's name.
    pub link2: String,
    /// The point in link 1's frame.
    pub point1: Vec3,
    /// The point in link 2's frame.
    pub point2: Vec3,
    /// The axis (hinge, piston) in link 1's frame, unit.
    pub axis: Vec3,
    /// `file:line`.
    pub at: String,
}

/// `collision_detection_rules` as read.
#[derive(Clone, Debug, Default)]
pub struct CollisionRules {
    /// Link pairs at most this many joints apart along the tree do not collide.
    pub disabled_link_chain_level: Option<usize>,
    /// Link pairs that do not collide (`disabled_link_group`: every pair of a group; or
    /// `disabled_links`: these links with any other link of the body).
    pub disabled_pairs: Vec<(String, String)>,
    /// Links that collide with nothing of the body (`disabled_links`).
    pub disabled_links: Vec<String>,
}

/// A Choreonoid `.body` loading error: where it is and what is wrong.
///
/// Displayed as `"{file}:{line}: {key}: {reason}"` (parts left out when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyError {
    /// The file (or the source name given to [`super::parse_str`]).
    pub file: String,
    /// The 1-based line of the offending node, if known.
    pub line: Option<u32>,
    /// The key (or element type) of the offending node, such as `links[3].jointType`.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

impl BodyError {
    /// An error at `line` of `file` about `key`.
    pub fn new(file: &str, line: u32, key: &str, reason: impl Into<String>) -> Self {
        BodyError { file: file.into(), line: (line > 0).then_some(line), key: key.into(), reason: reason.into() }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for BodyError {}

// ---- the plain description the passes fill ----

/// A rigid body before merging: mass, centre of mass and inertia about it, link frame.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rigid {
    pub m: f64,
    pub c: Vec3,
    pub i: Mat3,
}

/// A shape as read, placed in its link's frame.
#[derive(Clone, Debug)]
pub(super) struct ShapeDesc {
    pub placement: Se3,
    pub geometry: BodyGeometry,
    pub visual: bool,
    pub collision: bool,
    pub at: String,
}

/// A device as read, placed in its link's frame.
#[derive(Clone, Debug)]
pub(super) struct DeviceDesc {
    pub kind: DeviceKind,
    pub name: String,
    pub id: Option<i32>,
    pub placement: Se3,
    pub at: String,
}

/// A link as read.
#[derive(Clone, Debug)]
pub(super) struct LinkDesc {
    pub name: String,
    pub file: String,
    pub line: u32,
    pub parent: Option<(String, u32)>,
    pub offset: Se3,
    pub kind: BodyJointKind,
    pub axis: Vec3,
    pub range: (f64, f64),
    pub velocity: f64,
    pub effort: f64,
    pub armature: f64,
    pub joint_id: Option<i32>,
    pub q_init: Option<f64>,
    pub rigid: Option<Rigid>,
    pub shapes: Vec<ShapeDesc>,
    pub devices: Vec<DeviceDesc>,
}

/// An extra joint as read.
#[derive(Clone, Debug)]
pub(super) struct ExtraDesc {
    pub kind: super::ExtraJointKind,
    pub link1: (String, u32),
    pub link2: (String, u32),
    pub point1: Vec3,
    pub point2: Vec3,
    pub axis: Vec3,
    pub file: String,
    pub line: u32,
}

/// One file as read (its sub-bodies' links flattened in).
pub(super) struct FileDesc {
    pub name: String,
    pub file: String,
    pub links: Vec<LinkDesc>,
    pub root: Option<(String, u32)>,
    pub standard_pose: Option<(Vec<f64>, u32)>,
    pub degree: bool,
    pub extra: Vec<ExtraDesc>,
    pub rules: Option<Node>,
}

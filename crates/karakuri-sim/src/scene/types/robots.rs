//! Robots by reference (a URDF or an MJCF file; root, collision) and loop constraints.

use serde::{Deserialize, Serialize};

use super::basics::{yes, Named, Pose, Twist};
use super::shapes::{LinkedShapes, ShapeSpec};
use super::actuators::RobotActuatorSpec;
use super::bodies::RobotTrackSpec;

/// How a robot's root link is attached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotRoot {
    /// Free-flying base.
    #[default]
    #[serde(alias = "free")]
    Floating,
    /// Root fixed to the world at `pose`.
    Fixed,
}

/// Which of a URDF's `<collision>` elements become collision shapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotCollision {
    /// All of them: boxes, spheres, cylinders and capsules as such, meshes as the convex hull
    /// of the mesh file (a mesh file that cannot be found or read is an error): the default.
    #[default]
    Urdf,
    /// Boxes, spheres, cylinders and capsules only; meshes are skipped.
    Primitives,
    /// None (only the hand-added `shapes`).
    None,
}

/// A robot loaded from a URDF, an MJCF or a Choreonoid `.body` file (exactly one of `urdf`,
/// `mjcf` and `body`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotSpec {
    /// Name, prefixed to its links' names (`name/link`).
    pub name: String,
    /// URDF path as written (relative to the scene file), or `builtin:<name>` for a URDF inside
    /// the binary ([`crate::scene::BUILTIN_URDFS`]); empty for an MJCF robot.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub urdf: String,
    /// MJCF path as written (relative to the scene file): the whole model is the robot (its
    /// world geoms on the robot's root, a free joint its floating base starting at the first
    /// keyframe or qpos0; `root`, `pose` of a floating base and `collision` are not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mjcf: Option<String>,
    /// An MJCF robot's start: the `<key>` of this name (its qpos, qvel and ctrl) instead of
    /// the first keyframe (else qpos0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyframe: Option<String>,
    /// Choreonoid `.body` path as written (relative to the scene file): its links, shapes,
    /// sensors and extra joints; a free root starts at `pose` composed with the file's root
    /// placement, the joints at `standardPose`, held there by position servos unless the robot
    /// lists `actuators` (docs/BODY.md); `root` and `collision` are not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Floating or fixed base.
    #[serde(default)]
    pub root: RobotRoot,
    /// Pose of the root link (initial world pose when floating).
    #[serde(default)]
    pub pose: Pose,
    /// Initial joint positions by joint name (the base is set by `pose`).
    #[serde(default, with = "Named")]
    pub q0: Vec<(String, f64)>,
    /// Initial joint velocities by joint name.
    #[serde(default, with = "Named")]
    pub v0: Vec<(String, f64)>,
    /// Initial base velocity in world axes (floating only).
    #[serde(default)]
    pub base_velocity: Twist,
    /// Material of its collision shapes.
    #[serde(default)]
    pub material: Option<String>,
    /// Collision shapes are used (`false`: visual robot, no contacts).
    #[serde(default = "yes")]
    pub collide: bool,
    /// Which of the URDF's `<collision>` elements are used.
    #[serde(default)]
    pub collision: RobotCollision,
    /// Directories searched for `package://` mesh files, as written (relative to the scene
    /// file); then the scene file's directory and `ROS_PACKAGE_PATH`.
    #[serde(default)]
    pub package_dirs: Vec<String>,
    /// Extra collision shapes by link name (`{link, type, ...}`), e.g. feet spheres for robots
    /// whose URDF collision meshes are not at hand.
    #[serde(default, with = "LinkedShapes")]
    pub shapes: Vec<(String, ShapeSpec)>,
    /// Spring stiffness of every 1-dof joint towards its `q0` (a passive posture hold), N·m/rad.
    #[serde(default)]
    pub joint_stiffness: f64,
    /// Viscous damping of every 1-dof joint (added to the URDF's), N·m·s/rad.
    #[serde(default)]
    pub joint_damping: f64,
    /// Actuators of its joints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actuators: Vec<RobotActuatorSpec>,
    /// Track surfaces on its links (`robot/link`); a `.body` robot's `pseudo_continuous_track`
    /// links are tracks without being listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracks: Vec<RobotTrackSpec>,
    /// Keep self-collision between links that already overlap in the initial configuration
    /// (by default such pairs are excluded and listed in a warning, as MoveIt's "disabled
    /// collisions": CAD links often overlap by millimetres where they are joined).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_overlapping_self_collisions: bool,
}

/// The kind of a loop-closure joint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopKind {
    /// A ball loop plus two rotational rows about `axis_a`: the default.
    #[default]
    Revolute,
    /// Point rows only (planar loops need no more).
    Ball,
    /// Translation along `axis_a` and rotation about it free; the other four dofs held (the
    /// anchor of B stays on A's axis line, the axes stay aligned).
    Piston,
    /// All six dofs held: the anchors coincide and the relative orientation keeps its initial
    /// value.
    Weld,
}

/// A loop-closure joint between two bodies (Choreonoid's extra joint): scene bodies, robot
/// links (`robot/link`) or `world`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConstraint {
    /// Name (default `loop<index>`).
    #[serde(default)]
    pub name: String,
    /// Revolute, ball, piston or weld.
    #[serde(rename = "type", default)]
    pub kind: LoopKind,
    /// First body.
    pub body_a: String,
    /// Anchor in `body_a`'s frame.
    #[serde(default)]
    pub anchor_a: [f64; 3],
    /// Second body.
    pub body_b: String,
    /// Anchor in `body_b`'s frame.
    #[serde(default)]
    pub anchor_b: [f64; 3],
    /// Hinge (revolute) or slider (piston) axis in `body_a`'s frame.
    #[serde(default = "z_axis")]
    pub axis_a: [f64; 3],
    /// Free text kept for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn z_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}
